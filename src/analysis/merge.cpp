// kron merge (merge.hpp): alignment, matching, the controlled logical clock and the streaming k-way merge.
#include "analysis/merge.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <queue>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "kron/core/error.hpp"

namespace kron::analysis {

using record::ClockOffsetRecord;
using record::MpiCall;
using record::MpiRecord;

// ---- ClockMap (ERRATUM E205) -------------------------------------------------------------------------
namespace {
double rate_of(std::uint64_t local_hz, std::uint64_t ref_hz) {
  return local_hz && ref_hz ? double(ref_hz) / double(local_hz) : 1.0;
}
std::uint64_t add_signed(std::uint64_t base, double d) {
  return base + static_cast<std::uint64_t>(static_cast<std::int64_t>(std::llround(d)));
}
}  // namespace

ClockMap ClockMap::build(std::span<const ClockOffsetRecord> offsets, std::uint64_t local_hz, std::uint64_t ref_hz,
                         const tracefile::FileHeader& local, const tracefile::FileHeader& ref) {
  ClockMap m;
  m.rate_ = rate_of(local_hz, ref_hz);
  std::vector<Point> p;
  p.reserve(offsets.size());
  for (const auto& o : offsets) p.push_back({o.timestamp, o.reference, o.rtt});
  // A measurement whose best round trip was long (the rank or rank 0 preempted during all its ping-pongs)
  // is known only to within that rtt / 2: one over 4 times the rank's smallest round trip is dropped, so
  // that it cannot bend the line between good ones (ERRATUM E205); the best one always stays. (Over 4
  // times the median was not enough: with more ranks than cores most exchanges of a rank can be
  // preempted, and the median with them.)
  if (p.size() > 2) {
    std::uint64_t best = ~std::uint64_t{0};
    for (const Point& q : p) best = std::min(best, q.rtt);
    std::erase_if(p, [&](const Point& q) { return q.rtt > 4 * best && q.rtt != best; });
  }
  std::sort(p.begin(), p.end(), [](const Point& a, const Point& b) { return a.local < b.local; });
  // Strictly increasing in both clocks: a measurement that would make time run backwards (or stand
  // still) is dropped; of two at one local time the one with the smaller round trip is kept.
  for (const Point& q : p) {
    if (!m.points_.empty() && q.local == m.points_.back().local) {
      if (q.rtt < m.points_.back().rtt) m.points_.back() = q;
      continue;
    }
    if (!m.points_.empty() && q.reference <= m.points_.back().reference) continue;
    m.points_.push_back(q);
  }
  if (m.points_.size() >= 2) {  // a later drop may have broken the order of an earlier kept pair
    std::vector<Point> ok{m.points_.front()};
    for (std::size_t i = 1; i < m.points_.size(); ++i)
      if (m.points_[i].reference > ok.back().reference) ok.push_back(m.points_[i]);
    m.points_ = std::move(ok);
  }
  if (m.points_.empty()) {
    // No measurement (a file that is not an MPI recording): the files' start times, CLOCK_REALTIME apart.
    const double real_diff_ticks =
        double(std::int64_t(local.start_realtime_ns - ref.start_realtime_ns)) * 1e-9 * double(ref_hz ? ref_hz : 1);
    m.points_.push_back({local.start_ticks, add_signed(ref.start_ticks, real_diff_ticks), 0});
    m.measured_ = false;
  }
  return m;
}

ClockMap ClockMap::identity() {
  ClockMap m;
  m.rate_ = 1.0;
  m.points_.push_back({0, 0, 0});
  m.measured_ = false;
  return m;
}

std::uint64_t ClockMap::operator()(std::uint64_t t) const {
  const std::size_t n = points_.size();
  if (n == 1) {  // a constant offset (rates scaled), saturating at the ends of the range
    const Point& a = points_[0];
    const double d = double(t >= a.local ? t - a.local : a.local - t) * rate_;
    const std::uint64_t u = d < 1.8e19 ? static_cast<std::uint64_t>(d + 0.5) : ~std::uint64_t{0};
    return t >= a.local ? a.reference + std::min(u, ~std::uint64_t{0} - a.reference) : a.reference - std::min(u, a.reference);
  }
  // The segment holding t (the first or the last one, extended, outside the points).
  std::size_t i = hint_;
  if (!(i + 1 < n && points_[i].local <= t && t < points_[i + 1].local)) {
    const auto it = std::upper_bound(points_.begin(), points_.end(), t, [](std::uint64_t v, const Point& q) { return v < q.local; });
    i = it == points_.begin() ? 0 : static_cast<std::size_t>(it - points_.begin()) - 1;
    if (i + 1 >= n) i = n - 2;
    hint_ = i;
  }
  const Point& a = points_[i];
  const Point& b = points_[i + 1];
  const std::uint64_t dref = b.reference - a.reference;
  const double slope = double(dref) / double(b.local - a.local);
  if (t >= a.local) {  // inside the segment, or after the last point: never below a, inside never past b
    double d = double(t - a.local) * slope;
    if (t <= b.local) d = std::min(d, double(dref));
    const std::uint64_t u = d < 1.8e19 ? static_cast<std::uint64_t>(d + 0.5) : ~std::uint64_t{0};
    const std::uint64_t up = t <= b.local ? std::min(u, dref) : std::max(u, dref);
    return a.reference + std::min(up, ~std::uint64_t{0} - a.reference);  // saturates: never wraps
  }
  const double d = double(a.local - t) * slope;  // before the first point
  const std::uint64_t u = d < 1.8e19 ? static_cast<std::uint64_t>(d + 0.5) : ~std::uint64_t{0};
  return a.reference - std::min(u, a.reference);
}

double ClockMap::drift() const {
  if (points_.size() < 2) return 0;
  const Point& a = points_.front();
  const Point& b = points_.back();
  return double(b.reference - a.reference) / double(b.local - a.local) / rate_ - 1.0;
}

double ClockMap::drift_uncertainty() const {
  if (points_.size() < 2) return 0;
  const Point& a = points_.front();
  const Point& b = points_.back();
  // Each end's offset is known to within its rtt / 2 (E204): the slope between them to within their sum
  // over the time between them.
  return (double(a.rtt) / 2 + double(b.rtt) / 2) / double(b.local - a.local);
}

// ---- Matching (ERRATUM E208) -------------------------------------------------------------------------
namespace {
using Key = std::tuple<std::uint32_t, std::int32_t, std::uint32_t, std::int32_t>;  // sender, receiver, comm, tag

enum class Role { None, Sender, Receiver, Both };
// Who a collective's end waits for (E206): every member's entry, or the root's; whose end it is.
Role collective_role(MpiCall c, bool root) {
  switch (c) {
    case MpiCall::Bcast:
    case MpiCall::Scatter:
      return root ? Role::Both : Role::Receiver;
    case MpiCall::Reduce:
    case MpiCall::Gather:
      return root ? Role::Both : Role::Sender;
    default:
      return Role::Both;  // Barrier, Allreduce, Allgather, Alltoall: everyone's data reaches everyone
  }
}
bool sends(Role r) { return r == Role::Sender || r == Role::Both; }
bool receives(Role r) { return r == Role::Receiver || r == Role::Both; }
Role role_of(const MpiRecord& r) { return collective_role(r.call, r.peer >= 0 && std::uint32_t(r.peer) == r.rank); }
}  // namespace

Matching match_messages(std::span<const MpiEvent> events) {
  Matching m;
  std::map<Key, std::vector<std::size_t>> send_q, recv_q;
  std::map<std::pair<std::uint32_t, std::int32_t>, std::vector<std::size_t>> coll;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const MpiRecord& r = events[i].rec;
    if (record::mpi_is_send(r.call))
      send_q[{r.rank, r.peer, r.comm, r.tag}].push_back(i);
    else if (record::mpi_is_recv(r.call))
      recv_q[{static_cast<std::uint32_t>(r.peer), static_cast<std::int32_t>(r.rank), r.comm, r.tag}].push_back(i);
    else if (record::mpi_is_collective(r.call))
      coll[{r.comm, r.tag}].push_back(i);
  }
  auto by_post = [&](std::size_t a, std::size_t b) {
    return std::tie(events[a].rec.timestamp, a) < std::tie(events[b].rec.timestamp, b);
  };
  for (auto& [key, sq] : send_q) {
    std::stable_sort(sq.begin(), sq.end(), by_post);
    auto f = recv_q.find(key);
    std::size_t n = 0;
    if (f != recv_q.end()) {
      std::stable_sort(f->second.begin(), f->second.end(), by_post);
      n = std::min(sq.size(), f->second.size());
      for (std::size_t k = 0; k < n; ++k) m.pairs.emplace_back(sq[k], f->second[k]);
      m.unmatched_recvs += f->second.size() - n;
      recv_q.erase(f);
    }
    m.unmatched_sends += sq.size() - n;
  }
  for (auto& [key, rq] : recv_q) m.unmatched_recvs += rq.size();
  for (auto& [key, members] : coll) {
    // One record per member: a communicator id shared by two communicators of the same members
    // (E203) is told apart only by the sequence numbers, so a duplicate member ends the instance.
    std::sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) { return events[a].rec.rank < events[b].rec.rank; });
    const bool dup = std::adjacent_find(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
                       return events[a].rec.rank == events[b].rec.rank;
                     }) != members.end();
    if (dup || members.size() != events[members.front()].rec.comm_size) ++m.incomplete_collectives;
    if (!dup) m.collectives.push_back(std::move(members));
  }
  return m;
}

std::uint64_t count_violations(std::span<const MpiEvent> events, const Matching& m) {
  std::uint64_t v = 0;
  for (const auto& [s, r] : m.pairs)
    if (events[r].rec.end < events[s].rec.timestamp) ++v;
  for (const auto& inst : m.collectives) {
    std::uint64_t last_in = 0;
    for (std::size_t i : inst)
      if (sends(role_of(events[i].rec))) last_in = std::max(last_in, events[i].rec.timestamp);
    for (std::size_t i : inst)
      if (receives(role_of(events[i].rec)) && events[i].rec.end < last_in) ++v;
  }
  return v;
}

// ---- The controlled logical clock (ERRATUM E206) ------------------------------------------------------
namespace {
std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? ~std::uint64_t{0} : r;
}
}  // namespace

std::uint64_t Correction::delta_at(std::uint64_t t, std::size_t& cursor) const {
  if (steps.empty() || t < steps.front().first) return 0;
  if (cursor >= steps.size() || steps[cursor].first > t) {  // a query back in time: search
    cursor = static_cast<std::size_t>(std::upper_bound(steps.begin(), steps.end(), t,
                                                       [](std::uint64_t v, const auto& s) { return v < s.first; }) -
                                      steps.begin()) - 1;
  }
  while (cursor + 1 < steps.size() && steps[cursor + 1].first <= t) ++cursor;
  const auto& [at, d] = steps[cursor];
  const double faded = fade * double(t - at);
  if (faded >= double(d)) return 0;
  const std::uint64_t f = faded < 1.8e19 ? static_cast<std::uint64_t>(faded) : d;
  return d - std::min(f, d);
}

ClcResult clc(std::vector<MpiEvent>& events, const Matching& m, std::size_t inputs, double gamma) {
  ClcResult res;
  res.per_input.resize(inputs);
  gamma = std::clamp(gamma, 0.0, 1.0);
  for (auto& c : res.per_input) c.fade = 1.0 - gamma;
  // Nodes: each event's begin (2i) and end (2i + 1), per input in time order.
  const std::size_t n = events.size();
  std::vector<std::vector<std::size_t>> order(inputs);
  for (std::size_t i = 0; i < n; ++i) {
    if (events[i].input >= inputs) continue;
    order[events[i].input].push_back(2 * i);
    order[events[i].input].push_back(2 * i + 1);
  }
  auto time_of = [&](std::size_t node) { return node & 1 ? events[node / 2].rec.end : events[node / 2].rec.timestamp; };
  for (auto& o : order)
    std::stable_sort(o.begin(), o.end(), [&](std::size_t a, std::size_t b) { return time_of(a) < time_of(b); });
  // What an end node waits for: the begin nodes of its send, or of its collective's senders.
  std::vector<std::vector<std::size_t>> deps(n);
  for (const auto& [s, r] : m.pairs) deps[r].push_back(2 * s);
  for (const auto& inst : m.collectives)
    for (std::size_t i : inst)
      if (receives(role_of(events[i].rec)))
        for (std::size_t j : inst)
          if (j != i && sends(role_of(events[j].rec))) deps[i].push_back(2 * j);
  std::vector<std::uint64_t> corrected(2 * n, 0);
  std::vector<char> done(2 * n, 0);
  std::vector<std::size_t> cursor(inputs, 0);
  std::vector<std::uint64_t> prev_a(inputs, 0), prev_c(inputs, 0);
  std::vector<char> has_prev(inputs, 0);
  auto ready = [&](std::size_t node) {
    if (!(node & 1)) return true;
    for (std::size_t d : deps[node / 2])
      if (!done[d]) return false;
    return true;
  };
  for (;;) {
    std::size_t pick = inputs;
    bool pick_ready = false;
    for (std::size_t in = 0; in < inputs; ++in) {
      if (cursor[in] >= order[in].size()) continue;
      const std::size_t node = order[in][cursor[in]];
      const bool r = ready(node);
      if (pick == inputs || (r && !pick_ready) ||
          (r == pick_ready && time_of(node) < time_of(order[pick][cursor[pick]]))) {
        pick = in;
        pick_ready = r;
      }
    }
    if (pick == inputs) break;
    if (!pick_ready) ++res.forced;  // a dependency cycle (a mismatched pair): taken in time order
    const std::size_t node = order[pick][cursor[pick]++];
    const std::uint64_t a = time_of(node);
    std::uint64_t c = a;
    if (has_prev[pick]) {
      // The distance to the event before, shrunk by at most (1 - gamma) of it (forward amortization).
      const std::uint64_t gap = a - prev_a[pick];
      const double shrink = double(gap) * (1.0 - gamma);
      const std::uint64_t keep = gap - std::min<std::uint64_t>(gap, shrink < 1.8e19 ? static_cast<std::uint64_t>(shrink) : gap);
      c = std::max(c, sat_add(prev_c[pick], keep));
    }
    if (node & 1)
      for (std::size_t d : deps[node / 2])
        if (done[d]) c = std::max(c, corrected[d]);
    corrected[node] = c;
    done[node] = 1;
    has_prev[pick] = 1;
    prev_a[pick] = a;
    prev_c[pick] = c;
    Correction& corr = res.per_input[pick];
    std::size_t cur = corr.steps.empty() ? 0 : corr.steps.size() - 1;
    const std::uint64_t decayed = corr.delta_at(a, cur);
    if (c - a != decayed) corr.steps.emplace_back(a, c - a);
    if (c > a) ++res.events_moved;
    res.max_correction = std::max(res.max_correction, c - a);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!done[2 * i]) continue;
    events[i].rec.timestamp = corrected[2 * i];
    events[i].rec.end = std::max(corrected[2 * i + 1], corrected[2 * i]);
  }
  return res;
}

// ---- kron rpt's message rows (ERRATUM E210) ------------------------------------------------------------
std::vector<MessageRow> message_rows(std::span<const MpiEvent> events, const Matching& m, bool histograms) {
  std::vector<MessageRow> rows;
  if (m.pairs.empty() && m.unmatched_sends == 0 && m.unmatched_recvs == 0) return rows;
  std::uint32_t world = 0;
  for (const auto& e : events) world = std::max(world, e.rec.rank + 1);
  const bool per_pair = world <= 16;
  std::map<std::pair<std::uint32_t, std::uint32_t>, Stats> pairs;
  MessageRow all{"MPI messages (all)", {}};
  for (const auto& [si, ri] : m.pairs) {
    const MpiRecord& s = events[si].rec;
    const MpiRecord& r = events[ri].rec;
    Stats* p = per_pair ? &pairs[{s.rank, r.rank}] : nullptr;
    if (r.end < s.timestamp) {
      ++all.stats.unmatched_ends;
      if (p) ++p->unmatched_ends;
      continue;
    }
    all.stats.add(r.end - s.timestamp, histograms);
    if (p) p->add(r.end - s.timestamp, histograms);
  }
  all.stats.unmatched_starts += m.unmatched_sends;
  all.stats.unmatched_ends += m.unmatched_recvs;
  for (auto& [k, st] : pairs)
    rows.push_back({"MPI message " + std::to_string(k.first) + "->" + std::to_string(k.second), std::move(st)});
  rows.push_back(std::move(all));
  return rows;
}

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
      throw InputError::at_offset(path, offsetof(tracefile::FileHeader, mpi_rank),
                                  which + " is of rank " + std::to_string(r.rank) + ", the file of rank " +
                                      std::to_string(h.mpi_rank));
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
  const double rate = rate_of(h.clock_hz, rh.clock_hz);
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

}  // namespace

MergeReport merge_files(const std::vector<std::string>& paths, const std::string& output, const MergeOptions& o) {
  if (paths.empty()) throw std::runtime_error("kron merge: no input files");
  for (const auto& p : paths) {  // the writer would truncate an input it is reading
    std::error_code ec;
    if (std::filesystem::exists(output, ec) && std::filesystem::equivalent(p, output, ec))
      throw std::runtime_error("kron merge: the output " + output + " is one of the inputs");
  }
  std::vector<Input> in(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    in[i].reader = std::make_unique<tracefile::Reader>(paths[i], tracefile::ReadOptions{o.salvage});
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
  }

  // MPI calls on the common timeline, matched, checked and corrected.
  std::vector<MpiEvent> events;
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

  // Names: sites get new ids (each rank's board numbered its own), threads and nodes are kept.
  std::vector<record::NameRecord> names;
  std::unordered_map<std::string, std::uint16_t> site_ids;
  std::uint64_t names_lost = 0;
  for (auto& x : in) {
    names_lost += x.reader->header().names_lost;
    for (const auto& r : x.reader->names()) {
      if (r.name_kind != record::NameKind::Scope && r.name_kind != record::NameKind::Event) {
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

  tracefile::FileHeader h = tracefile::make_header();
  h.clock_hz = rh.clock_hz;
  h.start_ticks = rh.start_ticks;
  h.start_realtime_ns = rh.start_realtime_ns;
  h.node = 0;
  h.origin = rh.origin;
  h.filter = rh.filter;
  std::memcpy(h.counter_names, rh.counter_names, sizeof h.counter_names);
  tracefile::set_program(h, o.program);
  tracefile::Writer w(output, h, o.compress_level);

  // The k-way merge: each input's next sample, on the common timeline; the smallest found by a scan of
  // the heads for a few inputs, by a min-heap for many. Records are encoded into a staging buffer written
  // a megabyte at a time.
  using Head = std::pair<std::uint64_t, std::size_t>;  // (time, input)
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heap;
  std::vector<std::uint8_t> stage(std::size_t{1} << 20);
  std::size_t staged = 0;
  std::uint64_t staged_count = 0;
  auto put = [&](const Sample& s) {
    if (staged + sizeof(record::ResourceRecord) > stage.size()) {
      w.append_records(std::span(stage.data(), staged), staged_count);
      staged = 0;
      staged_count = 0;
    }
    if (!s.is_resource()) [[likely]] {
      record::TraceRecord t;
      t.h = {record::RecordKind::Trace, sizeof(record::TraceRecord), s.flags, s.group, s.cpu};
      t.source = s.source;
      t.thread = s.thread;
      t.timestamp = s.timestamp;
      t.data = s.data;
      std::memcpy(stage.data() + staged, &t, sizeof t);
      staged += sizeof t;
    } else {
      staged += tracefile::to_record(s, std::span<std::uint8_t, sizeof(record::ResourceRecord)>(stage.data() + staged,
                                                                                                 sizeof(record::ResourceRecord)));
    }
    ++staged_count;
  };
  auto fill = [&](std::size_t i) -> bool {
    Input& x = in[i];
    if (x.pos < x.n) return true;
    if (x.batch.empty()) x.batch.resize(kBatch);
    x.n = x.reader->next_batch(x.batch);
    x.pos = 0;
    for (std::size_t k = 0; k < x.n; ++k) {
      Sample& s = x.batch[k];
      const std::uint64_t a = x.map(s.timestamp);
      s.timestamp = sat_add(a, corr.per_input[i].delta_at(a, x.corr_cursor));
      if (s.flags & kFlagNamed) {
        const std::uint16_t id = record::name_id_of(s.data);
        const std::uint16_t nid = id < x.name_remap.size() && x.name_remap[id] ? x.name_remap[id] : record::kNoNameId;
        s.data = record::named_data(nid, record::named_value_of(s.data));
      }
    }
    return x.n > 0;
  };
  std::uint64_t last = 0;
  auto emit = [&](Input& x) {
    const Sample& s = x.batch[x.pos++];
    if (s.timestamp < last) ++rep.late;  // an input's own late records stay late (E33)
    last = std::max(last, s.timestamp);
    put(s);
  };
  constexpr std::size_t kScanInputs = 8;
  if (in.size() <= kScanInputs) {
    std::vector<std::size_t> live;
    for (std::size_t i = 0; i < in.size(); ++i)
      if (fill(i)) live.push_back(i);
    while (!live.empty()) {
      std::size_t best = 0;
      std::uint64_t bt = in[live[0]].batch[in[live[0]].pos].timestamp;
      for (std::size_t k = 1; k < live.size(); ++k) {
        const std::uint64_t t = in[live[k]].batch[in[live[k]].pos].timestamp;
        if (t < bt) bt = t, best = k;
      }
      Input& x = in[live[best]];
      emit(x);
      if (!fill(live[best])) live.erase(live.begin() + static_cast<std::ptrdiff_t>(best));
    }
  } else {
    for (std::size_t i = 0; i < in.size(); ++i)
      if (fill(i)) heap.emplace(in[i].batch[0].timestamp, i);
    while (!heap.empty()) {
      const std::size_t i = heap.top().second;
      heap.pop();
      emit(in[i]);
      if (fill(i)) heap.emplace(in[i].batch[in[i].pos].timestamp, i);
    }
  }
  if (staged) w.append_records(std::span(stage.data(), staged), staged_count);

  // Scheduling switches, MPI calls (corrected), clock-offset records (as measured, in each rank's clock).
  std::vector<record::SchedRecord> sched;
  std::vector<tracefile::LaneEntry> lanes;
  std::vector<ClockOffsetRecord> clocks;
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
    RankReport rr;
    rr.path = paths[i];
    rr.rank = x.rank;
    for (const auto& n : x.reader->names())
      if (n.name_kind == record::NameKind::Node) rr.node = std::string(n.name, strnlen(n.name, sizeof n.name));
    rr.samples = xh.samples;
    rr.mpi_records = x.reader->mpi_records().size();
    rr.points = x.reader->clock_offsets().empty() ? std::vector<ClockMap::Point>{} : x.map.points();
    rr.offset_ns = double(std::int64_t(x.map(xh.start_ticks) - xh.start_ticks)) * 1e9 / double(rh.clock_hz ? rh.clock_hz : 1);
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
    rep.passed_filter += xh.passed_filter;
    rep.overruns += xh.overruns;
    rep.overwritten += xh.overwritten;
    rep.ranks.push_back(std::move(rr));
  }
  std::stable_sort(sched.begin(), sched.end(), [](const auto& a, const auto& b) { return a.timestamp < b.timestamp; });
  w.append_sched(sched);
  std::vector<MpiRecord> calls;
  calls.reserve(events.size());
  for (const auto& e : events) calls.push_back(e.rec);
  std::stable_sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) { return a.timestamp < b.timestamp; });
  w.append_mpi(calls);
  w.append_clock(clocks);
  h.late = rep.late;
  h.flags |= tracefile::kFlagTimeOrdered;
  h.names_lost = names_lost;
  h.mpi_rank = tracefile::kMergedRank;
  h.mpi_world_size = static_cast<std::uint32_t>(in.size());
  h.merge_flags = tracefile::kMergeMerged | (o.align ? tracefile::kMergeAligned : 0u) | (o.clc ? tracefile::kMergeClc : 0u);
  h.violations_found = static_cast<std::uint32_t>(std::min<std::uint64_t>(rep.violations_found, 0xffffffffu));
  h.violations_left = static_cast<std::uint32_t>(std::min<std::uint64_t>(rep.violations_left, 0xffffffffu));
  h.max_correction = rep.max_correction;
  w.finish(h, lanes, names);
  rep.samples = w.samples();
  return rep;
}

}  // namespace kron::analysis
