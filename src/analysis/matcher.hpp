// The interval matcher of kron rpt (003 mk_rpt) and of kron export's slices: feeds samples in time order,
// matches the events named in interval.info, and keeps, for every interval and stream, count, total,
// minimum, maximum, mean and standard deviation of its durations (and, on request, their histogram).
// The report built from it (text, JSON) is rpt.hpp; the HTML page html.hpp.
//
// Source: 003 section 3.5 "Using mk_rpt" (interval classes 1-4; resource counters are discarded and a
// Resource sample is treated as a Trace sample).
// Decisions (docs/errata.md): E40 the event number is the low -e bits of the user data (default 32);
// E41 the statistics (population standard deviation); E42 histograms are log-linear buckets; E43
// durations modulo the timestamp width; E44 how unmatched events of classes 2 and 3 are counted; E46
// class 4 is matched across all streams.
//
// DECISION D20, D21, D23 (docs/decisions.md "Losses in the analysis"): a sample that carries a loss flag
// (kron::lost_before) cuts every scope open on its stream: counted in Stats::cut, never a duration; an end
// that then finds no begin is the end of a scope cut before (nothing more is counted) or of one whose begin
// was lost (counted cut, not unmatched).
//
// ERRATUM E48: a stream is one source identification (000 "Source Address Registers": node.process) and CPU.
// Classes 1-3 are matched within a stream, in the order the stream's samples arrive; class 4 matches its
// k-th end with its k-th start across all streams in time order (003: a message sent on one node and
// received on another).
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/interval_info.hpp"
#include "kron/core/sample.hpp"
#include "kron/format/trace_file.hpp"

namespace kron::analysis {

// DECISION D20: the flags that say "samples of this stream were lost just before this one": a probe's
// discard (kFlagFifoOverrun, kFlagShadowOverrun: the classic chips' overrun flags too) and the drain's
// overwritten or torn records (kFlagOverwritten, set by the board reader). docs/trace-format.md "Flags".
inline constexpr std::uint8_t kLossFlags = kFlagFifoOverrun | kFlagShadowOverrun | kFlagOverwritten;
constexpr bool lost_before(std::uint8_t flags) { return (flags & kLossFlags) != 0; }

// ERRATUM E42: log-linear histogram of durations in ticks: values 0-7 exact, then eight buckets per power of two
// (every bucket no wider than 1/8 of its lower bound). 496 buckets cover 64 bits.
struct Histogram {
  static constexpr unsigned kBuckets = 8 + 61 * 8;
  static unsigned bucket(std::uint64_t v) {
    if (v < 8) return static_cast<unsigned>(v);
    const unsigned e = 63u - static_cast<unsigned>(__builtin_clzll(v));  // >= 3
    return 8 + (e - 3) * 8 + static_cast<unsigned>((v >> (e - 3)) & 7);
  }
  static std::uint64_t lower(unsigned b) {
    if (b < 8) return b;
    const unsigned e = (b - 8) / 8 + 3, sub = (b - 8) % 8;
    return (std::uint64_t{8} + sub) << (e - 3);
  }
  // Inclusive upper bound.
  static std::uint64_t upper(unsigned b) { return b + 1 < kBuckets ? lower(b + 1) - 1 : ~std::uint64_t{0}; }
  std::array<std::uint64_t, kBuckets> counts{};
};

struct Stats {
  std::uint64_t count = 0, total = 0, min = 0, max = 0;
  // Shifted sums for the variance (no division per interval, no cancellation): s1 = sum(d - shift),
  // s2 = sum((d - shift)^2), shift = the first duration.
  std::uint64_t shift = 0;
  double s1 = 0, s2 = 0;
  std::uint64_t unmatched_starts = 0, unmatched_ends = 0;
  // DECISION D20, D21: occurrences cut by a loss (open at a loss, or an end whose begin was lost); none of
  // them is in count. `lossy`: the stream lost samples while this row's interval could have been open
  // (a cut, or a loss between two of its events), so count and total may miss occurrences (D22).
  std::uint64_t cut = 0;
  bool lossy = false;
  std::uint64_t loss_epoch = 0;  // the stream's losses + 1 at the row's last event (0: no event yet)
  std::unique_ptr<Histogram> hist;
  // On-CPU time (RptOptions::cpu_counter), in timestamp ticks, of the occurrences whose start and end
  // were both Resource samples: cpu_count of the `count` occurrences have it.
  std::uint64_t cpu_count = 0;
  double cpu_total = 0, cpu_min = 0, cpu_max = 0, cpu_wall = 0;  // cpu_wall: those occurrences' wall time

  void add_cpu(double cpu, std::uint64_t wall) {
    cpu_min = cpu_count == 0 || cpu < cpu_min ? cpu : cpu_min;
    cpu_max = cpu_count == 0 || cpu > cpu_max ? cpu : cpu_max;
    ++cpu_count;
    cpu_total += cpu;
    cpu_wall += static_cast<double>(wall);
  }
  // On-CPU share of the wall time of the occurrences that have both (0-1; can pass 1 by the counter's
  // own rounding); -1 when none has.
  double cpu_share() const { return cpu_count && cpu_wall > 0 ? cpu_total / cpu_wall : -1.0; }

  void add(std::uint64_t d, bool keep_histogram) {
    if (count == 0) {
      min = max = shift = d;
    } else {
      min = d < min ? d : min;
      max = d > max ? d : max;
    }
    ++count;
    total += d;
    const double y = static_cast<double>(static_cast<std::int64_t>(d - shift));
    s1 += y;
    s2 += y * y;
    if (keep_histogram) {
      if (!hist) hist = std::make_unique<Histogram>();
      ++hist->counts[Histogram::bucket(d)];
    }
  }
  // Adds everything of `o` (the summary row across streams).
  void merge(const Stats& o);
  double mean() const { return count ? static_cast<double>(total) / static_cast<double>(count) : 0.0; }
  // ERRATUM E41: population standard deviation (divide by n): the trace holds every occurrence.
  double stddev() const;
  bool active() const { return count || unmatched_starts || unmatched_ends || cut; }
  // An event of this row while its stream had lost `losses` samples so far (D22).
  void touch(std::uint64_t losses) {
    if (loss_epoch && loss_epoch != losses + 1) lossy = true;
    loss_epoch = losses + 1;
  }
};

struct RptOptions {
  unsigned event_bits = 32;  // ERRATUM E40: -e VALUE, the width of the event number in the user data
  bool histograms = false;   // keep histograms (for -h and --html)
  // ERRATUM E140: on-CPU time per interval. The resource counter (0-15) that counts the thread's time on a
  // CPU (source "task-clock", in ns, or "oncpu", in timestamp ticks), -1 none; an interval whose start
  // and end events are Resource samples gets end - start of it, times cpu_scale (to timestamp ticks).
  int cpu_counter = -1;
  double cpu_scale = 1.0;
};
// The counter of a recording that counts on-CPU time, by the sources the file names ("task-clock" or
// "oncpu"), and its scale to timestamp ticks; {-1, 1} when none.
struct CpuCounter {
  int counter = -1;
  double scale = 1.0;
};
CpuCounter find_cpu_counter(const std::vector<std::string>& counter_names, std::uint64_t clock_hz);

// ERRATUM E157: on-CPU time from scheduling switches (kron record --sched), exact to the switch, for any
// interval (named scopes too: no Resource sample needed). Per thread, the running time accumulated up to
// each switch; between switches a thread is running after a switch in and not after a switch out. Before
// its first switch a thread is taken to be in the state that switch leaves (running before a switch out).
class OnCpuTimeline {
 public:
  explicit OnCpuTimeline(std::span<const record::SchedRecord> switches);
  bool empty() const { return threads_.empty(); }
  // The thread's running ticks up to `t`, plus a constant bias (differences are what count); kNone when the
  // recording has no switch of the thread.
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};
  std::uint64_t running_at(std::uint32_t source, std::uint32_t thread, std::uint64_t t) const;

 private:
  struct Point {
    std::uint64_t t, running;  // the switch's time; running ticks (biased) up to it
    bool in;                   // a switch in: running after it
  };
  std::unordered_map<std::uint64_t, std::vector<Point>> threads_;  // thread_key(source, thread) -> its switches
};

// One completed interval occurrence (for -n and the Perfetto export).
struct Occurrence {
  unsigned interval;           // index in IntervalInfo::intervals
  unsigned part;               // 0; class 2: outcome 0/1; class 3: 0 first, 1 second sub-interval, 2 the whole
  std::uint32_t stream;        // the stream of the ending event (index into Matcher::streams())
  std::uint32_t start_stream;  // class 4: the stream of the start event; otherwise == stream
  std::uint64_t start, end, duration;
  std::int64_t value = 0;     // a named scope: the value its probe carried (signed 48 bits, DECISION D30)
  std::uint16_t name_id = 0;  // a named scope: its site's id (0: an interval of interval.info)
};

// ERRATUM E48: a classic sample's stream is (source identification, CPU); a live recorder's sample
// (thread != 0) runs on whatever CPU the kernel gives its thread, so its stream is (source, thread).
struct StreamKey {
  std::uint32_t source;
  std::uint32_t lane;  // the CPU, or the thread when by_thread
  bool by_thread;

  static StreamKey of(const Sample& s) {
    return s.thread ? StreamKey{s.source, s.thread, true} : StreamKey{s.source, s.cpu, false};
  }
  // One 64-bit key (Linux thread ids are below 2^31, CPU numbers below 2^16).
  std::uint64_t key() const {
    return (std::uint64_t{source} << 32) | (by_thread ? (0x80000000u | (lane & 0x7fffffffu)) : lane);
  }
};

class Ranks;  // input.hpp: the MPI rank of each process (ERRATUM E395)
// "rank R" for a stream of an MPI rank's process, "" for any other (or without ranks).
std::string rank_label(const Ranks* ranks, std::uint32_t source);
// "SOURCE/cpuN" or "SOURCE/tidN", after "rank R " for an MPI rank's: a stream's name in reports and exports.
std::string stream_name(const StreamKey& k, const Ranks* ranks = nullptr);

// Streaming matcher: feed samples in time order, then finish().
//
// Named scopes (KRON_SCOPE, kFlagNamed samples) are paired by the matcher itself, without interval.info:
// every distinct scope name of `names` becomes a class-1 interval after interval.info's (Interval::named),
// and a scope's end closes the innermost open scope of its id on its stream (ERRATUM E152: scopes nest; a
// begin left open above it is counted as an unmatched start). Named samples never match interval.info's
// event numbers.
class Matcher {
 public:
  Matcher(const IntervalInfo& info, const RptOptions& opt, std::uint64_t ts_mask,
          const tracefile::NameTable* names = nullptr);

  // Returns true when the sample is one of interval.info's events.
  bool feed(const Sample& s);
  // feed() for each sample of a batch (the tools' inner loop: one call a batch).
  void feed_batch(std::span<const Sample> batch);
  void finish();  // counts the starts still open as unmatched

  // On-CPU time from scheduling switches instead of a counter (ERRATUM E157); `tl` outlives the matcher.
  void set_timeline(const OnCpuTimeline* tl) { timeline_ = tl; }

  // Called for every completed occurrence when set.
  std::function<void(const Occurrence&)> on_interval;

  const IntervalInfo& info() const { return info_; }
  unsigned parts(unsigned interval) const { return part_count_[interval]; }
  std::string part_name(unsigned interval, unsigned part) const;
  const std::vector<StreamKey>& streams() const { return streams_; }
  std::uint32_t stream_of(const Sample& s);
  // The named scopes open on `stream` (begun, not yet ended): from on_interval, the scopes enclosing the one
  // that just completed (its nesting depth, E152).
  std::size_t open_scopes(std::uint32_t stream) const {
    return stream < named_open_.size() ? named_open_[stream].size() : 0;
  }
  // Statistics of (interval, part) on a stream; stream == kAll: across all streams.
  static constexpr std::uint32_t kAll = ~std::uint32_t{0};
  const Stats& stats(unsigned interval, unsigned part, std::uint32_t stream) const;
  std::uint64_t event_mask() const { return event_mask_; }

  std::uint64_t samples() const { return samples_; }
  std::uint64_t resource_samples() const { return resource_samples_; }
  std::uint64_t matched_events() const { return matched_events_; }  // samples that played a role
  std::uint64_t other_events() const { return samples_ - matched_events_; }
  // Samples that carried a loss flag (D20), in every stream.
  std::uint64_t loss_samples() const { return loss_samples_; }
  // The loss-flagged samples that reached `stream` (a classic stream: its source's, D23).
  std::uint64_t losses(std::uint32_t stream) const { return stream < losses_.size() ? losses_[stream] : 0; }

 private:
  // A matching machine: one start event, one or two end events each closing a part.
  struct Machine {
    unsigned interval;
    bool global;          // class 4
    unsigned start_part;  // where unmatched starts are counted (E44)
    unsigned n_ends;
    std::array<unsigned, 2> end_part;
  };
  struct Role {
    std::uint32_t machine;
    std::int32_t end;  // -1 start, else index of the end
  };
  struct Open {
    std::uint64_t t = 0;
    std::uint64_t cpu = kNoCpu;  // the on-CPU counter at the start (kNoCpu: not a Resource sample)
    bool open = false;
    bool cut = false;  // D21: closed by a loss; its end, when it comes, counts nothing more
  };
  static constexpr std::uint64_t kNoCpu = ~std::uint64_t{0};
  std::uint64_t cpu_of(const Sample& s) const {
    if (timeline_) return s.thread ? timeline_->running_at(s.source, s.thread, s.timestamp) : kNoCpu;
    return opt_.cpu_counter >= 0 && s.is_resource() ? s.counters[static_cast<unsigned>(opt_.cpu_counter)] : kNoCpu;
  }
  const OnCpuTimeline* timeline_ = nullptr;
  [[gnu::always_inline]] inline bool feed_one(const Sample& s);  // defined and used in rpt.cpp only
  bool feed_named(const Sample& s);
  // D20, D23: a loss-flagged sample: cuts what is open on its stream (a classic stream: every stream of its
  // source), and every class-4 start still waiting.
  void lose(const Sample& s);
  void cut_stream(std::uint32_t stream);
  // D21: the end of named scope `id` that found no begin open: the end of a cut scope, or a cut (begin lost).
  void orphan_named_end(std::uint32_t stream, unsigned iv, std::uint16_t id);
  unsigned named_interval(std::uint16_t id) const {
    return id < named_of_id_.size() && named_of_id_[id] != kAll ? named_of_id_[id] : unnamed_interval_;
  }
  struct NamedOpen {
    unsigned interval;
    std::uint16_t id;
    std::uint64_t t;
    std::int64_t value;  // DECISION D30
    std::uint64_t cpu;   // cpu_of() at the begin
  };
  std::vector<std::uint32_t> named_of_id_;          // id -> interval (kAll: none)
  unsigned unnamed_interval_ = 0;                   // "#unnamed": scopes whose id the names do not hold
  std::vector<std::vector<NamedOpen>> named_open_;  // per stream: the open named scopes, innermost last
  // D21: per stream, the ids of the named scopes cut by a loss whose end has not come yet, innermost last
  // (at most kMaxCut: the oldest go first).
  std::vector<std::vector<std::uint16_t>> named_cut_;
  static constexpr std::size_t kMaxCut = 1024;
  std::vector<std::uint64_t> losses_;  // per stream: loss-flagged samples so far
  std::uint64_t loss_samples_ = 0;
  [[gnu::always_inline]] inline std::span<const Role> roles(std::uint64_t event) const;
  std::uint32_t new_stream(const StreamKey& sk, std::uint64_t key);
  [[gnu::always_inline]] inline std::uint32_t stream_one(const Sample& s);
  Stats& slot(unsigned interval, unsigned part, std::uint32_t stream);
  [[gnu::always_inline]] inline void record(const Machine& m, unsigned part, std::uint32_t stream,
                                            std::uint32_t start_stream, std::uint64_t start, std::uint64_t end,
                                            std::uint64_t cpu0 = kNoCpu, std::uint64_t cpu1 = kNoCpu);

  IntervalInfo info_;  // interval.info's intervals, then the named scopes'
  RptOptions opt_;
  std::uint64_t ts_mask_, event_mask_;
  std::vector<Machine> machines_;
  std::vector<unsigned> part_base_, part_count_;  // slot index of (interval, 0); parts per interval
  unsigned total_parts_ = 0;
  std::vector<std::uint32_t> small_off_;  // event numbers below kSmall: roles in small_flat_[off[e], off[e+1])
  std::vector<Role> small_flat_;
  std::unordered_map<std::uint64_t, std::vector<Role>> big_roles_;
  static constexpr std::uint64_t kSmall = 4096;

  std::vector<StreamKey> streams_;
  std::vector<std::uint64_t> stream_keys_;  // searched linearly while there are few streams
  std::unordered_map<std::uint64_t, std::uint32_t> stream_index_;
  // Streams recently seen, direct-mapped on a hash of the key: one compare per sample however the
  // streams interleave (a recorder's lanes alternate, so "the last stream" alone rarely hits).
  struct StreamCache {
    std::uint64_t key = 0;
    std::uint32_t idx = kAll;  // kAll: empty
  };
  static constexpr unsigned kStreamCacheBits = 6;
  std::array<StreamCache, 1u << kStreamCacheBits> stream_cache_{};
  std::vector<Open> open_;  // [stream * machines + machine], classes 1-3
  std::vector<std::deque<std::pair<std::uint64_t, std::uint32_t>>> queues_;  // per machine, class 4
  std::vector<std::size_t> queue_cut_;  // D24: per class-4 machine, its queue's first starts cut by a loss
  std::vector<Stats> stats_;            // [stream * total_parts + slot]
  std::vector<Stats> all_;              // [slot]

  std::uint64_t samples_ = 0, resource_samples_ = 0, matched_events_ = 0;
};

}  // namespace kron::analysis
