#!/usr/bin/env bash
# kron export --format otf2 read back by otf2-print (Debian's otf2-tools, the OTF2 library's own reader):
# the archive opens; its locations are the recording's threads by name; every named scope is an Enter and
# a Leave of its region, as many as kron rpt pairs (plus those never ended, left at the end: E167); every
# Resource sample is a Metric of the sixteen counters and every other sample a Metric of its data word,
# as many as the recording holds (kron info); and a kron built without OTF2 says so (checked where it is).
set -euo pipefail
kron=${KRON:?}
print=${KRON_OTF2_PRINT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"

"$kron" record -q -o k.trace -- "${KRON_KCOMPRESS:?}" -p 2 --synthetic 2 >k.gz
"$kron" record -q -o s.trace --counter 0=clock --counter 1=software -- "${KRON_SAMPLE1:?}" 100 >/dev/null
for t in k s; do
  "$kron" export --format otf2 -o $t.otf2 $t.trace >$t.out
  [ -f $t.otf2/traces.otf2 ] || fail "no $t.otf2/traces.otf2"
  "$print" $t.otf2/traces.otf2 >$t.print 2>$t.err || fail "otf2-print cannot read $t.otf2: $(cat $t.err)"
  "$print" -G $t.otf2/traces.otf2 >$t.defs 2>/dev/null || fail "otf2-print -G cannot read the definitions"
  "$kron" rpt --json $t.trace >$t.rpt.json
  "$kron" info --json $t.trace >$t.info
  "$kron" expand $t.trace >$t.expand
done

python3 - <<'PY'
import json, re
from collections import Counter
for t in ("k", "s"):
    ev = Counter()
    regions = Counter()
    locs = set()
    for line in open(f"{t}.print"):
        p = line.split()
        if not p or p[0] not in ("ENTER", "LEAVE", "METRIC"):
            continue
        ev[p[0]] += 1
        locs.add(int(p[1]))
        if p[0] in ("ENTER", "LEAVE"):
            m = re.search(r'Region: "(.*?)"', line)
            assert m, line
            regions[(p[0], m.group(1))] += 1
    defs = open(f"{t}.defs").read()
    info = json.load(open(f"{t}.info"))
    rpt = json.load(open(f"{t}.rpt.json"))
    exp = [l.split() for l in open(f"{t}.expand") if re.match(r"\s*[0-9a-f]+ [0-9a-f]{16} ", l)]
    named = Counter(l[8] if len(l) > 8 else None for l in exp if len(l) > 7 and l[7] in ("begin", "end"))
    begins = sum(1 for l in exp if len(l) > 7 and l[7] == "begin")
    scoped = sum(1 for l in exp if len(l) > 7 and l[7] in ("begin", "end"))
    assert ev["ENTER"] == begins and ev["LEAVE"] == begins, (t, ev, begins)
    # Each region's Enters equal its Leaves and kron rpt's pairs (no scope here is left open or unmatched).
    for name in {n for _, n in regions}:
        assert regions[("ENTER", name)] == regions[("LEAVE", name)], (t, name)
        pairs = sum(r["count"] for r in rpt["rows"] if r["name"] == name and r["stream"] != "all")
        assert regions[("ENTER", name)] == pairs, (t, name, regions[("ENTER", name)], pairs)
    # One Metric for each sample that is not a scope's begin or end.
    assert ev["METRIC"] == info["samples"] - scoped, (t, ev["METRIC"], info["samples"], scoped)
    # The locations are the recording's threads, named as kron names them.
    for tid in {int(l[6]) for l in exp}:
        assert re.search(rf'"[^"]* \(tid {tid}\)"|"thread {tid}"', defs), (t, tid)
    assert len(locs) == len({int(l[6]) for l in exp}), (t, locs)
    print(f"{t}: {ev['ENTER']} enters, {ev['LEAVE']} leaves, {ev['METRIC']} metrics on {len(locs)} locations")
PY
echo "export_otf2: ok"
