// kron top's screen model (model.hpp): the Watcher that reads a live board into frames.
#include "top/model.hpp"

#include <signal.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>

#include "analysis/hist.hpp"
#include "kron/core/codec.hpp"
#include "kron/board.hpp"
#include "kron/core/record.hpp"
#include "kron/core/stats.hpp"
#include "recorder/stats_reader.hpp"

namespace kron::top {

struct Watcher::Scope {
  analysis::Stats window, total;
};

namespace {

std::uint64_t thread_key(std::uint32_t source, std::uint32_t tid) { return std::uint64_t{source} << 32 | tid; }

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

double per_s(std::uint64_t now, std::uint64_t before, double dt) {
  return now > before && dt > 0 ? double(now - before) / dt : 0.0;  // a counter read lower (a lane freed): 0
}

bool alive(std::uint32_t pid) { return pid && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

// The command line of a running process, its words joined by spaces ("" when it is gone or unreadable).
std::string cmdline(std::uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && s.back() == '\0') s.pop_back();
  std::replace(s.begin(), s.end(), '\0', ' ');
  return s;
}

// ERRATUM E431: a thread's time on a CPU, ns, from /proc/PID/task/TID/schedstat (its first field, the
// scheduler's own sum); ~0 when the thread is gone or the kernel has no schedstat.
std::uint64_t oncpu_ns(std::uint32_t pid, std::uint32_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/schedstat");
  std::uint64_t ns = 0;
  return in >> ns ? ns : ~std::uint64_t{0};
}

// The value at quantile q of a matcher histogram (nearest rank, the bucket's upper bound clamped to
// [min, max], as analysis::percentile does for the board's histograms: ERRATUM E184).
std::uint64_t quantile(const analysis::Stats& s, double q) {
  if (!s.count || !s.hist) return 0;
  const auto rank = static_cast<std::uint64_t>(std::ceil(q * double(s.count)));
  std::uint64_t seen = 0;
  for (unsigned b = 0; b < analysis::Histogram::kBuckets; ++b)
    if ((seen += s.hist->counts[b]) >= rank) return std::clamp(analysis::Histogram::upper(b), s.min, s.max);
  return s.max;
}

// A small bar chart of a histogram: the buckets from the lowest to the highest holding values, in
// kBars groups, each a character of kLevels by its share of the fullest group.
std::string bars(const analysis::LatencyHistogram& h) {
  constexpr unsigned kBars = 16;
  constexpr const char kLevels[] = " .:-=+*#@";
  unsigned lo = stats::kHistBuckets, hi = 0;
  for (unsigned b = 0; b < stats::kHistBuckets; ++b)
    if (h.buckets[b]) lo = std::min(lo, b), hi = b;
  if (lo > hi) return {};
  std::array<std::uint64_t, kBars> g{};
  const unsigned span = hi - lo + 1;
  for (unsigned b = lo; b <= hi; ++b) g[std::size_t{b - lo} * kBars / span] += h.buckets[b];
  const std::uint64_t top = *std::max_element(g.begin(), g.end());
  std::string out;
  const unsigned used = std::min(span, kBars);
  for (unsigned i = 0; i < kBars; ++i) {
    if (span < kBars && i >= used) break;
    const std::uint64_t v = span < kBars ? g[std::size_t{i} * kBars / span] : g[i];
    const auto level = v ? 1 + static_cast<unsigned>(double(v) * 7.999 / double(top)) : 0u;
    out += kLevels[level];
  }
  return out;
}

}  // namespace

const char* sort_name(SortKey k) {
  switch (k) {
    case SortKey::Rate: return "count/s";
    case SortKey::Mean: return "mean";
    case SortKey::P50: return "p50";
    case SortKey::P99: return "p99";
    case SortKey::Max: return "max";
    case SortKey::Name: return "name";
  }
  return "?";
}

Watcher::Watcher(WatchOptions o) : o_(std::move(o)), start_(std::chrono::steady_clock::now()), last_(start_) {
  // Named scopes only (no interval.info), paired per thread by the matcher; every pair reaches
  // on_interval with its site id, so scopes whose names arrive later still count (ERRATUM E152's nesting).
  matcher_ = std::make_unique<analysis::Matcher>(analysis::IntervalInfo{}, analysis::RptOptions{}, ~std::uint64_t{0});
  matcher_->on_interval = [this](const analysis::Occurrence& occ) {
    auto& s = scopes_[occ.name_id];
    if (!s) s = std::make_unique<Scope>();
    s->window.add(occ.duration, true);
    s->total.add(occ.duration, true);
  };
}

Watcher::~Watcher() = default;

void Watcher::attach(const recorder::BoardReader& r) {
  us_per_tick_ = r.geo().clock_hz ? 1e6 / double(r.geo().clock_hz) : 0.0;
  phased_ = r.geo().minor >= 2;
  if (o_.program.empty()) o_.program = r.program();
  first_ = o_.read_only;  // kron top -- PROGRAM made the board: every count started within the watch
}

void Watcher::feed(const recorder::LaneView&, std::span<const std::uint8_t> recs, std::uint64_t n) {
  fed_ += n;
  if (recs.size() < sizeof(record::TraceRecord)) return;
  // One lane is one thread, its records in its order: the thread's phase and youngest timestamp are its
  // last record's. The drain's thread runs this for every record it takes: per record only the header's
  // flags and size are read, and a record is decoded only when it is a named scope's begin or end.
  std::size_t last = 0;
  constexpr std::uint8_t kScope = kFlagScopeBegin | kFlagScopeEnd;
  for (std::size_t off = 0; off + sizeof(record::TraceRecord) <= recs.size();
       off += record::size_at(recs.data() + off)) {
    last = off;
    std::uint8_t flags;
    std::memcpy(&flags, recs.data() + off + offsetof(record::RecordHeader, flags), 1);
    if (!(flags & kFlagNamed) || !(flags & kScope)) continue;
    matcher_->feed(codec::decode(recs.data() + off, phased_));
  }
  const Sample t = codec::decode(recs.data() + last, phased_);
  LaneMemo& m = lanes_[thread_key(t.source, t.thread)];
  m.source = t.source, m.tid = t.thread;
  m.phase = t.phase;
  m.last_ts = std::max(m.last_ts, t.timestamp);
}

void Watcher::feed_snapshot(recorder::BoardReader& r) {
  r.snapshot([&](const recorder::LaneView& v, std::span<const std::uint8_t> recs, std::uint64_t) {
    LaneMemo& m = lanes_[thread_key(v.source, v.tid)];
    m.source = v.source, m.tid = v.tid;
    // ERRATUM E430: what a lane held when kron top first met it is history, not this refresh; after that,
    // the records younger than the youngest seen (a lane's records are in its thread's time order).
    std::size_t from = 0;
    std::uint64_t n = 0;
    for (std::size_t off = 0; off + sizeof(record::TraceRecord) <= recs.size();
         off += record::size_at(recs.data() + off)) {
      const std::uint64_t ts = record::timestamp_at(recs.data() + off);
      if (m.seen && ts <= m.last_ts)
        from = off + record::size_at(recs.data() + off);
      else if (!m.seen)
        m.last_ts = std::max(m.last_ts, ts);
      else
        ++n;
    }
    if (!m.seen) {
      m.seen = true;
      return;
    }
    if (n) feed(v, recs.subspan(from), n);
  });
}

void Watcher::take_names(const recorder::BoardReader& r) {
  const auto all = r.names();
  if (all.size() == names_seen_) return;
  names_ = tracefile::NameTable{};
  for (const auto& n : all) names_.add(n);
  names_seen_ = all.size();
}

Frame Watcher::frame(recorder::BoardReader& r, SortKey sort, bool totals, const std::string& filter) {
  const auto now = std::chrono::steady_clock::now();
  const double dt = seconds(now - last_);
  last_ = now;
  take_names(r);
  Frame f;
  f.header.program = o_.program;
  f.header.board = r.label().starts_with("board ") ? r.label().substr(6) : r.label();
  f.header.read_only = o_.read_only;
  f.header.elapsed_s = seconds(now - start_);
  f.header.interval_s = dt;
  f.sched = o_.sched;
  rows_of_lanes(r, f, dt);
  rows_of_stats(r, f, dt);
  rows_of_scopes(f, dt, sort, totals, filter);
  for (auto& [id, s] : scopes_) s->window = analysis::Stats{};
  for (const auto& p : r.problems()) f.notes.push_back(p);
  first_ = false;
  return f;
}

void Watcher::rows_of_lanes(recorder::BoardReader& r, Frame& f, double dt) {
  Header& h = f.header;
  const recorder::Totals t = r.totals();
  const auto pool = r.pool();
  h.fill = pool.blocks ? double(pool.blocks - std::min(pool.free, pool.blocks)) / double(pool.blocks) : 0.0;
  h.passed = t.passed;
  h.lost = t.overruns + t.overwritten;
  h.drainer_pid = r.header().drainer_pid.load(std::memory_order_relaxed);
  std::uint64_t drained = 0;
  std::map<std::uint32_t, ProcessRow> procs;
  std::vector<std::uint64_t> present;
  for (const recorder::LaneView& v : r.lanes()) {
    if (v.state == board::LaneState::Free && !v.written) continue;
    drained += v.drained;
    LaneMemo& m = lanes_[thread_key(v.source, v.tid)];
    // A lane met after the first frame is new since the last one: all it passed came in this refresh.
    const bool fresh = first_;
    ThreadRow row;
    row.pid = board::source_pid(v.source);
    row.node = board::source_node(v.source);
    row.tid = v.tid;
    row.name = std::string(names_.thread(v.source, v.tid));
    row.phase = m.phase;
    row.sample_rate = fresh ? 0.0 : per_s(v.passed, m.passed, dt);
    static constexpr const char* kStates[] = {"free", "claiming", "active", "retired"};
    row.state = v.owner_dead ? "dead" : kStates[static_cast<unsigned>(v.state) & 3];
    if (o_.sched) {
      const std::uint64_t ns = oncpu_ns(row.pid, row.tid);
      if (ns != ~std::uint64_t{0} && !fresh && m.oncpu_ns && dt > 0 && ns >= m.oncpu_ns)
        row.oncpu = double(ns - m.oncpu_ns) / (dt * 1e9);
      m.oncpu_ns = ns == ~std::uint64_t{0} ? 0 : ns;
    }
    m.source = v.source, m.tid = v.tid, m.passed = v.passed;
    present.push_back(thread_key(v.source, v.tid));
    ProcessRow& p = procs[v.source];
    p.pid = row.pid, p.node = row.node;
    ++p.threads;
    p.sample_rate += row.sample_rate;
    f.threads.push_back(std::move(row));
  }
  ended_threads(f, procs, present);
  for (auto& [source, p] : procs) {
    p.ended = !alive(p.pid);
    std::string& known = programs_[p.pid];
    if (!p.ended) known = cmdline(p.pid);
    p.program = !known.empty() ? known : std::string(names_.thread(source, p.pid));
    if (p.program.empty()) p.program = o_.read_only ? "?" : o_.program;  // kron top -- PROGRAM started it
    f.processes.push_back(std::move(p));
  }
  h.sample_rate = first_ ? 0.0 : per_s(t.passed, passed_before_, dt);
  h.loss_rate = first_ ? 0.0 : per_s(h.lost, lost_before_, dt);
  h.drain_rate = first_ ? 0.0 : o_.read_only ? per_s(drained, drained_before_, dt) : per_s(fed_, fed_before_, dt);
  passed_before_ = t.passed, lost_before_ = h.lost, drained_before_ = drained, fed_before_ = fed_;
}

void Watcher::ended_threads(Frame& f, std::map<std::uint32_t, ProcessRow>& procs, std::vector<std::uint64_t>& present) {
  // A thread seen (a lane, or its records) whose lane is gone now (it ended, its records drained) is shown once,
  // as ended, so that the last frame of a program still names its threads; then forgotten.
  std::sort(present.begin(), present.end());
  for (auto it = lanes_.begin(); it != lanes_.end();) {
    const LaneMemo& m = it->second;
    if (std::binary_search(present.begin(), present.end(), it->first)) {
      ++it;
      continue;
    }
    ThreadRow row;
    row.pid = board::source_pid(m.source);
    row.node = board::source_node(m.source);
    row.tid = m.tid;
    row.name = std::string(names_.thread(m.source, m.tid));
    row.phase = m.phase;
    row.state = "ended";
    ProcessRow& p = procs[m.source];
    p.pid = row.pid, p.node = row.node;
    ++p.threads;
    f.threads.push_back(std::move(row));
    it = lanes_.erase(it);
  }
}

void Watcher::rows_of_stats(recorder::BoardReader& r, Frame& f, double dt) {
  if (r.geo().minor < 2 || !r.geo().stat_cells) {
    f.has_stats = false;
    return;
  }
  const recorder::BoardStats s = recorder::read_board_stats(r.mapping(), board::ticks(r.geo().clock_kind));
  analysis::SnapshotSum sum;
  sum.add(s.records);
  const analysis::SnapshotTotals m = sum.result();
  for (const auto& [name, phases] : m.hists)
    for (const auto& [phase, hist] : phases) {
      const analysis::LatencySummary ls = analysis::summarize(hist);
      HistRow row;
      row.name = name;
      row.phase = phase;
      row.count = ls.count;
      std::uint64_t& before = hist_before_[name + "/" + std::to_string(phase)];
      row.rate = first_ ? 0.0 : per_s(ls.count, before, dt);
      before = ls.count;
      row.p50_us = double(ls.p50) * us_per_tick_;
      row.p99_us = double(ls.p99) * us_per_tick_;
      row.p999_us = double(ls.p999) * us_per_tick_;
      row.bars = bars(hist);
      f.hists.push_back(std::move(row));
    }
  std::map<std::uint32_t, std::uint64_t> vc;
  for (const auto& [phase, cs] : m.counters)
    for (const auto& [i, v] : cs) vc[i] += v;
  for (const auto& [i, v] : vc) {
    std::uint64_t& before = counter_before_[i];
    f.counters.push_back(CounterRow{i, v, first_ ? 0.0 : per_s(v, before, dt)});
    before = v;
  }
  for (const auto& p : s.problems) f.notes.push_back(p);
  if (s.stat_lost) f.notes.push_back(std::to_string(s.stat_lost) + " histogram or counter values found no cell");
}

void Watcher::rows_of_scopes(Frame& f, double dt, SortKey sort, bool totals, const std::string& filter) const {
  f.sort = sort, f.totals = totals, f.filter = filter;
  const double span = totals ? seconds(last_ - start_) : dt;
  for (const auto& [id, sc] : scopes_) {
    const record::NameRecord* site = names_.site(id);
    std::string name =
        site ? std::string(site->name, strnlen(site->name, sizeof site->name)) : "#" + std::to_string(id);
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    const analysis::Stats& s = totals ? sc->total : sc->window;
    ScopeRow row;
    row.name = std::move(name);
    row.count = s.count;
    row.rate = span > 0 ? double(s.count) / span : 0.0;
    row.mean_us = s.mean() * us_per_tick_;
    row.p50_us = double(quantile(s, 0.50)) * us_per_tick_;
    row.p99_us = double(quantile(s, 0.99)) * us_per_tick_;
    row.max_us = double(s.count ? s.max : 0) * us_per_tick_;
    f.scopes.push_back(std::move(row));
  }
  auto key = [sort](const ScopeRow& r) {
    switch (sort) {
      case SortKey::Mean: return r.mean_us;
      case SortKey::P50: return r.p50_us;
      case SortKey::P99: return r.p99_us;
      case SortKey::Max: return r.max_us;
      default: return r.rate;
    }
  };
  std::stable_sort(f.scopes.begin(), f.scopes.end(), [&](const ScopeRow& a, const ScopeRow& b) {
    return sort == SortKey::Name ? a.name < b.name : key(a) > key(b);
  });
}

}  // namespace kron::top
