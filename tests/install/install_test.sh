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
c++ -std=c++20 "$here/consumer/probe_side.cpp" $(pkg-config --cflags --libs kron-probe) -o "$tmp/probe_pc"
"$tmp/probe_pc"
c++ -std=c++20 "$here/consumer/trace_side.cpp" $(pkg-config --cflags --libs kron) -o "$tmp/trace_pc"
"$tmp/trace_pc"
CC=cc CXX=c++ cmake -S "$here/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/trace_side"
"$tmp/consumer/probe_side"
echo "install: pkg-config and find_package(kron) consumers built and ran"
