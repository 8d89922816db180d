#include "merge/clc.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <tuple>

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

namespace {
// What each end node waits for, counted so that a collective of N members costs O(N), not N^2 (every
// receiving member waits for every sending member's begin: one count per instance stands for them).
struct Waits {
  static constexpr std::size_t kNone = ~std::size_t{0};
  std::vector<std::vector<std::size_t>> sends;      // per event: the begin nodes of the sends it receives
  std::vector<std::vector<std::size_t>> receivers;  // per event: the receives that wait for its begin
  std::vector<std::size_t> recv_in, send_in;        // per event: its instance as a receiving / sending member
  std::vector<std::uint32_t> senders_left;          // per instance: sending members whose begin is not done
  std::vector<std::uint64_t> senders_max;           // per instance: the latest corrected begin of those done

  Waits(const std::vector<MpiEvent>& events, const Matching& m)
      : sends(events.size()),
        receivers(events.size()),
        recv_in(events.size(), kNone),
        send_in(events.size(), kNone),
        senders_left(m.collectives.size(), 0),
        senders_max(m.collectives.size(), 0) {
    for (const auto& [s, r] : m.pairs) {
      sends[r].push_back(2 * s);
      receivers[s].push_back(r);
    }
    for (std::size_t k = 0; k < m.collectives.size(); ++k)
      for (std::size_t i : m.collectives[k]) {
        const analysis::MpiRole role = analysis::mpi_role(events[i].rec);
        if (analysis::mpi_receives(role)) recv_in[i] = k;
        if (analysis::mpi_sends(role)) send_in[i] = k, ++senders_left[k];
      }
  }
  // An end node is ready when the begins it waits for are done: its sends', and its instance's other
  // sending members' (its own begin, where it sends too, is not waited for).
  bool ready(std::size_t node, const std::vector<char>& done) const {
    if (!(node & 1)) return true;
    const std::size_t e = node / 2;
    for (std::size_t d : sends[e])
      if (!done[d]) return false;
    const std::size_t k = recv_in[e];
    if (k == kNone) return true;
    const std::uint32_t self = send_in[e] == k && !done[2 * e] ? 1 : 0;
    return senders_left[k] <= self;
  }
  // The latest corrected begin an end node waits for, of those done (all of them unless forced). A
  // member's own begin may be among them: its end is corrected past it anyway (one rank's events keep
  // their order), so the maximum is the same.
  std::uint64_t latest(std::size_t node, const std::vector<char>& done, const std::vector<std::uint64_t>& corrected,
                       std::uint64_t c) const {
    const std::size_t e = node / 2;
    for (std::size_t d : sends[e])
      if (done[d]) c = std::max(c, corrected[d]);
    if (recv_in[e] != kNone) c = std::max(c, senders_max[recv_in[e]]);
    return c;
  }
};
}  // namespace

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
  Waits w(events, m);
  std::vector<std::uint64_t> corrected(2 * n, 0);
  std::vector<char> done(2 * n, 0);
  std::vector<std::size_t> cursor(inputs, 0);
  std::vector<std::uint64_t> prev_a(inputs, 0), prev_c(inputs, 0);
  std::vector<char> has_prev(inputs, 0);
  // The next node is the earliest ready head of an input (ties: the lower input), else, when every head
  // waits (a cycle: a mismatched pair), the earliest head. Two heaps of (time, input, cursor); an entry
  // whose input has moved on since is stale and skipped.
  using Head = std::tuple<std::uint64_t, std::size_t, std::size_t>;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> ready_heads, all_heads;
  auto head_of = [&](std::size_t in) { return order[in][cursor[in]]; };
  auto offer = [&](std::size_t in, bool also_all) {  // the input's head, into the heaps it belongs in
    if (cursor[in] >= order[in].size()) return;
    const std::size_t node = head_of(in);
    if (also_all) all_heads.emplace(time_of(node), in, cursor[in]);
    if (w.ready(node, done)) ready_heads.emplace(time_of(node), in, cursor[in]);
  };
  auto wake = [&](std::size_t e) {  // event e's end may have become ready: offered if it is a head
    const std::size_t in = events[e].input;
    if (in < inputs && cursor[in] < order[in].size() && head_of(in) == 2 * e + 1) offer(in, false);
  };
  auto fresh = [&](auto& heap) {
    while (!heap.empty() && std::get<2>(heap.top()) != cursor[std::get<1>(heap.top())]) heap.pop();
    return !heap.empty();
  };
  for (std::size_t in = 0; in < inputs; ++in) offer(in, true);
  for (;;) {
    const bool pick_ready = fresh(ready_heads);
    if (!pick_ready && !fresh(all_heads)) break;
    const std::size_t pick = std::get<1>(pick_ready ? ready_heads.top() : all_heads.top());
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
    if (node & 1) c = w.latest(node, done, corrected, c);
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
    offer(pick, true);
    if (!(node & 1)) {  // a begin: the receives and collective members waiting for it
      const std::size_t e = node / 2;
      for (std::size_t r : w.receivers[e]) wake(r);
      if (const std::size_t k = w.send_in[e]; k != Waits::kNone) {
        w.senders_max[k] = std::max(w.senders_max[k], c);
        if (--w.senders_left[k] <= 1)  // 0: every receiving member may go on; 1: one waiting for itself
          for (std::size_t i : m.collectives[k])
            if (w.recv_in[i] == k) wake(i);
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!done[2 * i]) continue;
    events[i].rec.timestamp = corrected[2 * i];
    events[i].rec.end = std::max(corrected[2 * i + 1], corrected[2 * i]);
  }
  return res;
}

}  // namespace kron::merge
