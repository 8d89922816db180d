#!/usr/bin/env bash
# kron export of an MPI recording (trace format 1.5) read back by each format's real reader: a real 4-rank
# mpirun of examples/mpi/mpi_demo.cpp under libkron_mpi (as the MPI tests run it: --allow-run-as-root
# --oversubscribe), merged by kron merge, then exported to every format:
#  - OTF2 (otf2-print): one MPI_SEND per blocking send (Send, Sendrecv's send), one MPI_RECV per blocking
#    receive, MPI_ISEND / MPI_ISEND_COMPLETE and MPI_IRECV_REQUEST / MPI_IRECV per non-blocking call (the
#    records' counts, from the CTF dump of the same file, itself checked against kron info), a
#    MPI_COLLECTIVE_BEGIN and _END per collective record; every location's events in time order; every
#    MPI_SEND / MPI_RECV inside an open MPI_* region of its location; the communicators defined (MPI);
#  - Perfetto (perfetto_inflate.py + protoc): one flow per matched message (kron merge --json "messages"),
#    every MPI flow id begun once and terminated once, the receive's end never before the send's begin;
#  - chrome-json: the same with its "s"/"f" flow events;
#  - CTF (babeltrace2): kron:mpi events == mpi_records of kron info --json, every field as the record has;
#  - a rank's file exported unmerged to OTF2: its clock-offset measurements (kron info --json) are ClockOffset
#    definitions of its locations that otf2-print -C shows; its peers are locations without events, so
#    every MPI record names a defined rank (E170); the merged file gets none (E172).
# A format whose reader was not configured (KRON_WITH_PROTOC, KRON_WITH_BABELTRACE2, KRON_WITH_OTF2) is
# named as not checked; make test configures all three.
set -euo pipefail
kron=${KRON:?}
src=${KRON_SOURCE_DIR:?}
mpirun=${KRON_MPIRUN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"

timeout 300 "$mpirun" --allow-run-as-root --oversubscribe -np 4 -x LD_PRELOAD="${KRON_MPI_LIB:?}" \
  -x KRON_MPI_OUT="$tmp/run" -x KRON_MPI_SYNC_S=0.001 "${KRON_MPI_DEMO:?}" 40 >/dev/null || fail "mpirun failed"
"$kron" merge --json run.rank-0.kron run.rank-1.kron run.rank-2.kron run.rank-3.kron -o all.kron >merge.json ||
  fail "kron merge failed"
"$kron" info --json all.kron >all.info
"$kron" info --json run.rank-2.kron >rank2.info
"$kron" expand run.rank-2.kron >rank2.expand

"$kron" export --format chrome-json -o all.json all.kron >/dev/null
"$kron" export --format ctf -o all.ctf all.kron >/dev/null
"$kron" export --format perfetto -o all.pftrace all.kron >/dev/null
checked="chrome-json"
if [ -n "${KRON_BABELTRACE2:-}" ]; then
  "$KRON_BABELTRACE2" all.ctf >all.bt || fail "babeltrace2 cannot read all.ctf"
  checked="$checked ctf"
fi
if [ -n "${KRON_PROTOC:-}" ]; then
  python3 "$src/tests/exports/perfetto_inflate.py" all.pftrace all.inflated >/dev/null
  "$KRON_PROTOC" --decode=perfetto.protos.Trace -I "$src/tests/exports" perfetto_subset.proto <all.inflated >all.ptxt ||
    fail "protoc cannot decode all.pftrace"
  checked="$checked perfetto"
fi
if [ -n "${KRON_OTF2_PRINT:-}" ]; then
  "$kron" export --format otf2 -o all.otf2 all.kron >all.otf2.out
  "$kron" export --format otf2 -o rank2.otf2 run.rank-2.kron >rank2.otf2.out
  "$KRON_OTF2_PRINT" all.otf2/traces.otf2 >all.print 2>all.err || fail "otf2-print cannot read all.otf2: $(cat all.err)"
  "$KRON_OTF2_PRINT" -G all.otf2/traces.otf2 >all.defs 2>/dev/null || fail "otf2-print -G cannot read all.otf2"
  "$KRON_OTF2_PRINT" -C all.otf2/traces.otf2 >all.clock 2>/dev/null || fail "otf2-print -C cannot read all.otf2"
  "$KRON_OTF2_PRINT" -C rank2.otf2/traces.otf2 >rank2.clock 2>rank2.err || fail "otf2-print -C: $(cat rank2.err)"
  "$KRON_OTF2_PRINT" -G rank2.otf2/traces.otf2 >rank2.defs 2>/dev/null || fail "otf2-print -G cannot read rank2.otf2"
  "$KRON_OTF2_PRINT" rank2.otf2/traces.otf2 >rank2.print 2>/dev/null || fail "otf2-print cannot read rank2.otf2"
  checked="$checked otf2"
fi

CHECKED="$checked" python3 - <<'PY'
import json, os, re
from collections import Counter
checked = os.environ["CHECKED"].split()
merge = json.load(open("merge.json"))
info = json.load(open("all.info"))
messages = merge["messages"]
assert messages > 0, merge
nrec = info["mpi"]["mpi_records"]
assert nrec == merge["mpi_records"] and nrec > 0, (nrec, merge["mpi_records"])

# chrome-json: one "s" and one "f" per matched message, each id once; the flow never goes back in time.
j = json.load(open("all.json"))["traceEvents"]
s = {e["id"]: e for e in j if e.get("ph") == "s" and e.get("cat") == "mpi"}
f = {e["id"]: e for e in j if e.get("ph") == "f" and e.get("cat") == "mpi"}
assert len(s) == messages and len(f) == messages, (len(s), len(f), messages)
assert sum(1 for e in j if e.get("ph") in ("s", "f")) == 2 * messages
assert set(s) == set(f)
for i in s:
    assert float(f[i]["ts"]) >= float(s[i]["ts"]), (s[i], f[i])
print(f"chrome-json: {messages} MPI flows")

calls = None
if "ctf" in checked:
    # kron:mpi events: one per record, with every field.
    ev = []
    for line in open("all.bt"):
        if "kron:mpi:" not in line:
            continue
        fields = dict(re.findall(r"(\w+) = (\"[^\"]*\"|-?\d+)", line.split("kron:mpi:", 1)[1]))
        ev.append(fields)
    assert len(ev) == nrec, (len(ev), nrec)
    for e in ev:
        for k in ("ticks", "end", "bytes", "source", "thread", "rank", "comm", "comm_size", "peer", "tag", "call", "cpu",
                  "flags", "call_name"):
            assert k in e, (k, e)
        assert int(e["end"]) >= int(e["ticks"]), e
    calls = Counter(int(e["call"]) for e in ev)
    incomplete = Counter(int(e["call"]) for e in ev if int(e["flags"]) & 1)
    print(f"ctf: {len(ev)} kron:mpi events, calls {dict(calls)}")

if "perfetto" in checked:
    # protoc text: count flow_ids / terminating_flow_ids of the MPI range (>= 2^62).
    txt = open("all.ptxt").read()
    begun = Counter(int(x) for x in re.findall(r"\bflow_ids: (\d+)", txt) if int(x) >= 1 << 62)
    ended = Counter(int(x) for x in re.findall(r"terminating_flow_ids: (\d+)", txt) if int(x) >= 1 << 62)
    assert len(begun) == messages and len(ended) == messages, (len(begun), len(ended), messages)
    assert all(v == 1 for v in begun.values()) and all(v == 1 for v in ended.values())
    assert set(begun) == set(ended)
    print(f"perfetto: {messages} MPI flows")

if "otf2" in checked:
    ev = Counter()
    last = {}
    open_regions = {}
    outside = 0
    for line in open("all.print"):
        p = line.split()
        if len(p) < 3 or not p[1].isdigit() or not p[2].isdigit():
            continue
        kind, loc, t = p[0], int(p[1]), int(p[2])
        ev[kind] += 1
        assert t >= last.get(loc, 0), f"location {loc} goes back in time: {line}"
        last[loc] = t
        st = open_regions.setdefault(loc, [])
        if kind == "ENTER":
            st.append(re.search(r'Region: "(.*?)"', line).group(1))
        elif kind == "LEAVE":
            st.pop()
        elif kind in ("MPI_SEND", "MPI_RECV") and not any(r.startswith("MPI_") for r in st):
            outside += 1
    if calls is not None:
        # record::MpiCall: Send 1, Recv 2, Isend 3, Irecv 4, SendrecvSend 5, SendrecvRecv 6, collectives 16+.
        coll = sum(v for k, v in calls.items() if k >= 16)
        assert ev["MPI_SEND"] == calls[1] + calls[5], (ev["MPI_SEND"], calls)
        assert ev["MPI_RECV"] == calls[2] + calls[6], (ev["MPI_RECV"], calls)
        assert ev["MPI_ISEND"] == calls[3] and ev["MPI_ISEND_COMPLETE"] == calls[3] - incomplete[3], (ev, calls)
        assert ev["MPI_IRECV_REQUEST"] == calls[4] and ev["MPI_IRECV"] == calls[4] - incomplete[4], (ev, calls)
        assert ev["MPI_COLLECTIVE_BEGIN"] == coll and ev["MPI_COLLECTIVE_END"] == coll, (ev, coll)
    assert ev["MPI_SEND"] + ev["MPI_ISEND"] > 0 and ev["MPI_COLLECTIVE_BEGIN"] > 0, ev
    assert outside == 0, f"{outside} MPI_SEND/MPI_RECV outside their MPI_* region"
    defs = open("all.defs").read()
    assert re.search(r"^COMM\b.*MPI_COMM_WORLD", defs, re.M), "no MPI_COMM_WORLD Comm definition"
    assert re.search(r"^GROUP\b.*COMM_LOCATIONS", defs, re.M), "no COMM_LOCATIONS group"
    # The merged file: its times are on one timeline already; no clock offsets (E172).
    assert "CLOCK_OFFSET" not in open("all.clock").read()
    # A rank's file as recorded: its measurements are its locations' ClockOffset definitions.
    r2 = json.load(open("rank2.info"))
    n = r2["mpi"]["clock_offsets"]
    assert n > 0, r2["mpi"]
    offs = [l for l in open("rank2.clock") if l.startswith("CLOCK_OFFSET")]
    rdefs = open("rank2.defs").read()
    locs = len(re.findall(r"^LOCATION\b(?!.*not in these files)", rdefs, re.M))
    assert locs >= 1 and len(offs) == n * locs, (len(offs), n, locs)
    # Its peers are not in the file: each gets a location of its own, so no rank is undefined (E170).
    absent = len(re.findall(r"^LOCATION\b.*not in these files", rdefs, re.M))
    assert absent == r2["mpi"]["world_size"] - 1, (absent, r2["mpi"])
    rprint = open("rank2.print").read()
    assert "MPI_SEND" in rprint and "MPI_RECV" in rprint
    assert not re.search(r"(Sender|Receiver): UNDEFINED", rprint), "a rank left undefined"
    # What the reader does with them: OTF2 puts each event at its local time plus the offset interpolated
    # between the two measurements around it (held before the first and after the last), so the first
    # scope's Enter is the first named begin's ticks (kron expand) plus that offset, to the tick.
    pts = [(int(m.group(1)), int(m.group(2))) for m in
           (re.search(r"Time: (\d+), Offset: ([+-]?\d+)", l) for l in offs) if m]
    first = next(l.split() for l in open("rank2.expand") if re.match(r"\s*[0-9a-f]+ [0-9a-f]{16} ", l)
                 and len(l.split()) > 7 and l.split()[7] == "begin")
    t = int(first[1], 16)
    if t <= pts[0][0] or len(pts) == 1:
        off = pts[0][1]
    elif t >= pts[-1][0]:
        off = pts[-1][1]
    else:
        (t1, o1), (t2, o2) = next((a, b) for a, b in zip(pts, pts[1:]) if a[0] <= t <= b[0])
        off = o1 + (t - t1) * (o2 - o1) / (t2 - t1)
    enter = next(int(l.split()[2]) for l in rprint.splitlines() if l.startswith("ENTER"))
    assert abs(enter - (t + off)) <= 1, (enter, t, off, pts)
    print(f"otf2: {dict((k, v) for k, v in ev.items() if k.startswith('MPI'))}; rank 2 alone: {len(offs)} clock offsets, "
          f"its first Enter at {enter} = {t} + {off:.1f} (the offset otf2-print applied)")
print("checked:", " ".join(checked))
PY
