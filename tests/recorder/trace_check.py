#!/usr/bin/env python3
"""Reads a kron trace file record by record in file order (docs/trace-format.md), for the live-attach
tests: prints one JSON object with the header's accounting and, per writer tag (data >> 32: ID << 8 |
thread, attach_writer.cpp), the sequence numbers in file order; counts records that follow a record with
a later timestamp (what the header's `late` must equal)."""
import json
import struct
import sys

path = sys.argv[1]
with open(path, "rb") as f:
    b = f.read()
if b[:8] != b"KRONTRC1":
    sys.exit(f"{path}: not a kron trace file")
header_size, flags = struct.unpack_from("<II", b, 16)
records_bytes, samples, overruns, overwritten, passed = struct.unpack_from("<QQQQQ", b, 56)
late = struct.unpack_from("<Q", b, 904)[0]
seqs, resources = {}, []
pos, end, max_ts, out_of_order, count = header_size, header_size + records_bytes, 0, 0, 0
while pos < end:
    kind, size = struct.unpack_from("<HH", b, pos)
    source, thread, ts, data = struct.unpack_from("<IIQQ", b, pos + 8)
    if ts < max_ts:
        out_of_order += 1
    max_ts = max(max_ts, ts)
    if kind == 1:
        seqs.setdefault(str(data >> 32), []).append(data & 0xFFFFFFFF)
    elif kind == 2:
        resources.append({"data": data, "counters": list(struct.unpack_from("<16Q", b, pos + 32))})
    count += 1
    pos += size
print(json.dumps({"complete": bool(flags & 1), "samples": samples, "records": count, "overruns": overruns,
                  "overwritten": overwritten, "passed": passed, "late": late, "out_of_order": out_of_order,
                  "seqs": seqs, "resources": resources}))
