#include "analysis/hist.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <cstring>
#include <nlohmann/json.hpp>

#include "kron/core/text.hpp"

namespace kron::analysis {

// ---- merging --------------------------------------------------------------------------------------------
// ERRATUM E349: counts read from a board or a file are untrusted: sums saturate at 2^64 - 1 and the
// histogram is marked, never wrapped to a small number.
namespace {
std::uint64_t sat_add(std::uint64_t a, std::uint64_t b, bool* saturated) {
  std::uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return *saturated = true, ~std::uint64_t{0};
  return r;
}
}  // namespace
std::uint64_t LatencyHistogram::count() const {
  std::uint64_t n = 0;
  bool over = false;
  for (const auto b : buckets) n = sat_add(n, b, &over);
  return n;
}
void LatencyHistogram::add(const LatencyHistogram& o) {
  saturated = saturated || o.saturated || o.count() == ~std::uint64_t{0};
  for (unsigned b = 0; b < stats::kHistBuckets; ++b) buckets[b] = sat_add(buckets[b], o.buckets[b], &saturated);
  sum = sat_add(sum, o.sum, &saturated);
  min = std::min(min, o.min);
  max = std::max(max, o.max);
}
void record_value(LatencyHistogram& h, std::uint64_t value) {
  ++h.buckets[stats::bucket_of(value)];
  h.sum += value;
  h.min = std::min(h.min, value);
  h.max = std::max(h.max, value);
}

std::uint64_t percentile(const LatencyHistogram& h, double q) {
  const std::uint64_t n = h.count();
  if (n == 0) return 0;
  const double r = std::ceil(q * static_cast<double>(n));
  const std::uint64_t rank = r < 1 ? 1 : r > static_cast<double>(n) ? n : static_cast<std::uint64_t>(r);
  std::uint64_t seen = 0;
  bool over = false;
  for (unsigned b = 0; b < stats::kHistBuckets; ++b) {
    seen = sat_add(seen, h.buckets[b], &over);
    if (seen >= rank) return std::clamp(stats::bucket_range(b).hi, h.min, std::max(h.min, h.max));
  }
  return h.max;
}

LatencySummary summarize(const LatencyHistogram& h) {
  LatencySummary s;
  s.count = h.count();
  if (!s.count) return s;
  s.min = h.min, s.max = h.max;
  s.mean = static_cast<double>(h.sum) / static_cast<double>(s.count);
  s.p50 = percentile(h, 0.5), s.p90 = percentile(h, 0.9), s.p99 = percentile(h, 0.99), s.p999 = percentile(h, 0.999);
  return s;
}

void SnapshotSum::add(std::span<const std::uint8_t> records) {
  for (std::size_t at = 0; at + sizeof(record::RecordHeader) <= records.size();) {
    record::RecordHeader h;
    std::memcpy(&h, records.data() + at, sizeof h);
    if (h.size < sizeof h || at + h.size > records.size()) break;  // validated before: not reached
    const std::uint8_t* p = records.data() + at;
    if (h.kind == record::RecordKind::HistSnapshot) {
      stats::HistSnapshotRecord s;
      std::memcpy(&s, p, sizeof s);
      LatencyHistogram x;
      for (unsigned k = 0; k < s.entries; ++k) {
        stats::HistEntry e;
        std::memcpy(&e, p + sizeof s + k * sizeof e, sizeof e);
        if (e.bucket < stats::kHistBuckets) x.buckets[e.bucket] = e.count;
      }
      x.sum = s.sum, x.min = s.min, x.max = s.max;
      // The last snapshot of a key is its total (snapshots are cumulative).
      hists_[HistKey{s.source, s.thread, s.hist, s.h.phase, std::string(s.name, strnlen(s.name, sizeof s.name))}] = x;
      ++snapshots_;
    } else if (h.kind == record::RecordKind::CounterSnapshot) {
      stats::CounterSnapshotRecord s;
      std::memcpy(&s, p, sizeof s);
      for (unsigned k = 0; k < s.entries; ++k) {
        stats::CounterEntry e;
        std::memcpy(&e, p + sizeof s + k * sizeof e, sizeof e);
        counters_[{thread_key(s.source, s.thread), std::uint64_t{s.h.phase} << 32 | e.index}] = e.value;
      }
      ++snapshots_;
    }
    at += h.size;
  }
}

SnapshotTotals SnapshotSum::result(const RankOf& rank_of) const {
  SnapshotTotals m;
  for (const auto& [k, h] : hists_) {
    const std::string name = k.name.empty() ? "#" + std::to_string(k.hist) : k.name;
    m.hists[name][k.phase].add(h);
    if (const auto r = rank_of ? rank_of(k.source) : std::nullopt) m.rank_hists[name][*r][k.phase].add(h);
  }
  std::set<std::string> over;
  for (const auto& [name, phases] : m.hists) {
    LatencyHistogram all;
    for (const auto& [p, h] : phases) all.add(h);
    if (all.saturated) over.insert("histogram " + name);
  }
  for (const auto& [k, v] : counters_) {
    std::uint64_t& c = m.counters[static_cast<std::uint16_t>(k.second >> 32)][static_cast<std::uint32_t>(k.second)];
    bool sat = false;
    c = sat_add(c, v, &sat);
    if (sat) over.insert("virtual counter " + std::to_string(static_cast<std::uint32_t>(k.second)));
    if (const auto r = rank_of ? rank_of(static_cast<std::uint32_t>(k.first >> 32)) : std::nullopt) {
      std::uint64_t& rc =
          m.rank_counters[*r][static_cast<std::uint16_t>(k.second >> 32)][static_cast<std::uint32_t>(k.second)];
      rc = sat_add(rc, v, &sat);
    }
  }
  m.saturated.assign(over.begin(), over.end());
  m.snapshots = snapshots_;
  return m;
}

// ---- output ---------------------------------------------------------------------------------------------
std::string human_seconds(double s) {
  const double a = std::fabs(s);
  if (a == 0) return "0";
  if (a < 1e-6) return fmt::format("{:.4g} ns", s * 1e9);
  if (a < 1e-3) return fmt::format("{:.4g} us", s * 1e6);
  if (a < 1) return fmt::format("{:.4g} ms", s * 1e3);
  if (a < 1000) return fmt::format("{:.4g} s", s);
  return fmt::format("{:.0f} s", s);
}

namespace {
LatencyHistogram total_of(const std::map<std::uint16_t, LatencyHistogram>& phases) {
  LatencyHistogram t;
  for (const auto& [p, h] : phases) t.add(h);
  return t;
}
// A value as a time first (ERRATUM E412), ticks with --ticks (or where the clock is unknown).
std::string value_text(std::uint64_t v, const HistRenderOptions& o) {
  if (o.ticks_per_us <= 0) return std::to_string(v);
  const std::string t = v ? human_seconds(static_cast<double>(v) / o.ticks_per_us / 1e6) : "0 ns";
  return o.ticks ? fmt::format("{} ({})", v, t) : t;
}
std::string mean_text(double v, const HistRenderOptions& o) {
  if (o.ticks_per_us <= 0 || o.ticks) return fmt::format("{:.1f}", v);
  return human_seconds(v / o.ticks_per_us / 1e6);
}
void summary_text(std::string& out, const std::string& label, const LatencyHistogram& h, const HistRenderOptions& o) {
  const LatencySummary s = summarize(h);
  if (!s.count) {
    out += fmt::format("  {}: no values\n", label);
    return;
  }
  out += fmt::format("  {}: count {}  min {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  mean {}\n", label, s.count,
                     value_text(s.min, o), value_text(s.p50, o), value_text(s.p90, o), value_text(s.p99, o),
                     value_text(s.p999, o), value_text(s.max, o), mean_text(s.mean, o));
}
// The non-empty range of buckets as bars, at most 24 rows (neighbouring buckets joined where there are more).
void bars(std::string& out, const LatencyHistogram& h, const HistRenderOptions& o) {
  unsigned lo = stats::kHistBuckets, hi = 0;
  for (unsigned b = 0; b < stats::kHistBuckets; ++b)
    if (h.buckets[b]) lo = std::min(lo, b), hi = b;
  if (lo > hi) return;
  const unsigned span = hi - lo + 1, rows = std::min(span, 24u), per = (span + rows - 1) / rows;
  std::vector<std::pair<unsigned, std::uint64_t>> row;  // first bucket, count
  for (unsigned b = lo; b <= hi; b += per) {
    std::uint64_t n = 0;
    for (unsigned k = b; k < std::min(b + per, hi + 1); ++k) n += h.buckets[k];
    row.emplace_back(b, n);
  }
  std::uint64_t top = 0;
  for (const auto& [b, n] : row) top = std::max(top, n);
  for (const auto& [b, n] : row) {
    const auto r0 = stats::bucket_range(b);
    const auto r1 = stats::bucket_range(std::min(b + per - 1, hi));
    const unsigned w = top ? static_cast<unsigned>((n * o.bar_width + top - 1) / top) : 0;
    const bool time = o.ticks_per_us > 0 && !o.ticks;
    auto v = [&](std::uint64_t x) { return time ? value_text(x, o) : std::to_string(x); };
    out += fmt::format("    {:>12} - {:<12} {:>10} {}\n", v(r0.lo), v(r1.hi), n, std::string(w, '#'));
  }
}
}  // namespace

std::string render_hist_text(const SnapshotTotals& m, const HistRenderOptions& o) {
  std::string out;
  if (m.hists.empty() && m.counters.empty()) return "no histograms or virtual counters recorded\n";
  for (const auto& [name, phases] : m.hists) {
    out += fmt::format("histogram {}\n", text::terminal_safe(name));  // ERRATUM E346
    for (const auto& [p, h] : phases) summary_text(out, fmt::format("phase {}", p), h, o);
    if (const auto ranks = m.rank_hists.find(name); ranks != m.rank_hists.end())  // ERRATUM E395
      for (const auto& [rank, rphases] : ranks->second)
        for (const auto& [p, h] : rphases) summary_text(out, fmt::format("rank {} phase {}", rank, p), h, o);
    const LatencyHistogram t = total_of(phases);
    summary_text(out, "total", t, o);
    bars(out, t, o);
  }
  if (!m.counters.empty()) {
    out += "virtual counters\n";
    std::map<std::uint32_t, std::uint64_t> total;
    for (const auto& [p, cs] : m.counters)
      for (const auto& [i, v] : cs) {
        out += fmt::format("  counter {:>4} phase {:>5}: {}\n", i, p, v);
        bool over = false;  // saturating, as the merge (ERRATUM E349)
        total[i] = sat_add(total[i], v, &over);
      }
    for (const auto& [i, v] : total) out += fmt::format("  counter {:>4} total      : {}\n", i, v);
    for (const auto& [rank, phases] : m.rank_counters)  // an MPI recording's, per rank (ERRATUM E395)
      for (const auto& [p, cs] : phases)
        for (const auto& [i, v] : cs) out += fmt::format("  counter {:>4} phase {:>5} rank {}: {}\n", i, p, rank, v);
  }
  return out;
}

std::string render_hist_json(const SnapshotTotals& m, const HistRenderOptions& o, std::uint64_t stat_lost,
                             std::uint64_t cells_lost) {
  using nlohmann::ordered_json;
  auto summary = [&](const LatencyHistogram& h) {
    const LatencySummary s = summarize(h);
    ordered_json j;
    j["count"] = s.count;
    j["min"] = s.count ? s.min : 0;
    j["p50"] = s.p50, j["p90"] = s.p90, j["p99"] = s.p99, j["p99.9"] = s.p999;
    j["max"] = s.max;
    j["mean"] = s.mean;
    j["sum"] = h.sum;
    ordered_json b = ordered_json::array();
    for (unsigned k = 0; k < stats::kHistBuckets; ++k)
      if (h.buckets[k])
        b.push_back(ordered_json::array({stats::bucket_range(k).lo, stats::bucket_range(k).hi, h.buckets[k]}));
    j["buckets"] = std::move(b);
    return j;
  };
  ordered_json j;
  j["format"] = "kron-hist";
  j["version"] = m.rank_hists.empty() && m.rank_counters.empty() ? 1 : 2;  // 2: the ranks' keys (ERRATUM E395)
  j["ticks_per_us"] = o.ticks_per_us;
  j["snapshots"] = m.snapshots;
  j["stat_lost"] = stat_lost;
  j["stat_cells_lost"] = cells_lost;
  ordered_json hs = ordered_json::array();
  for (const auto& [name, phases] : m.hists) {
    ordered_json x;
    x["name"] = text::utf8_safe(name);  // ERRATUM E131: a name from the board or the file is not trusted to be UTF-8
    ordered_json ps = ordered_json::array();
    for (const auto& [p, h] : phases) {
      ordered_json y{{"phase", p}};
      y.update(summary(h));
      ps.push_back(std::move(y));
    }
    x["phases"] = std::move(ps);
    x["total"] = summary(total_of(phases));
    if (const auto ranks = m.rank_hists.find(name); ranks != m.rank_hists.end()) {
      ordered_json rs = ordered_json::array();
      for (const auto& [rank, rphases] : ranks->second) {
        ordered_json rp = ordered_json::array();
        for (const auto& [p, h] : rphases) {
          ordered_json y{{"phase", p}};
          y.update(summary(h));
          rp.push_back(std::move(y));
        }
        rs.push_back(ordered_json{{"rank", rank}, {"phases", std::move(rp)}, {"total", summary(total_of(rphases))}});
      }
      x["ranks"] = std::move(rs);
    }
    hs.push_back(std::move(x));
  }
  j["histograms"] = std::move(hs);
  ordered_json cs = ordered_json::array();
  for (const auto& [p, c] : m.counters)
    for (const auto& [i, v] : c) cs.push_back(ordered_json{{"phase", p}, {"index", i}, {"value", v}});
  j["counters"] = std::move(cs);
  if (!m.rank_counters.empty()) {
    ordered_json rc = ordered_json::array();
    for (const auto& [rank, phases] : m.rank_counters)
      for (const auto& [p, c] : phases)
        for (const auto& [i, v] : c)
          rc.push_back(ordered_json{{"rank", rank}, {"phase", p}, {"index", i}, {"value", v}});
    j["rank_counters"] = std::move(rc);
  }
  return j.dump(2) + "\n";
}

}  // namespace kron::analysis
