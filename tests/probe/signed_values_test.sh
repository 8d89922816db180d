#!/usr/bin/env bash
# A named probe's value is signed (DECISION D30, D31): a C program (mk.h) and a C++ program (kron.hpp) record
# -5, 0, 2^47-1 and -2^47, -5 from an unsigned variable, 2^47 and -2^47-1 (outside the range: their low 48
# bits) and a scope carrying -5; kron expand, the CSV and the Chrome JSON export show exactly those values.
# Usage: signed_values_test.sh C_PROGRAM CXX_PROGRAM
set -euo pipefail
kron=${KRON:?}
check=${KRON_SOURCE_DIR:?}/tests/support/signed_values.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
max=$(((1 << 47) - 1)) min=$((-(1 << 47)))
for prog in "$@"; do
  out=$("$kron" record -q -o "$tmp/t.kron" -- "$prog") || fail "$prog under kron record: $out"
  [ "$out" = "attached 1" ] || fail "$prog did not attach: $out"
  python3 "$check" "$kron" "$tmp/t.kron" "signed=-5,0,$max,$min" "signed unsigned=-5" \
    "signed outside=$min,$max" "scope:signed scope=-5" >/dev/null || fail "$(basename "$prog"): the values above"
done
echo ok
