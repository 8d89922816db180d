#include "merge/clc.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>

namespace kron::merge {

using record::MpiRecord;

// ---- The controlled logical clock (ERRATUM E206) ------------------------------------------------------
std::uint64_t Correction::delta_at(std::uint64_t t, std::size_t& cursor) const {
  if (steps.empty() || t < steps.front().first) return 0;
  if (cursor >= steps.size() || steps[cursor].first > t) {  // a query back in time: search
    cursor = static_cast<std::size_t>(std::upper_bound(steps.begin(), steps.end(), t,
                                                       [](std::uint64_t v, const auto& s) { return v < s.first; }) -
                                      steps.begin()) -
             1;
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
      if (analysis::mpi_receives(analysis::mpi_role(events[i].rec)))
        for (std::size_t j : inst)
          if (j != i && analysis::mpi_sends(analysis::mpi_role(events[j].rec))) deps[i].push_back(2 * j);
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
      const std::uint64_t keep =
          gap - std::min<std::uint64_t>(gap, shrink < 1.8e19 ? static_cast<std::uint64_t>(shrink) : gap);
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

}  // namespace kron::merge
