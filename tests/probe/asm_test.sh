#!/usr/bin/env bash
# The compiled probe stays small (CONVENTIONS "Prove it stays small"): disassembles kron_asm_probe from
# the probe test binary and checks its shape. Excluded from the sanitizer run (label nosan): sanitizer
# instrumentation adds calls and loads that are not the probe's.
set -euo pipefail
bin=${1:?test binary}
dis=$(mktemp); trap 'rm -f "$dis"' EXIT
objdump -d --no-show-raw-insn "$bin" >"$dis"
check() {  # FUNCTION LIMIT
local fn=$1 limit=$2
asm=$(awk '/^[0-9a-f]+ <'"$fn"'>:/{on=1; next} on && /^$/{exit} on' "$dis")
[ -n "$asm" ] || { echo "$fn not found in $bin"; exit 1; }
echo "$asm"
# The filtered probe is the first instructions: load the control word's address, load it, mask, compare,
# branch. The whole function (fast path plus the branches to the slow paths) stays small.
code=$(grep -Ev '\snop|xchg +%ax,%ax' <<<"$asm")
total=$(grep -c . <<<"$code")
fifth=$(sed -n 5p <<<"$code")
rdtsc=$(grep -cw rdtsc <<<"$asm" || true)
locked=$(grep -Ec '\slock\s|\sxchg.*\(|\smfence|\scmpxchg' <<<"$asm" || true)  # xchg with memory is locked
echo "instructions: $total; 5th: $fifth; rdtsc: $rdtsc; locked/fences: $locked"
[ "$rdtsc" -eq 1 ] || { echo "FAIL: expected exactly one rdtsc"; exit 1; }
[ "$locked" -eq 0 ] || { echo "FAIL: a locked instruction or fence in the probe"; exit 1; }
grep -Eq '\sj(ne|e)\s' <<<"$fifth" || { echo "FAIL: the filter test is not the first four instructions"; exit 1; }
[ "$total" -le "$limit" ] || { echo "FAIL: $fn grew to $total instructions (limit $limit)"; exit 1; }
echo "$fn assembly: ok"
}
check kron_asm_probe 72
# The named probe (KRON_EVENT): trace() plus the site id's load, test and shift, and the call that
# registers it once.
check kron_asm_named 84  # 82 with g++ 12 -O2
