#!/usr/bin/env bash
# kron record on a program as a user runs it (tests/recorder/real_program.cpp):
#  - the program's standard output is byte for byte what it writes without kron (also with -q and
#    --compress); kron record says everything on standard error, and nothing with -q but losses;
#  - the trace file's header quotes the command as typed (sh -c '... > "$0"' 'a b');
#  - losses are shown where they happened: threads that found no free lane in the record summary (even
#    with -q) and in kron info's "(no lane)" row, the rows adding up to the header's count;
#  - kron rdsample --board keeps the command of the program that ran on the board; kron status counts
#    the live processes only;
#  - on-CPU time per interval from a task-clock counter (kron rpt), a computing block told from a
#    sleeping one;
#  - kron record --sched: context switches in the file, counted by kron info and kron rpt, drawn by kron
#    export as thread state tracks (skipped, saying why, where perf refuses them).
set -euo pipefail
kron=${KRON:?}
prog=${KRON_REAL_PROGRAM:?}
tmp=$(mktemp -d)
board="real-$$"
trap 'rm -rf "$tmp"; "$kron" board rm "$board" >/dev/null 2>&1 || true' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- 1. The program's output, untouched -------------------------------------------------------------
# 300000 bytes: 74 chunks of up to 4096, two samples each (148).
"$prog" bytes 300000 >"$tmp/ref.bin"
[ "$(stat -c %s "$tmp/ref.bin")" = 300000 ] || fail "reference output"
"$kron" record -o "$tmp/b.kron" -- "$prog" bytes 300000 >"$tmp/out.bin" 2>"$tmp/out.err"
cmp "$tmp/ref.bin" "$tmp/out.bin" || fail "kron record changed the program's standard output"
grep -q "^kron record: 148 samples in .* recorded + overruns + overwritten" "$tmp/out.err" || fail "summary: $(cat "$tmp/out.err")"
"$kron" record -q -o "$tmp/q.kron" -- "$prog" bytes 300000 >"$tmp/q.bin" 2>"$tmp/q.err"
cmp "$tmp/ref.bin" "$tmp/q.bin" || fail "kron record -q changed the program's standard output"
[ ! -s "$tmp/q.err" ] || fail "kron record -q said: $(cat "$tmp/q.err")"
"$kron" record --compress -o "$tmp/z.kron" -- "$prog" bytes 300000 >"$tmp/z.bin" 2>/dev/null
cmp "$tmp/ref.bin" "$tmp/z.bin" || fail "kron record --compress changed the program's standard output"
for f in b q z; do
  n=$("$kron" info --json "$tmp/$f.kron" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["samples"], j["lost"])')
  [ "$n" = "148 0" ] || fail "$f.kron: samples, lost = $n (expected 148 0)"
done

# ---- 2. The command as typed ------------------------------------------------------------------------
"$kron" record -q -o "$tmp/sh.kron" -- sh -c "'$prog' bytes 1000 > \"\$0\"" "$tmp/x y.bin"
want="program: sh -c ''\\''$prog'\\'' bytes 1000 > \"\$0\"' '$tmp/x y.bin'"
got=$("$kron" info "$tmp/sh.kron" | grep '^program: ')
[ "$got" = "$want" ] || fail "header command: got [$got], want [$want]"
# ... and it reads back: the shell runs the quoted command again to the same bytes.
eval "${got#program: }"
cmp <(head -c 1000 "$tmp/ref.bin") "$tmp/x y.bin" || fail "the quoted command does not run as typed"

# ---- 3. Losses where they happened ------------------------------------------------------------------
# 12 threads at once on 4 lanes: 8 threads find no lane, 50 probes each.
"$kron" record -q --lanes 4 -o "$tmp/l.kron" -- "$prog" threads 12 50 2>"$tmp/l.err" || true
grep -q "^kron record: LOST 400 of 600 samples: 400 with no free lane" "$tmp/l.err" || fail "losses with -q: $(cat "$tmp/l.err")"
"$kron" info "$tmp/l.kron" >"$tmp/l.txt"
grep -q "^LOST 400 samples: 400 overruns, 0 overwritten (400 of them in no lane row" "$tmp/l.txt" || fail "info: $(cat "$tmp/l.txt")"
grep -Eq '^ +\(no lane\) +0 +400 +0 +0$' "$tmp/l.txt" || fail "no (no lane) row: $(cat "$tmp/l.txt")"
"$kron" info --json "$tmp/l.kron" | python3 -c '
import json, sys
j = json.load(sys.stdin)
rows = sum(l["overruns"] for l in j["lanes"]) + j["lost_outside_lanes"]["overruns"]
assert rows == j["overruns"] == 400, (rows, j["overruns"])
assert j["samples"] == 200 and j["passed_filter"] == 600, j
'

# A statistics cell scribbled by a stray store: the samples' accounting adds up, but kron record names the
# damaged cell and exits 1 though the program succeeded.
rc=0
"$kron" record -q -o "$tmp/m.kron" -- "$prog" badcell 10 2>"$tmp/m.err" || rc=$?
[ "$rc" -eq 1 ] || fail "kron record exit $rc with a damaged statistics cell: $(cat "$tmp/m.err")"
grep -q "statistics cell 0 at offset [0-9]*: unknown cell kind" "$tmp/m.err" || fail "no cell named: $(cat "$tmp/m.err")"
"$kron" info "$tmp/m.kron" | grep -q "samples 10 " || fail "the samples of a run with a damaged cell: $("$kron" info "$tmp/m.kron")"

# ---- 4. kron rdsample --board and kron status -------------------------------------------------------
"$kron" board create "$board" --buffer 1M --lanes 8 >/dev/null
"$kron" run --board "$board" -- "$prog" hold 3 &
runner=$!
for _ in $(seq 100); do
  "$kron" status --board "$board" | grep -q "^board .* 1 live process with lanes" && break
  sleep 0.1
done
"$kron" status --board "$board" | grep -q "^board .* 1 live process with lanes (1 attached now, 1 since creation)" \
  || fail "status while running: $("$kron" status --board "$board" | head -2)"
"$kron" status --board "$board" | grep -qx "program: $prog hold 3" || fail "status program line"
wait "$runner"
"$kron" status --board "$board" | grep -q "^board .* 0 live processes with lanes (0 attached now, 1 since creation)" \
  || fail "status after the program ended: $("$kron" status --board "$board" | head -1)"
"$kron" rdsample --board "$board" -f "$tmp/rd.kron" >/dev/null
"$kron" info "$tmp/rd.kron" | grep -qx "program: $prog hold 3" || fail "rdsample header: $("$kron" info "$tmp/rd.kron" | head -3)"

# ---- 5. On-CPU time per interval (task-clock counter) -----------------------------------------------
printf '1 10 11 "compute"\n1 12 13 "sleep"\n' >"$tmp/work.info"
if "$kron" record -q --counter 0=task-clock -o "$tmp/w.kron" -- "$prog" work 20 2>"$tmp/w.err"; then
  "$kron" rpt -f "$tmp/work.info" --json "$tmp/w.kron" | python3 -c '
import json, sys
j = json.load(sys.stdin)
rows = {r["name"]: r for r in j["rows"]}
c, s = rows["compute"], rows["sleep"]
for r in (c, s):
    assert r["count"] == 20 and r["cpu_count"] == 20, r
    assert r["cpu_total_us"] <= r["total_us"] * 1.05, r  # never more on a CPU than the wall time
# 2 ms of computing against 2 ms asleep (a loaded machine lowers the first, never raises the second).
assert c["cpu_mean_us"] > 5 * s["cpu_mean_us"] and s["cpu_share"] < 0.2, (c, s)
'
  "$kron" rpt -f "$tmp/work.info" "$tmp/w.kron" >"$tmp/w.txt"
  grep -q " on-cpu unm.$" "$tmp/w.txt" || fail "rpt text has no on-cpu column: $(cat "$tmp/w.txt")"
  awk 'length($0) > 100 { bad = 1 } END { exit bad }' "$tmp/w.txt" || fail "rpt text wider than 100 columns"
else
  grep -q "task-clock" "$tmp/w.err" || fail "--counter 0=task-clock: $(cat "$tmp/w.err")"
  echo "SKIP on-CPU time: perf refuses the task-clock counter here: $(cat "$tmp/w.err")"
fi

# ---- 6. kron record --sched -------------------------------------------------------------------------
# Only for the program kron record runs: with --board it is refused before anything is opened.
set +e
"$kron" record --board "$board" --sched -o "$tmp/nb.kron" 2>"$tmp/nb.err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q "^kron: --sched: offset 0: records the threads of the program kron record runs" "$tmp/nb.err" \
  || fail "--sched with --board: exit $rc, $(cat "$tmp/nb.err")"
if "$kron" record --sched -o "$tmp/s.kron" -- "$prog" work 10 2>"$tmp/s.err"; then
  grep -q "^kron record: [0-9]* context switches of the program's threads (--sched)" "$tmp/s.err" || fail "$(cat "$tmp/s.err")"
  n=$("$kron" info --json "$tmp/s.kron" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["sched_switches"])')
  [ "$n" -ge 20 ] || fail "$n context switches for 10 sleeps (expected 20 or more)"
  "$kron" info "$tmp/s.kron" | grep -q "^context switches $n of [0-9]* threads\? (" || fail "kron info context switches"
  "$kron" rpt -f "$tmp/work.info" "$tmp/s.kron" | grep -q "; $n context switches$" || fail "kron rpt context switches"
  # On-CPU time from the switches (ERRATUM E157), with no counter recorded: every occurrence has it.
  "$kron" rpt -f "$tmp/work.info" --json "$tmp/s.kron" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["cpu_source"] == "sched", j.get("cpu_source")
rows = {r["name"]: r for r in j["rows"]}
c, s = rows["compute"], rows["sleep"]
for r in (c, s):
    assert r["count"] == 10 and r["cpu_count"] == 10, r
    assert r["cpu_total_us"] <= r["total_us"] + 1e-3, r  # never more on a CPU than the wall time
assert c["cpu_mean_us"] > 5 * s["cpu_mean_us"] and s["cpu_share"] < 0.2, (c, s)
' || fail "on-CPU time from the context switches"
  "$kron" export --format chrome-json -f "$tmp/work.info" -o "$tmp/s.json" "$tmp/s.kron" | grep -q "thread states" || fail "export says no thread states"
  python3 - "$tmp/s.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
st = [e for e in ev if e.get("cat") == "sched"]
assert st and all(e["tid"] & 0x40000000 for e in st), "no state track"
waits = [e for e in st if e["name"] == "waiting"]
assert len(waits) >= 10, len(waits)  # each 2 ms sleep is a stretch off the CPU
assert all(e["dur"] >= 0 for e in st)
names = [e for e in ev if e.get("ph") == "M" and e["name"] == "thread_name" and e["tid"] & 0x40000000]
assert names and names[0]["args"]["name"].endswith(": scheduling"), names
PY
else
  grep -q "perf_event_open" "$tmp/s.err" || fail "--sched failed without saying why: $(cat "$tmp/s.err")"
  echo "SKIP --sched: $(cat "$tmp/s.err")"
fi
echo "real program: output untouched (plain, -q, --compress), command quoted, losses shown, rdsample/status right," \
     "on-CPU time and --sched checked"
