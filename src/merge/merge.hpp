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
// Ranks whose ticks are one clock (one machine's TSC, DECISION D10) are one timeline already: no map, no
// correction between them; a violation among them is a recording fault, named as such. Step 3 applies only
// between clocks that were measured, and only to what MPI orders (DECISION D12).
//
// The pieces are public for the tests and the fuzz target: ClockMap, assign_clocks, match_messages,
// find_violations, clc.#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kron/core/record.hpp"
#include "merge/clocks.hpp"

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
// One clock-offset measurement of a rank as recorded (ERRATUM E204).
struct Measurement {
  double time_s = 0;                                // when, on the merged timeline
  std::uint64_t local = 0, reference = 0, rtt = 0;  // ticks: local and rtt the rank's, reference rank 0's
  double offset_ns = 0, rtt_ns = 0;                 // reference - local ticks in rank 0's ns, round trip in the rank's
  bool used = false;                                // a point of the rank's map (none for an exact clock)
};
struct RankReport {
  std::string path, node;
  std::uint32_t rank = 0;
  std::uint64_t samples = 0, mpi_records = 0;
  // How its ticks reach the timeline (DECISION D10), and the rank whose clock it is (the reference, the first
  // rank of its node's clock, or itself).
  ClockKind clock = ClockKind::Measured;
  std::uint32_t clock_rank = 0;
  std::vector<Measurement> measurements;  // every clock-offset record of its file
  double offset_ns = 0;                   // at the rank's first sample, reference - local
  double drift_ppm = 0;
  double drift_uncertainty_ppm = 0;        // ClockMap::drift_uncertainty
  std::uint64_t min_rtt = 0, max_rtt = 0;  // ticks of the rank, of the measurements used
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
// What the merge found, by name (times: seconds on the merged timeline, after the correction).
struct UnmatchedReceive {
  std::uint32_t rank = 0;
  std::int32_t from = 0;  // the rank it received from
  record::MpiCall call{};
  std::uint32_t comm = 0;
  std::int32_t tag = 0;
  double begin_s = 0, end_s = 0;
};
struct IncompleteCollective {
  record::MpiCall call{};
  std::uint32_t comm = 0, comm_size = 0;
  std::int32_t sequence = 0;         // the call's number on its communicator (E208)
  std::vector<std::uint32_t> ranks;  // the members whose record is there
  double begin_s = 0;                // the first of them entered
};
// A happened-before violation left after the merge (DECISION D10): `rank`'s call ended at end_s, before
// `peer`'s call it depends on began at begin_s. On one clock it is a recording fault (the clock cannot be
// wrong there); between clocks it was not corrected (--no-clc, or a dependency cycle).
struct ViolationLeft {
  bool recording_fault = false;
  std::uint32_t rank = 0, peer = 0;
  record::MpiCall call{}, peer_call{};
  std::uint32_t comm = 0;
  std::int32_t tag = 0;  // the message's tag, or the collective's sequence number
  double end_s = 0, begin_s = 0;
};
struct MergeReport {
  std::vector<RankReport> ranks;
  std::uint64_t samples = 0, mpi_records = 0, messages = 0, unmatched_sends = 0, unmatched_recvs = 0;
  std::uint64_t collectives = 0, incomplete_collectives = 0;
  std::uint64_t violations_found = 0, violations_left = 0, recording_faults = 0;
  std::uint64_t max_correction = 0, events_moved = 0, forced = 0;
  std::uint64_t clocks = 0;  // distinct clocks among the ranks (DECISION D10)
  std::vector<UnmatchedReceive> unmatched_receives;
  std::vector<IncompleteCollective> incomplete;
  std::vector<ViolationLeft> violations;  // every violation left, recording faults among them
  std::uint64_t late = 0;
  std::uint64_t clock_hz = 0;
  std::uint64_t passed_filter = 0, overruns = 0, overwritten = 0;
  std::vector<std::string> warnings;  // measurements dropped or not believed, files salvaged (ERRATUM E344)
  std::vector<std::string> salvaged;  // inputs that were not closed, merged with --salvage
};
// Merges `inputs` into `output`. Throws InputError naming the file (and offset) for a bad input,
// std::runtime_error when the output cannot be written.
MergeReport merge_files(const std::vector<std::string>& inputs, const std::string& output, const MergeOptions& o);

}  // namespace kron::merge
