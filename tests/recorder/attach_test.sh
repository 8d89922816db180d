#!/usr/bin/env bash
# kron record --board NAME: drain an existing board live while programs started with `kron run --board`
# write it. Three writer processes with known sequences (attach_writer.cpp): every
# sample in the file once, in time order, accounting exact, including samples written before the drainer
# attached and those the board lost before; a second drainer refused with the first one's pid;
# --until-idle ends the recording, and not while a writer is attached but silent; SIGINT ends it with a
# complete, valid file, and what it left on the board goes to the next drainer.
set -euo pipefail
kron=${KRON:?}
writer=${KRON_ATTACH_WRITER:?}
check="python3 ${KRON_SOURCE_DIR:?}/tests/recorder/trace_check.py"
tmp=$(mktemp -d)
b1="attach1-$$" b2="attach2-$$" b3="attach3-$$"
cleanup() {
  for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done
  for b in "$b1" "$b2" "$b3" "attach4-$$"; do "$kron" board rm "$b" >/dev/null 2>&1 || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# Waits (at most 60 s) for a file to appear / a process to end; fails the test instead of hanging.
wait_file() { for _ in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.1; done; fail "$1 never appeared"; }
wait_mapped() { for _ in $(seq 600); do grep -q "/kron.$2" "/proc/$1/maps" 2>/dev/null && return 0; sleep 0.1; done; fail "pid $1 never mapped board $2"; }
wait_end() { for _ in $(seq 600); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done; fail "pid $1 did not end: $2"; }

# ---- 1. three processes, drained live; before-attach samples and losses; refusal; --until-idle ----------
# A pool of 64 KiB (16 blocks of 4 KiB, 2048 slots) for 16 lanes: writer 1 runs before any drainer and
# writes 3000 samples in each of two threads, so the board keeps the oldest it can hold and counts the
# rest as overruns (003 Table 2 WRAPB=1; board format 2.0: one pool for every thread).
"$kron" board create "$b1" --buffer 64K --lanes 16 --wait >/dev/null
"$kron" run --board "$b1" -- "$writer" seq 1 3000 2
# Writer 5 attaches and stays silent until told to write: while it is attached, --until-idle must not end
# the recording, however slowly the writers below start on a loaded machine.
"$kron" run --board "$b1" -- "$writer" idle 5 1000 "$tmp/go5" &
w5=$!
wait_mapped "$w5" "$b1"
# Drains live; the hold-back is long so that the file must be in time order whatever the machine's load.
"$kron" record --board "$b1" --until-idle 1 --hold-back 500 -o "$tmp/a.trace" >"$tmp/a.out" 2>"$tmp/a.err" &
rec=$!
wait_file "$tmp/a.trace"  # created after the drainer took the board's lock
# A second drainer is refused, naming the first one's pid, and writes nothing.
if out=$("$kron" record --board "$b1" -o "$tmp/x.trace" 2>&1); then fail "second drainer accepted: $out"; fi
grep -q "already being drained by pid $rec" <<<"$out" || fail "refusal does not name pid $rec: $out"
[ ! -e "$tmp/x.trace" ] || fail "the refused drainer created its file"
# Writers 2 and 3: 100000 samples in each of two threads, far more than a lane holds: with the CSR's
# Write Wait they wait for the live drain, which must keep taking them.
"$kron" run --board "$b1" -- "$writer" seq 2 100000 2 &
w2=$!
KRON_BOARD="$b1" "$writer" seq 3 100000 2 &  # the environment variable alone attaches too
w3=$!
wait "$w2" || fail "writer 2"
wait "$w3" || fail "writer 3"
touch "$tmp/go5"
wait "$w5" || fail "writer 5"
wait_end "$rec" "--until-idle 1 did not end the recording"
wait "$rec" || fail "kron record --board exited $?: $(cat "$tmp/a.err")"
cat "$tmp/a.out" "$tmp/a.err"
grep -q "no writer for 1 s" "$tmp/a.err" || fail "--until-idle was not what ended it"
$check "$tmp/a.trace" >"$tmp/a.json"
python3 - "$tmp/a.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = j["seqs"]
assert j["complete"] and j["records"] == j["samples"], (j["complete"], j["records"], j["samples"])
# Writers 2 and 3 (tags ID << 8 | thread): every sample, once, in order.
for w in (2, 3):
    for t in (0, 1):
        assert s.get(str(w << 8 | t)) == list(range(100000)), (w, t, len(s.get(str(w << 8 | t), [])))
assert s.get(str(5 << 8)) == list(range(1000)), len(s.get(str(5 << 8), []))
# Writer 1 wrote before the drainer attached: what its lanes kept (the oldest, in order) is in the file,
# what they could not keep is in the overruns.
kept = 0
for t in (0, 1):
    got = s.get(str(1 << 8 | t), [])
    assert got == list(range(len(got))), (t, len(got))
    kept += len(got)
assert 0 < kept <= 2048, kept
assert j["overruns"] == 2 * 3000 - kept, (j["overruns"], kept)
assert j["overwritten"] == 0
assert j["samples"] == kept + 4 * 100000 + 1000
# Accounting exact: every probe the writers made (2 x 3000 + 4 x 100000 + 1000) passed, and is in the
# file or counted as an overrun.
assert j["passed"] == 407000 and j["passed"] == j["samples"] + j["overruns"] + j["overwritten"], j["passed"]
# Time order (hold-back 500 ms): nothing out of order, and the header says so.
assert j["out_of_order"] == 0 and j["late"] == 0, (j["out_of_order"], j["late"])
PY
"$kron" info "$tmp/a.trace" | grep -q "accounting does not add up" && fail "kron info: accounting"

# ---- 2. --until-idle waits for a writer that is attached but silent -------------------------------------
# The writer maps the board and sleeps before its first probe (no lane yet): the drainer sees it in /proc.
"$kron" board create "$b2" --buffer 1M --lanes 4 >/dev/null
# It writes only when told, after the drainer has gone four times --until-idle without seeing a sample.
"$kron" run --board "$b2" -- "$writer" idle 5 500 "$tmp/go" &
w=$!
wait_mapped "$w" "$b2"
"$kron" record --board "$b2" --until-idle 0.5 -q -o "$tmp/i.trace" >/dev/null 2>"$tmp/i.err" &
rec=$!
wait_file "$tmp/i.trace"
sleep 2
touch "$tmp/go"
wait "$w" || fail "idle writer"
wait_end "$rec" "--until-idle 0.5 did not end the recording after the writer ended"
wait "$rec" || fail "idle recording: $(cat "$tmp/i.err")"
$check "$tmp/i.trace" >"$tmp/i.json"
python3 - "$tmp/i.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["seqs"].get(str(5 << 8)) == list(range(500)), "the recording ended while a silent writer was attached"
assert j["passed"] == j["samples"] + j["overruns"] + j["overwritten"], j
PY

# ---- 3. SIGINT: a complete, valid file; the rest goes to the next drainer -------------------------------
"$kron" board create "$b3" --buffer 64M --lanes 4 >/dev/null
"$kron" run --board "$b3" -- "$writer" run 4 "$tmp/stop" &
w=$!
"$kron" record --board "$b3" -o "$tmp/s1.trace" >"$tmp/s1.out" 2>"$tmp/s1.err" &
rec=$!
wait_file "$tmp/s1.trace"
sleep 0.5
kill -INT "$rec"
wait_end "$rec" "SIGINT did not end the recording"
wait "$rec" || fail "kron record --board after SIGINT exited $?: $(cat "$tmp/s1.err")"
grep -q "stopped by signal 2" "$tmp/s1.err" || fail "not stopped by SIGINT: $(cat "$tmp/s1.err")"
touch "$tmp/stop"
wait "$w" || fail "run writer"
"$kron" record --board "$b3" --until-idle 0 -q -o "$tmp/s2.trace" >/dev/null 2>"$tmp/s2.err" || fail "second drain: $(cat "$tmp/s2.err")"
$check "$tmp/s1.trace" >"$tmp/s1.json"; $check "$tmp/s2.trace" >"$tmp/s2.json"
python3 - "$tmp/s1.json" "$tmp/s2.json" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for j in (a, b):
    assert j["complete"] and j["records"] == j["samples"], j["complete"]
    assert j["passed"] == j["samples"] + j["overruns"] + j["overwritten"], (j["passed"], j["samples"], j["overruns"])
    assert j["overruns"] == 0 and j["late"] == j["out_of_order"], (j["overruns"], j["late"], j["out_of_order"])
first, rest = a["seqs"].get(str(4 << 8), []), b["seqs"].get(str(4 << 8), [])
# The interrupted file holds the start of the sequence, the next drainer the rest: each sample once.
assert len(first) > 0 and sorted(first) == list(range(len(first))), len(first)
assert sorted(first + rest) == list(range(len(first) + len(rest))), (len(first), len(rest))
PY
grep -q "by an earlier drainer" "$tmp/s2.err" || fail "the second drain does not mention the earlier one: $(cat "$tmp/s2.err")"

# ---- 4. a circular board that overwrote before the drainer came: the identity with overwritten > 0 -------
# 003 2.7 circular buffer: the board keeps the newest samples of the whole board; what it overwrote is
# counted, and kron record --board's file says passed = samples + overruns + overwritten exactly, for lanes
# whose writers ended (freed by the drain) and for one still attached while the drain runs.
b4="attach4-$$"
"$kron" board create "$b4" --buffer 64K --lanes 4 --mode circular >/dev/null
"$kron" run --board "$b4" -- "$writer" seq 6 30000 2
"$kron" run --board "$b4" -- "$writer" idle 7 200 "$tmp/go7" &
w7=$!
wait_mapped "$w7" "$b4"
"$kron" record --board "$b4" --until-idle 0.5 -q -o "$tmp/c.trace" >/dev/null 2>"$tmp/c.err" &
rec=$!
wait_file "$tmp/c.trace"
touch "$tmp/go7"
wait "$w7" || fail "writer 7"
wait_end "$rec" "--until-idle 0.5 did not end the circular recording"
wait "$rec" || fail "circular recording: $(cat "$tmp/c.err")"
"$kron" board rm "$b4" >/dev/null 2>&1 || true
$check "$tmp/c.trace" >"$tmp/c.json"
python3 - "$tmp/c.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["complete"] and j["records"] == j["samples"], (j["complete"], j["records"], j["samples"])
assert j["overwritten"] > 0, j["overwritten"]
assert j["passed"] == j["samples"] + j["overruns"] + j["overwritten"], (j["passed"], j["samples"], j["overruns"], j["overwritten"])
assert j["passed"] == 2 * 30000 + 200, j["passed"]
# The newest of each thread of writer 6, consecutive up to its last sample; writer 7's, every one.
for t in (0, 1):
    got = j["seqs"].get(str(6 << 8 | t), [])
    assert got == list(range(30000 - len(got), 30000)), (t, len(got), got[:3])
assert j["seqs"].get(str(7 << 8)) == list(range(200)), len(j["seqs"].get(str(7 << 8), []))
PY

# ---- Bad usage: exit 2 with a message naming the option ---------------------------------------------------
set +e
"$kron" record --board "$b3" --buffer 4M -o "$tmp/u.trace" 2>"$tmp/u.err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q -- "--buffer" "$tmp/u.err" || fail "--board with --buffer: rc $rc $(cat "$tmp/u.err")"
set +e
"$kron" record --until-idle 1 -o "$tmp/u.trace" -- true 2>"$tmp/u.err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q -- "--until-idle" "$tmp/u.err" || fail "--until-idle without --board: rc $rc"
set +e
"$kron" record --board "no-such-board-$$" -o "$tmp/u.trace" 2>"$tmp/u.err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q "no-such-board-$$" "$tmp/u.err" || fail "missing board: rc $rc $(cat "$tmp/u.err")"
echo "attach tests passed"
