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
// What each end node waits for, counted so that a collective of N members costs O(N), not N^2: every
// receiving member waits for every sending member's begin on another clock (DECISION D10), so a count per
// instance and per clock, and the latest begin of the two latest clocks, stand for them.
struct Waits {
  static constexpr std::size_t kNone = ~std::size_t{0};
  std::vector<std::vector<std::size_t>> sends;  // per event: the begin nodes on other clocks its end waits for
  std::vector<std::vector<std::size_t>>
      receivers;                              // per event: the events on other clocks whose end waits for its begin
  std::vector<std::size_t> recv_in, send_in;  // per event: its instance as a receiving / sending member
  std::vector<std::uint32_t> slot;            // per event: its clock's slot in its instance
  std::vector<std::size_t> slot_base;         // per instance: its first slot in slot_left
  std::vector<std::uint32_t> slot_left;       // per (instance, clock): sending members whose begin is not done
  std::vector<std::uint32_t> senders_left, clocks_left;  // per instance: those in all, and the clocks they are on
  std::vector<analysis::LatestByClock> latest_begin;     // per instance: the corrected begins of those done
  const std::vector<MpiEvent>& events;
  std::span<const std::uint32_t> clock;

  std::uint32_t clock_of(std::size_t e) const {  // an event of no input: a clock of its own
    return events[e].input < clock.size() ? clock[events[e].input] : ~std::uint32_t{0};
  }
  Waits(const std::vector<MpiEvent>& ev, const Matching& m, std::span<const std::uint32_t> clk)
      : sends(ev.size()),
        receivers(ev.size()),
        recv_in(ev.size(), kNone),
        send_in(ev.size(), kNone),
        slot(ev.size(), 0),
        senders_left(m.collectives.size(), 0),
        clocks_left(m.collectives.size(), 0),
        latest_begin(m.collectives.size()),
        events(ev),
        clock(clk) {
    auto depend = [&](std::size_t s, std::size_t r) {  // r's end waits for s's begin, unless on one clock
      if (clock_of(s) == clock_of(r)) return;
      sends[r].push_back(2 * s);
      receivers[s].push_back(r);
    };
    for (const auto& [s, r] : m.pairs) depend(s, r);
    for (const auto& [s, r] : m.ordered) depend(s, r);
    std::vector<std::uint32_t> clocks;
    for (std::size_t k = 0; k < m.collectives.size(); ++k) {
      clocks.clear();
      for (std::size_t i : m.collectives[k]) clocks.push_back(clock_of(i));
      std::sort(clocks.begin(), clocks.end());
      clocks.erase(std::unique(clocks.begin(), clocks.end()), clocks.end());
      slot_base.push_back(slot_left.size());
      slot_left.resize(slot_left.size() + clocks.size(), 0);
      for (std::size_t i : m.collectives[k]) {
        slot[i] =
            static_cast<std::uint32_t>(std::lower_bound(clocks.begin(), clocks.end(), clock_of(i)) - clocks.begin());
        const analysis::MpiRole role = analysis::mpi_role(events[i].rec);
        if (analysis::mpi_receives(role)) recv_in[i] = k;
        if (!analysis::mpi_sends(role)) continue;
        send_in[i] = k;
        ++senders_left[k];
        if (slot_left[slot_base[k] + slot[i]]++ == 0) ++clocks_left[k];
      }
    }
  }
  // An end node is ready when the begins it waits for are done: its sends', and its instance's sending
  // members' on other clocks.
  bool ready(std::size_t node, const std::vector<char>& done) const {
    if (!(node & 1)) return true;
    const std::size_t e = node / 2;
    for (std::size_t d : sends[e])
      if (!done[d]) return false;
    const std::size_t k = recv_in[e];
    return k == kNone || senders_left[k] == slot_left[slot_base[k] + slot[e]];
  }
  // The latest corrected begin an end node waits for, of those done (all of them unless forced).
  std::uint64_t latest(std::size_t node, const std::vector<char>& done, const std::vector<std::uint64_t>& corrected,
                       std::uint64_t c) const {
    const std::size_t e = node / 2;
    for (std::size_t d : sends[e])
      if (done[d]) c = std::max(c, corrected[d]);
    if (recv_in[e] != kNone) {
      const auto& l = latest_begin[recv_in[e]].except(clock_of(e));
      if (l.item != kNone) c = std::max(c, l.value);
    }
    return c;
  }
  // Event e's begin is done at corrected time c: true when that may have made receiving members of its
  // instance ready (the senders left are now on one clock, or none).
  bool begun(std::size_t e, std::uint64_t c) {
    const std::size_t k = send_in[e];
    if (k == kNone) return false;
    --senders_left[k];
    latest_begin[k].add(c, e, clock_of(e));
    return --slot_left[slot_base[k] + slot[e]] == 0 && --clocks_left[k] <= 1;
  }
};

// Where a node's corrected time may be: its own, and its predecessor's on its clock plus the distance between
// the two shrunk by at most 1 - gamma (forward amortization).
std::uint64_t amortized(std::uint64_t a, std::uint64_t prev_a, std::uint64_t prev_c, double gamma) {
  const std::uint64_t gap = a - prev_a;
  const double shrink = double(gap) * (1.0 - gamma);
  const std::uint64_t keep =
      gap - std::min<std::uint64_t>(gap, shrink < 1.8e19 ? static_cast<std::uint64_t>(shrink) : gap);
  return std::max(a, sat_add(prev_c, keep));
}
}  // namespace

ClcResult clc(std::vector<MpiEvent>& events, const Matching& m, std::size_t inputs, double gamma) {
  std::vector<std::uint32_t> own(inputs);
  for (std::size_t i = 0; i < inputs; ++i) own[i] = static_cast<std::uint32_t>(i);
  return clc(events, m, own, gamma);
}

ClcResult clc(std::vector<MpiEvent>& events, const Matching& m, std::span<const std::uint32_t> clock_of_input,
              double gamma) {
  ClcResult res;
  const std::size_t inputs = clock_of_input.size();
  res.clock_of_input.assign(clock_of_input.begin(), clock_of_input.end());
  std::size_t clocks = 0;
  for (std::uint32_t c : clock_of_input) clocks = std::max<std::size_t>(clocks, std::size_t{c} + 1);
  res.per_clock.resize(clocks);
  gamma = std::clamp(gamma, 0.0, 1.0);
  for (auto& c : res.per_clock) c.fade = 1.0 - gamma;
  // Nodes: each event's begin (2i) and end (2i + 1), per clock in time order.
  const std::size_t n = events.size();
  std::vector<std::vector<std::size_t>> order(clocks);
  for (std::size_t i = 0; i < n; ++i) {
    if (events[i].input >= inputs) continue;  // not of an input: left as it is
    order[clock_of_input[events[i].input]].push_back(2 * i);
    order[clock_of_input[events[i].input]].push_back(2 * i + 1);
  }
  auto time_of = [&](std::size_t node) { return node & 1 ? events[node / 2].rec.end : events[node / 2].rec.timestamp; };
  for (auto& o : order)
    std::stable_sort(o.begin(), o.end(), [&](std::size_t a, std::size_t b) { return time_of(a) < time_of(b); });
  Waits w(events, m, clock_of_input);
  std::vector<std::uint64_t> corrected(2 * n, 0);
  std::vector<char> done(2 * n, 0);
  std::vector<std::size_t> cursor(clocks, 0);
  std::vector<std::uint64_t> prev_a(clocks, 0), prev_c(clocks, 0);
  std::vector<char> has_prev(clocks, 0);
  // The next node is the earliest ready head of a clock (ties: the lower clock), else, when every head
  // waits (a cycle: a mismatched pair), the earliest head. Two heaps of (time, clock, cursor); an entry
  // whose clock has moved on since is stale and skipped.
  using Head = std::tuple<std::uint64_t, std::size_t, std::size_t>;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> ready_heads, all_heads;
  auto head_of = [&](std::size_t g) { return order[g][cursor[g]]; };
  auto offer = [&](std::size_t g, bool also_all) {  // the clock's head, into the heaps it belongs in
    if (cursor[g] >= order[g].size()) return;
    const std::size_t node = head_of(g);
    if (also_all) all_heads.emplace(time_of(node), g, cursor[g]);
    if (w.ready(node, done)) ready_heads.emplace(time_of(node), g, cursor[g]);
  };
  auto wake = [&](std::size_t e) {  // event e's end may have become ready: offered if it is a head
    if (events[e].input >= inputs) return;
    const std::size_t g = clock_of_input[events[e].input];
    if (cursor[g] < order[g].size() && head_of(g) == 2 * e + 1) offer(g, false);
  };
  auto fresh = [&](auto& heap) {
    while (!heap.empty() && std::get<2>(heap.top()) != cursor[std::get<1>(heap.top())]) heap.pop();
    return !heap.empty();
  };
  for (std::size_t g = 0; g < clocks; ++g) offer(g, true);
  for (;;) {
    const bool pick_ready = fresh(ready_heads);
    if (!pick_ready && !fresh(all_heads)) break;
    const std::size_t pick = std::get<1>(pick_ready ? ready_heads.top() : all_heads.top());
    if (!pick_ready) ++res.forced;  // a dependency cycle (a mismatched pair): taken in time order
    const std::size_t node = order[pick][cursor[pick]++];
    const std::uint64_t a = time_of(node);
    std::uint64_t c = has_prev[pick] ? amortized(a, prev_a[pick], prev_c[pick], gamma) : a;
    if (node & 1) c = w.latest(node, done, corrected, c);
    corrected[node] = c;
    done[node] = 1;
    has_prev[pick] = 1;
    prev_a[pick] = a;
    prev_c[pick] = c;
    Correction& corr = res.per_clock[pick];
    std::size_t cur = corr.steps.empty() ? 0 : corr.steps.size() - 1;
    const std::uint64_t decayed = corr.delta_at(a, cur);
    if (c - a != decayed) corr.steps.emplace_back(a, c - a);
    if (c > a) ++res.events_moved;
    res.max_correction = std::max(res.max_correction, c - a);
    offer(pick, true);
    if (!(node & 1)) {  // a begin: the receives and collective members waiting for it
      const std::size_t e = node / 2;
      for (std::size_t r : w.receivers[e]) wake(r);
      if (w.begun(e, c))
        for (std::size_t i : m.collectives[w.send_in[e]])
          if (w.recv_in[i] == w.send_in[e]) wake(i);
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
