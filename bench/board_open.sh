#!/bin/sh
# What opening a board costs, by its size (docs/performance.md "Opening a board"; ERRATUM E321):
#   bench/board_open.sh [KRON [PROBE]]      (defaults: build/kron, build/kron-selftest-probe)
# For a 16 MiB and a 1 GiB board: `kron board create`, `kron status --board`, and an instrumented program
# that attaches and takes 1,000 probes (kron-selftest-probe), each the median of RUNS runs (default 7)
# by the wall clock, in milliseconds. Boards are named board-open-PID-SIZE and removed at the end.
set -eu
KRON=${1:-build/kron}
PROBE=${2:-build/kron-selftest-probe}
RUNS=${RUNS:-7}
ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ARGS=$(i=0; while [ $i -lt 1000 ]; do printf 'trace %d ' $i; i=$((i+1)); done)
for size in 16M 1G; do
  name=board-open-$$-$size
  c=$( for r in $(seq "$RUNS"); do
         t0=$(ms); "$KRON" board create "$name" --buffer "$size" --replace >/dev/null; t1=$(ms)
         echo $((t1 - t0))
       done | median )
  s=$( for r in $(seq "$RUNS"); do
         t0=$(ms); "$KRON" status --board "$name" >/dev/null; t1=$(ms); echo $((t1 - t0))
       done | median )
  p=$( for r in $(seq "$RUNS"); do
         # shellcheck disable=SC2086
         t0=$(ms); KRON_BOARD=$name "$PROBE" "$name" 0 -1 $ARGS; t1=$(ms); echo $((t1 - t0))
       done | median )
  "$KRON" board rm "$name" >/dev/null
  echo "board $size: create ${c} ms, status ${s} ms, 1000-probe program ${p} ms (medians of $RUNS)"
done
