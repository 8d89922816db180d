#!/usr/bin/env bash
# kron counters --board NAME: the Resource Counter control registers of 000 Tables B5 (Mode), B6 (Clock
# Select) and B7 (Enable), sixteen 4-bit fields, field n = counter n, written from outside while a
# program runs; a field written 0 is left unchanged (000 "Resource Counter Control Registers", ERRATUM
# E13). The running program's counter changes: a Software counter (Table B5 x010) counts once it is
# enabled from outside (Table B7 xx11 Reset & Enable), and stops when disabled (xx01).
set -euo pipefail
kron=${KRON:?}
writer=${KRON_ATTACH_WRITER:?}
check="python3 ${KRON_SOURCE_DIR:?}/tests/recorder/trace_check.py"
tmp=$(mktemp -d)
board="counters-$$"
cleanup() {
  for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done
  "$kron" board rm "$board" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
bad() {  # bad() EXPECTED-TEXT ARGS...: exit 2, a message naming the argument, and no register changed
  local want=$1 rc=0 before after
  shift
  before=$("$kron" counters --board "$board" | head -1)
  "$kron" counters --board "$board" "$@" 2>"$tmp/err" >/dev/null || rc=$?
  after=$("$kron" counters --board "$board" | head -1)
  [ "$rc" = 2 ] || fail "kron counters $*: exit $rc, expected 2"
  grep -qF -- "$want" "$tmp/err" || fail "kron counters $*: message does not name '$want': $(cat "$tmp/err")"
  [ "$before" = "$after" ] || fail "kron counters $*: a refused write changed the registers"
}

"$kron" board create "$board" --buffer 1M --lanes 4 >/dev/null
# Reset values (Tables B5-B7 "** default"): External Signal, TSclk, disabled, in every field.
out=$("$kron" counters --board "$board")
echo "$out"
grep -q "Enable Register 0x1111111111111111  Mode Register 0x4444444444444444  Clock Select Register 0x4444444444444444" <<<"$out" \
  || fail "reset values"
grep -Eq "^ +15  External Signal +single TSclk +disabled" <<<"$out" || fail "counter 15 by name"

# Fields by name and number; ranges; a field not named is written 0 and keeps its value (E13).
out=$("$kron" counters --board "$board" --mode 0-3=clk --clock 2=nodeclk/10 --enable 3=enable,1=reset)
grep -q "Mode Register 0x4444444444441111" <<<"$out" || fail "--mode 0-3=clk: $out"
grep -q "Clock Select Register 0x4444444444444244" <<<"$out" || fail "--clock 2=nodeclk/10: $out"
grep -q "Enable Register 0x1111111111112131" <<<"$out" || fail "--enable 3=enable,1=reset: $out"
grep -Eq "^ +2  CLK +single NodeClk/10 +disabled" <<<"$out" || fail "counter 2 by name: $out"
grep -Eq "^ +1  CLK +single TSclk +reset & enabled" <<<"$out" || fail "counter 1 by name: $out"
# Raw 64-bit writes as on the chip: only non-zero fields change (Table B7 xx00 = no change).
out=$("$kron" counters --board "$board" --enable-reg 0x0000000000001000 --mode-reg 0x00000000000000a0)
grep -q "Enable Register 0x1111111111111131" <<<"$out" || fail "--enable-reg: $out"
# Table B5 1010: Software, double precision (kept as written, E13).
grep -Eq "^ +1  Software +double" <<<"$out" || fail "--mode-reg 1010: $out"
# A field whose code bits are 0 is a no-op whatever its other bits (E13): Enable 0100, Mode 1000.
out=$("$kron" counters --board "$board" --enable-reg 0x4 --mode-reg 0x8)
grep -q "Enable Register 0x1111111111111131  Mode Register 0x44444444444411a1" <<<"$out" || fail "E13 no-op fields: $out"

# Bad arguments: exit 2, the message names the argument, nothing written.
bad "--enable 3=enabel" --enable 3=enabel
bad "--mode 16=clk" --mode 16=clk
bad "--clock 2" --clock 2
bad "--mode 3-1=clk" --mode 3-1=clk
bad "--enable-reg 0x1g" --enable-reg 0x1g
bad "--enable 0=enable,7=sometimes" --enable 0=enable,7=sometimes

# A running program: counter 5 is not counting (External Signal, unwired, disabled); the test makes it a
# Software counter and enables it from outside, then disables it, while the program takes Resource
# samples every millisecond and adds 100 to counter 5 before each (attach_writer counters).
"$kron" record --board "$board" -q -o "$tmp/c.trace" >/dev/null 2>"$tmp/rec.err" &
rec=$!
"$kron" run --board "$board" -- "$writer" counters "$tmp/stop" &
w=$!
# Waits until the program has taken N more samples than it had at the call's start (kron status reads the
# board's passed count, which the program's lane keeps while it runs).
passed() { "$kron" status --board "$board" | sed -n 's/^accounting: passed \([0-9]*\) .*/\1/p'; }
more_samples() {
  local from
  from=$(passed)
  for _ in $(seq 600); do [ "$(passed)" -ge $((from + $1)) ] && return 0; sleep 0.05; done
  fail "the program took no samples"
}
more_samples 5  # with counter 5 off
"$kron" counters --board "$board" --mode 5=software --enable 5=reset >/dev/null
more_samples 5  # counting
"$kron" counters --board "$board" --enable 5=disable | grep -Eq "^ +5  Software +single TSclk +disabled" || fail "disable"
more_samples 3  # stopped
touch "$tmp/stop"
wait "$w" || fail "counters writer"
kill -INT "$rec"
wait "$rec" || fail "recording: $(cat "$tmp/rec.err")"
$check "$tmp/c.trace" >"$tmp/c.json"
python3 - "$tmp/c.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
r = sorted(j["resources"], key=lambda x: x["data"])
assert len(r) >= 10, len(r)
assert [x["data"] for x in r] == list(range(len(r))), "resource samples missing"
c5 = [x["counters"][5] for x in r]
# Off, then counting by 100 a sample (Software, Reset & Enable: from 0), then frozen (Disable keeps it).
assert c5[0] == 0, c5[:5]
assert all(b >= a for a, b in zip(c5, c5[1:])), "counter 5 went backwards"
steps = {b - a for a, b in zip(c5, c5[1:])}
assert steps <= {0, 100}, steps
assert c5[-1] > 0, "counter 5 never counted after it was enabled from outside"
assert c5[-1] == c5[-2] == c5[-3], ("counter 5 kept counting after it was disabled", c5[-5:])
assert all(x["counters"][n] == 0 for x in r for n in (0, 4, 6)), "other counters changed"
PY
echo "counters tests passed"
