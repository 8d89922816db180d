#!/usr/bin/env bash
# kron record and the program it runs (ERRATUM E135): the signals that end
# kron record are passed on to the program, kron record drains on until the program has ended and
# finishes the file; on its own fatal error (here a write error: RLIMIT_FSIZE with SIGXFSZ ignored gives
# EFBIG, as a full disk gives ENOSPC, without root) it stops the program, says so, and leaves the file
# marked incomplete. The program is a shell that writes its pid, then execs sample1 for a long run.
set -uo pipefail
ulimit -c 0  # SIGQUIT: no core file
kron=${KRON:?}
sample=${KRON_SAMPLE1:?}
tmp=$(mktemp -d)
pids=()  # every process this test started that may outlive a failure: killed on exit
cleanup() {
  for q in "${pids[@]}"; do grep -qa kron "/proc/$q/cmdline" 2>/dev/null && kill -9 "$q"; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
prog=(sh -c 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec "$1" 1000000000' )

wait_for_file() {  # up to 20 s
  for _ in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.1; done
  fail "$1 never appeared"
}
gone() {  # the pid names no process, or a different program (pid reuse)
  [ ! -e "/proc/$1" ] || ! grep -q sample1 "/proc/$1/cmdline" 2>/dev/null
}

# A signal to kron record alone reaches the program; the file is complete and its accounting exact.
for sig in TERM INT HUP QUIT; do
  rm -f "$tmp/pid"
  "$kron" record -q -o "$tmp/$sig.trace" -- "${prog[@]}" "$tmp/pid" "$sample" >/dev/null 2>"$tmp/$sig.err" &
  k=$!
  pids+=("$k")
  wait_for_file "$tmp/pid"
  p=$(cat "$tmp/pid")
  pids+=("$p")
  sleep 0.3  # (under ThreadSanitizer the program may not have probed yet: what is drained may be nothing)
  kill -s "$sig" "$k"
  for _ in $(seq 200); do kill -0 "$k" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$k" 2>/dev/null && fail "SIG$sig: kron record still running after 20 s"
  wait "$k"; rc=$?
  [ "$rc" -eq 1 ] || fail "SIG$sig: kron record exit $rc (expected 1: the program was killed), stderr: $(cat "$tmp/$sig.err")"
  num=$(kill -l "$sig")
  grep -q "was killed by signal $num" "$tmp/$sig.err" || fail "SIG$sig: not forwarded: $(cat "$tmp/$sig.err")"
  gone "$p" || fail "SIG$sig: the program (pid $p) is still running"
  python3 - "$("$kron" info "$tmp/$sig.trace" --json)" "$sig" <<'PY' || fail "SIG$sig: trace file"
import json, sys
j = json.loads(sys.argv[1])
assert j["complete"], (sys.argv[2], j)
assert j["passed_filter"] == j["samples"] + j["overruns"] + j["overwritten"], j
PY
done

# kron record's own fatal error: a file size limit of 4 MiB (the 1 MiB board, without a statistics area, fits under it), SIGXFSZ
# ignored so that the write fails with EFBIG. The program is stopped, kron record says so and fails.
rm -f "$tmp/pid"
(ulimit -f 4096; trap '' XFSZ; exec "$kron" record -q --buffer 1M --stat-cells 0 -o "$tmp/full.trace" -- "${prog[@]}" "$tmp/pid" "$sample") \
  >/dev/null 2>"$tmp/full.err" &
k=$!
pids+=("$k")
for _ in $(seq 600); do kill -0 "$k" 2>/dev/null || break; sleep 0.1; done
[ -s "$tmp/pid" ] && pids+=("$(cat "$tmp/pid")")
kill -0 "$k" 2>/dev/null && fail "kron record still running 60 s after its file reached the size limit"
wait "$k"; rc=$?
cat "$tmp/full.err"
[ "$rc" -ne 0 ] || fail "kron record exit 0 after a write error"
[ -s "$tmp/pid" ] || fail "the program never started"
p=$(cat "$tmp/pid")
pids+=("$p")
gone "$p" || fail "the program (pid $p) was left running after kron record's write error"
grep -q "kron record: stopping sh (pid $p) after an error: .*File too large" "$tmp/full.err" || fail "no 'stopping' message"
python3 - "$("$kron" info "$tmp/full.trace" --json 2>&1)" <<'PY' || fail "the cut file"
import json, sys
j = json.loads(sys.argv[1])
assert not j["complete"], j
PY
echo "signals: ok"
