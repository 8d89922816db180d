// The timeline driver (timeline.hpp): one walk of the inputs, a sink called for what it needs.
#include "analysis/timeline.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "kron/board.hpp"

namespace kron::analysis {

namespace {
__extension__ typedef unsigned __int128 u128;  // ticks x 10^9 before the division (E153)

// Every input's records of one kind (records_of(input): a span), in time order; the inputs' order breaks ties.
template <class RecordsOf>
auto by_time(const Merged& in, RecordsOf records_of) {
  using R = typename decltype(records_of(*in.inputs()[0]))::value_type;
  std::vector<const R*> v;
  for (const auto& input : in.inputs())
    for (const R& r : records_of(*input)) v.push_back(&r);
  std::stable_sort(v.begin(), v.end(), [](const R* a, const R* b) { return a->timestamp < b->timestamp; });
  return v;
}
}  // namespace

Timeline::Timeline(Merged& in, TimelineOptions o) : in_(in), opt_(std::move(o)) {
  for (unsigned c = 0; c < kResourceCounters; ++c) {
    std::string what;
    for (const auto& input : in_.inputs())
      if (!input->counter_name(c).empty()) {
        what = input->counter_name(c);
        break;
      }
    counter_labels_[c] = what.empty() ? fmt::format("counter {}", c) : fmt::format("counter {} ({})", c, what);
  }
}

std::uint64_t Timeline::wide_ns(std::uint64_t d) const {
  return static_cast<std::uint64_t>(static_cast<u128>(d) * 1'000'000'000u / in_.clock_hz());
}

std::string Timeline::process_label(std::uint32_t source) const {
  const std::uint32_t pid = board::source_pid(source);
  if (const auto r = in_.ranks().of(source))  // an MPI rank's process (ERRATUM E395)
    return r->node.empty() ? fmt::format("rank {} (pid {})", r->rank, pid)
                           : fmt::format("rank {} on {} (pid {})", r->rank, r->node, pid);
  std::string_view main = names().comm(source, pid);  // the process's own name (ERRATUM E410)
  if (main.empty()) main = names().thread(source, pid);
  return main.empty() ? fmt::format("source 0x{:08x}", source) : fmt::format("{} (pid {})", main, pid);
}

std::string Timeline::stream_label(const StreamKey& k) const {
  const std::string_view tn = k.by_thread ? names().thread(k.source, k.lane) : std::string_view{};
  std::string rank = rank_label(&in_.ranks(), k.source);  // ERRATUM E395
  if (!rank.empty()) rank += ' ';
  return !tn.empty() ? fmt::format("{}{} (tid {})", rank, tn, k.lane)
                     : fmt::format("{}{} {}", rank, k.by_thread ? "thread" : "cpu", k.lane);
}

std::string Timeline::sched_label(std::uint32_t source, std::uint32_t thread) const {
  return stream_label(StreamKey{source, thread, true}) + ": scheduling";
}

const MpiCalls& Timeline::mpi() {
  if (!mpi_) mpi_ = mpi_calls(in_);
  return *mpi_;
}

// On-CPU time per interval (kron rpt): from the recording's scheduling switches (kron record --sched, exact
// to the switch, ERRATUM E157), else where a counter counted it (kron record --counter N=task-clock or
// oncpu). Only one input is taken: inputs merged from several recordings may wire their counters
// differently.
void Timeline::prepare_matcher(const TimelineSink::Needs& n) {
  RptOptions ro = opt_.rpt;
  if (n.on_cpu) {
    const auto& inputs = in_.inputs();
    if (inputs.size() == 1 && inputs[0]->format() == InputFormat::Kron && inputs[0]->path() != "-")
      switches_ahead_ = inputs[0]->switches_ahead();
    on_cpu_ = std::make_unique<OnCpuTimeline>(switches_ahead_);
    if (!on_cpu_->empty()) {
      ro.cpu_scale = 1.0;  // ticks of the timestamp clock
    } else if (inputs.size() == 1) {
      std::vector<std::string> counters;
      for (unsigned c = 0; c < kResourceCounters; ++c) counters.push_back(inputs[0]->counter_name(c));
      const CpuCounter cc = find_cpu_counter(counters, in_.clock_hz());
      ro.cpu_counter = cc.counter;
      ro.cpu_scale = cc.scale;
    }
  }
  matcher_ = std::make_unique<Matcher>(opt_.info ? *opt_.info : no_info_, ro, in_.ts_mask(), &in_.names());
  if (cpu_from_sched()) matcher_->set_timeline(on_cpu_.get());
}

// The next batch of samples, of the phases asked for; the first sample read (before the filter) is t0.
std::size_t Timeline::next_batch(std::vector<Sample>& batch) {
  for (;;) {
    std::size_t n = in_.next_batch(batch);
    if (n == 0) return 0;
    if (!have_t0_) {
      have_t0_ = true;
      t0_ = batch[0].timestamp;
    }
    if (!opt_.phases.empty()) {  // the other samples never reach the sink or the matcher
      std::size_t k = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (std::find(opt_.phases.begin(), opt_.phases.end(), batch[i].phase) != opt_.phases.end()) {
          if (k != i) batch[k] = batch[i];
          ++k;
        }
      n = k;
      if (n == 0) continue;
    }
    samples_ += n;
    return n;
  }
}

void Timeline::each_sample(TimelineSink& sink, std::span<const Sample> batch) {
  for (const Sample& s : batch) {
    const StreamKey key = StreamKey::of(s);
    if (!have_cur_ || key.key() != cur_key_) {  // runs of one stream are the common case
      const auto [it, fresh] = stream_of_key_.try_emplace(key.key(), static_cast<std::uint32_t>(streams_.size()));
      if (fresh) {
        streams_.push_back(key);
        sink.stream(it->second, key, s);
      }
      cur_ = it->second;
      cur_key_ = key.key();
      have_cur_ = true;
    }
    sink.before_match(s, cur_);
    const bool interval_event = matcher_ && matcher_->feed(s);  // may complete intervals (sink.interval)
    sink.sample(s, cur_, interval_event);
  }
}

void Timeline::walk(TimelineSink& sink) {
  if (walked_) throw std::logic_error("a Timeline is walked once");
  walked_ = true;
  const TimelineSink::Needs n = sink.needs();
  if (n.intervals || n.on_cpu) {
    prepare_matcher(n);
    matcher_->on_interval = [&sink](const Occurrence& o) { sink.interval(o); };
  }
  sink.begin(*this);
  std::vector<Sample> batch(opt_.batch);
  while (const std::size_t got = next_batch(batch)) {
    const std::span<const Sample> b(batch.data(), got);
    if (n.each_sample) {
      each_sample(sink, b);
    } else {
      if (matcher_) matcher_->feed_batch(b);
      sink.samples(b);
    }
  }
  if (matcher_) matcher_->finish();
  if (!have_t0_) {  // no sample: the times start at the first scheduling switch (a switches-only recording)
    for (const auto& input : in_.inputs())
      for (const auto& sw : input->sched_switches())
        if (!have_t0_ || sw.timestamp < t0_) t0_ = sw.timestamp, have_t0_ = true;
  }
  sink.samples_done();
  for (const TimelineSink::Part p : n.tail) walk_part(p, sink);
  sink.end();
}

void Timeline::walk_part(TimelineSink::Part p, TimelineSink& sink) {
  using Part = TimelineSink::Part;
  switch (p) {
    case Part::Stretches:
      for_each_sched_stretch(
          in_, t0_, [&](std::uint32_t source, std::uint32_t thread) { sink.sched_thread(source, thread); },
          [&](const SchedStretch& x) { sink.sched_stretch(x); });
      return;
    case Part::Switches:
      for (const auto* r : by_time(in_, [](const Input& i) { return i.sched_switches(); })) sink.sched_switch(*r);
      return;
    case Part::Snapshots: for_each_snapshot_series(in_, [&](const SnapshotSeries& x) { sink.snapshot(x); }); return;
    case Part::SnapshotRecords:
      for (const auto& input : in_.inputs()) sink.snapshot_records(*input, input->snapshots());
      return;
    case Part::Messages: {
      const MpiCalls& m = mpi();
      for (const auto& [si, ri] : m.matching.pairs) sink.mpi_message(m.events[si].rec, m.events[ri].rec);
      return;
    }
    case Part::Calls:
      for (const auto* r : by_time(in_, [](const Input& i) { return i.mpi_records(); })) sink.mpi_call(*r);
      return;
  }
}

std::uint64_t for_each_sched_stretch(const Merged& in, std::uint64_t t0,
                                     const std::function<void(std::uint32_t, std::uint32_t)>& first,
                                     const std::function<void(const SchedStretch&)>& stretch) {
  struct Last {
    std::uint64_t t;
    std::uint8_t flags;
    std::uint16_t cpu;
  };
  std::unordered_map<std::uint64_t, Last> last;  // stream key of (source, thread) -> its last switch
  std::uint64_t n = 0;
  for (const auto& input : in.inputs())
    for (const auto& sw : input->sched_switches()) {
      const std::uint64_t key = thread_key(sw.source, sw.thread);
      const auto [at, fresh] = last.try_emplace(key, Last{sw.timestamp, sw.h.flags, sw.h.cpu});
      if (fresh) {
        first(sw.source, sw.thread);
        continue;
      }
      Last& l = at->second;
      const bool was_out = l.flags & record::kSchedOut, now_out = sw.h.flags & record::kSchedOut;
      if (was_out != now_out && sw.timestamp >= l.t && sw.timestamp > t0) {
        const char* state = !was_out ? "running" : (l.flags & record::kSchedPreempt) ? "preempted" : "waiting";
        stretch(SchedStretch{sw.source, sw.thread, state, l.t, sw.timestamp, was_out ? sw.h.cpu : l.cpu});
        ++n;
      }
      l = Last{sw.timestamp, sw.h.flags, sw.h.cpu};
    }
  return n;
}

std::uint64_t for_each_snapshot_series(const Merged& in, const std::function<void(const SnapshotSeries&)>& f) {
  std::uint64_t n = 0;
  for (const auto& input : in.inputs()) {
    const std::span<const std::uint8_t> snaps = input->snapshots();
    for (std::size_t at = 0; at + sizeof(stats::SnapshotHeader) <= snaps.size();) {
      stats::SnapshotHeader h;
      std::memcpy(&h, snaps.data() + at, sizeof h);
      if (h.h.size < sizeof h || at + h.h.size > snaps.size()) break;  // validated by the reader: not reached
      SnapshotSum one;
      one.add(snaps.subspan(at, h.h.size));
      const SnapshotTotals r = one.result();
      SnapshotSeries x;
      x.source = h.source;
      x.thread = h.thread;
      x.when = h.timestamp;
      x.hist = true;
      std::string thread = rank_label(&in.ranks(), x.source);  // "rank R thread T" for an MPI rank's (E395)
      thread += fmt::format("{}thread {}", thread.empty() ? "" : " ", x.thread);
      for (const auto& [name, phases] : r.hists)
        for (const auto& [p, hg] : phases) {
          x.series = fmt::format("hist {} ({}, phase {})", name, thread, p);
          x.sum = summarize(hg);
          f(x);
          ++n;
        }
      x.hist = false;
      for (const auto& [p, cs] : r.counters)
        for (const auto& [i, v] : cs) {
          x.series = fmt::format("vc {} ({}, phase {})", i, thread, p);
          x.value = v;
          f(x);
          ++n;
        }
      at += h.h.size;
    }
  }
  return n;
}

MpiCalls mpi_calls(const Merged& in) {
  MpiCalls c;
  for (std::size_t i = 0; i < in.inputs().size(); ++i)
    for (const auto& rec : in.inputs()[i]->mpi_records()) c.events.push_back({rec, static_cast<std::uint32_t>(i)});
  if (!c.events.empty()) c.matching = match_messages(c.events);
  return c;
}

}  // namespace kron::analysis
