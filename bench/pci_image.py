#!/usr/bin/env python3
"""A full, wrapped 16 MB PCI toolkit board memory image (docs/models-mk1-pcib.md "Board memory image"):
the input of docs/performance.md's `kron rdsample --pci-memory` figure.

    python3 bench/pci_image.py big.img [SAMPLES]

Writes SAMPLES (default 466,147) MultiKron II samples, 3 Trace (20 bytes) : 1 Resource (84 bytes, 000 Table
B2), round the 4M-word memory of a circular board (Configuration Register 0x003201), so that it wraps once;
the Memory Address Pointer is where the next word would go, with the wrap count in bits 22-23.
"""
import struct
import sys

WORDS = 1 << 22
path = sys.argv[1] if len(sys.argv) > 1 else "big.img"
samples = int(sys.argv[2]) if len(sys.argv) > 2 else 466147
mem = bytearray(WORDS * 4)
pos, wraps, ts, source = 0, 0, 0, 0x00010001
for n in range(samples):
    ts += 97
    if n % 4 != 3:  # Trace: header (type 10), timestamp 7 bytes, source, data 8 bytes; big-endian
        s = bytes([0x10]) + ts.to_bytes(7, "big") + source.to_bytes(4, "big") + n.to_bytes(8, "big")
    else:  # Resource: header (type 11), the same fields, then sixteen 32-bit counters
        s = bytes([0x18]) + ts.to_bytes(7, "big") + source.to_bytes(4, "big") + n.to_bytes(8, "big") + \
            b"".join((n * 16 + c).to_bytes(4, "big") for c in range(16))
    end = pos + len(s)
    if end <= len(mem):
        mem[pos:end] = s
    else:  # round the ring
        cut = len(mem) - pos
        mem[pos:] = s[:cut]
        mem[: len(s) - cut] = s[cut:]
    pos = end % len(mem)
    if end >= len(mem):
        wraps += 1
pointer = ((wraps & 3) << 22) | (pos // 4)
header = struct.pack("<8sIHHIIIIII", b"KRONPCIM", 0x01020304, 1, 0, 40, 0x003201, pointer, 0, WORDS, 0)
with open(path, "wb") as f:
    f.write(header)
    f.write(mem)
print(f"{path}: {samples} samples, {wraps} wrap(s), pointer 0x{pointer:06x}")
