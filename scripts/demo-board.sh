#!/usr/bin/env bash
# make demo-board: the Experimenter's Toolkit workflow of 003 (NISTIR 5993) against kron's PCI board model:
# test the board (003 3.4), run a script at the board's byte offsets, run a probed C program (003 3.6
# sample1.c), read the board memory back (mk_rdsample), expand it and report on it (mk_expand, mk_rpt).
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
kron=$(cd "$build" && pwd)/kron
sample1=$(cd "$build" && pwd)/examples/pci_sample1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
echo "== kron selftest basic (test_mk) and sample (mk_sample_test)"
"$kron" selftest basic
"$kron" selftest sample
echo "== kron selftest nite --seconds 2 (mk_nite_test, bounded)"
"$kron" selftest nite --seconds 2
echo "== kron sim --board pci examples/pci/board.sim  (memdump -> board.mk)"
"$kron" sim --board pci "$here/examples/pci/board.sim"
echo "== kron sim --board pci examples/pci/devsel.sim  (003 2.3: PCI bus utilisation)"
"$kron" sim --board pci "$here/examples/pci/devsel.sim"
echo "== examples/pci/sample1.c on the board model -> board.img (local memory + pointer + Configuration Register)"
"$sample1" board.img 100
echo "== kron rdsample --pci-memory board.img -v  (mk_rdsample -> mk.dat)"
"$kron" rdsample --pci-memory board.img -v
cp "$here/examples/pci/interval.info" .
echo "== kron expand -h --input-format mk2 mk.dat (first lines)"
# Into a file first: `kron expand | head` under pipefail would fail with SIGPIPE (exit 141) once head is done.
"$kron" expand -h --input-format mk2 mk.dat > expand.txt
head -12 expand.txt
echo "== kron rpt --input-format mk2 -f interval.info mk.dat (classes 1-3)"
"$kron" rpt --input-format mk2 -f interval.info mk.dat
echo "== kron sim --board pci examples/pci/cable.sim | kron expand --input-format mk2 -  (LOCAL = 0: the cable to a reader)"
"$kron" sim --board pci "$here/examples/pci/cable.sim" 2>/dev/null | "$kron" expand -h --input-format mk2 -
