#!/usr/bin/env bash
# make demo: kron's main job. First the live recorder: an instrumented multithreaded program (after the
# toolkit's sample1.c, 003 section 3.6) recorded on a board, and what was recorded; then a MultiKron II
# simulator session (000).
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
kron="$build/kron"
out="$build/demo"
mkdir -p "$out"

echo "== kron record: examples/sample1 (system calls in a loop, intervals of classes 1-3, class-4 messages between two threads)"
"$kron" record -o "$out/sample1.trace" --counter 0=clock --counter 1=software --counter 2=page-faults \
  --counter 3=oncpu -- "$build/examples/kron_sample1" 5000
echo "== kron info $out/sample1.trace"
"$kron" info "$out/sample1.trace"
echo "   (intervals: examples/sample1/interval.info)"

if [ -f "$here/examples/mk2/demo.sim" ]; then
  echo "== kron sim: examples/mk2/demo.sim (MultiKron II, 000)"
  "$kron" sim "$here/examples/mk2/demo.sim"
fi
