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
  "$b" --benchmark_out="$build/$name.gbench.json" --benchmark_out_format=json
  results+=("$build/$name.gbench.json")
done
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
