"""Reads back what probe_prog.py recorded (python_test.sh): every sample as numpy against kron export's CSV,
the scopes as intervals, the histogram and the counter; batches; the copy path of a compressed file.

    python3 check_trace.py TRACE CSV N [COMPRESSED_TRACE]
"""
import csv
import sys

import numpy as np

import kron

path, csv_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
t = kron.open(path)
s = t.samples()
assert t.zero_copy, "an uncompressed recording of Trace samples only is read zero-copy"
assert not s.flags.writeable and not s.flags.owndata, "the zero-copy array is a read-only view"
assert s.dtype.names == kron.SAMPLE_FIELDS
assert len(s) == t.header["samples"], (len(s), t.header["samples"])

# Every sample, field by field, as kron's own exporter writes it (its time order may differ from the file's).
rows = list(csv.DictReader(open(csv_path)))
want = sorted((int(r["timestamp"]), int(r["source"], 16), int(r["thread"]), int(r["cpu"]), int(r["group"]),
               int(r["flags"]), int(r["data"], 0), int(r["phase"])) for r in rows)
got = sorted(zip(s["timestamp"].tolist(), s["source"].tolist(), kron.thread_of(s).tolist(), kron.cpu_of(s).tolist(),
                 s["group"].tolist(), s["flags"].tolist(), s["data"].tolist(), s["phase"].tolist()))
assert got == want, "the numpy samples differ from kron export's CSV"

# Named samples: 2 threads x 2 phases x (n steps x 2 + the phase scope's 2 + one event); then 4 + 3 + 2 signed
# events and a signed scope's 2.
named = (s["flags"] & kron.FLAG_NAMED) != 0
assert named.sum() == 2 * 2 * (2 * n + 3) + 11, named.sum()
sites = t.sites()
names = {v[0] for v in sites.values()}
assert {"step", "py phase", "py done"} <= names, names

# Signed values (DECISION D30, D31): named_value_of gives int64, each value as the program gave it.
values = kron.named_value_of(s)
assert values.dtype == np.int64, values.dtype
ids = kron.name_id_of(s)
order = np.argsort(s["timestamp"], kind="stable")
for name, want in (("signed", [-5, 0, 2**47 - 1, -2**47]), ("signed outside", [-2**47, 2**47 - 1, -5]),
                   ("signed numpy", [-5, -5]), ("signed scope", [-5, -5])):
    site = [i for i, v in sites.items() if v[0] == name]
    assert len(site) == 1, (name, site)
    at = order[named[order] & (ids[order] == site[0])]
    assert values[at].tolist() == want, (name, values[at].tolist())
edge = np.zeros(2, dtype=s.dtype)  # bit 47 is the sign; the id's bits 48-63 are not the value's
edge["data"] = [0xFFFF_8000_0000_0000, 0xFFFF_7FFF_FFFF_FFFF]
assert kron.named_value_of(edge).tolist() == [-2**47, 2**47 - 1], kron.named_value_of(edge)

# The scopes as intervals: name, thread, begin < end, and the thread names.
iv = t.intervals()
names = np.array(iv["name"])
assert (names == "step").sum() == 4 * n, (names == "step").sum()
assert (names == "py phase").sum() == 4, (names == "py phase").sum()
assert (iv["end"] >= iv["begin"]).all() and (iv["duration"] == iv["end"] - iv["begin"]).all()
assert iv["value"].dtype == np.int64 and iv["value"][names == "signed scope"].tolist() == [-5], iv["value"].dtype
threads = {t.thread_name(int(src), int(th)) for src, th in zip(iv["source"], iv["thread"])}
assert threads == {"py main", "py worker"}, threads
phase_values = sorted(iv["value"][names == "py phase"].tolist())
assert phase_values == [1, 1, 2, 2], phase_values
# Each "py phase" interval holds its thread's n steps.
for k in np.nonzero(names == "py phase")[0]:
    inside = ((names == "step") & (iv["thread"] == iv["thread"][k]) & (iv["begin"] >= iv["begin"][k])
              & (iv["end"] <= iv["end"][k]))
    assert inside.sum() == n, inside.sum()

# The histogram and the counter, per phase.
hs = t.histograms()
assert set(hs) == {"py step"}, set(hs)
assert {p: e["count"] for p, e in hs["py step"].items()} == {1: 2 * n, 2: 2 * n}, hs["py step"]
e = hs["py step"][1]
assert e["buckets"].sum() == e["count"] and e["min"] <= e["max"]
assert t.counters() == {1: {3: 2 * n}, 2: {3: 2 * n}}, t.counters()

# Batches: the same samples, a batch at a time.
b = np.concatenate(list(t.batches(97)))
assert len(b) == len(s) and (b == s).all(), (len(b), len(s))

# A compressed recording: decoded into a copy, batches too.
if len(sys.argv) > 4:
    c = kron.open(sys.argv[4])
    assert c.header["compressed"] and not c.zero_copy
    cs = c.samples()
    assert cs.flags.writeable and len(cs) == c.header["samples"]
    assert ((cs["flags"] & kron.FLAG_NAMED) != 0).sum() == named.sum()
    cb = np.concatenate(list(c.batches(1000)))
    assert len(cb) == len(cs) and (cb == cs).all(), (len(cb), len(cs))
    assert {p: e["count"] for p, e in c.histograms()["py step"].items()} == {1: 2 * n, 2: 2 * n}

# A file that is not a trace: kron.InputError naming it.
try:
    kron.open(csv_path)
    raise AssertionError("a CSV file was opened as a trace")
except kron.InputError as err:
    assert csv_path in str(err), str(err)
print("ok")
