// Fuzz target: kron merge's input on arbitrary bytes: a trace file of trace format 1.5 with
// MPI calls (kind 8) and clock-offset measurements (kind 9) after its samples, merged alone (its calls
// matched among themselves, its clocks aligned, the controlled logical clock run). It must merge or throw
// InputError naming the file; never crash, hang or read out of bounds. What is written must be a trace
// file the reader accepts, with every happened-before violation left named as a recording fault (one
// file is one clock: DECISION D10). Clock-offset records that contradict each other are refused (DECISION D11).
// The seeds are rank files of examples/mpi/mpi_demo.cpp recorded by libkron_mpi (one with the test-only clock fault).
// The same bytes, taken as clock-offset records, build a ClockMap that must be non-decreasing. The clock
// records pass kron merge's plausibility check (ERRATUM E344) on the way.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "analysis/mpi_match.hpp"
#include "merge/clc.hpp"
#include "merge/merge.hpp"
#include "kron/core/error.hpp"
#include "kron/format/trace_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kron;
  {  // ClockMap from arbitrary measurements: monotone whatever they say (ERRATUM E205)
    std::vector<record::ClockOffsetRecord> offs(std::min<std::size_t>(size / sizeof(record::ClockOffsetRecord), 64));
    if (!offs.empty()) std::memcpy(offs.data(), data, offs.size() * sizeof offs[0]);
    tracefile::FileHeader h = tracefile::make_header();
    const merge::ClockMap m = merge::ClockMap::build(offs, 1'000'000'000, 1'000'000'000, h, h);
    const auto& p = m.points();
    if (p.empty()) __builtin_trap();
    for (std::size_t i = 1; i < p.size(); ++i)
      if (!(p[i].local > p[i - 1].local && p[i].reference > p[i - 1].reference)) __builtin_trap();
    std::uint64_t last = 0;
    bool first = true;
    for (std::size_t i = 0; i < p.size(); ++i)
      for (std::uint64_t t : {p[i].local, p[i].local + 1, p[i].local + 1000}) {
        if (t < p[i].local) continue;  // wrapped
        if (i + 1 < p.size() && t > p[i + 1].local) continue;
        const std::uint64_t v = m(t);
        if (!first && v < last && p.size() > 1) __builtin_trap();
        last = v;
        first = false;
      }
  }
  static const int in_fd = memfd_create("kron-fuzz-merge-in", 0);
  static const int out_fd = memfd_create("kron-fuzz-merge-out", 0);
  if (ftruncate(in_fd, 0) != 0 || pwrite(in_fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  if (ftruncate(out_fd, 0) != 0) return 0;
  const std::string in = "/proc/self/fd/" + std::to_string(in_fd), out = "/proc/self/fd/" + std::to_string(out_fd);
  // Merged as it is; a file refused (one that was not closed, ERRATUM E344) once more with --salvage.
  merge::MergeReport r;
  merge::MergeOptions o;
  for (;;) {
    try {
      r = merge::merge_files({in}, out, o);
      break;
    } catch (const InputError&) {
      if (o.salvage) return 0;
      o.salvage = true;
      if (ftruncate(out_fd, 0) != 0) return 0;
    }
  }
  // A merge alone is one clock: nothing is corrected, and every violation left is a recording fault, named
  // (DECISION D10); every unmatched receive and incomplete collective is named too.
  if (r.violations_left != r.recording_faults && r.forced == 0) __builtin_trap();
  if (r.violations.size() != r.violations_left || r.events_moved != 0) __builtin_trap();
  if (r.unmatched_receives.size() != r.unmatched_recvs || r.incomplete.size() != r.incomplete_collectives)
    __builtin_trap();
  try {
    tracefile::Reader rd(out);
    Sample s;
    std::uint64_t n = 0;
    while (rd.next(s)) ++n;
    if (n != r.samples || rd.mpi_records().size() != r.mpi_records) __builtin_trap();
  } catch (const InputError&) {
    __builtin_trap();  // kron merge wrote a file the reader refuses
  }
  return 0;
}
