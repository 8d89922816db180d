#!/usr/bin/env bash
# What kron top costs the program it watches: the probe rate of build/bench/kron_probe_flood (THREADS threads
# calling kron::trace flat out, its own wall-clock figure) under `kron record -- PROGRAM` and under
# `kron top -- PROGRAM` (the same recording, plus a frame every --interval, plain frames to /dev/null), and
# under `kron record --board` with and without a read-only `kron top --board` beside it; runs alternate,
# ROUNDS of each, in one invocation (docs/performance.md "kron top").
#
#   bench/top_overhead.sh [BUILD] [THREADS] [SAMPLES] [ROUNDS]
#   WAIT= bench/top_overhead.sh ...   without --wait: the probe never waits for the drain (what the probe
#                                     itself costs beside the watcher; samples the drain misses are LOST)
#   BOARD=0 ...                       the first part only
set -euo pipefail
build=${1:-build}
threads=${2:-1}
samples=${3:-100000000}
rounds=${4:-3}
wait_flag=${WAIT---wait}
kron=$build/kron
flood=$build/bench/kron_probe_flood
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; "$kron" board rm "top-bench-$$" >/dev/null 2>&1 || true' EXIT

# "probe_flood threads=T samples=S seconds=X cpu=C" -> ns a probe and M probes/s of one thread.
rate() { sed -n 's/.*probe_flood threads=\([0-9]*\) samples=\([0-9]*\) seconds=\([0-9.e-]*\).*/\1 \2 \3/p' |
  awk '{printf "%.2f ns/probe  %.1f M probes/s a thread", $3 * 1e9 / $2, $2 / $3 / 1e6}'; }
lost() { grep -o 'LOST [0-9]*' | head -1 || true; }

for r in $(seq "$rounds"); do
  out=$("$kron" record $wait_flag -o "$tmp/r.trace" -- "$flood" "$threads" "$samples" 2>"$tmp/r.err")
  echo "round $r  kron record ${wait_flag:-(no wait)} -- flood: $(rate <<<"$out")  $(lost <"$tmp/r.err")"
  out=$("$kron" top $wait_flag --interval 0.5 -o "$tmp/t.trace" -- "$flood" "$threads" "$samples" 2>"$tmp/t.err")
  frames=$(grep -c '^kron top - ' <<<"$out" || true)
  echo "round $r  kron top ${wait_flag:-(no wait)} -- flood:    $(rate <<<"$out")  $(lost <"$tmp/t.err") ($frames frames)"
done

# A board written by `kron run`, drained by `kron record --board`; kron top --board beside it or not.
[ "${BOARD:-1}" = 0 ] && exit 0
b="top-bench-$$"
for r in $(seq "$rounds"); do
  for watch in no yes; do
    "$kron" board create "$b" --buffer 64M $wait_flag >/dev/null
    "$kron" record --board "$b" --until-idle 0.5 -q -o "$tmp/b.trace" 2>/dev/null &
    rec=$!
    if [ "$watch" = yes ]; then
      "$kron" top --board "$b" --interval 0.5 >/dev/null &
      top=$!
    fi
    out=$("$kron" run --board "$b" -- "$flood" "$threads" "$samples")
    wait "$rec"
    if [ "$watch" = yes ]; then
      kill "$top"
      wait "$top" || true
    fi
    "$kron" board rm "$b" >/dev/null
    echo "round $r  kron run --board (drained), kron top --board watching: $watch  $(rate <<<"$out")"
  done
done
