#!/usr/bin/env bash
# A recording of a program without probes, only its context switches (kron record --sched): kron info lists
# every thread that ran by its kernel name (the sh, the sleep and the ls it starts: ERRATUM E410); the
# Perfetto export is not empty and carries their thread states on tracks named by thread, as many as the
# Chrome JSON export draws (an independent writer); CSV and CTF say what they hold. Read back with protoc
# against tests/exports/perfetto_subset.proto. Skipped where perf_event is not permitted.
set -euo pipefail
kron=${KRON:?}
protoc=${KRON_PROTOC:?}
src=${KRON_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"
if ! "$kron" record -q --sched -o t.kron -- sh -c 'sleep 0.05; ls / >/dev/null; sleep 0.02' 2>rec.err; then
  grep -q "perf_event_open" rec.err || fail "kron record --sched failed without saying why: $(cat rec.err)"
  echo "SKIP: --sched not permitted here ($(head -1 rec.err))"
  exit 0
fi
"$kron" info t.kron >info.txt
"$kron" info --json t.kron >info.json
for n in sh sleep ls; do
  grep -Eq "^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+  $n$" info.txt || fail "kron info lists no thread '$n': $(cat info.txt)"
done
"$kron" export --compress 0 -o t.pftrace t.kron >export.out
[ -s t.pftrace ] || fail "the Perfetto export is empty: $(cat export.out)"
"$kron" export --format chrome-json -o t.json t.kron >/dev/null
"$protoc" --decode=perfetto.protos.Trace -I "$src/tests/exports" perfetto_subset.proto <t.pftrace >t.txt ||
  fail "protoc cannot decode t.pftrace"
python3 - info.json t.txt t.json <<'PY'
import json, re, sys
from collections import Counter
info = json.load(open(sys.argv[1]))
names = {t.get("thread_name") for t in info["switch_threads"]}
assert {"sh", "sleep", "ls"} <= names, names
assert info["samples"] == 0 and info["sched_switches"] > 0, info
# protoc's text format: track descriptors' names and the slices' names, per track.
text = open(sys.argv[2]).read()
tracks = dict((int(u), n) for u, n in re.findall(r'track_descriptor \{\s*uuid: (\d+).*?name: "([^"]*)"', text, re.S))
sched_tracks = {u: n for u, n in tracks.items() if n.endswith(": scheduling")}
for n in ("sh", "sleep", "ls"):
    assert any(re.fullmatch(re.escape(n) + r" \(tid \d+\): scheduling", t) for t in sched_tracks.values()), (n, tracks)
begins = Counter(int(u) for u in re.findall(r'type: TYPE_SLICE_BEGIN\s*(?:name_iid: \d+\s*)?track_uuid: (\d+)', text))
pf = sum(k for u, k in begins.items() if u in sched_tracks)
states = set(re.findall(r'name: "(running|waiting|preempted)"', text))
assert "running" in states, states
ev = json.load(open(sys.argv[3]))["traceEvents"]
js = [e for e in ev if e.get("cat") == "sched"]
assert pf == len(js) > 0, (pf, len(js))
jnames = {e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
assert set(sched_tracks.values()) == jnames, (sorted(sched_tracks.values()), sorted(jnames))
print(f"{len(names)} threads, {pf} thread states in Perfetto and in the JSON")
PY
# An export never writes an empty file and calls it success.
"$kron" export --format csv -o t.csv t.kron >/dev/null
[ -s t.csv ] || fail "an empty CSV"
"$kron" export --format ctf -o t.ctf t.kron >/dev/null
[ -s t.ctf/metadata ] || fail "CTF without metadata"
echo "switches only: kron info names sh, sleep and ls; Perfetto carries their thread states"
