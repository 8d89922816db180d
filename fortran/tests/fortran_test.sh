#!/usr/bin/env bash
# The Fortran module kron as a user builds with it: make install's tree (a temporary prefix), then
# `gfortran prog.f90 $(pkg-config --cflags --libs kron-fortran)` and nothing else. Under kron record the
# program's named scopes and thread name are in kron rpt, its phases, histogram and virtual counter in kron
# hist, and its signed values as the program gave them in kron expand and the exports (DECISION D30); without a
# board it runs with its probes off.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
flags=$(pkg-config --cflags --libs kron-fortran)
ls "$(pkg-config --variable=fmoddir kron-fortran)/kron.mod" >/dev/null || fail "kron.mod is not where kron-fortran.pc points"
(cd "$tmp" && gfortran "$here/kron_fortran_prog.f90" $flags -o "$tmp/prog")
kron="$tmp/prefix/bin/kron"
env -u KRON_BOARD "$tmp/prog" 5 | grep -q "attached F" || fail "without a board the program did not run with probes off"
n=50
"$kron" record -q -o "$tmp/f.trace" -- "$tmp/prog" $n >"$tmp/out.txt"
grep -q "attached T" "$tmp/out.txt" || fail "the program did not attach under kron record: $(cat "$tmp/out.txt")"
"$kron" rpt "$tmp/f.trace" >"$tmp/rpt.txt"
grep -q "fortran main" "$tmp/rpt.txt" || fail "kron rpt shows no thread 'fortran main': $(cat "$tmp/rpt.txt")"
max=$(((1 << 47) - 1)) min=$((-(1 << 47)))
python3 "$here/../../tests/support/signed_values.py" "$kron" "$tmp/f.trace" "signed=-5,0,$max,$min" \
  "signed outside=$min,$max" "scope:signed scope=-5" >/dev/null || fail "the signed values above"
"$kron" rpt --json "$tmp/f.trace" >"$tmp/rpt.json"
python3 - "$tmp/rpt.json" "$n" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); n = int(sys.argv[2])
def walk(x):
    if isinstance(x, dict):
        yield x
        for v in x.values(): yield from walk(v)
    elif isinstance(x, list):
        for v in x: yield from walk(v)
counts = {}
for d in walk(j):
    if isinstance(d.get("name"), str) and isinstance(d.get("count"), int) and d["name"] in ("f solve", "f step"):
        counts[d["name"]] = max(counts.get(d["name"], 0), d["count"])
assert counts.get("f step") == 2 * n, counts
assert counts.get("f solve") == 2, counts
PY
"$kron" hist --json "$tmp/f.trace" >"$tmp/h.json"
python3 - "$tmp/h.json" "$n" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); n = int(sys.argv[2])
hs = {h["name"]: h for h in j["histograms"]}
assert set(hs) == {"f step"}, set(hs)
assert {p["phase"]: p["count"] for p in hs["f step"]["phases"]} == {1: n, 2: n}, hs["f step"]["phases"]
c = {(e["phase"], e["index"]): e["value"] for e in j["counters"]}
assert c == {(1, 7): n, (2, 7): n}, c
PY
echo ok
