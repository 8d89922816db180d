#!/usr/bin/env bash
# make demo: kron's main job. First the live recorder: an instrumented multithreaded program (after the
# toolkit's sample1.c, 003 section 3.6) recorded on a board, and what was recorded; a server loop's latency
# histograms per phase (kron hist); then a MultiKron II
# simulator session (000) and a NUMAchine monitor session (004): a read-latency histogram per phase.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
kron="$(cd "$build" && pwd)/kron"
out="$build/demo"
mkdir -p "$out"

echo "== kron record: examples/sample1 (system calls in a loop, intervals of classes 1-3, class-4 messages between two threads)"
"$kron" record -o "$out/sample1.trace" --counter 0=clock --counter 1=software --counter 2=page-faults \
  --counter 3=oncpu -- "$build/examples/kron_sample1" 5000
echo "== kron info $out/sample1.trace"
"$kron" info "$out/sample1.trace"

info="$here/examples/sample1/interval.info"
trace="$out/sample1.trace"
echo "== kron rpt -s -f examples/sample1/interval.info (003 mk_rpt: intervals of classes 1-4, per thread and for all)"
"$kron" rpt -s -f "$info" --html "$out/sample1-report.html" "$trace"
"$kron" export --format perfetto -f "$info" -o "$out/sample1.pftrace" "$trace"
"$kron" export --format csv -o "$out/sample1.csv" "$trace"
echo "== exported"
echo "   report page: $out/sample1-report.html (open in a browser)"
echo "   timeline:    $out/sample1.pftrace (Perfetto: https://ui.perfetto.dev, \"Open trace file\"; the file is read in the browser, nothing is uploaded)"
echo "   samples:     $out/sample1.csv"

echo
echo "== kron record: examples/compressor (kcompress: a parallel gzip compressor with named scopes and thread names)"
# --sched (context switches, for rpt's on-CPU column) where perf_event permits it; without it otherwise.
if ! "$kron" record -q --sched -o "$out/kcompress.trace" -- "$build/examples/kcompress" -p 2 --synthetic 16 \
    >"$out/kcompress.gz" 2>"$out/kcompress.err"; then
  echo "   (kron record --sched: $(head -1 "$out/kcompress.err"); recording without it)"
  "$kron" record -q -o "$out/kcompress.trace" -- "$build/examples/kcompress" -p 2 --synthetic 16 >"$out/kcompress.gz"
fi
if gzip -t "$out/kcompress.gz" 2>/dev/null; then echo "   $out/kcompress.gz: a valid gzip stream"; else echo "   $out/kcompress.gz: NOT a valid gzip stream"; fi
echo "== kron info $out/kcompress.trace"
"$kron" info "$out/kcompress.trace"
echo "== kron rpt (named scopes paired by name: no interval.info)"
(cd "$out" && "$kron" rpt kcompress.trace)  # in $out: no interval.info there
# The same report as a page (summary, timeline, table, histograms); a picture of it where chromium is installed.
(cd "$out" && "$kron" rpt --html kcompress-report.html kcompress.trace >/dev/null)
if command -v chromium >/dev/null; then
  chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$out/chromium-profile" \
    --window-size=1280,1100 --virtual-time-budget=5000 --screenshot="$out/kcompress-report.png" \
    "file://$(cd "$out" && pwd)/kcompress-report.html" >/dev/null 2>&1 || true
  rm -rf "$out/chromium-profile"
fi
"$kron" export --format perfetto -o "$out/kcompress.pftrace" "$out/kcompress.trace"
rm -rf "$out/kcompress.ctf"  # (a CTF trace is a directory: the export refuses one that is not empty)
"$kron" export --format ctf -o "$out/kcompress.ctf" "$out/kcompress.trace" >/dev/null
echo "   report page: $out/kcompress-report.html (open in a browser: summary, timeline, table, histograms)"
[ -f "$out/kcompress-report.png" ] && echo "   its picture: $out/kcompress-report.png"
echo "   timeline:    $out/kcompress.pftrace (https://ui.perfetto.dev, \"Open trace file\": threads by name, nested slices with their value)"
echo "   CTF:         $out/kcompress.ctf (babeltrace2 $out/kcompress.ctf, or Trace Compass)"
echo "   walkthrough: docs/walkthrough.md"
echo

echo "== kron record: examples/server (kserver: three request types, two phases; latency histograms and virtual counters)"
"$kron" record -q -o "$out/kserver.trace" -- "$build/examples/kserver" -t 3 -n 20000
echo "== kron hist $out/kserver.trace (per phase and in total; the bars are the total's buckets)"
"$kron" hist "$out/kserver.trace"
echo "   JSON: kron hist --json $out/kserver.trace (docs/hist-json.md); live: kron hist --board NAME"
echo "== kron top: kserver watched live (one plain frame; on a terminal: kron top -- PROGRAM, a full screen)"
"$kron" top --once --program-output "$out/kserver-top.out" -o "$out/kserver-top.trace" -- \
  "$build/examples/kserver" -t 3 -n 20000 --slow --scopes
echo "== kron record: examples/functions (kprimes: no kron code, built with pkg-config kron-functions' flags)"
"$kron" record -q -o "$out/kprimes.trace" -- "$build/examples/kprimes" 20000
echo "== kron rpt: every function a named scope, named from the program's symbols and DWARF (docs/functions.md)"
"$kron" rpt "$out/kprimes.trace"
"$kron" export --format perfetto -o "$out/kprimes.pftrace" "$out/kprimes.trace"
echo "   timeline:    $out/kprimes.pftrace (each call a slice, nested by the call stack)"
if command -v clang >/dev/null &&
    clang -O2 -fopenmp "$here/examples/openmp/ompdemo.c" -o "$out/ompdemo" 2>/dev/null; then
  echo "== kron record --openmp: examples/openmp (ompdemo, clang -fopenmp: no kron code; OMPT through LLVM's libomp)"
  "$kron" record -q --openmp -o "$out/ompdemo.trace" -- "$out/ompdemo"
  "$kron" rpt "$out/ompdemo.trace" | grep -E "^interval|omp (parallel|implicit task|barrier|critical|task) "
fi
echo "== MPI: examples/mpi/mpi_demo (a ring, a halo exchange, an allreduce) on 4 ranks under libkron_mpi, merged"
# Each rank records itself (its own board and file); kron merge puts them on rank 0's clock. As root mpirun
# needs --allow-run-as-root; --oversubscribe lets 4 ranks share fewer cores.
rm -f "$out"/mpi.rank-*.kron
mpirun --allow-run-as-root --oversubscribe -np 4 -x LD_PRELOAD="$(cd "$build" && pwd)/lib/libkron_mpi.so" \
  -x KRON_MPI_OUT="$out/mpi" -x KRON_MPI_SYNC_S=0.01 "$build/examples/mpi_demo" 200
"$kron" info "$out/mpi.rank-1.kron"
echo "== kron merge $out/mpi.rank-*.kron -o $out/mpi.kron"
"$kron" merge "$out"/mpi.rank-{0,1,2,3}.kron -o "$out/mpi.kron"
echo "== kron rpt: every message a class-4 interval from its send to its receive, across ranks (003 class 4)"
(cd "$out" && "$kron" rpt mpi.kron | grep -E "^interval|^MPI message")
echo "   (kron rpt $out/mpi.kron also lists every MPI call as a named scope, per rank's thread)"
"$kron" export --format perfetto -o "$out/mpi.pftrace" "$out/mpi.kron"
echo "   timeline:    $out/mpi.pftrace (every rank on rank 0's clock)"
echo "== kron record --mpi: examples/mpi/mpi_probes (its own kron probes and MPI calls) on 4 ranks, each rank whole"
# The launcher starts kron record once per rank: each rank's probes, MPI calls and clock measurements in one file.
rm -f "$out"/whole.rank-*.kron
mpirun --allow-run-as-root --oversubscribe -np 4 "$kron" record --mpi -q -o "$out/whole" -- \
  "$build/examples/mpi_probes" 200
"$kron" merge -q "$out"/whole.rank-{0,1,2,3}.kron -o "$out/whole.kron"
(cd "$out" && "$kron" rpt whole.kron | grep -E "^interval|iteration" | head -6)
echo

if [ -f "$here/examples/mk2/demo.sim" ]; then
  echo "== kron sim: examples/mk2/demo.sim (MultiKron II, 000)"
  "$kron" sim "$here/examples/mk2/demo.sim"
fi
if [ -f "$here/examples/numachine/demo.sim" ]; then
  echo "== kron sim --chip numachine: examples/numachine/demo.sim (NUMAchine monitor, 004: read latencies per phase, histogrammed in SRAM)"
  # The `sram` lines drawn as bars: phase (PR[3..0]), compact-latency bucket, count.
  "$kron" sim --chip numachine "$here/examples/numachine/demo.sim" | awk '
    /^sram / { split($0, f, " "); n = lat = pr = "";
               for (i = 3; i <= NF; i++) { split(f[i], kv, "="); if (kv[1] == "count") n = kv[2];
                 else if (kv[1] == "lat") lat = kv[2]; else if (kv[1] == "pr") pr = kv[2] }
               bar = ""; for (i = 0; i < n; i++) bar = bar "#";
               printf "   phase %s  %9s cycles  %-6s %d\n", substr(pr, length(pr)), lat, bar, n; next }
    { print "   " $0 }'
fi
