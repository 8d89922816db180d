#!/usr/bin/env bash
# The trees that make install, make demo and make test configure build every export format kron documents:
# each CMake option that builds one in (an option of CMakeLists.txt whose description names `kron export
# --format`) is ON in the configure command of each of those targets (make -n: printed, not run).
set -euo pipefail
src=${KRON_SOURCE_DIR:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
opts=$(sed -n 's/^option(\(KRON_WITH_[A-Z0-9_]*\) "kron export --format.*/\1/p' "$src/CMakeLists.txt")
[ -n "$opts" ] || fail "no export format option found in CMakeLists.txt"
for target in install demo test-build; do
  out=$(make -n -C "$src" "$target" BUILD=/nonexistent/kron-make-n 2>&1) || fail "make -n $target: $out"
  for o in $opts; do
    grep -- "cmake -S . -B /nonexistent/kron-make-n" <<<"$out" | grep -q -- "-D$o=ON" ||
      fail "make $target configures without -D$o=ON"
  done
done
echo "make install, make demo and make test build every export format ($(echo $opts))"
