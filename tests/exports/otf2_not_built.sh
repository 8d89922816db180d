#!/bin/bash
# A kron built without OTF2 (KRON_WITH_OTF2=OFF) refuses `export --format otf2` clearly: a non-zero exit and a
# message that names the missing part. A script file, not an `sh -c` string in CMake, which would split it at
# each ';' and take kron's own exit status for the test's.
set -u
out=$("$KRON" export --format otf2 -o x.otf2 missing.trace 2>&1)
rc=$?
echo "$out"
if [ "$rc" -eq 0 ]; then
  echo "FAIL: kron export --format otf2 succeeded in a kron built without OTF2" >&2
  exit 1
fi
if ! grep -q 'was not built into this kron' <<<"$out"; then
  echo "FAIL: the refusal does not say that OTF2 was not built in" >&2
  exit 1
fi
echo "PASS: refused with status $rc"
