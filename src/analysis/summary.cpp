// kron info's and kron hist's walks (summary.hpp).
#include "analysis/summary.hpp"

#include "kron/board.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

namespace kron::analysis {

namespace {
constexpr const char* kOrigins[] = {"live", "mk1", "mk2", "model"};

class CountSink final : public TimelineSink {
 public:
  explicit CountSink(FileSummary& s) : s_(s) {}
  Needs needs() const override { return Needs().in_batches(); }
  void samples(std::span<const Sample> batch) override {
    for (const Sample& x : batch) {
      (x.is_resource() ? s_.resource : s_.trace)++;
      if (!any_) s_.first = x.timestamp, any_ = true;
      s_.first = std::min(s_.first, x.timestamp);
      s_.last = std::max(s_.last, x.timestamp);
    }
  }

 private:
  FileSummary& s_;
  bool any_ = false;
};

class SnapshotSink final : public TimelineSink {
 public:
  Needs needs() const override { return Needs().in_batches().then({Part::SnapshotRecords}); }
  void snapshot_records(const Input&, std::span<const std::uint8_t> records) override { sum.add(records); }
  SnapshotSum sum;
};

std::string name_text(const record::NameRecord& n) { return std::string(n.name, strnlen(n.name, sizeof n.name)); }
}  // namespace

FileSummary summarize_file(Timeline& tl) {
  FileSummary s;
  if (tl.in().inputs().size() != 1 || !tl.in().inputs()[0]->trace_file())
    throw std::logic_error("summarize_file: one kron trace file");
  CountSink sink(s);
  tl.walk(sink);
  const tracefile::Reader& r = *tl.in().inputs()[0]->trace_file();
  const auto& h = r.header();
  s.file = &r;
  s.span_s = s.trace + s.resource ? double(s.last - s.first) / double(h.clock_hz) : 0.0;
  // Scheduling switches (trace format 1.3, kron record --sched): not samples, counted apart.
  std::map<std::pair<std::uint32_t, std::uint32_t>, FileSummary::SwitchThread> threads;
  for (const auto& sw : r.sched_switches()) {
    const std::uint32_t pid = board::source_pid(sw.source);
    auto& t = threads[{pid, sw.thread}];
    t.pid = pid, t.tid = sw.thread;
    ++t.switches;
    const bool preempted = sw.h.flags & record::kSchedPreempt;
    t.preempted += preempted;
    s.preempted += preempted;
  }
  s.sched_threads = threads.size();
  for (const auto& [key, t] : threads) s.switch_threads.push_back(t);
  s.sized = r.complete() && h.records_raw_bytes;
  s.ratio = s.sized && h.records_bytes ? double(h.records_raw_bytes) / double(h.records_bytes) : 0.0;
  for (const auto& n : r.names()) {
    if (n.name_kind == record::NameKind::Thread) s.thread_names[n.thread] = name_text(n);
    if (n.name_kind == record::NameKind::Node) s.node = name_text(n);
  }
  // ERRATUM E395: the rank of each lane and switching thread of an MPI recording.
  s.mpi = h.minor >= 5 && h.mpi_world_size;
  if (s.mpi) {
    const bool merged = h.mpi_rank == tracefile::kMergedRank;
    auto rank_of = [&](std::uint32_t pid) {
      return merged ? tl.ranks().of_pid(pid) : std::optional<std::uint32_t>(h.mpi_rank);
    };
    for (const auto& l : r.lanes()) s.lane_rank.push_back(rank_of(l.pid));
    for (const auto& t : s.switch_threads) s.switch_rank.push_back(rank_of(t.pid));
  }
  std::uint64_t lane_overruns = 0, lane_overwritten = 0;
  for (const auto& l : r.lanes()) lane_overruns += l.overruns, lane_overwritten += l.overwritten;
  s.other_overruns = h.overruns > lane_overruns ? h.overruns - lane_overruns : 0;
  s.other_overwritten = h.overwritten > lane_overwritten ? h.overwritten - lane_overwritten : 0;
  if (static_cast<unsigned>(h.origin) < 4) s.origin = kOrigins[static_cast<unsigned>(h.origin)];
  return s;
}

SnapshotTotals merged_snapshots(Timeline& tl) {
  SnapshotSink sink;
  tl.walk(sink);
  if (!tl.ranks().any()) return sink.sum.result();
  return sink.sum.result([&tl](std::uint32_t source) { return tl.rank(source); });  // ERRATUM E395
}

}  // namespace kron::analysis
