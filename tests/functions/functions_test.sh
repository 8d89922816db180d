#!/usr/bin/env bash
# Programs with no kron code (fn_program.c with its library fn_lib.c, fn_cpp.cpp), built with the flags of the
# installed `pkg-config --cflags --libs kron-functions` and nothing else: their output is the same under
# `kron record`, and `kron rpt` names their functions (demangled, file:line) with the call counts the programs
# count themselves; a stripped copy shows addresses with a hint; a run-time filter leaves functions out, and a
# bad filter file stops kron record with its file and line.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
read -r -a cflags <<<"$(pkg-config --cflags kron-functions)"
read -r -a libs <<<"$(pkg-config --libs kron-functions)"
cc -O2 -g -fPIC -shared "${cflags[@]}" "$here/fn_lib.c" -o "$tmp/libfnlib.so"
cc -O2 -g "${cflags[@]}" "$here/fn_program.c" -L"$tmp" -lfnlib -Wl,-rpath,"$tmp" "${libs[@]}" -o "$tmp/fn_program"
c++ -O2 -g "${cflags[@]}" "$here/fn_cpp.cpp" "${libs[@]}" -o "$tmp/fn_cpp"
cp "$tmp/fn_program" "$tmp/fn_stripped"
strip "$tmp/fn_stripped"

# Output unchanged: without a board, and under kron record.
for p in fn_program fn_cpp fn_stripped; do
  "$tmp/$p" >"$tmp/$p.plain"
  "$KRON" record -q -o "$tmp/$p.kron" -- "$tmp/$p" >"$tmp/$p.recorded"
  cmp "$tmp/$p.plain" "$tmp/$p.recorded" || { echo "FAIL: $p printed differently under kron record"; exit 1; }
  "$KRON" rpt --json "$tmp/$p.kron" >"$tmp/$p.json"
done
"$KRON" record -q -o "$tmp/filtered.kron" --functions-filter "$here/fn_filter.txt" -- "$tmp/fn_program" >/dev/null
"$KRON" rpt --json "$tmp/filtered.kron" >"$tmp/filtered.json"
"$KRON" expand "$tmp/fn_program.kron" >"$tmp/fn_program.expand"
if "$KRON" record -q -o "$tmp/bad.kron" --functions-filter "$here/fn_bad_filter.txt" -- "$tmp/fn_program" \
    >/dev/null 2>"$tmp/bad.err"; then
  echo "FAIL: kron record ran with a bad filter file"; exit 1
fi
grep -q "fn_bad_filter.txt:2: .*without a pattern" "$tmp/bad.err" ||
  { echo "FAIL: bad filter message:"; cat "$tmp/bad.err"; exit 1; }
[ ! -e "$tmp/bad.kron" ] || { echo "FAIL: a bad filter file still ran the program"; exit 1; }

python3 - "$tmp" <<'PY'
import json, re, sys
tmp = sys.argv[1]
def rows(name):
    by = {}
    for r in json.load(open(f"{tmp}/{name}.json"))["rows"]:
        if r["stream"] == "all":
            continue
        b = by.setdefault(r["name"], {"count": 0, "unmatched": 0, "location": r.get("location", "")})
        b["count"] += r["count"]
        b["unmatched"] += r["unmatched_starts"] + r["unmatched_ends"]
    return by
def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)
def expect(by, name, count, what):
    got = by.get(name)
    if got is None: fail(f"{what}: no row named {name!r} (rows: {sorted(by)[:40]})")
    if got["count"] != count: fail(f"{what}: {name} counted {got['count']}, the program says {count}")
    if got["unmatched"]: fail(f"{what}: {name} has {got['unmatched']} unmatched begins/ends")
    return got

# The C program: its own counters, its last line.
last = open(f"{tmp}/fn_program.plain").read().splitlines()[-1]
counts = dict(kv.split("=") for kv in last.split()[1:])
counts = {k: int(v) for k, v in counts.items()}
by = rows("fn_program")
loc = expect(by, "fib", counts["fib"], "C")["location"]
if not re.search(r"fn_program\.c:1[0-9]$", loc): fail(f"fib's location is {loc!r}, expected fn_program.c:LINE")
expect(by, "leaf", counts["leaf"], "C")
expect(by, "main", 1, "C")
for f in ("guarded", "jumper", "thrower"):  # left by longjmp: closed by guarded's exit, paired
    expect(by, f, counts["jumps"], "C (longjmp)")
expect(by, "lib_work", counts["lib"], "C (shared library)")
expect(by, "mix", counts["lib"], "C (shared library, static function)")
# Recursion past the hooks' depth limit: the calls recorded and the ones counted as past it add up.
events = {}  # the hooks' counts (ERRATUM E451): named events, as kron expand shows them
for m in re.finditer(r"  event (kron functions: .*?) value (\d+)", open(f"{tmp}/fn_program.expand").read()):
    events[m.group(1)] = int(m.group(2))
past = events.get("kron functions: calls past the depth limit", 0)
deep = by.get("deep", {"count": 0, "unmatched": 0})
if past == 0: fail(f"no calls past the depth limit counted (events: {events})")
if deep["count"] + past != counts["deep"]:
    fail(f"deep: {deep['count']} recorded + {past} past the limit != {counts['deep']}")
if deep["unmatched"]: fail("deep: unmatched begins/ends")
if events.get("kron functions: frames closed by a later exit") != 2 * counts["jumps"]:
    fail(f"frames closed by a later exit: {events}, expected {2 * counts['jumps']}")

# C++: demangled names, exceptions paired.
by = rows("fn_cpp")
for name in ("geo::Box<int>::area() const", "geo::Box<double>::area() const", "geo::scale(int, int)",
             "geo::scale(double, double)", "through(int)", "fails(int)"):
    expect(by, name, 10, "C++")
expect(by, "main", 1, "C++")

# Stripped: addresses with a hint, the library's names still there, exit status 0 (we got here).
doc = json.load(open(f"{tmp}/fn_stripped.json"))
by = rows("fn_stripped")
if "fib" in by: fail("the stripped program still shows fib")
if not any(n.startswith("fn_stripped+0x") for n in by): fail(f"no OBJECT+0xOFFSET row: {sorted(by)[:20]}")
expect(by, "lib_work", counts["lib"], "stripped program's library")
if not any("no symbol" in w and "-g" in w for w in doc["warnings"]): fail(f"no hint: {doc['warnings']}")

# The run-time filter: leaf and fib left out, the rest as before.
by = rows("filtered")
for f in ("leaf", "fib"):
    if f in by: fail(f"filtered: {f} still recorded")
expect(by, "main", 1, "filtered")
expect(by, "guarded", counts["jumps"], "filtered")
print("functions: ok")
PY
