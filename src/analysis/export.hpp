// kron export: the samples in formats other programs open.
//  - perfetto: Chrome Trace Event JSON (the "JSON Object Format" that chrome://tracing and the Perfetto UI
//    read): one track per stream (process = source identification, thread = CPU), the intervals of
//    interval.info as slices, resource counters as counter tracks, every other Trace sample as an instant;
//    scheduling switches (kron record --sched) as a state track per thread (running, preempted, waiting).
//  - csv: one row a sample.
// Both stream: a sample in, its events out; nothing per sample is kept. docs/tools.md says how to open them.
#pragma once
#include <cstdio>
#include <string>

#include "analysis/input.hpp"
#include "analysis/interval_info.hpp"
#include "analysis/matcher.hpp"

namespace kron::analysis {

struct ExportStats {
  std::uint64_t samples = 0, slices = 0, counters = 0, instants = 0;
  std::uint64_t sched_slices = 0;  // thread states drawn from scheduling switches (kron record --sched)
};

// `info` may be null (no interval slices). Counter names come from the first kron trace file's header.
ExportStats export_perfetto(Merged& in, const IntervalInfo* info, const RptOptions& opt, std::FILE* out);
ExportStats export_csv(Merged& in, std::FILE* out);

}  // namespace kron::analysis
