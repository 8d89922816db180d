// One timeline, many sinks: the trace side walks its inputs once and hands what it finds to a sink.
//
// A Timeline resolves once what every consumer of a recording needs: the samples in time order (Merged's
// k-way merge and reorder window), the streams they belong to (a live recording's thread, a classic CPU),
// in order of first appearance, the names (sites, threads, processes, counters), the intervals that the
// matcher completes (named scopes, interval.info), and the records that follow the samples in a file:
// scheduling switches (kron record --sched), histogram and virtual counter snapshots (trace format 1.4), an
// MPI recording's calls and messages (1.5). It owns every read-ahead: the MPI records are read when a file
// is opened (Input::mpi_records), the switches before the first sample when a sink needs on-CPU time per
// interval (Input::read_switches_ahead).
//
// A sink says what it needs (TimelineSink::needs) and receives, in this order:
//   begin()                                  everything resolved up front (names, MPI calls) is there;
//   per sample, in time order:               (each_sample) stream() at a stream's first sample,
//                                            before_match(), the matcher's interval()s, then sample();
//                                            or (batches) samples() per batch, the matcher fed in batches;
//   samples_done()                           the matcher finished;
//   the tail parts, in the sink's order:     sched_thread()/sched_stretch(), sched_switch(), snapshot(),
//                                            snapshot_records(), mpi_message(), mpi_call();
//   end().
// The export formats (src/exports/), kron rpt (rpt.hpp: make_report), kron hist and kron info
// (summary.hpp) are sinks. Memory: per stream, per name and per MPI call; nothing per sample.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/hist.hpp"
#include "analysis/input.hpp"
#include "analysis/interval_info.hpp"
#include "analysis/matcher.hpp"
#include "analysis/mpi_match.hpp"

namespace kron::analysis {

// A thread's scheduling stretch between two of its switches (kron record --sched): "running" from a switch
// in to the next switch out (on `cpu`), then "preempted" (switched out while runnable) or "waiting" (it
// blocked or slept) up to the next switch in. Ticks (full 64-bit board ticks); a stretch that ended by the
// first sample `t0` is not given (one that began before it is, from its switch: a writer draws it from
// t0), nor one whose other end is not in the recording.
struct SchedStretch {
  std::uint32_t source, thread;
  const char* state;
  std::uint64_t begin, end;
  std::uint16_t cpu;
};

// One value series of a histogram or virtual counter snapshot (trace format 1.4), as every export draws
// them: `series` names it ("hist NAME (thread T, phase P)", "vc I (thread T, phase P)"); a histogram's
// summary (count, p50, p99, max) or a counter's value, at the snapshot's time `when` (ticks).
struct SnapshotSeries {
  std::uint32_t source = 0, thread = 0;
  std::uint64_t when = 0;
  std::string series;
  bool hist = false;
  LatencySummary sum;
  std::uint64_t value = 0;
};

// An MPI recording's calls (trace format 1.5: libkron_mpi's rank files, kron merge's merged file), every
// input's (Input::mpi_records(), read ahead when the file has some), with the sends matched to their
// receives and the collectives' members grouped (match_messages, E208). Memory grows with the MPI calls,
// never with the samples. Empty without MPI records.
struct MpiCalls {
  std::vector<MpiEvent> events;  // input order, then each input's file order
  Matching matching;
};

class Timeline;

class TimelineSink {
 public:
  // The records that follow the samples, each walked once when a sink lists it.
  enum class Part : std::uint8_t {
    Stretches,        // sched_thread() at a thread's first switch, sched_stretch() per stretch, thread by thread
    Switches,         // sched_switch() per switch, every input's, in time order
    Snapshots,        // snapshot() per value series of every snapshot, in file order
    SnapshotRecords,  // snapshot_records() per input: its kinds 5 and 6 back to back
    Messages,         // mpi_message() per matched send and receive, in match order
    Calls,            // mpi_call() per MPI record, every input's, in order of the calls' begins
  };
  struct Needs {
    bool each_sample = true;  // stream(), before_match() and sample() per sample; else samples() per batch
    bool intervals = false;   // the matcher runs: interval() as each occurrence completes
    bool on_cpu = false;      // on-CPU time per interval: switches read ahead, else a cpu counter (E157)
    std::vector<Part> tail;   // after the samples, in this order
    Needs& in_batches() { return each_sample = false, *this; }
    Needs& matched() { return intervals = true, *this; }
    Needs& cpu_time() { return on_cpu = true, *this; }
    Needs& then(std::vector<Part> parts) { return tail = std::move(parts), *this; }
  };
  virtual ~TimelineSink() = default;
  virtual Needs needs() const = 0;
  virtual void begin(Timeline&) {}
  // A stream's first sample: `index` is its number, in order of first appearance (Timeline::streams()).
  virtual void stream(std::uint32_t /*index*/, const StreamKey&, const Sample& /*first*/) {}
  // Before the matcher sees the sample: a slice that begins here is drawn before any interval it ends.
  virtual void before_match(const Sample&, std::uint32_t /*stream*/) {}
  // `interval_event`: the sample played a role in an interval (a start or end the matcher paired).
  virtual void sample(const Sample&, std::uint32_t /*stream*/, bool /*interval_event*/) {}
  virtual void samples(std::span<const Sample>) {}
  virtual void interval(const Occurrence&) {}
  virtual void samples_done() {}
  virtual void sched_thread(std::uint32_t /*source*/, std::uint32_t /*thread*/) {}
  virtual void sched_stretch(const SchedStretch&) {}
  virtual void sched_switch(const record::SchedRecord&) {}
  virtual void snapshot(const SnapshotSeries&) {}
  virtual void snapshot_records(const Input&, std::span<const std::uint8_t>) {}
  virtual void mpi_message(const record::MpiRecord& /*send*/, const record::MpiRecord& /*receive*/) {}
  virtual void mpi_call(const record::MpiRecord&) {}
  virtual void end() {}
};

struct TimelineOptions {
  const IntervalInfo* info = nullptr;  // interval.info's intervals (null: named scopes only)
  RptOptions rpt;                      // the matcher's options
  std::vector<unsigned> phases;        // only the samples of these phases (empty: every sample)
  std::size_t batch = 4096;            // samples read at a time
};

class Timeline {
 public:
  Timeline(Merged& in, TimelineOptions o = {});
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;
  // Walks the inputs once, calling `sink` as its needs() asks. A second walk throws.
  void walk(TimelineSink& sink);

  Merged& in() { return in_; }
  const Merged& in() const { return in_; }
  const tracefile::NameTable& names() const { return in_.names(); }
  std::uint64_t clock_hz() const { return in_.clock_hz(); }
  std::uint64_t ts_mask() const { return in_.ts_mask(); }
  std::size_t last_input() const { return in_.last_input(); }
  // The first sample's timestamp: the origin of the exports' times (valid once a sample was walked; in a
  // recording without samples, from samples_done() on: the first scheduling switch's).
  std::uint64_t t0() const { return t0_; }
  bool have_t0() const { return have_t0_; }
  std::uint64_t samples() const { return samples_; }  // samples walked (after the phase filter)
  const std::vector<StreamKey>& streams() const { return streams_; }
  // The number of the stream `k`, or kNoStream when no sample of it was walked yet.
  static constexpr std::uint32_t kNoStream = ~std::uint32_t{0};
  std::uint32_t stream_index(const StreamKey& k) const {
    const auto it = stream_of_key_.find(k.key());
    return it == stream_of_key_.end() ? kNoStream : it->second;
  }

  // ERRATUM E153: integer nanoseconds since t0, rounding down, the timestamp taken modulo its width. Inline:
  // every sample of an export asks it.
  std::uint64_t ns(std::uint64_t t) const {
    const std::uint64_t d = (t - t0_) & in_.ts_mask(), clock = in_.clock_hz();
    if (clock == 1'000'000'000u) return d;
    if (d < ~std::uint64_t{0} / 1'000'000'000u) return d * 1'000'000'000u / clock;
    return wide_ns(d);
  }
  // The same for a record after the samples (switches, MPI calls): 0 at or before t0, full 64-bit ticks.
  std::uint64_t ns_after(std::uint64_t t) const { return t <= t0_ ? 0 : wide_ns(t - t0_); }

  // Names as every export labels them: a process by its main thread's kernel name, else the name kron gave
  // it ("NAME (pid P)", else "source 0xSSSSSSSS"), an MPI rank's by its rank and host ("rank R on HOST (pid P)",
  // ERRATUM E395); a stream by its thread's name ("NAME (tid T)", else "thread T" or "cpu C"), after "rank R "
  // for an MPI rank's stream;
  // a resource counter by what the first input that says so counted ("counter C (WHAT)", else "counter C").
  // Raw text: each format escapes it its own way.
  std::string process_label(std::uint32_t source) const;
  std::string stream_label(const StreamKey& k) const;
  // A thread's scheduling track (kron record --sched): its stream label, ": scheduling".
  std::string sched_label(std::uint32_t source, std::uint32_t thread) const;
  const std::string& counter_label(unsigned c) const { return counter_labels_[c]; }
  // The MPI rank whose process `source` is (ERRATUM E395), nullopt outside an MPI recording.
  std::optional<std::uint32_t> rank(std::uint32_t source) const {
    const auto r = in_.ranks().of(source);
    return r ? std::optional<std::uint32_t>(r->rank) : std::nullopt;
  }
  const Ranks& ranks() const { return in_.ranks(); }
  // A stream's name in reports: stream_name's "[rank R ]SOURCE/tidN".
  std::string stream_name(const StreamKey& k) const { return analysis::stream_name(k, &in_.ranks()); }

  // The MPI calls of every input, matched once (on first use).
  const MpiCalls& mpi();
  // The matcher, once walk() made it (a sink that needs intervals); null otherwise.
  Matcher* matcher() { return matcher_.get(); }
  const Matcher* matcher() const { return matcher_.get(); }
  // On-CPU time per interval came from the scheduling switches (needs().on_cpu and switches were there).
  bool cpu_from_sched() const { return on_cpu_ && !on_cpu_->empty(); }
  const TimelineOptions& options() const { return opt_; }

 private:
  std::uint64_t wide_ns(std::uint64_t d) const;  // d ticks in ns through 128 bits
  void prepare_matcher(const TimelineSink::Needs& n);
  std::size_t next_batch(std::vector<Sample>& batch);
  void each_sample(TimelineSink& sink, std::span<const Sample> batch);
  void walk_part(TimelineSink::Part p, TimelineSink& sink);

  Merged& in_;
  TimelineOptions opt_;
  IntervalInfo no_info_;
  std::string counter_labels_[kResourceCounters];
  std::vector<StreamKey> streams_;
  std::unordered_map<std::uint64_t, std::uint32_t> stream_of_key_;
  std::uint64_t cur_key_ = 0;
  std::uint32_t cur_ = 0;
  bool have_cur_ = false;
  std::uint64_t t0_ = 0, samples_ = 0;
  bool have_t0_ = false, walked_ = false;
  std::optional<MpiCalls> mpi_;
  std::unique_ptr<Matcher> matcher_;
  std::vector<record::SchedRecord> switches_ahead_;
  std::unique_ptr<OnCpuTimeline> on_cpu_;
};

// The walkers behind the tail parts, for a consumer that holds the inputs but no Timeline.
// Calls first(source, thread) at each thread's first switch and stretch() for each stretch, thread by thread
// in the order of the switches; returns the stretches given.
std::uint64_t for_each_sched_stretch(const Merged& in, std::uint64_t t0,
                                     const std::function<void(std::uint32_t, std::uint32_t)>& first,
                                     const std::function<void(const SchedStretch&)>& stretch);
// Calls f() for each series of each snapshot of every input, in file order; returns how many.
std::uint64_t for_each_snapshot_series(const Merged& in, const std::function<void(const SnapshotSeries&)>& f);
MpiCalls mpi_calls(const Merged& in);

}  // namespace kron::analysis
