#!/usr/bin/env bash
# mk.h at kron.hpp's reach: a C program (stats_c_program.c) with phases, latency histograms and virtual
# counters recorded under kron record; kron hist shows each histogram and counter per phase with the counts,
# sums, minima and maxima the program produced. The same for its out-of-line forms (mk_*_fn, what other
# languages' bindings call): a KRON_C_OUT_OF_LINE build of the program must show the same.
set -euo pipefail
kron=${KRON:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
n=1000
for prog in "$@"; do
  "$kron" record -q -o "$tmp/c.trace" -- "$prog" "$n" >"$tmp/out.txt"
  grep -q "^phase 2$" "$tmp/out.txt" || fail "$prog: mk_current_phase() is not 2: $(cat "$tmp/out.txt")"
  "$kron" hist "$tmp/c.trace" >"$tmp/h.txt"
  for h in "c sizes" "c work" "c auto"; do grep -q "^histogram $h$" "$tmp/h.txt" || fail "$prog: no histogram '$h'"; done
  grep -q "^  phase 1: count" "$tmp/h.txt" || fail "$prog: no phase 1 row"
  grep -q "^  phase 2: count" "$tmp/h.txt" || fail "$prog: no phase 2 row"
  "$kron" hist --json "$tmp/c.trace" >"$tmp/h.json"
  python3 - "$tmp/h.json" "$n" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); n = int(sys.argv[2])
hs = {h["name"]: h for h in j["histograms"]}
assert set(hs) == {"c sizes", "c work", "c auto"}, set(hs)
reqs = {1: n, 2: 2 * n}
for name, h in hs.items():
    phases = {p["phase"]: p for p in h["phases"]}
    assert set(phases) == {1, 2}, (name, set(phases))
    for p, k in reqs.items():
        want = k if name != "c auto" else (k + 1) // 2
        assert phases[p]["count"] == want, (name, p, phases[p]["count"], want)
s = {p["phase"]: p for p in hs["c sizes"]["phases"]}
for p, k in reqs.items():
    assert s[p]["min"] == 1 and s[p]["max"] == 7, s[p]
    assert s[p]["sum"] == sum(1 + i % 7 for i in range(k)), (s[p]["sum"], p)
c = {}
for e in j["counters"]:
    c[(e["index"], e["phase"])] = c.get((e["index"], e["phase"]), 0) + e["value"]
for p, k in reqs.items():
    for r in range(3):
        assert c.get((r, p)) == len(range(r, k, 3)), (r, p, c.get((r, p)))
    assert c.get((5000, p)) == 2 * k, (p, c.get((5000, p)))
assert j["stat_lost"] == 0
PY
  # The named scopes and the thread name of the same program (kron rpt pairs the scopes).
  "$kron" rpt "$tmp/c.trace" >"$tmp/rpt.txt"
  grep -q "c request" "$tmp/rpt.txt" || fail "$prog: kron rpt shows no scope 'c request'"
  grep -q "c-stats" "$tmp/rpt.txt" || fail "$prog: kron rpt shows no thread 'c-stats'"
done
echo ok
