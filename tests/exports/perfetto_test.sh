#!/usr/bin/env bash
# kron export --format perfetto read back by protoc (Debian's protobuf-compiler) against the Perfetto
# schema subset tests/exports/perfetto_subset.proto: the packets decode; per sequence the incremental
# clock and interned names resolve; the tracks carry the recording's process and thread names; and the
# slices, instants and counter values (names, tracks, times to the nanosecond, counts) are exactly those
# of the Chrome JSON export of the same file (an independent writer, tested against the recording in
# tests/recorder/named_test.sh and tests/tools/analysis_test.cpp). The default output's compressed_packets
# inflate (tests/exports/perfetto_inflate.py, Python's zlib) to exactly --compress 0's packets. Inputs: kcompress under kron record
# (named scopes, nested, a named event, named threads); kron_sample1 with interval.info (classes 1-4,
# resource counters). Then the size limit (docs/errata.md E161).
set -euo pipefail
kron=${KRON:?}
protoc=${KRON_PROTOC:?}
src=${KRON_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"

# kcompress with its context switches (--sched) where perf_event allows it: the thread states are slices too.
if ! "$kron" record -q --sched -o k.trace -- "${KRON_KCOMPRESS:?}" -p 2 --synthetic 2 >k.gz 2>k.rec.err; then
  grep -q "perf_event_open" k.rec.err || fail "kron record --sched failed without saying why: $(cat k.rec.err)"
  echo "note: --sched not permitted here ($(head -1 k.rec.err)); kcompress recorded without thread states"
  "$kron" record -q -o k.trace -- "${KRON_KCOMPRESS:?}" -p 2 --synthetic 2 >k.gz
fi
"$kron" record -q -o s.trace --counter 0=clock --counter 1=software -- "${KRON_SAMPLE1:?}" 300 >/dev/null
info="$src/examples/sample1/interval.info"
for t in k s; do
  f=(); [ $t = s ] && f=(-f "$info")
  "$kron" export "${f[@]}" -o $t.pftrace $t.trace >$t.out 2>$t.err   # the default format is perfetto
  ! grep -q "share a track" $t.err || fail "$t: overlapping slices put on shared tracks: $(cat $t.err)"
  "$kron" export --format perfetto "${f[@]}" -o $t.again.pftrace $t.trace >/dev/null
  cmp $t.pftrace $t.again.pftrace || fail "--format perfetto is not the default"
  "$kron" export --format chrome-json "${f[@]}" -o $t.json $t.trace >/dev/null
  # The default writes its packets deflated in compressed_packets (E168); inflated, they are exactly the
  # packets of --compress 0, and of any other level.
  n=$(python3 "$src/tests/exports/perfetto_inflate.py" $t.pftrace $t.inflated)
  [ "$n" -ge 1 ] || fail "$t: the default export has no compressed_packets"
  "$kron" export --compress 0 "${f[@]}" -o $t.plain.pftrace $t.trace >/dev/null
  cmp $t.inflated $t.plain.pftrace || fail "$t: the inflated packets differ from --compress 0's"
  "$kron" export --compress 9 "${f[@]}" -o $t.9.pftrace $t.trace >/dev/null
  python3 "$src/tests/exports/perfetto_inflate.py" $t.9.pftrace $t.9.inflated >/dev/null
  cmp $t.9.inflated $t.plain.pftrace || fail "$t: --compress 9 inflates to other packets"
  "$protoc" --decode=perfetto.protos.Trace -I "$src/tests/exports" perfetto_subset.proto <$t.plain.pftrace >$t.txt ||
    fail "protoc cannot decode $t.plain.pftrace"
done

python3 - <<'PY'
import json, re, sys
from collections import Counter, defaultdict

def parse_text(path):
    """protoc's text format -> nested dicts of lists."""
    root, stack = {}, []
    cur = root
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        if line.endswith("{"):
            node = {}
            cur.setdefault(line[:-1].strip(), []).append(node)
            stack.append(cur)
            cur = node
        elif line == "}":
            cur = stack.pop()
        else:
            k, v = line.split(":", 1)
            v = v.strip()
            if v.startswith('"'):
                v = json.loads(v)
            elif re.fullmatch(r"-?\d+", v):
                v = int(v)
            cur.setdefault(k, []).append(v)
    return root

def one(d, k, default=None):
    return d.get(k, [default])[0]

def read_perfetto(path):
    """Resolves clocks, interning and tracks like trace_processor: returns tracks, slices, instants, counters."""
    tr = parse_text(path)
    seqs = {}
    tracks = {}       # uuid -> descriptor
    events = []       # (t, seq, order, track, type, name, event)
    order = 0
    for p in tr["packet"]:
        sid = one(p, "trusted_packet_sequence_id")
        assert sid, "a packet without a sequence"
        flags = one(p, "sequence_flags", 0)
        if flags & 1:
            seqs[sid] = {"names": {}, "clock": None, "last": None, "defaults": None}
        s = seqs.get(sid)
        assert s is not None, f"sequence {sid} used before its incremental state was cleared"
        if "trace_packet_defaults" in p:
            s["defaults"] = p["trace_packet_defaults"][0]
        for idd in p.get("interned_data", []):
            for en in idd.get("event_names", []):
                s["names"][one(en, "iid")] = one(en, "name")
        if "clock_snapshot" in p:
            for c in p["clock_snapshot"][0]["clocks"]:
                if one(c, "clock_id") == 64:
                    assert one(c, "is_incremental") == "true"
                    s["last"] = one(c, "timestamp")
        if "track_descriptor" in p:
            d = p["track_descriptor"][0]
            assert one(d, "uuid") not in tracks, "a track described twice"
            tracks[one(d, "uuid")] = d
            continue
        if "track_event" not in p:
            continue
        defaults = s["defaults"] or {}  # the thread states' sequence sets none: absolute BOOTTIME times
        clock = one(p, "timestamp_clock_id") or one(defaults, "timestamp_clock_id")
        ts = one(p, "timestamp")
        if clock == 64:
            ts = s["last"] + ts
            s["last"] = ts
        else:
            assert clock == 6, clock
        e = p["track_event"][0]
        dflt = one(defaults, "track_event_defaults", {})
        track = one(e, "track_uuid") or one(dflt, "track_uuid")
        name = one(e, "name")
        if "name_iid" in e:
            name = s["names"][one(e, "name_iid")]
        order += 1
        events.append((ts, order, track, one(e, "type"), name, e, dflt))
    return tracks, events

def label(tracks, uuid):
    return one(tracks[uuid], "name")

def slices_of(tracks, events):
    """BEGIN/END matched per track (a stack, as trace_processor nests them); events in file order per track."""
    open_, out, inst, ctr = defaultdict(list), [], [], []
    last = {}
    for ts, _, track, typ, name, e, dflt in sorted(events, key=lambda x: (x[0], x[1])):
        assert track in tracks, f"an event on undescribed track {track}"
        if typ == "TYPE_SLICE_BEGIN":
            open_[track].append((name, ts))
        elif typ == "TYPE_SLICE_END":
            n, t0 = open_[track].pop()
            out.append((track, n, t0, ts))
        elif typ == "TYPE_INSTANT":
            inst.append((track, name, ts))
        elif typ == "TYPE_COUNTER":
            uuids = [one(e, "track_uuid")] + dflt["extra_counter_track_uuids"]
            vals = [one(e, "counter_value")] + e.get("extra_counter_values", [])
            for u, v in zip(uuids, vals):
                assert "counter" in tracks[u], "a counter value on a track that is not a counter track"
                ctr.append((u, ts, v))
        else:
            raise AssertionError(typ)
    return out, inst, ctr, open_

def ns(us):  # "12.345" microseconds (three decimals, E153) -> integer nanoseconds
    a, b = us.split(".") if "." in str(us) else (str(us), "0")
    return int(a) * 1000 + int(b.ljust(3, "0"))

def read_json(path):
    j = json.load(open(path))
    evs = j["traceEvents"]
    tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    pname = {e["pid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "process_name"}
    return evs, tname, pname

def raw_ts(e):  # the JSON writer's ts text, read back exactly
    return ns(json.dumps(e["ts"]) if not isinstance(e["ts"], str) else e["ts"])

def check(t):
    tracks, events = read_perfetto(f"{t}.txt")
    slices, inst, ctr, still_open = slices_of(tracks, events)
    evs, tname, pname = read_json(f"{t}.json")
    # Tracks: every JSON thread and process name is a Perfetto track name; threads carry ThreadDescriptors.
    names = Counter(one(d, "name") for d in tracks.values())
    for n in list(tname.values()) + list(pname.values()):
        assert names[n] >= 1, f"{t}: no track named {n!r}"
    for d in tracks.values():
        if "thread" in d:
            th = d["thread"][0]
            assert one(th, "thread_name") == one(d, "name") and f"(tid {one(th, 'tid')})" in one(d, "name"), d
            assert "process" in tracks[one(d, "parent_uuid")], "a thread not under its process"
    # Where a track sits: the thread track's label, or for a child track (intervals, counters) its parent's.
    def owner(u):
        d = tracks[u]
        return label(tracks, u) if "thread" in d or "parent_uuid" not in d or "process" in tracks[one(d, "parent_uuid")] else label(tracks, one(d, "parent_uuid"))
    # Slices: those of the JSON export, exactly (track, name, start, end in ns).
    jx = Counter()
    for e in evs:
        if e["ph"] == "X":
            t0 = ns(e["ts"] if isinstance(e["ts"], str) else f'{e["ts"]:.3f}')
            d = ns(e["dur"] if isinstance(e["dur"], str) else f'{e["dur"]:.3f}')
            jx[(tname[(e["pid"], e["tid"])], e["name"], t0, t0 + d)] += 1
    jb = {e["id"]: e for e in evs if e["ph"] == "b"}
    for e in evs:
        if e["ph"] == "e":
            b = jb[e["id"]]
            jx[(tname[(b["pid"], b["tid"])], b["name"], ns(f'{b["ts"]:.3f}'), ns(f'{e["ts"]:.3f}'))] += 1
    px = Counter((owner(tr), n, a, b) for tr, n, a, b in slices)
    assert px == jx, f"{t}: slices differ: only perfetto {list((px - jx).items())[:3]}, only json {list((jx - px).items())[:3]}"
    # Instants: the JSON's "i" events (class 4's flow ends are extra instants on the end's track).
    ji = Counter((tname[(e["pid"], e["tid"])], e["name"], ns(f'{e["ts"]:.3f}')) for e in evs if e["ph"] == "i")
    flow_ends = sum(1 for *_, typ, _n, e, _d in events if typ == "TYPE_INSTANT" and "terminating_flow_ids" in e)
    pi = Counter((owner(tr), n, ts) for tr, n, ts in inst)
    assert pi - ji == Counter() or flow_ends, f"{t}: instants only in perfetto {list((pi - ji).items())[:3]}"
    assert ji - pi == Counter(), f"{t}: instants only in json {list((ji - pi).items())[:3]}"
    assert sum(pi.values()) == sum(ji.values()) + flow_ends
    # Counters: each JSON "C" value on the same thread's counter track of that name, same time.
    jc = Counter((e["pid"], e["name"], ns(f'{e["ts"]:.3f}'), e["args"]["value"]) for e in evs if e["ph"] == "C")
    pc = Counter((label(tracks, u), ts, v) for u, ts, v in ctr)
    assert sum(pc.values()) == sum(jc.values()), (t, sum(pc.values()), sum(jc.values()))
    assert Counter((n, ts, v) for n, ts, v in pc.elements()) == Counter((n, ts, v) for _, n, ts, v in jc.elements())
    # Counts against the export's own summary and the recording: one event a sample (counters: one per
    # Resource sample), plus an END per matched scope, plus interval.info's slices and flow ends.
    out = open(f"{t}.out").read()
    m = re.search(r"(\d+) samples, (\d+) interval slices, (\d+) counter values, (\d+) instants", out)
    samples, nslices, nctr, ninst = map(int, m.groups())
    assert len(slices) + sum(len(v) for v in still_open.values()) >= nslices
    assert len(ctr) == nctr and len(inst) == ninst + flow_ends, (t, len(inst), ninst)
    # Thread states (kron record --sched): as many slices on "thread N: scheduling" tracks as the summary says.
    m2 = re.search(r"(\d+) thread states", out)
    states = sum(1 for tr, *_ in slices if one(tracks[tr], "name").endswith(": scheduling"))
    assert states == (int(m2.group(1)) if m2 else 0), (t, states, out)
    print(f"{t}: {len(tracks)} tracks, {len(slices)} slices ({states} thread states), {len(inst)} instants, "
          f"{len(ctr)} counter values: as the JSON export")
    return tracks, slices, inst

tracks, slices, inst = check("k")
# kcompress: 16 blocks, each compressed (deflate nested inside) and written: the nesting holds.
byname = Counter(n for _, n, _, _ in slices)
for n in ("compress", "deflate", "write"):
    assert byname[n] == 16, (n, byname[n])
comp = [(tr, a, b) for tr, n, a, b in slices if n == "compress"]
for tr, n, a, b in slices:
    if n == "deflate":
        assert any(ctr == tr and ca <= a and b <= cb for ctr, ca, cb in comp), "a deflate outside its compress"
assert sum(1 for _, n, _ in inst if n == "bytes out") == 16
check("s")
PY

# A classic stream (the PCI board model's cable: MultiKron II samples, kron sim) on standard input: a
# process per source, a track per CPU, its Trace samples as instants, its Resource sample as counters.
"$kron" sim --board pci "$src/examples/pci/cable.sim" >cable.raw 2>/dev/null
"$kron" export --compress 0 --input-format mk2 -o c.pftrace - <cable.raw >/dev/null
"$kron" expand --input-format mk2 cable.raw >c.expand
"$protoc" --decode=perfetto.protos.Trace -I "$src/tests/exports" perfetto_subset.proto <c.pftrace >c.txt
python3 - <<'PY'
import re
t = open("c.txt").read()
exp = [l.split() for l in open("c.expand") if re.match(r"[0-9a-f]{2} [0-9a-f]+ ", l)]
assert len(exp) == 3, exp
assert t.count("type: TYPE_INSTANT") == 2 and t.count("type: TYPE_COUNTER") == 1, t
assert t.count("extra_counter_values:") == 15, "a Resource sample's counters 1-15"
for want in ('name: "source 0x00000100"', 'name: "cpu 0"', 'name: "event 10"', 'name: "event 30"'):
    assert want in t, want
assert sum(1 for l in exp if l[0] == "18") == 1  # one Resource sample (header 0x18)
print("classic stream: 2 instants and 1 counter event, tracks by source and CPU")
PY

# Histograms and virtual counters (kserver: three request types, two phases): each snapshot
# series a counter track of its process, the same values at the same times as the JSON's counter events.
"$kron" record -q -o h.trace -- "${KRON_KSERVER:?}" -t 2 -n 4000 >/dev/null
"$kron" export -o h.pftrace h.trace >/dev/null
python3 "$src/tests/exports/perfetto_inflate.py" h.pftrace h.plain >/dev/null
"$protoc" --decode=perfetto.protos.Trace -I "$src/tests/exports" perfetto_subset.proto <h.plain >h.txt
"$kron" export --format chrome-json -o h.json h.trace >/dev/null
python3 - <<'PY2'
import json, re
from collections import Counter
txt = open("h.txt").read()
# Counter tracks by uuid -> name, then their values with absolute times (BOOTTIME, clock 6).
names = {int(u): n for u, n in re.findall(r'track_descriptor \{\s*uuid: (\d+)\s*name: "([^"]*)"\s*(?:parent_uuid: \d+\s*)?counter \{', txt)}
got = Counter()
for pk in txt.split("\npacket {")[1:]:  # protoc prints a packet's fields in field-number order
    if "type: TYPE_COUNTER" not in pk:
        continue
    u = int(re.search(r"track_uuid: (\d+)", pk).group(1))
    if u in names:
        assert re.search(r"timestamp_clock_id: 6\b", pk), "a snapshot value without its absolute time"
        got[(names[u], int(re.search(r"^\s*timestamp: (\d+)", pk, re.M).group(1)),
             int(re.search(r"counter_value: (-?\d+)", pk).group(1)))] += 1
def ns(us):
    a, b = f"{us:.3f}".split(".")
    return int(a) * 1000 + int(b)
want = Counter()
for e in json.load(open("h.json"))["traceEvents"]:
    if e["ph"] != "C" or not e["name"].startswith(("hist ", "vc ")):
        continue
    for k, v in e["args"].items():
        want[(e["name"] + ("" if k == "value" else " " + k), ns(e["ts"]), v)] += 1
assert want and sum(1 for k in want if k[0].startswith("hist ")) and sum(1 for k in want if k[0].startswith("vc ")), want
assert got == want, (list((got - want).items())[:3], list((want - got).items())[:3])
# Phases: a debug annotation "phase" (interned as 3) on each event of a thread in a phase other
# than 0, as the JSON's instants carry "phase" in their args.
assert 'debug_annotation_names {\n      iid: 3\n      name: "phase"' in txt, "the phase annotation is not interned"
pp = Counter(int(v) for v in re.findall(r"debug_annotations \{\s*name_iid: 3\s*uint_value: (\d+)", txt))
jp = Counter(e["args"]["phase"] for e in json.load(open("h.json"))["traceEvents"] if e["ph"] == "i" and e["args"].get("phase"))
assert pp == jp and sum(jp.values()) > 0, (pp, jp)
print(f"kserver: {sum(want.values())} histogram and counter values on {len(names)} counter tracks, as the JSON's; "
      f"{sum(pp.values())} events with their phase")
PY2

# Larger than --max-bytes: refused with the size named, nothing written (E161).
if "$kron" export --max-bytes 1000 -o big.pftrace s.trace 2>err.txt; then fail "a trace over --max-bytes was written"; fi
grep -q "larger than 1000 bytes" err.txt || fail "no clear message: $(cat err.txt)"
[ ! -e big.pftrace ] && [ -z "$(ls big.pftrace.tmp.* 2>/dev/null)" ] || fail "a refused trace left a file"
echo "export_perfetto: ok"
