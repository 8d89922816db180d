#!/usr/bin/env bash
# make bench: runs every benchmark program of the build and merges their JSON into BUILD/bench.json.
# Benchmarks that compute project figures (floor_ns, trace_ns, ...) write them as top-level keys of
# their own JSON file BUILD/bench-NAME.json; this script merges those too.
set -euo pipefail
build=${1:-build}
shopt -s nullglob
results=()
for b in "$build"/bench/kron_bench_*; do
  [ -x "$b" ] || continue
  name=$(basename "$b")
  echo "== $name"
  rm -f "$build/$name.gbench.json"
  case "$name" in
    # Not a Google Benchmark program: its own arguments (the rank counts of docs/performance.md).
    kron_bench_merge_scale) "$b" 256 1024 4096 ;;
    *) "$b" --benchmark_out="$build/$name.gbench.json" --benchmark_out_format=json ;;
  esac
  # Google Benchmark programs write their results there; the others (kron_bench_export, ...) only their
  # own BUILD/bench-NAME.json, merged below.
  [ -f "$build/$name.gbench.json" ] && results+=("$build/$name.gbench.json")
done
# libkron_mpi's cost per MPI call: the ping-pong of bench/mpi/pingpong.cpp, 2 ranks, plain and
# with libkron_mpi preloaded; (instrumented - plain) / 4 calls a round trip, into bench-mpi.json.
if [ -x "$build/bench/kron_mpi_pingpong" ] && [ -f "$build/lib/libkron_mpi.so" ]; then
  echo "== kron_mpi_pingpong (plain, then under libkron_mpi)"
  mpi=(mpirun --allow-run-as-root --oversubscribe -np 2)
  plain=$("${mpi[@]}" "$build/bench/kron_mpi_pingpong" 100000 5)
  kronout=$(mktemp -d)
  kron=$("${mpi[@]}" -x LD_PRELOAD="$(cd "$build" && pwd)/lib/libkron_mpi.so" -x KRON_MPI_OUT="$kronout/pp" \
    -x KRON_MPI_BOARD_MB=64 "$build/bench/kron_mpi_pingpong" 100000 5)
  # One rank, MPI_Send to MPI_PROC_NULL: the wrapper's own work, with no busy-polling peer on the cores.
  mpi1=(mpirun --allow-run-as-root --oversubscribe -np 1)
  plain1=$("${mpi1[@]}" "$build/bench/kron_mpi_pingpong" 1000000 5 procnull)
  kron1=$("${mpi1[@]}" -x LD_PRELOAD="$(cd "$build" && pwd)/lib/libkron_mpi.so" -x KRON_MPI_OUT="$kronout/pn" \
    -x KRON_MPI_BOARD_MB=64 "$build/bench/kron_mpi_pingpong" 1000000 5 procnull)
  rm -rf "$kronout"
  python3 - "$build" "$plain" "$kron" "$plain1" "$kron1" <<'PY'
import json, sys, os
plain, kron, plain1, kron1 = (json.loads(a) for a in sys.argv[2:6])
per_call = (kron["round_trip_ns"] - plain["round_trip_ns"]) / 4
out = {"mpi_pingpong_round_trip_ns": plain["round_trip_ns"], "mpi_pingpong_kron_round_trip_ns": kron["round_trip_ns"],
       "mpi_per_call_ns": per_call, "mpi_procnull_call_ns": plain1["call_ns"],
       "mpi_procnull_kron_call_ns": kron1["call_ns"], "mpi_wrapper_ns": kron1["call_ns"] - plain1["call_ns"]}
print(json.dumps(out))
json.dump(out, open(os.path.join(sys.argv[1], "bench-mpi.json"), "w"))
PY
fi
python3 - "$build" "${results[@]}" <<'PY'
import json, sys, glob, os
build = sys.argv[1]
out = {"benchmarks": []}
for f in sys.argv[2:]:
    d = json.load(open(f))
    out.setdefault("context", d.get("context"))
    out["benchmarks"] += d.get("benchmarks", [])
for f in sorted(glob.glob(os.path.join(build, "bench-*.json"))):
    out.update(json.load(open(f)))
json.dump(out, open(os.path.join(build, "bench.json"), "w"), indent=1)
print(f"wrote {os.path.join(build, 'bench.json')}")
PY
