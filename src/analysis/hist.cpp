#include "analysis/hist.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "kron/core/text.hpp"

namespace kron::hist {

// ---- board -> snapshot records --------------------------------------------------------------------------
namespace {
template <class T>
void put(std::vector<std::uint8_t>& out, const T& v) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}
std::uint64_t load(const std::uint64_t& w) { return __atomic_load_n(&w, __ATOMIC_RELAXED); }
}  // namespace

BoardStats read_board(const board::Mapping& m, std::uint64_t timestamp) {
  BoardStats r;
  const board::Geometry& g = m.geometry();  // validated (ERRATUM E120)
  if (g.minor < 2) return r;  // a 2.1 board: no statistics, no counts of them
  const board::BoardHeader& h = *m.header();
  r.stat_lost = h.stat_lost.load(std::memory_order_relaxed);
  r.thresholds_crossed = h.thresholds_crossed.load(std::memory_order_relaxed);
  if (!g.stat_cells) return r;  // made without a statistics area: every value was counted lost
  const std::uint64_t used = h.cells_used.load(std::memory_order_acquire);
  r.cells_lost = used > g.stat_cells ? used - g.stat_cells : 0;
  const std::uint32_t cells = static_cast<std::uint32_t>(std::min<std::uint64_t>(used, g.stat_cells));
  // Histogram names, as published (acquire); an unpublished slot has no name.
  std::vector<std::array<char, stats::kHistNameBytes>> names(g.hist_slots);
  for (std::uint32_t i = 0; i < g.hist_slots; ++i) {
    const board::HistSlot* s = m.hist_slot(i);
    names[i].fill(0);
    if (s->header.load(std::memory_order_acquire) == board::kHistSlotWord) {
      for (std::size_t k = 0; k + 1 < stats::kHistNameBytes; ++k) names[i][k] = __atomic_load_n(&s->name[k], __ATOMIC_RELAXED);
    }
  }
  // Counter cells of one (source, thread, phase) gather into one record (or a few).
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint16_t>, std::vector<stats::CounterEntry>> counters;
  for (std::uint32_t i = 0; i < cells; ++i) {
    const board::CellDesc* d = m.cell_desc(i);
    // Acquire: the owner fields and the cell's initial words were written before the key.
    const std::uint64_t key = d->key.load(std::memory_order_acquire);
    if (key == 0) continue;  // being taken, or its taker died before publishing: nothing was recorded in it
    const std::uint64_t at = reinterpret_cast<const std::uint8_t*>(d) - m.bytes();
    const stats::CellKind kind = stats::key_kind(key);
    const std::uint32_t object = stats::key_object(key);
    const std::uint16_t phase = stats::key_phase(key);
    const std::uint64_t* c = m.cell(i);
    const std::uint32_t source = __atomic_load_n(&d->source, __ATOMIC_RELAXED);
    const std::uint32_t thread = __atomic_load_n(&d->thread, __ATOMIC_RELAXED);
    if (kind == stats::CellKind::Histogram) {
      if (object == 0 || object > g.hist_slots) {
        r.problems.push_back(fmt::format("statistics cell {} at offset {}: histogram id {} is not in the table", i, at, object));
        continue;
      }
      stats::HistSnapshotRecord s{};
      s.h.kind = record::RecordKind::HistSnapshot;
      s.h.group = 0xff;
      s.h.phase = phase;
      s.source = source;
      s.thread = thread;
      s.timestamp = timestamp;
      s.hist = static_cast<std::uint16_t>(object);
      s.sum = load(c[stats::kHistSum]);
      s.min = load(c[stats::kHistMin]);
      s.max = load(c[stats::kHistMax]);
      std::memcpy(s.name, names[object - 1].data(), sizeof s.name);
      std::vector<stats::HistEntry> e;
      for (unsigned b = 0; b < stats::kHistBuckets; ++b)
        if (const std::uint64_t n = load(c[b])) e.push_back({b, n});
      s.entries = static_cast<std::uint16_t>(e.size());
      s.h.size = static_cast<std::uint16_t>(sizeof s + e.size() * sizeof(stats::HistEntry));
      put(r.records, s);
      for (const auto& x : e) put(r.records, x);
      ++r.count;
    } else if (kind == stats::CellKind::Counters) {
      if (object >= stats::kCounterPages) {
        r.problems.push_back(fmt::format("statistics cell {} at offset {}: counter page {} is not 0-7", i, at, object));
        continue;
      }
      auto& v = counters[{source, thread, phase}];
      for (unsigned k = 0; k < stats::kCountersPerCell; ++k)
        if (const std::uint64_t n = load(c[k])) v.push_back({object * stats::kCountersPerCell + k, n});
    } else {
      r.problems.push_back(fmt::format("statistics cell {} at offset {}: unknown cell kind", i, at));
    }
  }
  for (auto& [k, v] : counters) {
    std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.index < y.index; });
    // Two cells of one page (a thread id reused within a process): one entry per counter, summed.
    std::vector<stats::CounterEntry> u;
    for (const auto& x : v) {
      if (!u.empty() && u.back().index == x.index) u.back().value += x.value;
      else u.push_back(x);
    }
    for (std::size_t from = 0; from < u.size(); from += stats::kMaxCounterEntriesPerRecord) {
      const std::size_t n = std::min(u.size() - from, stats::kMaxCounterEntriesPerRecord);
      stats::CounterSnapshotRecord s{};
      s.h.kind = record::RecordKind::CounterSnapshot;
      s.h.group = 0xff;
      s.h.phase = std::get<2>(k);
      s.h.size = static_cast<std::uint16_t>(sizeof s + n * sizeof(stats::CounterEntry));
      s.source = std::get<0>(k);
      s.thread = std::get<1>(k);
      s.timestamp = timestamp;
      s.entries = static_cast<std::uint32_t>(n);
      put(r.records, s);
      for (std::size_t j = from; j < from + n; ++j) put(r.records, u[j]);
      ++r.count;
    }
  }
  return r;
}

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
std::uint64_t Histogram::count() const {
  std::uint64_t n = 0;
  bool over = false;
  for (const auto b : buckets) n = sat_add(n, b, &over);
  return n;
}
void Histogram::add(const Histogram& o) {
  saturated = saturated || o.saturated || o.count() == ~std::uint64_t{0};
  for (unsigned b = 0; b < stats::kHistBuckets; ++b) buckets[b] = sat_add(buckets[b], o.buckets[b], &saturated);
  sum = sat_add(sum, o.sum, &saturated);
  min = std::min(min, o.min);
  max = std::max(max, o.max);
}
void record(Histogram& h, std::uint64_t value) {
  ++h.buckets[stats::bucket_of(value)];
  h.sum += value;
  h.min = std::min(h.min, value);
  h.max = std::max(h.max, value);
}

std::uint64_t percentile(const Histogram& h, double q) {
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

Summary summarize(const Histogram& h) {
  Summary s;
  s.count = h.count();
  if (!s.count) return s;
  s.min = h.min, s.max = h.max;
  s.mean = static_cast<double>(h.sum) / static_cast<double>(s.count);
  s.p50 = percentile(h, 0.5), s.p90 = percentile(h, 0.9), s.p99 = percentile(h, 0.99), s.p999 = percentile(h, 0.999);
  return s;
}

void Merger::add(std::span<const std::uint8_t> records) {
  for (std::size_t at = 0; at + sizeof(record::RecordHeader) <= records.size();) {
    record::RecordHeader h;
    std::memcpy(&h, records.data() + at, sizeof h);
    if (h.size < sizeof h || at + h.size > records.size()) break;  // validated before: not reached
    const std::uint8_t* p = records.data() + at;
    if (h.kind == record::RecordKind::HistSnapshot) {
      stats::HistSnapshotRecord s;
      std::memcpy(&s, p, sizeof s);
      Histogram x;
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
        counters_[{std::uint64_t{s.source} << 32 | s.thread, std::uint64_t{s.h.phase} << 32 | e.index}] = e.value;
      }
      ++snapshots_;
    }
    at += h.size;
  }
}

Merged Merger::result() const {
  Merged m;
  for (const auto& [k, h] : hists_) m.hists[k.name.empty() ? "#" + std::to_string(k.hist) : k.name][k.phase].add(h);
  std::set<std::string> over;
  for (const auto& [name, phases] : m.hists) {
    Histogram all;
    for (const auto& [p, h] : phases) all.add(h);
    if (all.saturated) over.insert("histogram " + name);
  }
  for (const auto& [k, v] : counters_) {
    std::uint64_t& c = m.counters[static_cast<std::uint16_t>(k.second >> 32)][static_cast<std::uint32_t>(k.second)];
    bool sat = false;
    c = sat_add(c, v, &sat);
    if (sat) over.insert("virtual counter " + std::to_string(static_cast<std::uint32_t>(k.second)));
  }
  m.saturated.assign(over.begin(), over.end());
  m.snapshots = snapshots_;
  return m;
}

// ---- output ---------------------------------------------------------------------------------------------
namespace {
Histogram total_of(const std::map<std::uint16_t, Histogram>& phases) {
  Histogram t;
  for (const auto& [p, h] : phases) t.add(h);
  return t;
}
std::string value_text(std::uint64_t v, const RenderOptions& o) {
  if (o.ticks_per_us > 0) return fmt::format("{} ({:.3f} us)", v, static_cast<double>(v) / o.ticks_per_us);
  return std::to_string(v);
}
void summary_text(std::string& out, const std::string& label, const Histogram& h, const RenderOptions& o) {
  const Summary s = summarize(h);
  if (!s.count) {
    out += fmt::format("  {}: no values\n", label);
    return;
  }
  out += fmt::format("  {}: count {}  min {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  mean {:.1f}\n", label, s.count,
                     value_text(s.min, o), value_text(s.p50, o), value_text(s.p90, o), value_text(s.p99, o),
                     value_text(s.p999, o), value_text(s.max, o), s.mean);
}
// The non-empty range of buckets as bars, at most 24 rows (neighbouring buckets joined where there are more).
void bars(std::string& out, const Histogram& h, const RenderOptions& o) {
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
    out += fmt::format("    {:>12} - {:<12} {:>10} {}\n", r0.lo, r1.hi, n, std::string(w, '#'));
  }
}
}  // namespace

std::string render_text(const Merged& m, const RenderOptions& o) {
  std::string out;
  if (m.hists.empty() && m.counters.empty()) return "no histograms or virtual counters recorded\n";
  for (const auto& [name, phases] : m.hists) {
    out += fmt::format("histogram {}\n", text::terminal_safe(name));  // ERRATUM E346
    for (const auto& [p, h] : phases) summary_text(out, fmt::format("phase {}", p), h, o);
    const Histogram t = total_of(phases);
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
  }
  return out;
}

std::string render_json(const Merged& m, const RenderOptions& o, std::uint64_t stat_lost, std::uint64_t cells_lost) {
  using nlohmann::ordered_json;
  auto summary = [&](const Histogram& h) {
    const Summary s = summarize(h);
    ordered_json j;
    j["count"] = s.count;
    j["min"] = s.count ? s.min : 0;
    j["p50"] = s.p50, j["p90"] = s.p90, j["p99"] = s.p99, j["p99.9"] = s.p999;
    j["max"] = s.max;
    j["mean"] = s.mean;
    j["sum"] = h.sum;
    ordered_json b = ordered_json::array();
    for (unsigned k = 0; k < stats::kHistBuckets; ++k)
      if (h.buckets[k]) b.push_back(ordered_json::array({stats::bucket_range(k).lo, stats::bucket_range(k).hi, h.buckets[k]}));
    j["buckets"] = std::move(b);
    return j;
  };
  ordered_json j;
  j["format"] = "kron-hist";
  j["version"] = 1;
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
    hs.push_back(std::move(x));
  }
  j["histograms"] = std::move(hs);
  ordered_json cs = ordered_json::array();
  for (const auto& [p, c] : m.counters)
    for (const auto& [i, v] : c) cs.push_back(ordered_json{{"phase", p}, {"index", i}, {"value", v}});
  j["counters"] = std::move(cs);
  return j.dump(2) + "\n";
}

}  // namespace kron::hist
