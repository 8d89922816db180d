#!/usr/bin/env bash
# Issue 12 on a real program (examples/server, kserver: three request types, two phases, latency
# histograms and virtual counters): kron record writes the snapshots, kron hist reads them (text and
# --json), the counts agree with what the program did; kron hist --board reads a live board; kron
# record --snapshot-interval writes periodic snapshots whose last ones are the totals.
set -euo pipefail
kron=${KRON:?}
server=${KRON_KSERVER:?}
tmp=$(mktemp -d)
b="hist-$$"
trap '"$kron" board rm "$b" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$kron" record -q -o "$tmp/s.trace" -- "$server" -t 3 -n 3000 >/dev/null
"$kron" hist "$tmp/s.trace" >"$tmp/h.txt"
for h in get put scan; do grep -q "^histogram $h$" "$tmp/h.txt" || fail "kron hist shows no histogram $h"; done
grep -q "^  phase 1: count" "$tmp/h.txt" || fail "no phase 1 row"
grep -q "^  phase 2: count" "$tmp/h.txt" || fail "no phase 2 row"
grep -q "#" "$tmp/h.txt" || fail "no bar chart"
"$kron" hist --json "$tmp/s.trace" >"$tmp/h.json"
python3 - "$tmp/h.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["format"] == "kron-hist" and j["version"] == 1, j.get("format")
hs = {h["name"]: h for h in j["histograms"]}
assert set(hs) == {"get", "put", "scan"}, set(hs)
total = 0
for name, h in hs.items():
    phases = {p["phase"]: p for p in h["phases"]}
    assert set(phases) == {1, 2}, (name, set(phases))
    assert h["total"]["count"] == sum(p["count"] for p in phases.values())
    assert sum(b[2] for b in h["total"]["buckets"]) == h["total"]["count"]
    t = h["total"]
    assert t["min"] <= t["p50"] <= t["p90"] <= t["p99"] <= t["p99.9"] <= t["max"], t
    total += h["total"]["count"]
assert total == 6000, total  # 3000 requests a phase, each timed once
c = {}
for e in j["counters"]:
    c[e["index"]] = c.get(e["index"], 0) + e["value"]
assert c[0] + c[1] + c[2] == 6000, c
assert c[0] == hs["get"]["total"]["count"] and c[1] == hs["put"]["total"]["count"], (c, hs["get"]["total"]["count"])
assert c.get(3, 0) > 0, c  # cache misses
assert j["stat_lost"] == 0
PY

# Periodic snapshots: more snapshot records, same totals.
"$kron" record -q --snapshot-interval 0.01 -o "$tmp/p.trace" -- "$server" -t 2 -n 2000 --slow >/dev/null
"$kron" hist --json "$tmp/p.trace" >"$tmp/p.json"
python3 - "$tmp/p.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert sum(h["total"]["count"] for h in j["histograms"]) == 4000
assert j["snapshots"] > 16, j["snapshots"]  # 2 threads a phase x 2 phases x (3 histograms + counters) at the end, and more
PY

# A live board: read while it is written and after the writer is gone (kron run --board).
"$kron" board create "$b" --buffer 1M >/dev/null
"$kron" run --board "$b" -- "$server" -t 2 -n 2000 >/dev/null
"$kron" hist --board "$b" --json >"$tmp/b.json"
python3 - "$tmp/b.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert sum(h["total"]["count"] for h in j["histograms"]) == 4000, j
PY
"$kron" hist --board "$b" | grep -q "^histogram get$" || fail "kron hist --board shows no histogram get"
# Bad input: a file that is not a trace names the file.
echo "not a trace" >"$tmp/bad.trace"
if out=$("$kron" hist "$tmp/bad.trace" 2>&1); then fail "kron hist accepted a bad file"; fi
grep -q "bad.trace" <<<"$out" || fail "the error does not name the file: $out"
echo "ok"
