"""Reading a trace file into numpy, timed, beside its floor (docs/performance.md "Python"):

    python3 python/bench_read.py FILE [COMPRESSED_FILE]

For each file, in a fresh child process each (so that its peak memory is its own): kron.open + samples() and
one pass over every timestamp (the view's pages read in), the same through batches(1 << 20), and the floor:
numpy.fromfile of the file's bytes (a plain read of as many bytes into memory) and the same pass. Prints
wall seconds (from the call, after import), the child's CPU seconds (the whole process, import included) and
its peak resident memory (ru_maxrss: a zero-copy view's file pages count in it, as pages of the page cache the
kernel may take back), with the page cache warm (each file read once before)."""
import json
import os
import subprocess
import sys

CHILD = r'''
import json, resource, sys, time
import numpy as np
import kron
path, how = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
if how == "samples":
    t = kron.open(path)
    s = t.samples()
    n, total = len(s), int(s["timestamp"].sum(dtype=np.uint64))
    zero_copy = t.zero_copy
elif how == "batches":
    t = kron.open(path)
    n = total = 0
    for b in t.batches(1 << 20):
        n += len(b)
        total += int(b["timestamp"].sum(dtype=np.uint64))
    zero_copy = t.zero_copy
else:  # the floor: the bytes read into memory, no parsing, no checking
    raw = np.fromfile(path, dtype=np.uint8)
    n = (len(raw) - 1024) // 32
    total = int(raw[1024:1024 + n * 32].view(np.uint64)[2::4].sum(dtype=np.uint64))
    zero_copy = None
dt = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"how": how, "samples": n, "seconds": dt, "zero_copy": zero_copy, "cpu_s": ru.ru_utime + ru.ru_stime,
                  "maxrss_mb": ru.ru_maxrss / 1024}))
'''


def run(path, how):
    out = subprocess.run([sys.executable, "-c", CHILD, path, how], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    rows = []
    for path in sys.argv[1:]:
        with open(path, "rb") as f:  # warm the page cache: every figure reads from memory, not the disk
            while f.read(1 << 24):
                pass
        for how in ("floor", "samples", "batches"):
            if how == "floor" and path != sys.argv[1]:
                continue
            r = run(path, how)
            r["file"] = os.path.basename(path)
            rows.append(r)
            print(f"{r['file']:<24} {how:<8} {r['samples']:>10} samples {r['seconds']:8.3f} s (cpu {r['cpu_s']:.3f} s, "
                  f"with the interpreter's start) "
                  f"{r['samples'] / r['seconds'] / 1e6:8.1f} M/s  peak RSS {r['maxrss_mb']:8.1f} MB"
                  f"  zero_copy={r['zero_copy']}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
