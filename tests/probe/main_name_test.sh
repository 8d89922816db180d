#!/usr/bin/env bash
# Naming the main thread through kron never renames the process (ERRATUM E410): main_name_c (with probes,
# and built with KRON_DISABLE_PROBES) reads its own /proc/self/comm after mk_thread_name("reader"), without a
# board and under kron record; kron keeps "reader" in its name table (kron info), and the exports label the
# process by its own name.
set -euo pipefail
kron=${KRON:?}
prog=$1 off=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
base=$(basename "$prog")
want="main ${base:0:15}, worker worker 1"
for p in "$prog" "$off"; do
  out=$(env -u KRON_BOARD "$p") || fail "$p without a board: $out"
  [ "$out" = "main $(basename "$p" | cut -c1-15), worker worker 1" ] || fail "$p without a board printed '$out'"
done
out=$("$kron" record -q -o "$tmp/t.kron" -- "$prog") || fail "under kron record: $out"
[ "$out" = "$want" ] || fail "under kron record the program printed '$out', expected '$want'"
"$kron" info --json "$tmp/t.kron" >"$tmp/info.json"
"$kron" export --format chrome-json -o "$tmp/t.json" "$tmp/t.kron"
python3 - "$tmp/info.json" "$tmp/t.json" "${base:0:15}" <<'PY'
import json, sys
info = json.load(open(sys.argv[1])); ev = json.load(open(sys.argv[2]))["traceEvents"]; base = sys.argv[3]
names = {l["tid"]: l.get("thread_name") for l in info["lanes"]}
pid = info["lanes"][0]["pid"]
assert names.get(pid) == "reader", names
assert "worker 1" in names.values(), names
procs = [e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"]
assert procs == [f"{base} (pid {pid})"], procs
threads = {e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
assert f"reader (tid {pid})" in threads, threads
PY
echo "main thread named 'reader': the process kept its name '$base' (with and without a board, probes off too)"
