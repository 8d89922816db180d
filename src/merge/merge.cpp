// kron merge (merge.hpp): the streaming k-way merge of the ranks' files, aligned and corrected.
#include "merge/merge.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <queue>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "analysis/mpi_match.hpp"
#include "kron/core/codec.hpp"
#include "kron/core/error.hpp"
#include "merge/clc.hpp"

namespace kron::merge {

using analysis::MpiEvent;
using record::ClockOffsetRecord;
using record::MpiCall;
using record::MpiRecord;

// ---- The merge -----------------------------------------------------------------------------------------
namespace {

struct Input {
  std::unique_ptr<tracefile::Reader> reader;
  std::uint32_t rank = 0;
  ClockMap map;
  std::vector<std::uint16_t> name_remap;  // old id -> new id (0: unknown)
  std::vector<Sample> batch;
  std::size_t pos = 0, n = 0;
  std::size_t corr_cursor = 0;
  std::uint64_t last = 0;  // its latest sample or MPI record on the merged timeline (ERRATUM E441)
};

std::string site_key(const record::NameRecord& r) {
  auto field = [](const char* p, std::size_t n) { return std::string(p, strnlen(p, n)); };
  return std::to_string(static_cast<unsigned>(r.name_kind)) + '\0' + field(r.name, sizeof r.name) + '\0' +
         field(r.function, sizeof r.function) + '\0' + field(r.file, sizeof r.file) + '\0' + std::to_string(r.line);
}

constexpr std::size_t kBatch = 1024;

// ---- What a merge accepts (ERRATUM E344) ---------------------------------------------------------------
// Every input is a rank's file of one MPI world: its world size set and the same in every file.
void check_worlds(const std::vector<Input>& in, const std::vector<std::string>& paths) {
  const std::size_t world_at = offsetof(tracefile::FileHeader, mpi_world_size);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::uint32_t w = in[i].reader->header().mpi_world_size;
    if (w == 0)
      throw InputError::at_offset(paths[i], world_at,
                                  "is not an MPI rank's file (world size 0): kron merge merges the files libkron_mpi "
                                  "wrote for the ranks of one MPI job");
    const std::uint32_t w0 = in[0].reader->header().mpi_world_size;
    if (w != w0)
      throw InputError::at_offset(paths[i], world_at,
                                  "world size " + std::to_string(w) + ", but " + paths[0] + " has world size " +
                                      std::to_string(w0) + ": files of different MPI jobs");
  }
}

// Each MPI record of input `x` is of its file's rank, and names peers inside the world.
void check_mpi_records(const Input& x, const std::string& path) {
  const auto& h = x.reader->header();
  const auto recs = x.reader->mpi_records();
  for (std::size_t k = 0; k < recs.size(); ++k) {
    const MpiRecord& r = recs[k];
    const std::string which = "MPI record " + std::to_string(k) + " of " + std::to_string(recs.size());
    if (r.rank != h.mpi_rank)
      throw InputError::at_offset(
          path, offsetof(tracefile::FileHeader, mpi_rank),
          which + " is of rank " + std::to_string(r.rank) + ", the file of rank " + std::to_string(h.mpi_rank));
    if (r.peer >= 0 && std::uint32_t(r.peer) >= h.mpi_world_size)
      throw InputError::at_offset(path, offsetof(tracefile::FileHeader, mpi_world_size),
                                  which + " names peer rank " + std::to_string(r.peer) + ", outside the world of " +
                                      std::to_string(h.mpi_world_size));
  }
  for (const auto& c : x.reader->clock_offsets())
    if (c.rank != h.mpi_rank)
      throw InputError::at_offset(path, offsetof(tracefile::FileHeader, mpi_rank),
                                  "a clock-offset record of rank " + std::to_string(c.rank) + " in the file of rank " +
                                      std::to_string(h.mpi_rank));
}

// The clock-offset measurements of a rank that are plausible: a crystal drifts by tens of ppm, so a
// measurement that implies more than kMaxDriftPpm against the rank's consensus measurement (the one whose
// offset is the median) is dropped with a warning naming rank and measurement; so is a lone measurement
// whose offset is more than an hour off the one the files' CLOCK_REALTIME starts give.
inline constexpr double kMaxDriftPpm = 1000;
std::vector<ClockOffsetRecord> plausible_offsets(const Input& x, const tracefile::FileHeader& rh,
                                                 std::vector<std::string>* warnings) {
  const auto& h = x.reader->header();
  const auto all = x.reader->clock_offsets();
  std::vector<ClockOffsetRecord> kept(all.begin(), all.end());
  if (kept.empty()) return kept;
  const double rate = h.clock_hz && rh.clock_hz ? double(rh.clock_hz) / double(h.clock_hz) : 1.0;  // ClockMap's slope
  auto offset = [&](const ClockOffsetRecord& c) { return double(c.reference) - double(c.timestamp) * rate; };
  std::vector<double> offs;
  for (const auto& c : kept) offs.push_back(offset(c));
  std::nth_element(offs.begin(), offs.begin() + static_cast<std::ptrdiff_t>(offs.size() / 2), offs.end());
  const double median = offs[offs.size() / 2];
  const auto anchor = std::min_element(kept.begin(), kept.end(), [&](const auto& a, const auto& b) {
    return std::fabs(offset(a) - median) < std::fabs(offset(b) - median);
  });
  const ClockOffsetRecord a = *anchor;
  const double hz = double(rh.clock_hz ? rh.clock_hz : 1);
  auto warn = [&](std::size_t k, const std::string& why) {
    warnings->push_back("rank " + std::to_string(h.mpi_rank) + ": clock-offset measurement " + std::to_string(k) +
                        " (local tick " + std::to_string(all[k].timestamp) + ") " + why + ": dropped");
  };
  std::vector<ClockOffsetRecord> out;
  for (std::size_t k = 0; k < all.size(); ++k) {
    const ClockOffsetRecord& c = all[k];
    if (all.size() == 1) {
      const double real_diff = double(std::int64_t(h.start_realtime_ns - rh.start_realtime_ns)) * 1e-9 * hz;
      const double by_realtime = double(rh.start_ticks) + real_diff - double(h.start_ticks) * rate;
      if (std::fabs(offset(c) - by_realtime) > 3600 * hz) {
        warn(k, "is more than an hour off the offset of the files' start times");
        continue;
      }
    } else if (c.timestamp != a.timestamp) {
      // Differences first, in integers: absolute tick counts lose precision as doubles.
      const double dt = double(std::int64_t(c.timestamp - a.timestamp)) * rate;
      const double ppm = (double(std::int64_t(c.reference - a.reference)) / dt - 1.0) * 1e6;
      if (!(std::fabs(ppm) <= kMaxDriftPpm)) {
        warn(k, "implies a drift of " + std::to_string(std::llround(ppm)) + " ppm (more than " +
                    std::to_string(int(kMaxDriftPpm)) + ")");
        continue;
      }
    }
    out.push_back(c);
  }
  return out;
}

// A file that was not closed (its rank killed, a disk full) is merged only with --salvage, and said so.
void check_complete(std::vector<Input>& in, const std::vector<std::string>& paths, const MergeOptions& o,
                    MergeReport& rep) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i].reader->complete()) continue;
    if (!o.salvage)
      throw InputError::at_offset(paths[i], offsetof(tracefile::FileHeader, flags),
                                  "was not closed (its rank ended before it finished the file): --salvage merges what "
                                  "it holds and marks the merged file so");
    rep.salvaged.push_back(paths[i]);
    rep.warnings.push_back(paths[i] + ": was not closed: merged what it holds (--salvage)");
  }
}

// The ranks' files, opened, their MPI records read ahead; each rank's number checked against the others'.
std::vector<Input> open_ranks(const std::vector<std::string>& paths, const std::string& output, bool salvage) {
  if (paths.empty()) throw std::runtime_error("kron merge: no input files");
  for (const auto& p : paths) {  // the writer would truncate an input it is reading
    std::error_code ec;
    if (std::filesystem::exists(output, ec) && std::filesystem::equivalent(p, output, ec))
      throw std::runtime_error("kron merge: the output " + output + " is one of the inputs");
  }
  std::vector<Input> in(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    in[i].reader = std::make_unique<tracefile::Reader>(paths[i], tracefile::ReadOptions{salvage});
    in[i].reader->read_annex();
    const auto& h = in[i].reader->header();
    in[i].rank = h.mpi_world_size ? h.mpi_rank : static_cast<std::uint32_t>(i);
    if (h.mpi_world_size && h.mpi_rank == tracefile::kMergedRank)
      throw InputError::at_offset(paths[i], offsetof(tracefile::FileHeader, mpi_rank),
                                  "is a merged file (kron merge): merge the ranks' own files");
    if (h.mpi_world_size && h.mpi_rank >= h.mpi_world_size)
      throw InputError::at_offset(paths[i], offsetof(tracefile::FileHeader, mpi_rank),
                                  "MPI rank " + std::to_string(h.mpi_rank) + " is not below the world size " +
                                      std::to_string(h.mpi_world_size));
    for (std::size_t j = 0; j < i; ++j)
      if (in[j].rank == in[i].rank)
        throw InputError::at_offset(paths[i], offsetof(tracefile::FileHeader, mpi_rank),
                                    "rank " + std::to_string(in[i].rank) + " is also the rank of " + paths[j]);
  }
  return in;
}

// MPI calls on the common timeline, matched, checked and corrected (E206, E208).
ClcResult correct_mpi(std::vector<Input>& in, const MergeOptions& o, MergeReport& rep, std::vector<MpiEvent>& events) {
  for (std::size_t i = 0; i < in.size(); ++i)
    for (const auto& r : in[i].reader->mpi_records()) {
      MpiEvent e{r, static_cast<std::uint32_t>(i)};
      e.rec.timestamp = in[i].map(r.timestamp);
      e.rec.end = std::max(in[i].map(r.end), e.rec.timestamp);
      events.push_back(e);
    }
  const Matching match = match_messages(events);
  rep.mpi_records = events.size();
  rep.messages = match.pairs.size();
  rep.unmatched_sends = match.unmatched_sends;
  rep.unmatched_recvs = match.unmatched_recvs;
  rep.collectives = match.collectives.size();
  rep.incomplete_collectives = match.incomplete_collectives;
  rep.violations_found = count_violations(events, match);
  ClcResult corr;
  corr.per_input.resize(in.size());
  if (o.clc) corr = clc(events, match, in.size(), o.gamma);
  rep.violations_left = count_violations(events, match);
  rep.max_correction = corr.max_correction;
  rep.events_moved = corr.events_moved;
  rep.forced = corr.forced;

  return corr;
}

// Names: sites get new ids (each rank's board numbered its own), threads and nodes are kept.
std::vector<record::NameRecord> merged_names(std::vector<Input>& in, std::uint64_t& names_lost) {
  std::vector<record::NameRecord> names;
  std::unordered_map<std::string, std::uint16_t> site_ids;
  for (auto& x : in) {
    names_lost += x.reader->header().names_lost;
    for (const auto& r : x.reader->names()) {
      if (!record::name_has_id(r.name_kind)) {
        names.push_back(r);
        continue;
      }
      auto [it, fresh] = site_ids.emplace(site_key(r), static_cast<std::uint16_t>(site_ids.size() + 1));
      if (fresh && site_ids.size() >= record::kNoNameId) {  // ids run out: the name is lost, and counted
        site_ids.erase(it);
        ++names_lost;
        continue;
      }
      if (x.name_remap.size() <= r.id) x.name_remap.resize(std::size_t{r.id} + 1, 0);
      x.name_remap[r.id] = it->second;
      if (fresh) {
        record::NameRecord n = r;
        n.id = it->second;
        names.push_back(n);
      }
    }
  }

  return names;
}

// The k-way merge: each input's next sample, on the common timeline; the smallest found by a scan of the
// heads for a few inputs, by a min-heap for many. Records are encoded into a staging buffer written a
// megabyte at a time.
class SampleMerge {
 public:
  SampleMerge(std::vector<Input>& in, const ClcResult& corr, tracefile::Writer& w) : in_(in), corr_(corr), w_(w) {}
  // Returns the samples written late: an input's own late records stay late (E33).
  std::uint64_t run();

 private:
  void put(const Sample& s);
  bool fill(std::size_t i);
  void emit(Input& x) {
    const Sample& s = x.batch[x.pos++];
    if (s.timestamp < last_) ++late_;
    last_ = std::max(last_, s.timestamp);
    x.last = std::max(x.last, s.timestamp);
    put(s);
  }
  std::vector<Input>& in_;
  const ClcResult& corr_;
  tracefile::Writer& w_;
  std::vector<std::uint8_t> stage_ = std::vector<std::uint8_t>(std::size_t{1} << 20);
  std::size_t staged_ = 0;
  std::uint64_t staged_count_ = 0, last_ = 0, late_ = 0;
};

void SampleMerge::put(const Sample& s) {
  if (staged_ + codec::kMaxRecordBytes > stage_.size()) {
    w_.append_records(std::span(stage_.data(), staged_), staged_count_);
    staged_ = 0;
    staged_count_ = 0;
  }
  staged_ += codec::encode(s, stage_.data() + staged_);
  ++staged_count_;
}

bool SampleMerge::fill(std::size_t i) {
  Input& x = in_[i];
  if (x.pos < x.n) return true;
  // A batch of at most kBatch samples, fewer with many inputs (about 256 K samples held in all, at least 64
  // an input) and never more than the input holds: 4,096 ranks do not hold 4,096 x kBatch samples.
  if (x.batch.empty()) {
    const std::uint64_t share = std::max<std::uint64_t>(64, (std::uint64_t{1} << 18) / in_.size());
    x.batch.resize(static_cast<std::size_t>(
        std::clamp<std::uint64_t>(x.reader->header().samples, 1, std::min<std::uint64_t>(kBatch, share))));
  }
  x.n = x.reader->next_batch(x.batch);
  x.pos = 0;
  for (std::size_t k = 0; k < x.n; ++k) {
    Sample& s = x.batch[k];
    const std::uint64_t a = x.map(s.timestamp);
    s.timestamp = sat_add(a, corr_.per_input[i].delta_at(a, x.corr_cursor));
    if (s.flags & kFlagNamed) {
      const std::uint16_t id = record::name_id_of(s.data);
      const std::uint16_t nid = id < x.name_remap.size() && x.name_remap[id] ? x.name_remap[id] : record::kNoNameId;
      s.data = record::named_data(nid, record::named_value_of(s.data));
    }
  }
  return x.n > 0;
}

std::uint64_t SampleMerge::run() {
  constexpr std::size_t kScanInputs = 8;
  if (in_.size() <= kScanInputs) {
    std::vector<std::size_t> live;
    for (std::size_t i = 0; i < in_.size(); ++i)
      if (fill(i)) live.push_back(i);
    while (!live.empty()) {
      std::size_t best = 0;
      std::uint64_t bt = in_[live[0]].batch[in_[live[0]].pos].timestamp;
      for (std::size_t k = 1; k < live.size(); ++k) {
        const std::uint64_t t = in_[live[k]].batch[in_[live[k]].pos].timestamp;
        if (t < bt) bt = t, best = k;
      }
      emit(in_[live[best]]);
      if (!fill(live[best])) live.erase(live.begin() + static_cast<std::ptrdiff_t>(best));
    }
  } else {
    using Head = std::pair<std::uint64_t, std::size_t>;  // (time, input)
    std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heap;
    for (std::size_t i = 0; i < in_.size(); ++i)
      if (fill(i)) heap.emplace(in_[i].batch[0].timestamp, i);
    while (!heap.empty()) {
      const std::size_t i = heap.top().second;
      heap.pop();
      emit(in_[i]);
      if (fill(i)) heap.emplace(in_[i].batch[in_[i].pos].timestamp, i);
    }
  }
  if (staged_) w_.append_records(std::span(stage_.data(), staged_), staged_count_);
  return late_;
}

// What kron merge prints of rank i: its node, counts, clock measurements, accounting, and how it ended.
RankReport rank_report(const Input& x, const std::string& path, std::uint64_t ref_hz, std::uint64_t start) {
  const auto& xh = x.reader->header();
  RankReport rr;
  // ERRATUM E441: a rank that did not reach MPI_Finalize, and when its last record was.
  rr.ended_early = xh.merge_flags & tracefile::kRankEndedEarly;
  rr.aborted = xh.merge_flags & tracefile::kRankAborted;
  rr.end_signal = xh.end_signal;
  // When it ended: its recording's end (the end anchor, taken as its recorder finished the file, after the
  // program ended), else its last record. Its last record alone would not tell which rank ended first: a
  // rank the launcher ends after another died may have recorded nothing since it began to wait for the dead one.
  const auto secs = [&](std::uint64_t t) { return double(std::int64_t(t - start)) / double(ref_hz ? ref_hz : 1); };
  rr.last_s = secs(x.last);
  rr.end_s = xh.anchor1_ticks ? secs(std::max(x.map(xh.anchor1_ticks), x.last)) : rr.last_s;
  rr.path = path;
  rr.rank = x.rank;
  for (const auto& n : x.reader->names())
    if (n.name_kind == record::NameKind::Node) rr.node = std::string(n.name, strnlen(n.name, sizeof n.name));
  rr.samples = xh.samples;
  rr.mpi_records = x.reader->mpi_records().size();
  rr.points = x.reader->clock_offsets().empty() ? std::vector<ClockMap::Point>{} : x.map.points();
  rr.offset_ns = double(std::int64_t(x.map(xh.start_ticks) - xh.start_ticks)) * 1e9 / double(ref_hz ? ref_hz : 1);
  rr.drift_ppm = x.map.drift() * 1e6;
  rr.drift_uncertainty_ppm = x.map.drift_uncertainty() * 1e6;
  rr.clock_hz = xh.clock_hz;
  rr.start_ticks = xh.start_ticks;
  for (const auto& p : rr.points) {
    if (p.rtt == 0 && p.local == p.reference) continue;  // the reference rank's own entries
    rr.min_rtt = rr.min_rtt ? std::min(rr.min_rtt, p.rtt) : p.rtt;
    rr.max_rtt = std::max(rr.max_rtt, p.rtt);
  }
  rr.passed_filter = xh.passed_filter;
  rr.overruns = xh.overruns;
  rr.overwritten = xh.overwritten;
  return rr;
}

// After the samples: scheduling switches, MPI calls (corrected), clock-offset records (as measured, in each
// rank's clock), the lanes; the header's sums and each rank's report.
void write_annex(std::vector<Input>& in, const std::vector<std::string>& paths, std::uint64_t ref_hz,
                 const ClcResult& corr, const std::vector<MpiEvent>& events, tracefile::FileHeader& h,
                 std::vector<tracefile::LaneEntry>& lanes, MergeReport& rep, tracefile::Writer& w) {
  std::vector<record::SchedRecord> sched;
  std::vector<ClockOffsetRecord> clocks;
  for (const auto& e : events) in[e.input].last = std::max(in[e.input].last, e.rec.end);
  for (std::size_t i = 0; i < in.size(); ++i) {
    Input& x = in[i];
    for (auto sw : x.reader->sched_switches()) {
      const std::uint64_t a = x.map(sw.timestamp);
      std::size_t cur = 0;
      sw.timestamp = sat_add(a, corr.per_input[i].delta_at(a, cur));
      sched.push_back(sw);
    }
    lanes.insert(lanes.end(), x.reader->lanes().begin(), x.reader->lanes().end());
    clocks.insert(clocks.end(), x.reader->clock_offsets().begin(), x.reader->clock_offsets().end());
    const auto& xh = x.reader->header();
    h.overruns += xh.overruns;
    h.overwritten += xh.overwritten;
    h.passed_filter += xh.passed_filter;
    h.waits += xh.waits;
    h.wait_ticks += xh.wait_ticks;
    rep.passed_filter += xh.passed_filter;
    rep.overruns += xh.overruns;
    rep.overwritten += xh.overwritten;
    rep.ranks.push_back(rank_report(x, paths[i], ref_hz, h.start_ticks));
  }
  std::stable_sort(sched.begin(), sched.end(), [](const auto& a, const auto& b) { return a.timestamp < b.timestamp; });
  w.append_sched(sched);
  std::vector<MpiRecord> calls;
  calls.reserve(events.size());
  for (const auto& e : events) calls.push_back(e.rec);
  std::stable_sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) { return a.timestamp < b.timestamp; });
  w.append_mpi(calls);
  w.append_clock(clocks);
}

}  // namespace

MergeReport merge_files(const std::vector<std::string>& paths, const std::string& output, const MergeOptions& o) {
  std::vector<Input> in = open_ranks(paths, output, o.salvage);
  check_worlds(in, paths);
  for (std::size_t i = 0; i < in.size(); ++i) check_mpi_records(in[i], paths[i]);
  // The reference: rank 0 (the clock every rank measured itself against), else the first file.
  std::size_t ref = 0;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (in[i].rank == 0) ref = i;
  const tracefile::FileHeader& rh = in[ref].reader->header();
  MergeReport rep;
  check_complete(in, paths, o, rep);
  rep.clock_hz = rh.clock_hz;
  for (auto& x : in) {
    const auto& h = x.reader->header();
    x.map = o.align ? ClockMap::build(plausible_offsets(x, rh, &rep.warnings), h.clock_hz, rh.clock_hz, h, rh)
                    : ClockMap::identity();
    if (o.align && &x != &in[ref] && one_tsc(*x.reader, *in[ref].reader)) x.map = ClockMap::identity();
  }

  std::vector<MpiEvent> events;
  const ClcResult corr = correct_mpi(in, o, rep, events);
  std::uint64_t names_lost = 0;
  const std::vector<record::NameRecord> names = merged_names(in, names_lost);
  tracefile::FileHeader h = tracefile::make_header();
  tracefile::copy_time_base(h, rh);  // one conversion: the reference rank's (its ticks are the timeline)
  h.clock_flags |= tracefile::kClockMerged;
  h.start_ticks = rh.start_ticks;
  h.start_realtime_ns = rh.start_realtime_ns;
  h.node = 0;
  h.origin = rh.origin;
  h.filter = rh.filter;
  std::memcpy(h.counter_names, rh.counter_names, sizeof h.counter_names);
  tracefile::set_program(h, o.program);
  tracefile::Writer w(output, h, o.compress_level, o.compress_threads);

  rep.late = SampleMerge(in, corr, w).run();
  std::vector<tracefile::LaneEntry> lanes;
  write_annex(in, paths, rh.clock_hz, corr, events, h, lanes, rep, w);
  h.late = rep.late;
  h.flags |= tracefile::kFlagTimeOrdered;
  h.names_lost = names_lost;
  h.mpi_rank = tracefile::kMergedRank;
  h.mpi_world_size = static_cast<std::uint32_t>(in.size());
  h.merge_flags =
      tracefile::kMergeMerged | (o.align ? tracefile::kMergeAligned : 0u) | (o.clc ? tracefile::kMergeClc : 0u);
  h.violations_found = static_cast<std::uint32_t>(std::min<std::uint64_t>(rep.violations_found, 0xffffffffu));
  h.violations_left = static_cast<std::uint32_t>(std::min<std::uint64_t>(rep.violations_left, 0xffffffffu));
  h.max_correction = rep.max_correction;
  w.finish(h, lanes, names);
  rep.samples = w.samples();
  return rep;
}

}  // namespace kron::merge
