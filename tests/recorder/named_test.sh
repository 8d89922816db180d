#!/usr/bin/env bash
# Named probes on a real program (examples/compressor, kcompress: a parallel gzip compressor with named
# scopes, a nested scope, a named event and named threads) recorded by kron record: the file's name
# section (trace format 1.3), kron rpt pairing the scopes by name with no interval.info, kron expand's
# names and sites, and kron export's tracks named after the threads, slices carrying value and location,
# every nested slice inside its parent (docs/errata.md E152, E153).
set -euo pipefail
kron=${KRON:?}
kc=${KRON_KCOMPRESS:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"  # no interval.info here

# 2 MiB in 128 KiB blocks: 16 blocks, each read, compressed (deflate nested in it) and written once.
"$kron" record -q -o k.trace -- "$kc" -p 2 --synthetic 2 >k.gz
[ "$(gzip -dc k.gz 2>/dev/null | wc -c)" = 2097152 ] || fail "kcompress under kron record did not compress 2 MiB"

"$kron" rpt --json k.trace >rpt.json
"$kron" rpt k.trace | grep -q "^write  *writer/tid[0-9]* " || fail "rpt's text does not name the writer thread"
"$kron" info k.trace | grep -q "^ *[0-9]* *[0-9]* .* writer$" || fail "kron info's lane rows do not name the writer thread"
[ "$("$kron" info --json k.trace | python3 -c 'import json,sys; print(sorted(l.get("thread_name", "") for l in json.load(sys.stdin)["lanes"]))')" = \
  "['compress 0', 'compress 1', 'reader', 'writer']" ] || fail "kron info --json lanes' thread_name"
"$kron" expand k.trace >expand.txt
"$kron" export --format chrome-json -o k.json k.trace >/dev/null
# CSV carries what the other formats show: each scope's name, its begin and end, its value, the thread's name.
"$kron" export --format csv -o k.csv k.trace >/dev/null
python3 - <<'PY'
import csv
from collections import Counter
rows = list(csv.DictReader(open("k.csv")))
kinds = Counter((r["name"], r["kind"]) for r in rows)
for name in ("compress", "deflate", "write"):
    assert kinds[(name, "begin")] == 16 and kinds[(name, "end")] == 16, (name, kinds)
assert kinds[("bytes out", "instant")] == 16, kinds
assert {r["thread_name"] for r in rows if r["name"] == "write"} == {"writer"}
assert {r["thread_name"] for r in rows if r["name"] == "deflate"} <= {"compress 0", "compress 1"}
assert {r["thread_name"] for r in rows if r["name"] == "read"} == {"reader"}
assert sorted(int(r["value"]) for r in rows if r["name"] == "compress" and r["kind"] == "begin") == list(range(16))
assert all(r["rank"] == "" for r in rows)
PY
python3 - <<'PY'
import json, re
r = json.load(open("rpt.json"))
def total(name, key="count"):
    return sum(row[key] for row in r["rows"] if row["name"] == name and row["stream"] != "all")
for name in ("compress", "deflate", "write"):
    assert total(name) == 16, (name, total(name))
    assert total(name, "unmatched_starts") == 0 and total(name, "unmatched_ends") == 0, name
assert total("read") == 17, total("read")  # the last read finds the end of the input
loc = [row["location"] for row in r["rows"] if row["name"] == "compress"][0]
assert re.search(r"kcompress\.cpp:\d+ compress_block$", loc), loc
assert not any(row["name"] == "#unnamed" for row in r["rows"]), "a scope without its name"
# The thread names label the rows: JSON thread_name, the text table "NAME/tidN".
assert {row.get("thread_name") for row in r["rows"] if row["name"] == "write"} == {"writer"}, r["rows"]
assert {row.get("thread_name") for row in r["rows"] if row["name"] == "deflate"} <= {"compress 0", "compress 1"}

lines = open("expand.txt").read().splitlines()
begins = [l for l in lines if " begin compress value " in l]
assert len(begins) == 16 and all("kcompress.cpp:" in l and "compress_block" in l for l in begins), begins[:2]
assert sum(" event bytes out value " in l for l in lines) == 16

j = json.load(open("k.json"))
ev = j["traceEvents"]
threads = {e["args"]["name"].split(" (tid")[0] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert {"reader", "writer", "compress 0", "compress 1"} <= threads, threads
procs = [e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
assert len(procs) == 1 and procs[0].startswith("kcompress (pid "), procs  # its own name: naming the main thread "reader" did not rename it (E410)
xs = [e for e in ev if e["ph"] == "X"]
blocks = sorted(e["args"]["value"] for e in xs if e["name"] == "compress")
assert blocks == list(range(16)), blocks  # which block: the probe's value
assert all("kcompress.cpp:" in e["args"]["location"] for e in xs)
# Nesting, exactly: integer nanoseconds from the printed microseconds (three decimals).
def ns(x): return round(x * 1000)
by_track = {}
for e in xs:
    s = ns(e["ts"]); by_track.setdefault((e["pid"], e["tid"]), []).append((s, s + ns(e["dur"]), e["name"]))
nested = 0
for track in by_track.values():
    track.sort(key=lambda x: (x[0], -x[1]))
    stack = []
    for s, t, name in track:
        while stack and stack[-1][1] <= s: stack.pop()
        if stack:
            nested += 1
            assert t <= stack[-1][1], ("child ends after its parent", name, s, t, stack[-1])
        stack.append((s, t, name))
assert nested >= 16, nested  # every deflate inside its compress
print("named probes: ok,", len(xs), "slices,", nested, "nested")
PY
