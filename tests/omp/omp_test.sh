#!/usr/bin/env bash
# An OpenMP program with no kron code (examples/openmp/ompdemo.c), built with clang -fopenmp (LLVM's libomp, which
# has OMPT),
# prints the same under `kron record --openmp`; `kron rpt` shows its parallel region, each thread's implicit task,
# the explicit barrier with its wait, the critical section's wait and hold and the explicit tasks, per thread,
# with the counts the program counts itself; the Perfetto export carries them.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
clang -O2 -g -fopenmp "$here/../../examples/openmp/ompdemo.c" -o "$tmp/omp_program"
"$tmp/omp_program" >"$tmp/plain"
"$KRON" record -q --openmp -o "$tmp/omp.kron" -- "$tmp/omp_program" >"$tmp/recorded"
cmp "$tmp/plain" "$tmp/recorded" || { echo "FAIL: the program printed differently under kron record --openmp"; exit 1; }
"$KRON" rpt --json "$tmp/omp.kron" >"$tmp/rpt.json"
"$KRON" export --format perfetto -o "$tmp/omp.pftrace" "$tmp/omp.kron" >"$tmp/perfetto.out" 2>&1
"$KRON" export --format chrome-json -o "$tmp/omp.json" "$tmp/omp.kron" >/dev/null 2>&1
grep -q '"omp barrier wait (explicit)"' "$tmp/omp.json" || { echo "FAIL: the JSON export has no barrier wait"; exit 1; }
python3 - "$tmp" <<'PY'
import json, re, sys
tmp = sys.argv[1]
last = open(f"{tmp}/plain").read().splitlines()[-1]
counts = {k: int(v) for k, v in (kv.split("=") for kv in last.split()[1:])}
def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)
rows = [r for r in json.load(open(f"{tmp}/rpt.json"))["rows"] if r["stream"] != "all"]
# The tool's sites name the library, never a path of kron's own build (docs/functions.md "OpenMP").
for r in rows:
    if r.get("location") != "libkron_omp": fail(f"{r['name']}: location {r.get('location')!r}, not 'libkron_omp'")
def per_thread(name):
    got = {r["stream"]: r for r in rows if r["name"] == name}
    for s, r in got.items():
        if r["unmatched_starts"] or r["unmatched_ends"]: fail(f"{name} on {s}: unmatched begins/ends")
    return got
def total(name):
    return sum(r["count"] for r in per_thread(name).values())
threads = counts["threads"]
# Three threads (the program asks for them): each single has one executor and two others, so the two rows
# differ in their counts (with two threads they would not).
if threads != 3: fail(f"the program ran {threads} threads, not the 3 it asks for")
if total("omp parallel") != counts["regions"]: fail(f"omp parallel: {total('omp parallel')} != {counts['regions']}")
for name in ("omp implicit task", "omp barrier (explicit)", "omp barrier wait (explicit)"):
    pt = per_thread(name)
    if len(pt) != threads: fail(f"{name}: on {len(pt)} threads, expected {threads}: {sorted(pt)}")
    if any(r["count"] != counts["regions"] for r in pt.values()): fail(f"{name}: not once per thread and region")
if total("omp critical hold") != counts["critical"]:
    fail(f"omp critical hold {total('omp critical hold')} != {counts['critical']}")
if total("omp critical wait") != counts["critical"]: fail("omp critical wait: not once per entry")
if total("omp task") < counts["tasks"]: fail(f"omp task: {total('omp task')} stretches for {counts['tasks']} tasks")
if total("omp single (executor)") != 2: fail("omp single (executor): two singles, one executor each")
if total("omp single (other)") != 2 * (threads - 1): fail("omp single (other): two singles, every other thread")
if total("omp loop") != threads: fail("omp loop: once per thread")
# The Perfetto export draws every occurrence as a slice (its summary line counts them).
slices = int(re.search(r"(\d+) interval slices", open(f"{tmp}/perfetto.out").read()).group(1))
if slices != sum(r["count"] for r in rows):
    fail(f"Perfetto: {slices} slices, rpt counts {sum(r['count'] for r in rows)}")
names = {r.get("thread_name", "") for r in rows}
if not any(n.startswith("omp thread ") for n in names): fail(f"no thread named by its OpenMP number: {names}")
print("openmp: ok")
PY
