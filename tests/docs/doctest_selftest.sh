#!/usr/bin/env bash
# The doc-test harness fails when a doc drifts from kron, and says where: a fixture README and doc with one
# drift of each kind (an option kron does not have, a command that fails, an output that changed, a snippet
# that does not compile, a block that says nothing of itself, a skip without its reason) must give exactly
# these failures, each naming its file and line; the blocks that are right (docs/good.md) must pass.
set -euo pipefail
build=${1:?build dir}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/docs" "$tmp/src/examples"
f='```'
cat > "$tmp/src/README.md" <<DOC
# fixture
${f}sh
kron sim --chip numachine --no-such-option x.sim
${f}
${f}sh
kron info no-such-file.kron
${f}
${f}console
\$ echo 'read PR = 0x00000005'
read PR = 0x00000006
${f}
${f}
kron info t.kron
${f}
<!-- doctest: skip -->
${f}sh
true
${f}
DOC
cat > "$tmp/src/docs/good.md" <<DOC
<!-- doctest: output numbers -->
${f}console
\$ echo 'samples 12 over 3.5 ms'
samples 1672 over 1.03 s
\$ kron board create X --buffer 1M --perms 0600 > /dev/null && kron board rm X
\$ false
[1]
${f}
${f}cpp
#include <kron/kron.hpp>
int main() { KRON_SCOPE("doc"); return kron::attached() ? 1 : 0; }
${f}
${f}c
#include <kron/mk.h>
int main(void) { mk_trace(1, 2); return 0; }
${f}
DOC
cat > "$tmp/src/docs/bad.md" <<DOC
${f}cpp
#include <kron/kron.hpp>
int main() { kron::no_such_probe(1); }
${f}
DOC
set +e
out=$(python3 "$here/doctest.py" --build "$build" --source "$tmp/src" 2>&1)
rc=$?
set -e
echo "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ $rc = 1 ] || fail "the harness exited $rc on drifted docs, expected 1"
expect() { grep -qF -- "$1" <<<"$out" || fail "no failure '$1'"; }
expect "FAIL README.md:3: \`kron sim --no-such-option\`: no such option"
expect "FAIL README.md:3: command exited"   # the option is also refused when it runs
expect "FAIL README.md:6: command exited"
expect "FAIL README.md:9: \`echo 'read PR = 0x00000005'\`: output differs from the doc"
expect "expected doc line 10: 'read PR = 0x00000006'"
expect "FAIL README.md:12: fenced block without an info string"
expect "FAIL README.md:15: 'doctest: skip' needs its reason"
expect "FAIL docs/bad.md:1: the cpp snippet does not compile"
n=$(grep -c '^FAIL ' <<<"$out")
[ "$n" = 7 ] || fail "$n failures, expected 7 (docs/good.md must pass)"
echo "doctest selftest: each drift failed at its file and line; the good blocks passed"
