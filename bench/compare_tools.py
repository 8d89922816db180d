#!/usr/bin/env python3
"""Two kron binaries side by side on one recording: each export format and kron rpt, run alternately (old,
new, old, new, ...) so that both meet the same machine, the CPU seconds (user + system) of each run taken
from the kernel (getrusage of the child). Prints the smallest of RUNS runs and the ratio new / old.

Usage: compare_tools.py OLD_KRON NEW_KRON RECORDING [RUNS]
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile

CASES = [["export", "--format", "perfetto"], ["export", "--format", "chrome-json"], ["export", "--format", "csv"],
         ["export", "--format", "ctf"], ["rpt"]]


def cpu_of(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    old, new, rec = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    tmp = tempfile.mkdtemp()
    try:
        print(f"{'command':<28} {'old CPU s':>10} {'new CPU s':>10} {'new/old':>8}")
        for case in CASES:
            best = {}
            for _ in range(runs):
                for name, kron in (("old", old), ("new", new)):
                    out = os.path.join(tmp, "out")
                    shutil.rmtree(out, ignore_errors=True)
                    if os.path.exists(out):
                        os.remove(out)
                    cmd = [kron] + case + (["-o", out] if case[0] == "export" else []) + [rec]
                    t = cpu_of(cmd)
                    best[name] = min(best.get(name, t), t)
            print(f"{' '.join(case):<28} {best['old']:>10.3f} {best['new']:>10.3f} {best['new'] / best['old']:>8.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
