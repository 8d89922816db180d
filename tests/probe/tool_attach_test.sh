#!/usr/bin/env bash
# The kron command never attaches to a board. Only instrumented programs (kron_probe) attach at
# start-up to $KRON_BOARD; `kron status`, `kron info` and the live selftest must leave board A alone even
# with KRON_BOARD=A in their environment, and `kron selftest sample --board B` writes to B only.
set -euo pipefail
kron=${KRON:?path to kron}
probe=${KRON_SELFTEST_PROBE:?path to kron-selftest-probe}
tmp=$(mktemp -d)
A="attachA-$$" B="attachB-$$"
trap 'rm -rf "$tmp"; "$kron" board rm "$A" >/dev/null 2>&1 || true; "$kron" board rm "$B" >/dev/null 2>&1 || true' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# The attaches since creation (board 2.3: "(N attached now, M since creation)", ERRATUM E322).
attached() { env -u KRON_BOARD "$kron" status --board "$1" | sed -n 's/.* attached now, \([0-9][0-9]*\) since creation)$/\1/p'; }
held() { env -u KRON_BOARD "$kron" rdsample --board "$1" -f "$tmp/$1.trace" | sed -n 's/^kron rdsample: \([0-9]*\) of \([0-9]*\) samples.*/\2/p'; }

"$kron" board create "$A" --buffer 1M --lanes 4 >/dev/null
"$kron" board create "$B" --buffer 1M --lanes 4 >/dev/null
a0=$(attached "$A")
[ "$a0" = 0 ] || fail "a new board shows $a0 processes attached"

# The measure works: an instrumented program with KRON_BOARD=A does attach (count climbs by one).
KRON_BOARD="$A" "$probe" "$A" 15 -1 trace 7 || fail "the probe program did not run against $A"
a1=$(attached "$A")
[ "$a1" = 1 ] || fail "an instrumented program with KRON_BOARD=A left the attach count at $a1, expected 1"
[ "$(held "$A")" = 1 ] || fail "the probe program's sample is not on $A"

# Inspection never attaches.
KRON_BOARD="$A" "$kron" status --board "$A" >/dev/null
env -u KRON_BOARD "$kron" rdsample --board "$B" -f "$tmp/b.trace" >/dev/null
KRON_BOARD="$A" "$kron" info "$tmp/b.trace" >/dev/null
a2=$(attached "$A")
[ "$a2" = "$a1" ] || fail "kron status / kron info with KRON_BOARD=A changed A's attach count from $a1 to $a2"

# The live selftest against B takes its samples on B, none on A.
KRON_BOARD="$A" "$kron" selftest sample --board "$B" >"$tmp/sample.txt" || { cat "$tmp/sample.txt"; fail "selftest sample --board B"; }
grep -q "mk_sample_test: 0 error(s)" "$tmp/sample.txt" || fail "selftest sample --board B reported errors"
KRON_BOARD="$A" "$kron" selftest basic --board "$B" >"$tmp/basic.txt" || { cat "$tmp/basic.txt"; fail "selftest basic --board B"; }
a3=$(attached "$A")
[ "$a3" = "$a1" ] || fail "kron selftest with KRON_BOARD=A changed A's attach count from $a1 to $a3"
[ "$(held "$A")" = 1 ] || fail "kron selftest --board B with KRON_BOARD=A wrote samples into A"
nb=$(held "$B")
[ "$nb" -ge 2 ] || fail "kron selftest --board B left $nb samples on B"
echo "tool attach: kron status, info and selftest with KRON_BOARD=A left A alone (attached $a3, 1 sample); B holds $nb"
