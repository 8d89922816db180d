#!/usr/bin/env bash
# The board's trust model through the commands: boards named apart (row 4), --shm-dir (row 3), the owner/mode check
# and --trust-board (ERRATUM E121). The library-level rows are tests/board/trust_test.cpp.
set -euo pipefail
kron=${KRON:?}
sample=${KRON_SAMPLE1:?}
tmp=$(mktemp -d)
board="trusttool-$$"
trap 'rm -rf "$tmp"; "$kron" board rm "$board" >/dev/null 2>&1 || true' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Row 4: kron record's board is record-PID-RANDOM (unique across PID namespaces), not record-PID.
out=$("$kron" record -q -o "$tmp/n.trace" -- sh -c 'echo $KRON_BOARD')
name=${out%%$'\n'*}
[[ $name =~ ^record-[0-9]+-[0-9a-f]{8}$ ]] || fail "board name '$name' is not record-PID-RANDOM"
# Two kron record in separate PID namespaces (both are pid 1 there): each records its own program whole.
if unshare -Upf --map-root-user true 2>/dev/null; then
  for i in 1 2; do
    unshare -Upf --map-root-user "$kron" record -q -o "$tmp/ns$i.trace" -- "$sample" 2000 >"$tmp/ns$i.out" 2>&1 &
  done
  wait
  for i in 1 2; do
    # sample1: 2 + 7 per loop trace samples, all recorded.
    "$kron" info "$tmp/ns$i.trace" | grep -q "trace 14002," ||
      { cat "$tmp/ns$i.out"; "$kron" info "$tmp/ns$i.trace"; fail "PID namespace $i: not all of its samples"; }
  done
else
  echo "unshare -Upf not permitted here: the PID-namespace half is skipped"
fi

# Row 3, --shm-dir: a board made, used, listed and removed in another directory.
mkdir "$tmp/shm"
"$kron" board create "$board" --buffer 64K --lanes 4 --shm-dir "$tmp/shm" >/dev/null
[[ -f $tmp/shm/kron.$board ]] || fail "--shm-dir: the board is not in the directory"
"$kron" run --board "$board" --shm-dir "$tmp/shm" -- "$sample" 10 >/dev/null
"$kron" status --board "$board" --shm-dir "$tmp/shm" | grep -q "accounting: passed 75 = recorded 75" || fail "--shm-dir status"
"$kron" board ls --shm-dir "$tmp/shm" | grep -q "^$board " || fail "--shm-dir ls"
"$kron" board rm "$board" --shm-dir "$tmp/shm"
[[ ! -e $tmp/shm/kron.$board ]] || fail "--shm-dir rm"
# Row 3: a board larger than the directory's free space is refused by name, not a SIGBUS later.
if out=$("$kron" board create "$board" --buffer 900G --block-size 1M 2>&1); then
  "$kron" board rm "$board" >/dev/null 2>&1 || true
  echo "more than 900 GiB free in /dev/shm: the free-space half is skipped"
else
  grep -q "MiB free" <<<"$out" || fail "too large: $out"
fi
# A file-size limit below the board's size: refused naming the board, its path and the limit.
if out=$(ulimit -f 1024; trap '' XFSZ; "$kron" board create "$board" --buffer 4M --lanes 4 --shm-dir "$tmp" 2>&1); then
  fail "a board larger than ulimit -f was created"
fi
grep -q "cannot size board '$board' ($tmp/kron.$board) to .* MiB: File too large (the file-size limit, ulimit -f, is lower)" \
  <<<"$out" || fail "ulimit -f: $out"
[[ ! -e $tmp/kron.$board ]] || fail "ulimit -f: the half-made board was left behind"

# ERRATUM E121: a board others may write is refused by status and rdsample unless --trust-board.
"$kron" board create "$board" --buffer 64K --lanes 4 --perms 0666 >/dev/null
if out=$("$kron" status --board "$board" 2>&1); then fail "a 0666 board was accepted"; fi
grep -q "has mode 0666" <<<"$out" || fail "refusal: $out"
if "$kron" rdsample --board "$board" -f "$tmp/r.trace" >/dev/null 2>&1; then fail "rdsample took a 0666 board"; fi
"$kron" status --board "$board" --trust-board >/dev/null || fail "--trust-board"
"$kron" run --board "$board" --trust-board -- "$sample" 10 >/dev/null
"$kron" rdsample --board "$board" --trust-board -f "$tmp/r.trace" | grep -q "75 of 75 samples" || fail "rdsample --trust-board"
echo "trust tools ok"
