#!/usr/bin/env bash
# golden.sh GOLDEN SCRIPT [kron sim options...]: the one harness of every `kron sim` golden test (the
# MultiKron II examples here, the MK I and PCI board examples under tests/models/*/). Runs
# `kron sim OPTIONS SCRIPT` in a scratch directory (files a script writes, e.g. memdump, land there); it
# must exit 0 and print GOLDEN exactly. Paths are relative to the source tree and the source tree's path
# is removed from the output; KRON and KRON_SOURCE_DIR come from kron_add_tool_test
# (kron_add_sim_golden in cmake/KronTest.cmake).
# To accept a deliberate change, rewrite GOLDEN instead: KRON_UPDATE_GOLDEN=1 ctest --test-dir build -L golden
set -uo pipefail
golden=$KRON_SOURCE_DIR/$1; script=$KRON_SOURCE_DIR/$2; shift 2
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
"$KRON" sim "$@" "$script" >raw; rc=$?
if [ $rc -ne 0 ]; then cat raw; echo "kron sim $* $script: exit status $rc"; exit 1; fi
sed "s|$KRON_SOURCE_DIR/||g" raw >out || exit 1
if [ "${KRON_UPDATE_GOLDEN:-0}" = 1 ]; then cp out "$golden" && echo "updated $golden"; exit $?; fi
diff -u "$golden" out || { echo "output of kron sim $* $script differs from $golden"; exit 1; }
