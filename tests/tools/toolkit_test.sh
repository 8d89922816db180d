#!/usr/bin/env bash
# The PCI toolkit workflow through the tools: sample1 on the board model -> board memory image ->
# kron rdsample --pci-memory (003 3.5 mk_rdsample) -> kron expand / kron rpt; a raw memdump with --pointer;
# the external cable to a reader (kron sim ... | kron expand -); bad dumps refused (exit 2, file and
# offset); kron selftest basic|sample --board against a live board, mem|nite --board refused.
set -euo pipefail
kron=${KRON:?}
sample1=${PCI_SAMPLE1:?}
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
board="pcitest-$$"
trap 'rm -rf "$tmp"; "$kron" board rm "$board" >/dev/null 2>&1 || true' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"

# sample1 -> board.img -> rdsample -> mk.dat -> expand / rpt.
"$sample1" board.img 40 | grep -q "202 probes" || fail "sample1"
out=$("$kron" rdsample --pci-memory board.img)
echo "$out"
grep -q "202 samples (202 trace, 0 resource), 4040 bytes from memory words 0x000000-0x0003f1; circular buffer, not wrapped" <<<"$out" || fail "rdsample summary"
[ "$(stat -c %s mk.dat)" = 4040 ] || fail "mk.dat size"
[ "$("$kron" expand --input-format mk2 mk.dat | wc -l)" = 202 ] || fail "expand of mk.dat"
"$kron" rpt --wide --input-format mk2 -f "$here/examples/pci/interval.info" mk.dat | grep -q "whole program  *1 .* 1 " || fail "rpt of mk.dat"
# -f, -s, -e as mk_rdsample: memory words; -s 5 skips sample 0 (5 words).
"$kron" rdsample --pci-memory board.img -f part.dat -s 5 -e 15 >/dev/null
[ "$(stat -c %s part.dat)" = 40 ] || fail "-s/-e"

# A raw dump (memdump) with the pointer given; the same stream as the image gives.
sed -e 's/^memdump 0 31 board.mk/memdump 0 31 raw.mk\nmemimage img.mk/' "$here/examples/pci/board.sim" >board.sim
"$kron" sim --board pci board.sim >/dev/null
"$kron" rdsample --pci-memory raw.mk --pointer 31 -f a.dat >/dev/null
"$kron" rdsample --pci-memory img.mk -f b.dat >/dev/null
cmp -s a.dat b.dat && cmp -s a.dat raw.mk || fail "raw dump and image differ"
"$kron" rdsample --pci-memory raw.mk --pointer 31 --simple -v 2>&1 | grep -q "simple buffer" || fail "--simple"

# Bad input: exit 2 and a message naming the file and the offset.
head -c 50 img.mk >cut.mk
set +e
"$kron" rdsample --pci-memory cut.mk -f x.dat 2>err.txt; rc=$?
set -e
[ $rc = 2 ] && grep -q "cut.mk: offset 50: the header announces 31 memory words" err.txt || fail "cut image: rc $rc $(cat err.txt)"
! "$kron" rdsample --pci-memory raw.mk 2>err.txt && grep -q "raw.mk: offset 0: .*give --pointer" err.txt || fail "raw without pointer"
! "$kron" rdsample 2>/dev/null || fail "rdsample with neither --board nor --pci-memory"
# -s/-e are memory words there (22 bits): a value past 32 bits was cut to 0xffffffff.
for o in -s -e; do
  set +e; "$kron" rdsample --pci-memory raw.mk --pointer 31 -f x.dat $o 4294967301 2>err.txt; rc=$?; set -e
  [ $rc = 2 ] && grep -qF -- "$o 4294967301: offset 0: out of range 0-4194304 (memory words" err.txt || fail "$o: rc $rc $(cat err.txt)"
done
[ ! -e x.dat ] || fail "a refused dump left an output file"

# The external cable (LOCAL = 0) to a reader: kron sim's own lines go to standard error.
"$kron" sim --board pci "$here/examples/pci/cable.sim" 2>sim.txt >cable.bin
[ "$(stat -c %s cable.bin)" = 124 ] || fail "cable bytes on standard output"
grep -q "sample @" sim.txt || fail "sim lines on standard error"
lines=$("$kron" sim --board pci "$here/examples/pci/cable.sim" 2>/dev/null | "$kron" expand --input-format mk2 -)
echo "$lines"
[ "$(wc -l <<<"$lines")" = 3 ] && grep -q "^18 .* 0000000000000014$" <<<"$lines" || fail "kron expand - of the cable"
"$kron" rpt --input-format mk2 -f "$here/examples/pci/interval.info" - <cable.bin >/dev/null || fail "kron rpt -"
! "$kron" expand - <cable.bin 2>err.txt && grep -q "<stdin>: offset 0: .*--input-format" err.txt || fail "stdin without format"

# kron selftest against a live board.
"$kron" board create "$board" --buffer 1M --lanes 4 >/dev/null
"$kron" selftest basic --board "$board" | tee basic.txt
grep -q "test_mk: 0 error(s)" basic.txt || fail "selftest basic --board"
"$kron" selftest sample --board "$board" | tee sample.txt
grep -q "mk_sample_test: 0 error(s)" sample.txt || fail "selftest sample --board"
grep -q "trace sample, CPU ID 0, lane" sample.txt || fail "sample: CPU 0"
set +e
"$kron" selftest mem 0 16 --board "$board" 2>/dev/null; rc_mem=$?
"$kron" selftest nite --board "$board" 2>/dev/null; rc_nite=$?
"$kron" selftest basic --board no-such-board 2>/dev/null; rc_none=$?
set -e
[ $rc_mem = 2 ] && [ $rc_nite = 2 ] && [ $rc_none = 2 ] || fail "mem/nite/no board: $rc_mem $rc_nite $rc_none"
echo "toolkit_test: ok"
