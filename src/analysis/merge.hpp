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
// clc.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/matcher.hpp"
#include "kron/core/record.hpp"
#include "kron/format/trace_file.hpp"

namespace kron::analysis {

// A rank's ticks onto the reference rank's (E205).
class ClockMap {
 public:
  struct Point {
    std::uint64_t local, reference, rtt;
  };
  // From a rank's clock-offset records (any order; rtt == 0 and reference == timestamp on the reference
  // rank itself). `local_hz`, `ref_hz`: the two files' clock rates; `local_start`/`ref_start` and the
  // realtime starts: the fallback when there is no measurement (files that are not MPI recordings).
  static ClockMap build(std::span<const record::ClockOffsetRecord> offsets, std::uint64_t local_hz, std::uint64_t ref_hz,
                        const tracefile::FileHeader& local, const tracefile::FileHeader& ref);
  // No alignment (kron merge --no-align): ticks as recorded.
  static ClockMap identity();
  std::uint64_t operator()(std::uint64_t t) const;
  const std::vector<Point>& points() const { return points_; }
  // Offset (reference - local, ticks) at the first point, and the drift (slope - 1) over the whole run.
  double offset_at(std::uint64_t t) const { return double(std::int64_t((*this)(t) - t)); }
  double drift() const;
  // How well the measurements pin that drift down: (rtt/2 of the first + rtt/2 of the last) / the local
  // time between them. A drift smaller than this is not known to be there (one node: one clock).
  double drift_uncertainty() const;
  bool measured() const { return measured_; }  // from clock-offset records (else a start-time anchor)

 private:
  std::vector<Point> points_;  // sorted by local, strictly increasing in both; at least one
  double rate_ = 1.0;          // ref_hz / local_hz: the slope with one point
  bool measured_ = true;
  mutable std::size_t hint_ = 0;  // the segment of the last lookup (samples come in time order)
};

// One MPI call of the merged job, with its times on the common timeline.
struct MpiEvent {
  record::MpiRecord rec;      // timestamp, end: aligned (then corrected) times
  std::uint32_t input = 0;    // which input file
};

struct Matching {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;  // (send, receive) indices into the events
  std::uint64_t unmatched_sends = 0, unmatched_recvs = 0;
  // Collective instances: the events of one call on one communicator, every member's.
  std::vector<std::vector<std::size_t>> collectives;
  std::uint64_t incomplete_collectives = 0;  // instances missing a member's record
};
// ERRATUM E208: the k-th send from A to B on (communicator, tag), in A's posting order, is received by the
// k-th receive of B that received from A on (communicator, tag), in B's posting order.
Matching match_messages(std::span<const MpiEvent> events);

// Happened-before violations: pairs whose receive ended before the send began, collective members that
// ended before the last member they depend on entered (E206).
std::uint64_t count_violations(std::span<const MpiEvent> events, const Matching& m);

// A rank's correction after the CLC pass: at aligned time `at` its events moved by `delta` ticks; between
// events the correction fades at (1 - gamma) per tick. delta_at() is the correction of any aligned time.
struct Correction {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> steps;  // (aligned time, delta), sorted by time
  double fade = 0.01;                                          // 1 - gamma
  std::uint64_t delta_at(std::uint64_t t, std::size_t& cursor) const;
};
struct ClcResult {
  std::vector<Correction> per_input;
  std::uint64_t max_correction = 0;  // ticks
  std::uint64_t events_moved = 0;
  std::uint64_t forced = 0;          // events whose dependencies formed a cycle (a mismatched pair): taken in time order
};
// Applies the controlled logical clock to `events` (their times change) for `inputs` inputs.
ClcResult clc(std::vector<MpiEvent>& events, const Matching& m, std::size_t inputs, double gamma);

// kron rpt's class-4 rows of an MPI recording (003 section 3.5, class 4: "message send/receive latency",
// a send on one node, its receive on another): each matched message is one interval from its send's
// begin to its receive's end, by sender and receiver rank (worlds of up to 16 ranks) and for all. A pair
// whose receive ended before its send began (files not merged, or merged with --no-clc) is counted as an
// unmatched end, never as a duration (ERRATUM E210).
struct MessageRow {
  std::string name;
  Stats stats;
};
std::vector<MessageRow> message_rows(std::span<const MpiEvent> events, const Matching& m, bool histograms);

struct MergeOptions {
  bool align = true;      // --no-align: ticks as recorded
  bool clc = true;        // --no-clc: violations counted, not corrected
  double gamma = 0.99;    // the CLC's amortization: later intervals shrink by at most this factor
  int compress_level = 0;
  std::string program;    // the merged file's program text
  bool salvage = false;   // --salvage: merge files that were not closed (ERRATUM E344)
};
struct RankReport {
  std::string path, node;
  std::uint32_t rank = 0;
  std::uint64_t samples = 0, mpi_records = 0;
  std::vector<ClockMap::Point> points;  // the measurements used
  double offset_ns = 0;                 // at the rank's first sample, reference - local
  double drift_ppm = 0;
  double drift_uncertainty_ppm = 0;  // ClockMap::drift_uncertainty
  std::uint64_t min_rtt = 0, max_rtt = 0;  // ticks of the rank
  std::uint64_t clock_hz = 0, start_ticks = 0;
  // Accounting of the rank's file.
  std::uint64_t passed_filter = 0, overruns = 0, overwritten = 0;
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

}  // namespace kron::analysis
