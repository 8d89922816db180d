#!/usr/bin/env python3
"""Every output of the trace side is byte-identical to what the code before the timeline restructuring
wrote (docs/architecture.md "One timeline, many sinks"): outputs.sh runs the kron under test over the
recordings beside it, and each file is compared with expected.tar.xz, which the same script made with the
earlier code. Since then expected.tar.xz has been rewritten only where an output changed on purpose, with
the change said in the commit (the first: kron info's time-base line of trace format 1.6); rewrite it with
`bash outputs.sh KRON DIR` and `tar cJf expected.tar.xz -C DIR .`. A text output that differs is shown as a unified diff; a binary one by its first differing
offset. OTF2's anchor file (traces.otf2) holds a random 64-bit trace identifier at bytes 64-71
(OTF2_Archive_Open draws one per archive): those eight bytes are not compared.

Usage: same_outputs.py KRON
"""
import difflib
import os
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TRACE_ID = range(64, 72)


def files_under(root):
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            out[os.path.relpath(p, root)] = p
    return out


def differs(rel, want, got):
    if rel.endswith("traces.otf2") and len(want) == len(got):
        want = bytes(b for i, b in enumerate(want) if i not in TRACE_ID)
        got = bytes(b for i, b in enumerate(got) if i not in TRACE_ID)
    return want != got


def report(rel, want, got):
    try:
        a, b = want.decode().splitlines(True), got.decode().splitlines(True)
        sys.stdout.writelines(list(difflib.unified_diff(a, b, "expected/" + rel, "now/" + rel))[:40])
    except UnicodeDecodeError:
        at = next((i for i in range(min(len(want), len(got))) if want[i] != got[i]), min(len(want), len(got)))
        print(f"{rel}: binary output differs at byte {at} (expected {len(want)} bytes, now {len(got)})")


def main():
    kron = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        expected, now = os.path.join(tmp, "expected"), os.path.join(tmp, "now")
        with tarfile.open(os.path.join(HERE, "expected.tar.xz")) as t:
            t.extractall(expected)
        subprocess.run(["bash", os.path.join(HERE, "outputs.sh"), kron, now], check=True)
        want, got = files_under(expected), files_under(now)
        bad = 0
        for rel in sorted(set(want) | set(got)):
            if rel not in got or rel not in want:
                print(f"{rel}: {'missing now' if rel not in got else 'not expected'}")
                bad += 1
                continue
            a, b = open(want[rel], "rb").read(), open(got[rel], "rb").read()
            if differs(rel, a, b):
                report(rel, a, b)
                bad += 1
        print(f"{len(want) - bad} of {len(want)} outputs byte-identical to the earlier code's")
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
