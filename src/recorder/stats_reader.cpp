#include "recorder/stats_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>

namespace kron::recorder {

// ---- board -> snapshot records --------------------------------------------------------------------------
namespace {
template <class T>
void put(std::vector<std::uint8_t>& out, const T& v) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}
std::uint64_t load(const std::uint64_t& w) { return __atomic_load_n(&w, __ATOMIC_RELAXED); }
}  // namespace

BoardStats read_board_stats(const board::Mapping& m, std::uint64_t timestamp) {
  BoardStats r;
  const board::Geometry& g = m.geometry();  // validated (ERRATUM E120)
  if (g.minor < 2) return r;                // a 2.1 board: no statistics, no counts of them
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
      for (std::size_t k = 0; k + 1 < stats::kHistNameBytes; ++k)
        names[i][k] = __atomic_load_n(&s->name[k], __ATOMIC_RELAXED);
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
        r.problems.push_back(
            fmt::format("statistics cell {} at offset {}: histogram id {} is not in the table", i, at, object));
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
      if (!u.empty() && u.back().index == x.index)
        u.back().value += x.value;
      else
        u.push_back(x);
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

}  // namespace kron::recorder
