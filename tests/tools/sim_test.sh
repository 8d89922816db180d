#!/usr/bin/env bash
# `kron sim` as a tool: exit statuses (0, 1 failed expect, 2 script error with FILE:LINE), standard
# input, --net (raw network bytes) and --net-bits (every 10-bit element).
# Parity worked by hand: 0x10 has one 1 bit, so the odd-parity bit is 0 (ERRATUM E10 bit layout).
set -uo pipefail
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# A failed expect: line number and both values, exit 1 at the end (after the rest of the script ran).
printf 'write 4 0x1234\nexpect 4 0x1235 0xffff\nread 4\n' > "$tmp/bad_expect.sim"
out=$("$KRON" sim "$tmp/bad_expect.sim" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "failed expect: exit $rc"
grep -q "bad_expect.sim:2: expect failed: read 4 = 0xffffffffffff1234, expected 0x0000000000001235 under mask 0x000000000000ffff" <<<"$out" || fail "expect message: $out"
grep -q "read 4 = 0xffffffffffff1234" <<<"$out" || fail "script stopped at the failed expect"

# Script errors: FILE:LINE[:COLUMN]: what, exit 2, nothing run.
check_error() {  # script-text expected-message
  printf '%b' "$1" > "$tmp/err.sim"
  out=$("$KRON" sim "$tmp/err.sim" 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "'$1': exit $rc"
  grep -qF -- "$2" <<<"$out" || fail "'$1': message '$out' lacks '$2'"
}
check_error 'read 1\nfrobnicate 3\n' "err.sim:2: unknown command 'frobnicate'"
check_error '# comment\n\nwrite 1\n' "err.sim:3:1: usage: write ADDR DATA"
check_error 'write 0x1g 1\n' "err.sim:1:7: '0x1g' is not a number"
check_error 'write 1 99999999999999999999\n' "does not fit in 64 bits"
check_error 'read 128\n' "err.sim:1: address 128 out of range 0-127"
check_error 'cpu 8\n' "err.sim:1:5: 8 out of range 0-7"
check_error 'testmode maybe\n' "expected off or on"
check_error 'clocks node=50000000 ts=20000000\n' "err.sim:1: timestamp clock 20000000 Hz exceeds a third of the node clock"
check_error 'write 1 1\nwrite 4 1\nnetrdy 0\ndrain\nwrite 96 1\ndrain\n' "err.sim:6: drain: samples wait for NETRDY"
"$KRON" sim "$tmp/missing.sim" >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing script: not exit 2"
"$KRON" sim --chip mk9 "$tmp/err.sim" >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown chip: not exit 2"

# Standard input, --net and --net-bits on one Trace sample.
printf 'write 1 1\nwrite 4 1\nwrite 96 0x0102030405060708\ndrain\n' > "$tmp/one.sim"
out=$("$KRON" sim --chip mk2 --net "$tmp/net.bin" --net-bits - < "$tmp/one.sim"); rc=$?
[ $rc -eq 0 ] || fail "stdin run: exit $rc"
[ "$(grep -c '^net @' <<<"$out")" -eq 20 ] || fail "--net-bits: not 20 elements"
grep -q '^net @8 0x010 data=0x10 parity=0 eom=0$' <<<"$out" || fail "--net-bits first element: $out"
grep -q '^net @46 0x208 data=0x08 parity=0 eom=1$' <<<"$out" || fail "--net-bits last element: $out"
grep -q '^sample @46 type=trace cpu=0 ts=1 src=0x00000000 data=0x0102030405060708 flags=-$' <<<"$out" || fail "sample line: $out"
[ "$(od -An -tx1 -v "$tmp/net.bin" | tr -d ' \n')" = "1000000000000001000000000102030405060708" ] || fail "--net bytes"

# Simulator time is range-checked in every model (ERRATUM E134): a device's clock
# stops at 2^62 node clocks. A tick beyond it is refused at its line and column before anything runs
# (the MultiKron II looped forever on a sample after `tick 0xfffffffffffffff0`, the first MultiKron
# wrapped it); ticks that add up past it are refused at the line that would pass it, after the sample
# just below the limit went out; nothing hangs (timeout). Each device with its own way to take a sample.
declare -A take=(
  [mk2]='write 1 1\nwrite 4 1\nwrite 96 7\n'
  [mk1]='write 1 1\nwrite 4 1\nwrite 96 7\n'
  [pci]='write 0x1204 0x003201\nwrite 0x1010 0xffff\nwrite 0x1004 1\nwrite 0x1180 7\n'
)
declare -A flags=([mk2]="--chip mk2" [mk1]="--chip mk1" [pci]="--board pci")
for dev in mk2 mk1 pci; do
  printf "tick 0xfffffffffffffff0\\n${take[$dev]}drain\\n" > "$tmp/far.sim"
  out=$(timeout 20 "$KRON" sim ${flags[$dev]} "$tmp/far.sim" 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "$dev: tick 0xfffffffffffffff0: exit $rc: $out"
  grep -qF "far.sim:1:6: tick 0xfffffffffffffff0 is more than a model's clock reaches (2^62 node clocks" <<<"$out" \
    || fail "$dev: tick past the limit: $out"
  printf "tick 0x3ffffffffffff000\\n${take[$dev]}drain\\ntick 0x1000\\nread 1\\n" > "$tmp/sum.sim"
  out=$(timeout 20 "$KRON" sim ${flags[$dev]} "$tmp/sum.sim" 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "$dev: ticks adding up past the limit: exit $rc: $out"
  grep -q '^sample @4611686018427' <<<"$out" || fail "$dev: the sample below the limit did not go out: $out"
  grep -qE "sum.sim:[0-9]+: tick: 4096 node clocks from clock [0-9]+ would pass the model's limit of 2\^62" <<<"$out" \
    || fail "$dev: the tick past the limit: $out"
  grep -q '^read 1' <<<"$out" && fail "$dev: the script went on after the refused tick"
  n=$(($(printf "${take[$dev]}" | wc -l) + 3))
  grep -q "sum.sim:$n: tick" <<<"$out" || fail "$dev: the refused tick is not named at line $n: $out"
done
# The NUMAchine monitor (--chip numachine, docs/models-numachine.md): register names, 32-bit reads, its own
# commands' errors with FILE:LINE, the interrupt line, and the clock limit (ERRATUM E134).
printf 'write PR 5\nexpect pr 6\nread SRAM[0x10]\n' > "$tmp/nm_expect.sim"
out=$("$KRON" sim --chip numachine "$tmp/nm_expect.sim" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "numachine failed expect: exit $rc"
grep -q "nm_expect.sim:2: expect failed: read PR = 0x00000005, expected 0x00000006" <<<"$out" || fail "numachine expect: $out"
grep -q "^read SRAM\[0x0010\] = 0x00000000$" <<<"$out" || fail "numachine read: $out"
nm_error() {  # script-text expected-message
  printf '%b' "$1" > "$tmp/nm.sim"
  out=$("$KRON" sim --chip numachine "$tmp/nm.sim" 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "numachine '$1': exit $rc"
  grep -qF -- "$2" <<<"$out" || fail "numachine '$1': message '$out' lacks '$2'"
}
nm_error 'tick 1\nwrite GPC4 1\n' "nm.sim:2:7: 'GPC4' is not a number"
nm_error 'read-miss addr=0x10\n' "nm.sim:1: read-miss: latency= is required"
nm_error 'read-miss addr=0x10000000000 latency=9\n' "read-miss: addr=0x10000000000 out of range"
nm_error 'packet send cmd=0x2000 addr=1\n' "packet: cmd=0x2000 out of range 0-8191"
nm_error 'l2 fetch index=1\n' "usage: l2 read|write index=I [miss] [instr]"
nm_error 'pipeline load nap\n' "pipeline: 'nap' is not a pipeline state"
nm_error 'nack retries=5 cycles=9\n' "nack: needs 1-65536 retries"
nm_error 'readclear PR\n' "usage: readclear GPC0|GPC1|GPC2|GPC3"
nm_error 'netrdy 0\n' "nm.sim:1: 'netrdy' is a MultiKron pin"
nm_error 'clocks node=40000000\n' "the NUMAchine card clock is 50000000 Hz"
nm_error 'tick 4611686018427387904\ntick 1\n' "nm.sim:2: tick: 1 node clocks from clock 4611686018427387904 would pass"
printf 'write GPCM1 0x808800\nwrite GPC1 0xfffffffe\nwrite GPCE 1\n' > "$tmp/nm_irq.sim"
out=$("$KRON" sim --chip numachine "$tmp/nm_irq.sim"); rc=$?
[ $rc -eq 0 ] || fail "numachine irq: exit $rc"
[ "$out" = "irq @5 GPC1" ] || fail "numachine irq: '$out'"
echo ok
