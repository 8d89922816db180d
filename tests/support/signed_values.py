#!/usr/bin/env python3
"""The values of named probes as kron's tools show them (DECISION D30, D31 in docs/decisions.md): kron expand,
kron export's CSV, its Chrome JSON, and where their readers are installed (make test's tree has them) its CTF
(babeltrace2) and OTF2 (otf2-print), must each show exactly the values given, in time order, for each name.
The language tests (tests/probe/signed_values_test.sh, fortran/tests, python/tests) record a program and ask.

    signed_values.py KRON TRACE NAME=V1,V2,... [scope:NAME=V ...]

NAME=V1,...: the named events NAME carry V1, V2, ... in that order. scope:NAME=V: one scope NAME carrying V
(its begin and end in expand and CSV, its slice in the JSON).
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def parse_specs(args):
    want = {}  # name -> (is_scope, values as expand and CSV show them, values as the JSON shows them)
    for a in args:
        scope = a.startswith("scope:")
        name, _, vals = (a[6:] if scope else a).rpartition("=")
        v = [int(x) for x in vals.split(",")]
        want[name] = (scope, [x for x in v for _ in range(2)] if scope else v, v)
    return want


def expand_values(kron, trace, names, data_names):
    """Also fills data_names: each named sample's data word (hex, the line's fourth field) -> its name."""
    out = subprocess.run([kron, "expand", trace], check=True, capture_output=True, text=True).stdout
    got = {n: [] for n in names}
    for line in out.splitlines():
        m = re.search(r"  (?:begin|end|event) (.*?) value (-?\d+)(?:  |$)", line)
        if m and m.group(1) in got:
            got[m.group(1)].append(int(m.group(2)))
            data_names[int(line.split()[3], 16)] = m.group(1)
    return got


def csv_values(kron, trace, names, tmp):
    path = os.path.join(tmp, "t.csv")
    subprocess.run([kron, "export", "--format", "csv", "-o", path, trace], check=True, capture_output=True)
    got = {n: [] for n in names}
    for r in csv.DictReader(open(path)):
        if r["name"] in got:
            got[r["name"]].append(int(r["value"]))
    return got


def json_values(kron, trace, names, tmp):
    path = os.path.join(tmp, "t.json")
    subprocess.run([kron, "export", "--format", "chrome-json", "-o", path, trace], check=True, capture_output=True)
    events = sorted((e for e in json.load(open(path))["traceEvents"] if e.get("ph") in ("i", "X")),
                    key=lambda e: float(e["ts"]))
    got = {n: [] for n in names}
    for e in events:
        if e["name"] in got:
            got[e["name"]].append(e["args"]["value"])
    return got


def ctf_values(kron, trace, names, tmp):
    path = os.path.join(tmp, "ctf")
    subprocess.run([kron, "export", "--format", "ctf", "-o", path, trace], check=True, capture_output=True)
    out = subprocess.run(["babeltrace2", path], check=True, capture_output=True, text=True).stdout
    got = {n: [] for n in names}
    for m in re.finditer(r'kron:named: .*\bvalue = (-?\d+), name = "([^"]*)"', out):
        if m.group(2) in got:
            got[m.group(2)].append(int(m.group(1)))
    return got


def otf2_values(kron, trace, names, tmp, data_names):
    """Each scope's Enter (named by its region) and each named event's Metric (named by its data word) with its
    attribute "value" (none when 0)."""
    path = os.path.join(tmp, "otf2")
    subprocess.run([kron, "export", "--format", "otf2", "-o", path, trace], check=True, capture_output=True)
    out = subprocess.run(["otf2-print", os.path.join(path, "traces.otf2")], check=True, capture_output=True,
                         text=True).stdout.splitlines()
    got = {n: [] for n in names}
    for i, line in enumerate(out):
        m = re.match(r'ENTER .*Region: "(.*)" <\d+>$', line)
        name = m.group(1) if m else None
        m = re.match(r'METRIC .*"kron event data" <\d+>; UINT64; (\d+)\)$', line)
        if m:
            name = data_names.get(int(m.group(1)))
        if name in got:
            a = re.search(r'ADDITIONAL ATTRIBUTES: \("value" <\d+>; INT64; (-?\d+)\)', out[i + 1]) \
                if i + 1 < len(out) else None
            got[name].append(int(a.group(1)) if a else 0)
    return got


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    kron, trace, want = sys.argv[1], sys.argv[2], parse_specs(sys.argv[3:])
    with tempfile.TemporaryDirectory() as tmp:
        data_names = {}
        shown = {"kron expand": (expand_values(kron, trace, want, data_names), 1),
                 "the CSV export": (csv_values(kron, trace, want, tmp), 1),
                 "the Chrome JSON export": (json_values(kron, trace, want, tmp), 2)}
        if shutil.which("babeltrace2"):
            shown["the CTF export (babeltrace2)"] = (ctf_values(kron, trace, want, tmp), 1)
        if shutil.which("otf2-print"):
            shown["the OTF2 export (otf2-print)"] = (otf2_values(kron, trace, want, tmp, data_names), 2)
    for tool, (got, k) in shown.items():
        for name, w in want.items():
            if got[name] != w[k]:
                fail(f"{tool} shows {name!r} with {got[name]}, expected {w[k]}")
    print("ok")


if __name__ == "__main__":
    main()
