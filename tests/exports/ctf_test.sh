#!/usr/bin/env bash
# kron export --format ctf read back by babeltrace2 (Debian's, the reference CTF reader): every event it
# reads is a sample `kron expand` prints (timestamp, source, data, CPU, filter level, thread; the name of a
# named probe's sample), none missing, none extra, in time order; the clock's frequency is the
# recording's and its offset puts the first sample at the recording's wall time; Resource samples carry
# their sixteen counters (`kron export --format csv`); and the recorder's overruns come out as
# babeltrace2's discarded-events messages with their count (CTF 1.8 section 5, events_discarded;
# docs/errata.md E165). Inputs: kcompress (named probes, threads), kron_sample1 with counters, and a
# board that overflowed before its drainer attached (attach_writer, as tests/recorder/attach_test.sh).
set -euo pipefail
kron=${KRON:?}
bt=${KRON_BABELTRACE2:?}
tmp=$(mktemp -d)
board="ctf-$$"
cleanup() { "$kron" board rm "$board" >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"

# kcompress with its context switches (--sched) where perf_event allows it: kron:sched_switch events too.
if ! "$kron" record -q --sched -o k.trace -- "${KRON_KCOMPRESS:?}" -p 2 --synthetic 2 >k.gz 2>k.rec.err; then
  grep -q "perf_event_open" k.rec.err || fail "kron record --sched failed without saying why: $(cat k.rec.err)"
  echo "note: --sched not permitted here ($(head -1 k.rec.err)); kcompress recorded without switches"
  "$kron" record -q -o k.trace -- "${KRON_KCOMPRESS:?}" -p 2 --synthetic 2 >k.gz
fi
"$kron" record -q -o s.trace --counter 0=clock --counter 1=software -- "${KRON_SAMPLE1:?}" 100 >/dev/null
"$kron" board create "$board" --buffer 64K --lanes 16 --wait >/dev/null
"$kron" run --board "$board" -- "${KRON_ATTACH_WRITER:?}" seq 1 3000 2
"$kron" record --board "$board" --until-idle 1 -q -o o.trace >/dev/null 2>&1
for t in k s o; do
  "$kron" export --format ctf -o $t.ctf $t.trace >$t.out
  "$kron" expand $t.trace >$t.expand
  "$kron" export --format csv -o $t.csv $t.trace >/dev/null
  "$kron" info --json $t.trace >$t.info
  "$bt" --clock-seconds $t.ctf >$t.bt 2>$t.bterr || fail "babeltrace2 cannot read $t.ctf: $(cat $t.bterr)"
  "$bt" --clock-cycles $t.ctf >$t.btc 2>/dev/null
done
# A classic stream (the PCI board model's cable, MultiKron II samples) on standard input: no wall clock
# (offset 0), each sample an event with the stream's timestamp, source and data (kron expand's columns).
"$kron" sim --board pci "${KRON_SOURCE_DIR:?}/examples/pci/cable.sim" >cable.raw 2>/dev/null
"$kron" export --format ctf --input-format mk2 -o c.ctf - <cable.raw >/dev/null
"$kron" expand --input-format mk2 cable.raw | while read -r _ ts src data; do echo $((16#$ts)) $((16#$src)) $((16#$data)); done >c.want
"$bt" c.ctf 2>/dev/null | sed -E 's/.*source = ([0-9]+).*ticks = ([0-9]+), data = ([0-9]+).*/\2 \1 \3/' >c.got
[ "$(wc -l <c.want)" = 3 ] && cmp c.want c.got || fail "classic stream: babeltrace2 read $(cat c.got), kron expand $(cat c.want)"
[ "$("$bt" c.ctf 2>/dev/null | grep -c kron:resource)" = 1 ] || fail "classic stream: the Resource sample"

# Refused: an output that is not a directory.
touch notdir
if "$kron" export --format ctf -o notdir k.trace 2>err.txt; then fail "wrote over a file"; fi
grep -q "notdir: exists and is not a directory" err.txt || fail "unclear refusal: $(cat err.txt)"

# Phases (kserver: two phases): each kron:trace event's phase is its sample's (the CSV's column).
"$kron" record -q -o h.trace -- "${KRON_KSERVER:?}" -t 2 -n 2000 >/dev/null
"$kron" export --format ctf -o h.ctf h.trace >/dev/null
"$kron" export --format csv -o h.csv h.trace >/dev/null
"$bt" h.ctf 2>/dev/null >h.bt
python3 - <<'PY'
import csv, re
from collections import Counter
ctf = Counter((int(t), int(p)) for t, p in re.findall(r"ticks = (\d+),.*?phase = (\d+)", open("h.bt").read()))
rows = Counter((int(r["timestamp"]), int(r["phase"])) for r in csv.DictReader(open("h.csv")))
assert ctf == rows and any(p for _, p in rows), (ctf, rows)
print(f"h: {sum(rows.values())} samples with their phases ({sorted({p for _, p in rows})}), as the CSV's")
PY

python3 - <<'PY'
import csv, json, re
from collections import Counter

def bt_events(path):
    evs, disc = [], []
    for line in open(path):
        if "Discarded" in line or "discarded" in line:
            disc.append(line)
            continue
        m = re.match(r"\[(\S+)\] \(\+\S+\) (kron:\w+): \{ (.*?) \}, \{ (.*) \}$", line.strip())
        assert m, line
        ctx = dict(kv.split(" = ", 1) for kv in m.group(3).split(", "))
        body = m.group(4)
        name = re.search(r'name = "(.*)"', body)
        f = dict(re.findall(r"(\w+) = (\d+)", body))
        counters = re.search(r"counters = \[ (.*?) \]", body)
        evs.append({"ts": m.group(1), "kind": m.group(2), "ctx": ctx, "f": f,
                    "name": name.group(1) if name else None,
                    "counters": [int(x.split(" = ")[1]) for x in counters.group(1).split(", ")] if counters else None})
    return evs, disc

for t in ("k", "s", "o"):
    evs, disc = bt_events(f"{t}.bt")
    info = json.load(open(f"{t}.info"))
    # Context switches (kron record --sched): every one, on their own stream (by_thread 2), in time order.
    sw = [e for e in evs if e["kind"] == "kron:sched_switch"]
    evs = [e for e in evs if e["kind"] != "kron:sched_switch"]
    assert len(sw) == info.get("sched_switches", 0), (t, len(sw), info.get("sched_switches"))
    assert all(e["ctx"]["by_thread"] == "2" for e in sw)
    assert len({(e["f"]["source"], e["f"]["thread"]) for e in sw}) == info.get("sched_threads", 0), (t, info.get("sched_threads"))
    ticks = [int(e["f"]["ticks"]) for e in sw]
    assert ticks == sorted(ticks), f"{t}: switches out of time order"
    if sw:
        print(f"{t}: {len(sw)} context switches as kron:sched_switch events")
    # kron expand: "HDR TIMESTAMP SOURCE DATA CPU LEVEL THREAD [begin|end|event NAME ...]"
    exp = []
    for line in open(f"{t}.expand"):
        p = line.split()
        if len(p) < 7 or not re.fullmatch(r"[0-9a-f]+", p[1]):
            continue
        named = p[7] if len(p) > 8 and p[7] in ("begin", "end", "event") else None
        nm = " ".join(p[8:p.index("value")]) if named else None
        exp.append((int(p[1], 16), int(p[2], 16), int(p[3], 16), int(p[4]), int(p[5]), int(p[6]), nm))
    got = [(int(e["f"]["ticks"]), int(e["ctx"]["source"]), int(e["f"]["data"]), int(e["f"]["cpu"]),
            int(e["f"]["group"]), int(e["f"]["thread"]), e["name"]) for e in evs]
    assert len(got) == len(exp) == info["samples"], (t, len(got), len(exp), info["samples"])
    assert Counter(got) == Counter(exp), (t, list((Counter(got) - Counter(exp)).items())[:3], list((Counter(exp) - Counter(got)).items())[:3])
    # Time order: babeltrace2 merges the streams by the clock in nanoseconds, which a TSC tick is finer
    # than (two streams' events within one nanosecond come in either order): in order of their
    # nanoseconds overall, and of their ticks within each stream.
    ns_of = [tuple(map(int, e["ts"].split("."))) for e in evs]  # --clock-seconds: SECONDS.NANOSECONDS
    assert ns_of == sorted(ns_of), f"{t}: not in time order"
    per_stream = {}
    for e, g in zip(evs, got):
        per_stream.setdefault((e["ctx"]["source"], e["ctx"]["lane"]), []).append(g[0])
    for k, ticks in per_stream.items():  # a recording with late samples has them late in CTF too (E164)
        assert ticks == sorted(ticks) or info["late"], f"{t}: stream {k} not in tick order"
    for e in evs:  # each event on its own stream's context
        assert int(e["ctx"]["lane"]) == (int(e["f"]["thread"]) or int(e["f"]["cpu"])), e
    # Counters: as the CSV's rows of Resource samples.
    rows = [r for r in csv.DictReader(open(f"{t}.csv")) if r["type"].lower().startswith("res")]
    res = [e for e in evs if e["kind"] == "kron:resource"]
    assert len(res) == len(rows), (t, len(res), len(rows))
    assert Counter(tuple(e["counters"]) for e in res) == Counter(tuple(int(r[f"c{c}"]) for c in range(16)) for r in rows)
    # The clock: cycles are the recording's ticks; the wall time of the first sample is the recording's.
    cyc = [l for l in open(f"{t}.btc") if l.startswith("[") and "kron:sched_switch" not in l]
    first_cycles = int(re.match(r"\[(\d+)\]", cyc[0]).group(1))
    assert first_cycles == got[0][0], (first_cycles, got[0][0])
    # Losses: babeltrace2 reports the overruns as discarded events.
    # (babeltrace2's text output writes them to standard error: "Tracer discarded N events between ...")
    disc = [l for l in open(f"{t}.bterr") if "discarded" in l]
    lost = sum(int(re.search(r"discarded (\d+) events", d).group(1)) for d in disc)
    assert lost == info["overruns"] + info["overwritten"], (t, lost, info["overruns"], disc[:2])
    print(f"{t}: {len(got)} events as kron expand, {len(res)} resource samples, {lost} discarded events")
o = json.load(open("o.info"))
assert o["overruns"] > 0, "the overflowing board lost nothing: the discarded-events check checked nothing"
PY
echo "export_ctf: ok"
