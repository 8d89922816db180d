#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds two consumers against it: the probe side
# through pkg-config (kron-probe.pc) and both sides through CMake's find_package(kron).
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
# With the documented flags alone, no -std flag: the compiler's default standard (g++ 12: C++17) must do,
# or the package must carry the standard it needs (kron.pc: -std=c++20; kron/kron.hpp compiles at C++17).
g++ "$here/consumer/probe_side.cpp" $(pkg-config --cflags --libs kron-probe) -o "$tmp/probe_pc"
"$tmp/probe_pc"
g++ "$here/consumer/trace_side.cpp" $(pkg-config --cflags --libs kron) -o "$tmp/trace_pc"
"$tmp/trace_pc"
# clang's default is C++14, which kron.hpp refuses by name; -std=c++17 is enough for the probe side.
clang++ -std=c++17 "$here/consumer/probe_side.cpp" $(pkg-config --cflags --libs kron-probe) -o "$tmp/probe_clang"
"$tmp/probe_clang"
CC=cc CXX=c++ cmake -S "$here/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/trace_side"
"$tmp/consumer/probe_side"
# C programs link with the documented flags alone: pkg-config's, and a C-only CMake project's
# find_package(kron) + kron::kron_probe (the probe library is C++: the C++ runtime comes with its flags).
cc "$here/consumer_c/probe_c.c" $(pkg-config --cflags --libs kron-probe) -o "$tmp/probe_c_pc"
"$tmp/probe_c_pc" 3
CC=cc cmake -S "$here/consumer_c" -B "$tmp/consumer_c" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer_c" >/dev/null
"$tmp/consumer_c/probe_c" 3
# Both record under the installed kron record: 50 Trace samples and one Resource sample each.
for prog in "$tmp/probe_c_pc" "$tmp/consumer_c/probe_c"; do
  "$tmp/prefix/bin/kron" record -q -o "$tmp/c.kron" -- "$prog" 50
  n=$("$tmp/prefix/bin/kron" info "$tmp/c.kron" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["samples"])')
  [ "$n" = 51 ] || { echo "FAIL: $prog under kron record left $n samples, expected 51"; exit 1; }
done
# Every export format kron documents is in the installed kron: OTF2 (on in every tree of the Makefile's,
# make_targets_test.sh), its archive read back by otf2-print: one METRIC per sample (no named scope here).
if grep -q '^KRON_WITH_OTF2:BOOL=ON' "$build/CMakeCache.txt"; then
  "$tmp/prefix/bin/kron" export --format otf2 -o "$tmp/c.otf2" "$tmp/c.kron" >/dev/null
  n=$("${KRON_OTF2_PRINT:-otf2-print}" "$tmp/c.otf2/traces.otf2" | grep -c '^METRIC ') ||
    { echo "FAIL: otf2-print cannot read the installed kron's OTF2 archive"; exit 1; }
  [ "$n" = 51 ] || { echo "FAIL: the installed kron's OTF2 archive holds $n metrics, expected 51"; exit 1; }
else
  echo "FAIL: this tree was configured without KRON_WITH_OTF2: make install's would lack --format otf2"; exit 1
fi
# The trace side carries no probe start-up (kron::kron links kron_board, not kron_probe).
if nm -C "$tmp/trace_pc" "$tmp/consumer/trace_side" | grep -q 'auto_attach'; then
  echo "FAIL: a trace-side consumer carries the probe's start-up attach"; exit 1
fi
# zstd (compressed trace files) is the trace side's dependency, never the probe side's.
if ldd "$tmp/probe_pc" | grep -q libzstd; then
  echo "FAIL: the probe-side consumer links libzstd"; exit 1
fi
# The installed kron finds its selftest probe program in LIBEXECDIR/kron.
board="install-$$"
"$tmp/prefix/bin/kron" board create "$board" --buffer 1M --lanes 4 >/dev/null
trap '"$tmp/prefix/bin/kron" board rm "$board" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
env -u KRON_SELFTEST_PROBE "$tmp/prefix/bin/kron" selftest basic --board "$board" | grep -q "test_mk: 0 error(s)" \
  || { echo "FAIL: the installed kron selftest basic --board"; exit 1; }
echo "install: pkg-config and find_package(kron) consumers (C++ and C) built and ran, the C ones recorded and exported to OTF2; installed selftest probe found"
