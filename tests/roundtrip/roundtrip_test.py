#!/usr/bin/env python3
"""The round-trip matrix: samples with every field at its extremes (tests/roundtrip/roundtrip_craft.cpp) go
through every path a user takes, and every field the path's format carries comes back equal; what a format
cannot carry is the table "What each format carries" of docs/tools.md, which CARRIES below repeats.

    roundtrip_test.py PATH     PATH: files merge expand csv chrome perfetto ctf otf2 python

files: kron record of a program that writes the samples onto its board (and --compress), kron record
--board of a board written by kron run, kron rdsample --board of that board and of a circular board; each
file read back whole (roundtrip_craft dump: the trace-file reader). merge: kron merge of 2 and of 3 rank
files (everything but the timestamps, which the merge maps, and the name ids, which it renumbers: the
names are compared instead). The exports (and kron expand, the Python module) read the recording of
kron record, and the CSV and expand also a file that does not promise time order (the readers' reorder
window runs over it). Environment: KRON, KRON_ROUNDTRIP_CRAFT; per reader KRON_PROTOC, KRON_BABELTRACE2,
KRON_OTF2_PRINT, KRON_PYTHONPATH.
"""
import csv
import decimal
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

KRON = os.environ["KRON"]
CRAFT = os.environ["KRON_ROUNDTRIP_CRAFT"]
SRC = os.environ.get("KRON_SOURCE_DIR", "")
MARK = 0x4B524F4E2D4D4B52  # roundtrip_craft's marker: the sample that claimed the lane
NAMED, END, BEGIN = 16, 32, 64
U64 = (1 << 64) - 1
ALL = ("type", "flags", "group", "cpu", "phase", "source", "thread", "timestamp", "data", "name", "counters")

# What each format carries of a sample, field by field (docs/tools.md "What each format carries"). "flags:01"
# means only bits 0 and 1 and the named bits; a field left out cannot be carried by the format.
CARRIES = {
    "file": ALL,
    "merge": tuple(f for f in ALL if f != "timestamp"),  # mapped onto rank 0's clock; name ids renumbered
    "expand": ("type", "flags:01", "group", "cpu", "source", "thread", "timestamp", "data", "name", "counters"),
    "csv": ALL,
    "chrome": ("type", "flags", "group", "phase", "source", "thread", "ns", "data", "name", "counters"),
    "perfetto": ("type", "pid", "thread", "ns", "data", "name", "phase", "counters"),
    "ctf": ALL,
    "otf2": ("type", "source", "thread", "timestamp", "data", "name", "counters"),
    "python": tuple(f for f in ALL if f != "counters"),
}

# The trace viewer formats carry each kind of item's own fields (items_of): a Resource sample is a counter sample,
# a named scope one slice, an event an instant.
CHROME_KEEP = {"counter": ("counters",), "slice": ("name", "value"), "named": ("name", "value", "group"),
               "instant": ("data", "flags", "group", "thread", "phase")}
PERFETTO_KEEP = {"counter": ("counters", "thread"), "slice": ("name", "value", "phase", "thread"),
                 "named": ("name", "value", "phase", "thread"), "instant": ("data", "phase", "thread")}


class Fail(Exception):
    pass


def run(*args, **kw):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise Fail(f"{' '.join(map(str, args))}: exit {r.returncode}: {r.stderr.strip()[-2000:]}")
    return r.stdout


def jsonl(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def dump(path):
    """Every sample of a trace file, in file order (roundtrip_craft dump), and the file's clock."""
    rows = jsonl(run(CRAFT, "dump", path))
    return rows[0]["clock_hz"], rows[1:]


def without_marker(samples):
    marks = [s for s in samples if s["data"] == MARK]
    if len(marks) != 1:
        raise Fail(f"{len(marks)} marker samples, expected the 1 that claimed the lane")
    return [s for s in samples if s["data"] != MARK]


def differences(what, want, got, fields):
    """Field-by-field differences of two lists of samples (dicts), at most 8 described."""
    out = []
    if len(want) != len(got):
        out.append(f"{what}: {len(got)} samples, expected {len(want)}")
    for i, (w, g) in enumerate(zip(want, got)):
        for f in fields:
            if w.get(f) != g.get(f):
                out.append(f"{what}: sample {i} ({w['type']}, timestamp {w['timestamp']}): {f} is {g.get(f)!r}, "
                           f"expected {w.get(f)!r}")
    return out


# ---- files: the recorder and the snapshot of a board -----------------------------------------------------
BOARD_OPTS = ("--block-size", "64K")


def record_paths(tmp):
    """(path name, trace file, crafted samples) for each way a board's samples become a file."""
    out = []
    for name, extra in (("kron record", ()), ("kron record --compress", ("--compress",))):
        f, e = f"{tmp}/rec{len(out)}.kron", f"{tmp}/rec{len(out)}.jsonl"
        run(KRON, "record", "-q", *extra, "--names", "65534", *BOARD_OPTS, "-o", f, "--", CRAFT, "board", e)
        out.append((name, f, e))
    for mode in ("simple", "circular"):
        board = f"rt-{os.getpid()}-{mode[0]}"  # board names: at most 23 characters
        run(KRON, "board", "create", board, "--mode", mode, "--buffer", "4M", *BOARD_OPTS)
        try:
            e = f"{tmp}/{mode}.jsonl"
            run(KRON, "run", "--board", board, "--", CRAFT, "board", e)
            run(KRON, "rdsample", "--board", board, "-f", f"{tmp}/{mode}.snap.kron")
            out.append((f"kron rdsample --board ({mode} board)", f"{tmp}/{mode}.snap.kron", e))
            if mode == "simple":
                run(KRON, "record", "-q", "--board", board, "--until-idle", "0", "-o", f"{tmp}/live.kron")
                out.append(("kron record --board", f"{tmp}/live.kron", e))
        finally:
            subprocess.run([KRON, "board", "rm", board], capture_output=True)
    return out


def check_files(tmp):
    problems = []
    for name, path, expected in record_paths(tmp):
        want = jsonl(open(expected).read())
        _, got = dump(path)
        problems += differences(name, want, without_marker(got), CARRIES["file"])
        print(f"{name}: {len(got) - 1} samples compared")
    return problems


# ---- merge ------------------------------------------------------------------------------------------------
def check_merge(tmp):
    problems = []
    for world in (2, 3):
        files, want = [], []
        for r in range(world):
            f, e = f"{tmp}/m{world}.rank-{r}.kron", f"{tmp}/m{world}.rank-{r}.jsonl"
            run(CRAFT, "file", f, r, world, e)
            files.append(f)
            want += jsonl(open(e).read())
        out = f"{tmp}/m{world}.kron"
        run(KRON, "merge", "-q", "-o", out, *files)
        _, got = dump(out)
        key = [f for f in CARRIES["merge"] if f != "data"]

        def canon(s):  # a named sample's data without its id (the merge renumbers ids; its name is compared)
            d = s["data"] & ((1 << 48) - 1) if s["flags"] & NAMED else s["data"]
            return json.dumps([s[f] for f in key] + [d])

        w, g = Counter(map(canon, want)), Counter(map(canon, got))
        if w != g:
            fields = [f for f in key if Counter(json.dumps(s[f]) for s in want) != Counter(json.dumps(s[f]) for s in got)]
            problems.append(f"kron merge of {world} ranks: {sum((g - w).values())} of {len(got)} samples differ "
                            f"(fields whose values differ: {fields}), e.g. got {list((g - w))[:2]}, expected "
                            f"{list((w - g))[:2]} (fields {key + ['data']})")
        print(f"kron merge of {world} ranks: {len(got)} samples compared")
    return problems


# ---- the recording every reader below reads ---------------------------------------------------------------
def recording(tmp):
    """kron record's file of the crafted samples, its samples (as read back) and clock; the samples must be
    the crafted ones (else the record path is what fails: see the test of PATH files)."""
    f, e = f"{tmp}/rec.kron", f"{tmp}/rec.jsonl"
    run(KRON, "record", "-q", "--names", "65534", *BOARD_OPTS, "-o", f, "--", CRAFT, "board", e)
    hz, got = dump(f)
    bad = differences("kron record", jsonl(open(e).read()), without_marker(got), CARRIES["file"])
    if bad:
        raise Fail("the recording itself differs from what was written:\n  " + "\n  ".join(bad))
    return f, got, hz


def unordered_file(tmp):
    """A file that does not promise time order (no kron record): readers run their reorder window over it."""
    f, e = f"{tmp}/plain.kron", f"{tmp}/plain.jsonl"
    run(CRAFT, "file", f, 0, 0, e)
    return f, jsonl(open(e).read())


def named_value(data):
    """A named probe's value as the outputs show it: the data word's bits 0-47 (ERRATUM E150), a signed
    48-bit integer (DECISION D30)."""
    v = data & ((1 << 48) - 1)
    return v - (1 << 48) if v >> 47 else v


def ns_of(samples, hz):
    """E153: integer nanoseconds since the first sample, rounded down."""
    t0 = samples[0]["timestamp"]
    return [(s["timestamp"] - t0) * 10**9 // hz for s in samples]


# ---- kron expand -----------------------------------------------------------------------------------------
def expand_samples(text):
    out = []
    for line in text.splitlines():
        p = line.split()
        if len(p) < 7 or not re.fullmatch(r"[0-9a-f]{2}", p[0]):
            continue
        hd = int(p[0], 16)
        # 000 Table B2: cpu (3 bits) | type (2: 0b10 Trace, 0b11 Resource) | shadow overflow | FIFO overflow | N/A
        s = {"type": "resource" if (hd >> 3) & 3 == 3 else "trace", "timestamp": int(p[1], 16),
             "source": int(p[2], 16), "data": int(p[3], 16), "cpu": int(p[4]), "group": int(p[5]),
             "thread": int(p[6]), "name": "", "flags:01": (hd >> 1) & 1 | (hd >> 1) & 2, "counters": []}
        rest = p[7:]
        if rest and rest[0] in ("begin", "end", "event"):
            s["flags:01"] |= NAMED | {"begin": BEGIN, "end": END, "event": 0}[rest[0]]
            s["name"] = rest[1]
            rest = rest[rest.index("value") + 2:]
            rest = rest[2:] if rest and ":" in rest[0] else rest  # the site's "file:line function"
        if s["type"] == "resource":
            s["counters"] = [int(x, 16) for x in rest[-16:]]
        out.append(s)
    return out


def flags01(s):
    return s["flags"] & (NAMED | BEGIN | END | 3) if s["flags"] & NAMED else s["flags"] & 3


def check_expand(tmp):
    problems = []
    rec, ref, _ = recording(tmp)
    plain, plain_ref = unordered_file(tmp)
    for what, path, want in (("kron expand", rec, ref), ("kron expand (reorder window)", plain, plain_ref)):
        got = expand_samples(run(KRON, "expand", "-c", "-rx", path))
        for s in want:
            s["flags:01"] = flags01(s)
        problems += differences(what, want, got, CARRIES["expand"])
        print(f"{what}: {len(got)} samples compared")
    return problems


# ---- CSV ------------------------------------------------------------------------------------------------
def csv_samples(path):
    out = []
    for r in csv.DictReader(open(path, newline="")):
        res = r["type"] == "resource"
        out.append({"type": r["type"], "flags": int(r["flags"]), "group": int(r["group"]), "cpu": int(r["cpu"]),
                    "phase": int(r["phase"]), "source": int(r["source"], 16), "thread": int(r["thread"]),
                    "timestamp": int(r["timestamp"]), "data": int(r["data"]), "name": r["name"],
                    "counters": [int(r[f"c{c}"]) for c in range(16)] if res else []})
    return out


def check_csv(tmp):
    problems = []
    rec, ref, _ = recording(tmp)
    plain, plain_ref = unordered_file(tmp)
    for what, path, want in (("CSV", rec, ref), ("CSV (reorder window)", plain, plain_ref)):
        run(KRON, "export", "--format", "csv", "-o", f"{tmp}/out.csv", path)
        got = csv_samples(f"{tmp}/out.csv")
        problems += differences(what, want, got, CARRIES["csv"])
        print(f"{what}: {len(got)} samples compared")
    return problems


# ---- the event formats: each sample as the item the format writes -----------------------------------------
def stream_lane(s):
    """The track a sample is on (kron's StreamKey: the thread, or the cpu for thread 0)."""
    return s["thread"] if s["thread"] else s["cpu"]


def items_of(samples, hz, keep):
    """Each sample as what a trace viewer format makes of it: an instant, a named event, a counter sample (a
    Resource sample), or a slice from a named scope's begin to its end on one stream (the begin's fields, the
    end's time as end_ns); of each, its time, its track and the fields keep[kind] lists."""
    items, open_ = [], defaultdict(list)
    for s, ns in zip(samples, ns_of(samples, hz)):
        key = (s["source"], s["thread"], stream_lane(s))
        if s["type"] == "resource":
            kind = "counter"
        elif s["flags"] & NAMED and s["flags"] & BEGIN:
            kind = "slice"
        elif s["flags"] & NAMED and s["flags"] & END and open_[key]:
            open_[key].pop()["end_ns"] = ns
            continue
        else:
            kind = "named" if s["flags"] & NAMED else "instant"
        it = {f: s[f] for f in keep[kind] if f in s}
        it.update(kind=kind, type=s["type"], ns=ns, source=s["source"], pid=s["source"] & 0x3FFFFF,
                  lane=stream_lane(s))
        if s["flags"] & NAMED and "value" in keep[kind]:
            it["value"] = named_value(s["data"])
        if kind == "slice":
            open_[key].append(it)
        items.append(it)
    return items


def compare_items(what, want, got, fields):
    key = lambda it: (it["ns"], it["kind"])
    want, got = sorted(want, key=key), sorted(got, key=key)
    problems = [f"{what}: {len(got)} items, expected {len(want)}"] if len(want) != len(got) else []
    for w, g in zip(want, got):
        for f in fields:
            if w.get(f) != g.get(f):
                problems.append(f"{what}: the {w['kind']} at {w['ns']} ns: {f} is {g.get(f)!r}, expected {w.get(f)!r}")
    print(f"{what}: {len(got)} items compared")
    return problems[:40]


def us_to_ns(v):  # "12.345" microseconds (three decimals, E153) -> integer nanoseconds
    return int(decimal.Decimal(v) * 1000)


def check_chrome(tmp):
    rec, ref, hz = recording(tmp)
    run(KRON, "export", "--format", "chrome-json", "-o", f"{tmp}/out.json", rec)
    evs = json.load(open(f"{tmp}/out.json"), parse_float=decimal.Decimal)["traceEvents"]
    got, pending = [], None
    for e in evs:
        base = {"ns": us_to_ns(e.get("ts", 0)), "source": e.get("pid"), "lane": e.get("tid")}
        a = e.get("args", {})
        if e["ph"] == "C":  # sixteen in a row: one Resource sample
            if pending is None or len(pending["counters"]) == 16 or pending["ns"] != base["ns"]:
                pending = dict(base, kind="counter", type="resource", counters=[])
                got.append(pending)
            pending["counters"].append(a["value"])
        elif e["ph"] == "X":
            got.append(dict(base, kind="slice", type="trace", name=e["name"], value=a["value"],
                            end_ns=base["ns"] + us_to_ns(e["dur"])))
        elif e["ph"] == "i" and "name_id" in a:
            got.append(dict(base, kind="named", type="trace", name=e["name"], value=a["value"], group=a["group"]))
        elif e["ph"] == "i":
            got.append(dict(base, kind="instant", type="trace", data=int(a["data"], 16), flags=a["flags"],
                            group=a["group"], thread=a["thread"], phase=a["phase"]))
    want = items_of(ref, hz, CHROME_KEEP)
    fields = ("kind", "type", "source", "lane", "ns", "end_ns", "counters", "name", "value", "data", "flags", "group",
              "thread", "phase")
    return compare_items("Chrome JSON", want, got, fields)


# ---- Perfetto: protoc --decode against the schema subset ----------------------------------------------------
def protoc_text(path):
    """protoc's text format -> nested dicts of lists."""
    root, stack, cur = {}, [], None
    cur = root
    for line in open(path):
        line = line.strip()
        if line.endswith("{"):
            node = {}
            cur.setdefault(line[:-1].strip(), []).append(node)
            stack.append(cur)
            cur = node
        elif line == "}":
            cur = stack.pop()
        elif line:
            k, v = line.split(":", 1)
            v = v.strip()
            cur.setdefault(k, []).append(json.loads(v) if v.startswith('"') else int(v) if re.fullmatch(r"-?\d+", v) else v)
    return root


def one(d, k, default=None):
    return d.get(k, [default])[0]


def perfetto_items(path):
    """Track events with their time (clock 64 resolved per sequence), name (interned), track and annotations."""
    seqs, tracks, out = {}, {}, []
    for p in protoc_text(path)["packet"]:
        sid = one(p, "trusted_packet_sequence_id")
        if one(p, "sequence_flags", 0) & 1:
            seqs[sid] = {"names": {}, "dnames": {}, "last": None, "defaults": {}}
        s = seqs[sid]
        if "trace_packet_defaults" in p:
            s["defaults"] = p["trace_packet_defaults"][0]
        for idd in p.get("interned_data", []):
            for en in idd.get("event_names", []):
                s["names"][one(en, "iid")] = one(en, "name")
            for en in idd.get("debug_annotation_names", []):
                s["dnames"][one(en, "iid")] = one(en, "name")
        for c in p.get("clock_snapshot", [{}])[0].get("clocks", []):
            if one(c, "clock_id") == 64:
                s["last"] = one(c, "timestamp")
        if "track_descriptor" in p:
            tracks[one(p["track_descriptor"][0], "uuid")] = p["track_descriptor"][0]
        if "track_event" not in p:
            continue
        ts = one(p, "timestamp")
        if (one(p, "timestamp_clock_id") or one(s["defaults"], "timestamp_clock_id")) == 64:
            ts = s["last"] = s["last"] + ts
        e = p["track_event"][0]
        dflt = one(s["defaults"], "track_event_defaults", {})
        ann = {s["dnames"].get(one(a, "name_iid"), one(a, "name")): one(a, "uint_value", one(a, "int_value"))
               for a in e.get("debug_annotations", [])}
        out.append({"ns": ts, "type": one(e, "type"), "track": one(e, "track_uuid") or one(dflt, "track_uuid"),
                    "name": s["names"].get(one(e, "name_iid"), one(e, "name")), "ann": ann, "e": e, "dflt": dflt})
    return tracks, out


def check_perfetto(tmp):
    rec, ref, hz = recording(tmp)
    # -e 64: the event number is the whole data word (the default is its low 32 bits, ERRATUM E40)
    run(KRON, "export", "--compress", "0", "-e", "64", "-o", f"{tmp}/out.pftrace", rec)
    with open(f"{tmp}/out.txt", "w") as txt, open(f"{tmp}/out.pftrace", "rb") as pf:
        subprocess.run([os.environ["KRON_PROTOC"], "--decode=perfetto.protos.Trace", "-I", f"{SRC}/tests/exports",
                        "perfetto_subset.proto"], stdin=pf, stdout=txt, check=True)
    tracks, evs = perfetto_items(f"{tmp}/out.txt")
    t0 = min(e["ns"] for e in evs)
    got, open_ = [], defaultdict(list)
    for e in sorted(evs, key=lambda e: e["ns"]):
        th = one(tracks.get(e["track"], {}), "thread", {})
        if e["type"] == "TYPE_COUNTER":  # on a child track of the thread's
            th = one(tracks.get(one(tracks.get(e["track"], {}), "parent_uuid"), {}), "thread", {})
        base = {"ns": e["ns"] - t0, "pid": one(th, "pid"), "thread": one(th, "tid")}
        if e["type"] != "TYPE_COUNTER":  # the annotation is left out when the phase is 0
            base["phase"] = e["ann"].get("phase", 0)
        if e["type"] == "TYPE_COUNTER":
            vals = [one(e["e"], "counter_value")] + e["e"].get("extra_counter_values", [])
            got.append(dict(base, kind="counter", type="resource", counters=[v & U64 for v in vals]))
        elif e["type"] == "TYPE_SLICE_BEGIN":
            it = dict(base, kind="slice", type="trace", name=e["name"], value=e["ann"].get("value", 0))
            open_[e["track"]].append(it)
            got.append(it)
        elif e["type"] == "TYPE_SLICE_END":
            open_[e["track"]].pop()["end_ns"] = base["ns"]
        elif e["name"].startswith("event "):
            got.append(dict(base, kind="instant", type="trace", data=int(e["name"][6:])))
        else:
            got.append(dict(base, kind="named", type="trace", name=e["name"], value=e["ann"].get("value", 0)))
    want = items_of(ref, hz, PERFETTO_KEEP)
    for w in want:
        if w["thread"] == 0:  # a stream of thread 0 is a cpu's track of its process: no ThreadDescriptor
            w["pid"] = w["thread"] = None
    fields = ("kind", "type", "pid", "thread", "ns", "end_ns", "counters", "name", "value", "data", "phase")
    return compare_items("Perfetto", want, got, fields)


# ---- CTF: babeltrace2 -------------------------------------------------------------------------------------
def check_ctf(tmp):
    rec, ref, _ = recording(tmp)
    run(KRON, "export", "--format", "ctf", "-o", f"{tmp}/out.ctf", rec)
    got = []
    for line in run(os.environ["KRON_BABELTRACE2"], f"{tmp}/out.ctf").splitlines():
        m = re.match(r"\[(\S+)\] \(\+\S+\) (kron:\w+): \{ (.*?) \}, \{ (.*) \}$", line.strip())
        if not m:
            continue
        ctx = dict(kv.split(" = ", 1) for kv in m.group(3).split(", "))
        body = m.group(4)
        f = {k: int(v) for k, v in re.findall(r"(\w+) = (\d+)", body)}
        name = re.search(r'name = "(.*)"', body)
        ctrs = re.search(r"counters = \[ (.*?) \]", body)
        got.append({"type": "resource" if m.group(2) == "kron:resource" else "trace", "flags": f["flags"],
                    "group": f["group"], "cpu": f["cpu"], "phase": f["phase"], "source": int(ctx["source"]),
                    "thread": f["thread"], "timestamp": f["ticks"], "data": f["data"],
                    "name": name.group(1) if name else "",
                    "counters": [int(x.split(" = ")[1]) for x in ctrs.group(1).split(", ")] if ctrs else []})
    got.sort(key=lambda s: s["timestamp"])
    problems = differences("CTF", ref, got, CARRIES["ctf"])
    print(f"CTF: {len(got)} samples compared")
    return problems


# ---- OTF2: otf2-print ------------------------------------------------------------------------------------
def otf2_events(printer, archive):
    """otf2-print's events with their location's name and its location group's name (otf2-print -G)."""
    defs = run(printer, "-G", archive)
    groups = dict(re.findall(r'^LOCATION_GROUP\s+(\d+)\s+Name: "(.*?)"', defs, re.M))
    locs = {i: (n, groups[g]) for i, n, g in re.findall(r'^LOCATION\s+(\d+)\s+Name: "(.*?)".*Group: ".*?" <(\d+)>',
                                                          defs, re.M)}
    out = []
    for line in run(printer, archive).splitlines():
        p = line.split()
        if not p or p[0] not in ("ENTER", "LEAVE", "METRIC"):
            continue
        values = [int(v) for _, v in re.findall(r'\("([^"]*)" <\d+>; UINT64; (\d+)\)', line)]
        region = re.search(r'Region: "(.*?)"', line)
        loc, group = locs[p[1]]
        out.append({"event": p[0], "timestamp": int(p[2]), "location": loc, "group": group,
                    "region": region.group(1) if region else None, "values": values})
    return out


def check_otf2(tmp):
    """OTF2 (otf2-print): a named scope's begin and end are Enter and Leave of a region named as the scope, a
    Resource sample a Metric of its counters, any other sample a Metric of its data word; at the sample's
    ticks, on the location of its stream (`thread N`, `cpu N` for thread 0) in its source's location group."""
    rec, ref, _ = recording(tmp)
    run(KRON, "export", "--format", "otf2", "-o", f"{tmp}/out.otf2", rec)
    got = otf2_events(os.environ["KRON_OTF2_PRINT"], f"{tmp}/out.otf2/traces.otf2")
    want = []
    for s in ref:
        named = s["flags"] & NAMED and s["type"] == "trace"
        scope = "ENTER" if named and s["flags"] & BEGIN else "LEAVE" if named and s["flags"] & END else None
        want.append({"event": scope or "METRIC", "timestamp": s["timestamp"],
                     "location": f"thread {s['thread']}" if s["thread"] else f"cpu {s['cpu']}",
                     "group": f"source 0x{s['source']:08x}", "region": s["name"] if scope else None,
                     "values": [] if scope else s["counters"] if s["type"] == "resource" else [s["data"]]})
    got.sort(key=lambda e: e["timestamp"])
    problems = [f"OTF2: {len(got)} events, expected {len(want)}"] if len(got) != len(want) else []
    for w, g in zip(want, got):
        problems += [f"OTF2: the {w['event']} at {w['timestamp']}: {f} is {g[f]!r}, expected {w[f]!r}"
                     for f in w if w[f] != g[f]]
    print(f"OTF2: {len(got)} events compared")
    return problems


# ---- the Python module -----------------------------------------------------------------------------------
def check_python(tmp):
    rec, ref, _ = recording(tmp)
    code = r"""
import json, sys, kron
t = kron.open(sys.argv[1])
sites = t.sites()
s = t.samples()
for r, th, cpu in zip(s, kron.thread_of(s), kron.cpu_of(s)):
    named = int(r["flags"]) & 16
    nid = int(r["data"]) >> 48
    print(json.dumps({"type": "resource" if int(r["kind"]) == 2 else "trace", "flags": int(r["flags"]),
                      "group": int(r["group"]), "cpu": int(cpu), "phase": int(r["phase"]), "source": int(r["source"]),
                      "thread": int(th), "timestamp": int(r["timestamp"]), "data": int(r["data"]),
                      "name": (sites[nid][0] if nid in sites else "#%d" % nid) if named else ""}))
"""
    env = dict(os.environ, PYTHONPATH=os.environ["KRON_PYTHONPATH"])
    got = jsonl(run(os.environ.get("KRON_PYTHON") or sys.executable, "-c", code, rec, env=env))
    problems = differences("Python kron.open", ref, got, CARRIES["python"])
    print(f"Python kron.open: {len(got)} samples compared")
    return problems


PATHS = {"files": check_files, "merge": check_merge, "expand": check_expand, "csv": check_csv,
         "chrome": check_chrome, "perfetto": check_perfetto, "ctf": check_ctf, "otf2": check_otf2,
         "python": check_python}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in PATHS:
        sys.exit(f"usage: roundtrip_test.py {'|'.join(PATHS)}")
    with tempfile.TemporaryDirectory(prefix="kron-roundtrip-") as tmp:
        try:
            problems = PATHS[sys.argv[1]](tmp)
        except Fail as e:
            problems = [str(e)]
    for p in problems:
        print("FAIL:", p, file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
