#!/usr/bin/env python3
"""The tree's shape: every C and C++ file of src/ and include/ as .clang-format lays it out, and no function
there longer than 150 lines (by universal-ctags' line and end fields). Prints each offence by file and line.

Usage: style_check.py SOURCE_DIR CLANG_FORMAT CTAGS
"""
import json
import os
import subprocess
import sys

MAX_LINES = 150


def sources(root):
    for top in ("src", "include"):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if n.endswith((".c", ".cpp", ".h", ".hpp")):
                    yield os.path.join(d, n)


def main():
    root, clang_format, ctags = sys.argv[1:4]
    files = list(sources(root))
    bad = 0
    fmt = subprocess.run([clang_format, "--dry-run", "--Werror", "--style=file"] + files, cwd=root,
                         capture_output=True, text=True)
    if fmt.returncode != 0:
        lines = [l for l in fmt.stderr.splitlines() if "error:" in l]
        print("\n".join(lines[:40]))
        print(f"{len(lines)} lines not laid out as .clang-format says (clang-format -i FILE fixes them)")
        bad += 1
    tags = subprocess.run([ctags, "--fields=+ne", "--output-format=json", "--c++-kinds=f", "--c-kinds=f", "-f", "-"]
                          + files, cwd=root, capture_output=True, text=True, check=True)
    for line in tags.stdout.splitlines():
        t = json.loads(line)
        if t.get("kind") != "function" or "end" not in t:
            continue
        n = t["end"] - t["line"] + 1
        if n > MAX_LINES:
            print(f"{os.path.relpath(t['path'], root)}:{t['line']}: {t['name']} is {n} lines (at most {MAX_LINES})")
            bad += 1
    print(f"{len(files)} files: {'ok' if not bad else f'{bad} problem(s)'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
