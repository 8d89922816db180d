#!/usr/bin/env bash
# golden.sh NAME: `kron sim examples/mk2/NAME.sim` must print tests/sim/golden/NAME.out exactly and exit 0.
# To accept a deliberate change: KRON=build/kron KRON_SOURCE_DIR=. tests/sim/golden.sh NAME --update
set -uo pipefail
name=$1
cd "$KRON_SOURCE_DIR"
script=examples/mk2/$name.sim
golden=tests/sim/golden/$name.out
if [ "${2:-}" = --update ]; then "$KRON" sim "$script" > "$golden"; exit $?; fi
out=$("$KRON" sim "$script"); rc=$?
if [ $rc -ne 0 ]; then echo "kron sim $script: exit status $rc"; exit 1; fi
diff -u "$golden" <(printf '%s\n' "$out") || { echo "output of $script differs from $golden"; exit 1; }
