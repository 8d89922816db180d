// kron merge: the trace files of an MPI job's ranks (libkron_mpi's OUT.rank-N.kron) into one trace file
// with every sample on rank 0's timeline, in time order. The MultiKron had one timestamp clock for the
// whole machine (000 introduction; Appendix A, the synchronized counters); a cluster has one clock per
// node, so the merge makes one:
//
//   1. Alignment (ERRATUM E205): each rank's ticks are mapped onto rank 0's by piecewise-linear
//      interpolation between its clock-offset measurements (kind 9: offset and drift, as OTF2 readers do
//      with ClockOffset definitions); one measurement gives a constant offset, none the files' start times.
//   2. Matching (E208): every send is paired with its receive by (sender, receiver, communicator, tag) in
//      posting order (MPI's non-overtaking rule); every collective by (communicator, sequence number).
//   3. Controlled logical clock (E206, after Rabenseifner and Scalasca's CLC): the happened-before
//      violations left (a receive that completes before its send began, a collective that ends on one rank
//      before the last rank whose data it needs entered it) are removed by moving the events forward: the
//      receive's end to its send's begin; each later event of that rank keeps its distance to the one
//      before it, shrunk by at most a factor gamma (forward amortization), so the correction fades out
//      instead of shifting the rest of the rank's run. Each rank's order is kept.
//   4. A k-way merge of the ranks' samples, streamed batch by batch: memory is bounded by the number of
//      inputs and MPI calls, never by the samples.
//
// The pieces are public for the tests and the fuzz target: ClockMap, match_messages, count_violations,
// clc.#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "merge/clock_map.hpp"

namespace kron::merge {

struct MergeOptions {
  bool align = true;    // --no-align: ticks as recorded
  bool clc = true;      // --no-clc: violations counted, not corrected
  double gamma = 0.99;  // the CLC's amortization: later intervals shrink by at most this factor
  int compress_level = 0;
  unsigned compress_threads = 0;  // zstd workers (0: on the merging thread)
  std::string program;            // the merged file's program text
  bool salvage = false;           // --salvage: merge files that were not closed (ERRATUM E344)
};
struct RankReport {
  std::string path, node;
  std::uint32_t rank = 0;
  std::uint64_t samples = 0, mpi_records = 0;
  std::vector<ClockMap::Point> points;  // the measurements used
  double offset_ns = 0;                 // at the rank's first sample, reference - local
  double drift_ppm = 0;
  double drift_uncertainty_ppm = 0;        // ClockMap::drift_uncertainty
  std::uint64_t min_rtt = 0, max_rtt = 0;  // ticks of the rank
  std::uint64_t clock_hz = 0, start_ticks = 0;
  // Accounting of the rank's file.
  std::uint64_t passed_filter = 0, overruns = 0, overwritten = 0;
  // ERRATUM E441: the rank did not reach MPI_Finalize (its file's kRankEndedEarly), it called MPI_Abort, the
  // signal that ended it (0: none known); when its recording ended and its last record, seconds after the
  // merged file's start (on the merged timeline).
  bool ended_early = false, aborted = false;
  unsigned end_signal = 0;
  double end_s = 0, last_s = 0;
};
struct MergeReport {
  std::vector<RankReport> ranks;
  std::uint64_t samples = 0, mpi_records = 0, messages = 0, unmatched_sends = 0, unmatched_recvs = 0;
  std::uint64_t collectives = 0, incomplete_collectives = 0;
  std::uint64_t violations_found = 0, violations_left = 0;
  std::uint64_t max_correction = 0, events_moved = 0, forced = 0;
  std::uint64_t late = 0;
  std::uint64_t clock_hz = 0;
  std::uint64_t passed_filter = 0, overruns = 0, overwritten = 0;
  std::vector<std::string> warnings;  // measurements dropped as implausible, files salvaged (ERRATUM E344)
  std::vector<std::string> salvaged;  // inputs that were not closed, merged with --salvage
};
// Merges `inputs` into `output`. Throws InputError naming the file (and offset) for a bad input,
// std::runtime_error when the output cannot be written.
MergeReport merge_files(const std::vector<std::string>& inputs, const std::string& output, const MergeOptions& o);

}  // namespace kron::merge
