#!/usr/bin/env bash
# Phases, histograms and virtual counters on a real program (examples/server, kserver: three request types, two phases, latency
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
# Times first (ERRATUM E412): the text shows each percentile as a time in an adaptive unit, the same value as
# the JSON's ticks at the clock's rate; --ticks shows the ticks, the time beside them; the bars likewise.
"$kron" hist --ticks "$tmp/s.trace" >"$tmp/ht.txt"
python3 - "$tmp/h.json" "$tmp/h.txt" "$tmp/ht.txt" <<'PY'
import json, re, sys
j = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read(); ticks = open(sys.argv[3]).read()
unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
def total_line(t, name):
    return re.search(r"^histogram " + name + r"\n(?:  phase .*\n)*  total: (.*)$", t, re.M).group(1)
for h in j["histograms"]:
    line = total_line(text, h["name"])
    m = re.search(r"p99 ([0-9.e+]+) (ns|us|ms|s)  ", line)
    assert m, line
    secs = float(m.group(1)) * unit[m.group(2)]
    want = h["total"]["p99"] / (j["ticks_per_us"] * 1e6)
    assert abs(secs - want) <= want * 1e-3, (line, want)
    assert f"p99 {h['total']['p99']} (" in total_line(ticks, h["name"]), total_line(ticks, h["name"])
bars = [l for l in text.splitlines() if l.startswith("    ") and "#" in l]
assert bars and all(re.match(r" +[0-9.e+]+ (ns|us|ms|s) - [0-9.e+]+ (ns|us|ms|s) +\d+ #+$", l) for l in bars), bars[:3]
tbars = [l for l in ticks.splitlines() if l.startswith("    ") and "#" in l]
assert tbars and all(re.match(r" +\d+ - \d+ +\d+ #+$", l) for l in tbars), tbars[:3]
PY

# kron export --format chrome-json: the snapshots as counter events, the phase in every instant's args.
"$kron" export --format chrome-json -o "$tmp/s.json" "$tmp/s.trace" >/dev/null
python3 - "$tmp/s.json" "$tmp/h.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["traceEvents"]
h = json.load(open(sys.argv[2]))
c = [e for e in t if e.get("ph") == "C" and e["name"].startswith("hist get ")]
assert c, "no histogram counter events"
phases = {p["phase"]: p["count"] for p in {x["name"]: x for x in h["histograms"]}["get"]["phases"]}
for p, n in phases.items():
    assert sum(e["args"]["count"] for e in c if e["name"].endswith("phase %d)" % p)) == n, (p, n)
assert any(e.get("ph") == "C" and e["name"].startswith("vc 0 ") for e in t), "no virtual counter events"
ev = [e for e in t if e.get("ph") == "i" and e["name"] in ("event 1001", "event 1002")]
assert len(ev) == 6, ev  # one a thread: 3 threads a phase
assert all(e["args"]["phase"] == int(e["name"][-1]) for e in ev), ev  # each sample carries its thread's phase
PY

# kron rpt --phase: the samples of one phase (each thread wrote one sample at its start).
other() { "$kron" rpt --json "$@" "$tmp/s.trace" | python3 -c 'import json,sys; print(json.load(sys.stdin)["other_events"])'; }
[ "$(other --phase 1)" = 3 ] || fail "rpt --phase 1: $(other --phase 1) events, expected 3"
[ "$(other --phase 1 --phase 2)" = 6 ] || fail "rpt --phase 1 --phase 2: expected 6"
[ "$(other --phase 3)" = 0 ] || fail "rpt --phase 3: expected none"

# Periodic snapshots (in a compressed file: snapshots among the samples of zstd chunks): more snapshot
# records, same totals.
"$kron" record -q --compress --snapshot-interval 0.01 -o "$tmp/p.trace" -- "$server" -t 2 -n 2000 --slow >/dev/null
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
"$kron" hist --board "$b" >"$tmp/bt.txt"  # (to a file: grep -q in a pipe would cut kron's output short, SIGPIPE)
grep -q "^histogram get$" "$tmp/bt.txt" || fail "kron hist --board shows no histogram get"
# kron status: the virtual counters, summed over threads and phases (requests by type: 4000 in all).
"$kron" status --board "$b" >"$tmp/st.txt"
grep -q "^statistics: .* 3 histograms" "$tmp/st.txt" || fail "kron status: no statistics line: $(cat "$tmp/st.txt")"
[ "$(awk '/^  virtual counter +[012]:/ {s += $4} END {print s}' "$tmp/st.txt")" = 4000 ] || fail "kron status: counters 0-2 do not sum to 4000"
# Thresholds and phase watches from outside (kron counters, 004 PW and negative preload; E185, E186): on the
# board the run above left, histogram names registered. One thread a phase: the request types are the
# same every run (they follow the request number).
"$kron" counters --board "$b" --threshold get=0:1 --threshold vc:3=1 --watch put=only:2 >"$tmp/c.txt"
grep -q "histogram #[0-9]* get: watch off, threshold 1 value at or above 0 ticks" "$tmp/c.txt" || fail "threshold not shown: $(cat "$tmp/c.txt")"
grep -q "histogram #[0-9]* put: watch only phase 2" "$tmp/c.txt" || fail "watch not shown"
grep -q "virtual counters: watch off, threshold counter 3 at 1" "$tmp/c.txt" || fail "counter threshold not shown"
if out=$("$kron" counters --board "$b" --threshold nosuch=5 2>&1); then fail "a threshold on an unknown histogram was accepted"; fi
grep -q "no histogram 'nosuch'" <<<"$out" || fail "unknown histogram: $out"
"$kron" board rm "$b" >/dev/null
"$kron" board create "$b" --buffer 1M >/dev/null
"$kron" run --board "$b" -- "$server" -t 1 -n 1000 >/dev/null  # registers the names
"$kron" hist --board "$b" --json >"$tmp/t0.json"
"$kron" counters --board "$b" --threshold get=0:1 --threshold vc:3=1 --watch put=only:2 >/dev/null
"$kron" run --board "$b" -- "$server" -t 1 -n 1000 >/dev/null
"$kron" hist --board "$b" --json >"$tmp/t1.json"
"$kron" hist --board "$b" >"$tmp/t1.txt"
grep -q "^thresholds crossed: 4$" "$tmp/t1.txt" || fail "expected 4 crossings (get and counter 3, each phase's thread): $(tail -3 "$tmp/t1.txt")"
python3 - "$tmp/t0.json" "$tmp/t1.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
def count(j, name, phase):
    h = {h["name"]: h for h in j["histograms"]}[name]
    return {p["phase"]: p["count"] for p in h["phases"]}.get(phase, 0)
assert count(b, "put", 1) == count(a, "put", 1), "the watch kept put out of phase 1"
assert count(b, "put", 2) == 2 * count(a, "put", 2)
assert count(b, "get", 1) == 2 * count(a, "get", 1)  # armed: every value still counted
PY
# kron rdsample --board writes the histograms and counters too, and the crossings (4 kFlagThreshold samples).
"$kron" rdsample --board "$b" -f "$tmp/t.trace" >/dev/null
"$kron" hist "$tmp/t.trace" >"$tmp/t.txt"
grep -q "^thresholds crossed: 4$" "$tmp/t.txt" || fail "rdsample's file lacks the crossings"
"$kron" hist --json "$tmp/t.trace" >"$tmp/t2.json"
python3 - "$tmp/t1.json" "$tmp/t2.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["histograms"] == b["histograms"] and a["counters"] == b["counters"], "the file's snapshots are not the board's"
PY

# Bad input: a file that is not a trace names the file.
echo "not a trace" >"$tmp/bad.trace"
if out=$("$kron" hist "$tmp/bad.trace" 2>&1); then fail "kron hist accepted a bad file"; fi
grep -q "bad.trace" <<<"$out" || fail "the error does not name the file: $out"
echo "ok"
