#!/bin/sh
# sim_golden.sh GOLDEN SCRIPT [kron sim options...]: runs `kron sim OPTIONS SCRIPT` in a scratch directory
# (files a script writes, e.g. memdump, land there) and compares its standard output with GOLDEN. Paths
# are relative to the source tree; KRON and KRON_SOURCE_DIR come from kron_add_tool_test.
# Set KRON_UPDATE_GOLDEN=1 to rewrite GOLDEN instead.
set -eu
golden=$KRON_SOURCE_DIR/$1; script=$KRON_SOURCE_DIR/$2; shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
"$KRON" sim "$@" "$script" | sed "s|$KRON_SOURCE_DIR/||g" >out
if [ "${KRON_UPDATE_GOLDEN:-0}" = 1 ]; then cp out "$golden"; exit 0; fi
diff -u "$golden" out
