#!/usr/bin/env bash
# make demo: kron's main job. Until the live recorder lands, a MultiKron II simulator session.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
kron="$build/kron"
echo "== kron sim: examples/mk2/demo.sim (MultiKron II, 000)"
"$kron" sim "$here/examples/mk2/demo.sim"
