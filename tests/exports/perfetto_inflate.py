#!/usr/bin/env python3
"""Inflates a Perfetto trace's compressed_packets (TracePacket field 50: a zlib stream of Trace.packet
records, as Perfetto's own service writes them and trace_processor reads them) into a plain Trace, so that
protoc --decode can read it. Usage: perfetto_inflate.py IN OUT; prints how many compressed packets it met."""
import sys, zlib

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i

def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        wt = key & 7
        if wt == 0:
            v, j = varint(b, i); yield key >> 3, wt, b[i:j], b; i = j
        elif wt == 1:
            yield key >> 3, wt, b[i:i + 8], b; i += 8
        elif wt == 2:
            n, i = varint(b, i); yield key >> 3, wt, b[i:i + n], b; i += n
        elif wt == 5:
            yield key >> 3, wt, b[i:i + 4], b; i += 4
        else:
            raise SystemExit(f"wire type {wt} at offset {i}")

def tagged(field, payload):
    out = bytearray()
    for v in (field << 3 | 2, len(payload)):
        while v >= 0x80:
            out.append(v & 0x7f | 0x80); v >>= 7
        out.append(v)
    return bytes(out) + payload

data = open(sys.argv[1], "rb").read()
out, compressed = bytearray(), 0
for f, wt, payload, _ in fields(data):
    assert f == 1 and wt == 2, f"top-level field {f} is not Trace.packet"
    inner = list(fields(payload))
    if any(g == 50 for g, *_ in inner):
        assert len(inner) == 1, "a compressed_packets packet with other fields"
        out += zlib.decompress(inner[0][2]); compressed += 1
    else:
        out += tagged(1, payload)
open(sys.argv[2], "wb").write(out)
print(compressed)
