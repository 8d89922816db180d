#!/usr/bin/env bash
# README's `make demo-board` with its output to a file, no terminal (`kron expand | head` under pipefail
# once failed it with SIGPIPE, exit 141): scripts/demo-board.sh must exit 0.
build=${1:?build dir}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$(dirname "$0")/../../scripts/demo-board.sh" "$build" > "$log" 2>&1
rc=$?
[ $rc = 0 ] || { tail -20 "$log"; echo "FAIL: scripts/demo-board.sh exited $rc with its output to a file"; exit 1; }
echo "demo-board: exit 0 with its output to a file ($(wc -l < "$log") lines)"
