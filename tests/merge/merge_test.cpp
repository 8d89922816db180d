// kron merge's pieces (src/merge/, analysis/mpi_match.hpp) on constructed rank files: no MPI needed. The real MPI runs
// are tests/mpi/. Sources: 000 introduction and Appendix A (one timeline for every node's samples, the
// synchronized counters), 003 section 3.5 class 4 (a message sent on one node, received on another).
#include "analysis/mpi_match.hpp"
#include "merge/clc.hpp"
#include "merge/merge.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "kron/board.hpp"
#include "kron/core/error.hpp"
#include "kron/format/trace_file.hpp"
#include "support/mpi_records.hpp"

namespace kron::merge {
namespace {

using namespace analysis;

using record::ClockOffsetRecord;
using record::MpiCall;
using record::MpiRecord;

MpiRecord call(std::uint32_t rank, MpiCall c, std::int32_t peer, std::int32_t tag, std::uint64_t t0, std::uint64_t t1,
               std::uint32_t comm_size = 2) {
  return testing::mpi_call(rank, c, 0, comm_size, peer, tag, t0, t1);
}

ClockOffsetRecord offset(std::uint32_t rank, std::uint64_t local, std::uint64_t reference, std::uint64_t rtt) {
  return testing::clock_offset(rank, local, reference, rtt);
}

std::vector<MpiEvent> events_of(std::initializer_list<MpiRecord> recs) {
  std::vector<MpiEvent> e;
  for (const auto& r : recs) e.push_back({r, r.rank});
  return e;
}

// ---- ClockMap (ERRATUM E205) -----------------------------------------------------------------------------
TEST(ClockMapTest, OneMeasurementIsAConstantOffset) {
  tracefile::FileHeader h = tracefile::make_header();
  const ClockOffsetRecord o[] = {offset(1, 1000, 5000, 10)};
  const ClockMap m = ClockMap::build(o, 1'000'000, 1'000'000, h, h);
  EXPECT_EQ(m(1000), 5000u);
  EXPECT_EQ(m(0), 4000u);
  EXPECT_EQ(m(1'000'000), 1'004'000u);
  EXPECT_TRUE(m.measured());
}

TEST(ClockMapTest, TwoMeasurementsInterpolateOffsetAndDrift) {
  tracefile::FileHeader h = tracefile::make_header();
  // The rank's clock runs 100 ppm fast and starts 50 000 ticks behind.
  const ClockOffsetRecord o[] = {offset(1, 1'000'000, 1'050'000, 10), offset(1, 11'001'000, 11'050'000, 10)};
  const ClockMap m = ClockMap::build(o, 1'000'000'000, 1'000'000'000, h, h);
  EXPECT_EQ(m(1'000'000), 1'050'000u);
  EXPECT_EQ(m(11'001'000), 11'050'000u);
  EXPECT_EQ(m(6'000'500), 6'050'000u);  // halfway
  EXPECT_NEAR(m.drift() * 1e6, -99.99, 0.01);
  // Outside the measurements the nearest segment goes on.
  EXPECT_EQ(m(21'002'000), 21'050'000u);
}

TEST(ClockMapTest, MeasurementsThatWouldRunTimeBackwardsAreDropped) {
  tracefile::FileHeader h = tracefile::make_header();
  const ClockOffsetRecord o[] = {offset(1, 3000, 2000, 10), offset(1, 1000, 1000, 10), offset(1, 2000, 900, 10)};
  const ClockMap m = ClockMap::build(o, 1000, 1000, h, h);
  ASSERT_EQ(m.points().size(), 2u);
  std::uint64_t last = 0;
  for (std::uint64_t t = 0; t < 5000; t += 7) {
    EXPECT_GE(m(t), last);
    last = m(t);
  }
}

TEST(ClockMapTest, AMeasurementWithALongRoundTripIsDropped) {
  tracefile::FileHeader h = tracefile::make_header();
  // The middle exchange was preempted throughout: 3000 ticks of round trip, its reference 1400 off.
  const ClockOffsetRecord o[] = {offset(1, 1000, 1000, 10), offset(1, 5000, 6400, 3000), offset(1, 9000, 9000, 12)};
  const ClockMap m = ClockMap::build(o, 1000, 1000, h, h);
  ASSERT_EQ(m.points().size(), 2u);
  EXPECT_EQ(m(5000), 5000u);
  const ClockOffsetRecord two[] = {offset(1, 1000, 1000, 10), offset(1, 5000, 6400, 3000)};
  EXPECT_EQ(ClockMap::build(two, 1000, 1000, h, h).points().size(), 2u);  // two are kept: nothing to compare with
}

// ERRATUM E205: with more ranks than cores most exchanges of a rank can be preempted, and the median round
// trip with them; only the ones within 4 times the smallest round trip are kept, and the drift is reported
// with its uncertainty.
TEST(ClockMapTest, MostExchangesPreemptedTheGoodOnesStillDecide) {
  tracefile::FileHeader h = tracefile::make_header();
  // One clock (no offset, no drift): five exchanges preempted (round trips 4000-5000, references up to
  // +-2000 off), two good ones (round trip 10 and 12, exact).
  const ClockOffsetRecord o[] = {offset(1, 1000, 1000, 10),     offset(1, 20000, 22000, 4000),
                                 offset(1, 40000, 38000, 5000), offset(1, 60000, 61500, 4500),
                                 offset(1, 80000, 78200, 4800), offset(1, 100000, 101900, 4100),
                                 offset(1, 120000, 120000, 12)};
  const ClockMap m = ClockMap::build(o, 1000, 1000, h, h);
  ASSERT_EQ(m.points().size(), 2u);
  for (std::uint64_t t : {1000u, 40000u, 80000u, 120000u}) EXPECT_EQ(m(t), t);
  EXPECT_NEAR(m.drift(), 0.0, 1e-12);
  EXPECT_NEAR(m.drift_uncertainty(), (5.0 + 6.0) / 119000.0, 1e-12);
}

// Ties and outliers (ERRATUM E205): of two measurements at one local time the one with the smaller round trip
// decides, whichever comes first in the file; a round trip of exactly 4 times the smallest is kept, one tick
// more is dropped; two measurements sharing the smallest round trip both stay.
TEST(ClockMapTest, TiesKeepTheSmallerRoundTripAndOutliersStopPastFourTimesTheBest) {
  tracefile::FileHeader h = tracefile::make_header();
  const ClockOffsetRecord better = offset(1, 5000, 5000, 10), worse = offset(1, 5000, 5600, 30);
  for (bool worse_first : {true, false}) {
    const ClockOffsetRecord o[] = {offset(1, 1000, 1000, 10), worse_first ? worse : better,
                                   worse_first ? better : worse, offset(1, 9000, 9000, 10)};
    const ClockMap m = ClockMap::build(o, 1000, 1000, h, h);
    ASSERT_EQ(m.points().size(), 3u) << "worse first: " << worse_first;
    EXPECT_EQ(m(5000), 5000u) << "the worse of two measurements at one instant decided (worse first: " << worse_first
                              << ")";
    EXPECT_EQ(m(7000), 7000u);
  }
  // Round trip 40 = 4 x 10: kept, and it bends the line; 41: dropped.
  const ClockOffsetRecord at_bound[] = {offset(1, 1000, 1000, 10), offset(1, 5000, 5040, 40),
                                        offset(1, 9000, 9000, 10)};
  const ClockMap kept = ClockMap::build(at_bound, 1000, 1000, h, h);
  EXPECT_EQ(kept.points().size(), 3u);
  EXPECT_EQ(kept(5000), 5040u);
  const ClockOffsetRecord past_bound[] = {offset(1, 1000, 1000, 10), offset(1, 5000, 5040, 41),
                                          offset(1, 9000, 9000, 10)};
  const ClockMap dropped = ClockMap::build(past_bound, 1000, 1000, h, h);
  EXPECT_EQ(dropped.points().size(), 2u);
  EXPECT_EQ(dropped(5000), 5000u);
  // Every measurement sharing the smallest round trip stays, however far off the line the others put it, and
  // decides where it is; one of 29 (past 4 x 7) goes.
  const ClockOffsetRecord two_best[] = {offset(1, 1000, 1000, 7), offset(1, 5000, 5000, 7), offset(1, 9000, 9100, 7),
                                        offset(1, 13000, 13000, 29)};
  const ClockMap best = ClockMap::build(two_best, 1000, 1000, h, h);
  EXPECT_EQ(best.points().size(), 3u);
  EXPECT_EQ(best(9000), 9100u);
}

TEST(ClockMapTest, WithoutMeasurementsTheStartTimesAlign) {
  tracefile::FileHeader ref = tracefile::make_header(), loc = tracefile::make_header();
  ref.start_ticks = 1'000'000;
  ref.start_realtime_ns = 5'000'000'000;
  loc.start_ticks = 7'000;
  loc.start_realtime_ns = 5'000'000'100;  // 100 ns later
  const ClockMap m = ClockMap::build({}, 1'000'000'000, 1'000'000'000, loc, ref);
  EXPECT_FALSE(m.measured());
  EXPECT_EQ(m(7'000), 1'000'100u);
}

// ---- Matching (ERRATUM E208) ---------------------------------------------------------------------------
TEST(MatchTest, SendsPairWithReceivesInPostingOrderPerChannel) {
  auto ev = events_of({call(0, MpiCall::Send, 1, 7, 10, 20), call(0, MpiCall::Isend, 1, 7, 30, 90),
                       call(0, MpiCall::Send, 1, 8, 40, 50), call(1, MpiCall::Recv, 0, 7, 15, 25),
                       call(1, MpiCall::Irecv, 0, 8, 5, 60), call(1, MpiCall::Recv, 0, 7, 31, 45)});
  const Matching m = match_messages(ev);
  ASSERT_EQ(m.pairs.size(), 3u);
  EXPECT_EQ(m.unmatched_sends, 0u);
  EXPECT_EQ(m.unmatched_recvs, 0u);
  auto has = [&](std::size_t s, std::size_t r) {
    for (const auto& p : m.pairs)
      if (p.first == s && p.second == r) return true;
    return false;
  };
  EXPECT_TRUE(has(0, 3));
  EXPECT_TRUE(has(1, 5));
  EXPECT_TRUE(has(2, 4));  // another tag: its own channel
}

TEST(MatchTest, SendrecvHalvesAndUnmatchedAreCounted) {
  auto ev = events_of({call(0, MpiCall::SendrecvSend, 1, 5, 10, 30), call(0, MpiCall::SendrecvRecv, 1, 5, 10, 30),
                       call(1, MpiCall::SendrecvSend, 0, 5, 12, 28), call(1, MpiCall::SendrecvRecv, 0, 5, 12, 28),
                       call(1, MpiCall::Send, 0, 9, 40, 41)});
  const Matching m = match_messages(ev);
  EXPECT_EQ(m.pairs.size(), 2u);
  EXPECT_EQ(m.unmatched_sends, 1u);
  EXPECT_EQ(m.unmatched_recvs, 0u);
}

TEST(MatchTest, CollectivesGroupBySequenceAndCountMissingMembers) {
  auto ev = events_of({call(0, MpiCall::Allreduce, -1, 0, 10, 20, 3), call(1, MpiCall::Allreduce, -1, 0, 12, 22, 3),
                       call(2, MpiCall::Allreduce, -1, 0, 14, 24, 3), call(0, MpiCall::Barrier, -1, 1, 30, 40, 3),
                       call(1, MpiCall::Barrier, -1, 1, 31, 41, 3)});
  const Matching m = match_messages(ev);
  EXPECT_EQ(m.collectives.size(), 2u);
  EXPECT_EQ(m.incomplete_collectives, 1u);
}

// ERRATUM E433, E434: a non-blocking or `v` collective depends as its blocking form does (MPI 3.1 sections
// 5.5-5.12); Scan and Exscan claim no dependency. Rank 1 ends each call at 15, before rank 2 entered (20).
TEST(MatchTest, NonBlockingAndVCollectivesDependAsTheirBlockingForms) {
  auto violations = [](MpiCall c, std::int32_t root) {
    auto ev =
        events_of({call(0, c, root, 0, 10, 30, 3), call(1, c, root, 0, 11, 15, 3), call(2, c, root, 0, 20, 31, 3)});
    return count_violations(ev, match_messages(ev));
  };
  // Every member's data reaches every member: rank 1's early end is a violation.
  for (MpiCall c : {MpiCall::Ibarrier, MpiCall::Iallreduce, MpiCall::Ialltoallv, MpiCall::Allgatherv,
                    MpiCall::Alltoallv, MpiCall::ReduceScatter, MpiCall::ReduceScatterBlock, MpiCall::Iallgatherv})
    EXPECT_EQ(violations(c, -1), 1u) << int(c);
  // Rooted at rank 0: a broadcast's or scatter's non-root waits for the root only (entered at 10); a
  // gather's or reduce's non-root waits for nobody.
  for (MpiCall c : {MpiCall::Ibcast, MpiCall::Iscatter, MpiCall::Iscatterv, MpiCall::Scatterv, MpiCall::Ireduce,
                    MpiCall::Igather, MpiCall::Igatherv, MpiCall::Gatherv})
    EXPECT_EQ(violations(c, 0), 0u) << int(c);
  // Rooted at rank 1: the root of a gather or reduce waits for every member; of a broadcast for nobody.
  for (MpiCall c : {MpiCall::Ireduce, MpiCall::Igather, MpiCall::Igatherv, MpiCall::Gatherv})
    EXPECT_EQ(violations(c, 1), 1u) << int(c);
  for (MpiCall c : {MpiCall::Ibcast, MpiCall::Iscatter, MpiCall::Iscatterv, MpiCall::Scatterv})
    EXPECT_EQ(violations(c, 1), 0u) << int(c);
  EXPECT_EQ(violations(MpiCall::Scan, -1), 0u);
  EXPECT_EQ(violations(MpiCall::Exscan, -1), 0u);
  EXPECT_EQ(mpi_role(call(0, MpiCall::Scan, -1, 0, 1, 2)), MpiRole::None);
}

// ERRATUM E435: a persistent request's starts and a matched receive pair as sends and receives do.
TEST(MatchTest, PersistentStartsAndMatchedReceivesPair) {
  auto ev = events_of({call(0, MpiCall::PsendStart, 1, 7, 10, 12), call(0, MpiCall::PsendStart, 1, 7, 20, 22),
                       call(1, MpiCall::PrecvStart, 0, 7, 9, 13), call(1, MpiCall::Mrecv, 0, 7, 21, 23),
                       call(1, MpiCall::Send, 0, 8, 30, 31), call(0, MpiCall::Imrecv, 1, 8, 29, 33)});
  const Matching m = match_messages(ev);
  EXPECT_EQ(m.pairs.size(), 3u);
  EXPECT_EQ(m.unmatched_sends + m.unmatched_recvs, 0u);
}

// ---- Violations and the controlled logical clock (ERRATUM E206) --------------------------------------------
// A rank's correction is a step function that fades: each step applies from its own instant on, whether the
// query walks forward from the step before (the merge's cursor) or searches back.
TEST(ClcTest, ACorrectionStepAppliesFromItsOwnInstant) {
  Correction c;
  c.fade = 0;  // gamma 1: no fading, the step's delta as it is
  c.steps = {{100, 50}, {200, 80}};
  std::size_t cursor = 0;
  EXPECT_EQ(c.delta_at(99, cursor), 0u);
  EXPECT_EQ(c.delta_at(100, cursor), 50u);
  EXPECT_EQ(c.delta_at(199, cursor), 50u);
  EXPECT_EQ(c.delta_at(200, cursor), 80u);  // the cursor still on the step before
  std::size_t fresh = 1;
  EXPECT_EQ(c.delta_at(150, fresh), 50u);  // back in time: searched
  c.fade = 0.1;                            // 10% of a tick per tick: 50 ticks after the step, 5 of its 50 have faded
  std::size_t again = 0;
  EXPECT_EQ(c.delta_at(150, again), 45u);
}

TEST(ClcTest, AReceiveEndingBeforeItsSendBeganIsAViolationAndIsCorrected) {
  // Rank 1's clock is 1000 ticks behind: its receive ends (900) before the send began (1000).
  auto ev = events_of({call(0, MpiCall::Send, 1, 1, 1000, 1010), call(0, MpiCall::Send, 1, 1, 3000, 3010),
                       call(1, MpiCall::Recv, 0, 1, 850, 900), call(1, MpiCall::Recv, 0, 1, 2950, 3020)});
  const Matching m = match_messages(ev);
  EXPECT_EQ(count_violations(ev, m), 1u);
  const std::vector<MpiEvent> before = ev;
  const ClcResult r = clc(ev, m, 2, 0.99);
  EXPECT_EQ(count_violations(ev, m), 0u);
  EXPECT_EQ(r.max_correction, 100u);  // the receive's end moved to its send's begin
  EXPECT_EQ(r.events_moved, 3u);      // times moved: the first receive's end, the second's begin and end; no send
  EXPECT_EQ(ev[2].rec.end, 1000u);
  EXPECT_EQ(ev[2].rec.timestamp, 850u);   // its begin was not in violation: kept
  EXPECT_EQ(ev[0].rec.timestamp, 1000u);  // the sender is not moved
  // Later events of rank 1 keep their order, moved by less than the first correction (it fades).
  EXPECT_GE(ev[3].rec.timestamp, before[3].rec.timestamp);
  EXPECT_LT(ev[3].rec.timestamp - before[3].rec.timestamp, 100u);
  EXPECT_GE(ev[3].rec.timestamp, ev[2].rec.end);
  // The correction function agrees with the events and fades at 1 - gamma per tick.
  std::size_t cur = 0;
  EXPECT_EQ(r.per_input[1].delta_at(900, cur), 100u);
  EXPECT_EQ(r.per_input[1].delta_at(800, cur), 0u);
  EXPECT_LT(r.per_input[1].delta_at(5000, cur), 100u);
  EXPECT_EQ(r.per_input[0].delta_at(1000, cur = 0), 0u);
}

TEST(ClcTest, ACollectiveEndingBeforeTheLastMemberEnteredIsCorrected) {
  auto ev = events_of({call(0, MpiCall::Barrier, -1, 0, 100, 200, 2), call(1, MpiCall::Barrier, -1, 0, 300, 310, 2)});
  const Matching m = match_messages(ev);
  EXPECT_EQ(count_violations(ev, m), 1u);  // rank 0 left at 200, before rank 1 entered at 300
  clc(ev, m, 2, 0.99);
  EXPECT_EQ(count_violations(ev, m), 0u);
  EXPECT_EQ(ev[0].rec.end, 300u);
}

TEST(ClcTest, CorrectionsPropagateAlongCausalChains) {
  // 0 -> 1 -> 2: rank 1 is corrected after the first message, and its send with it, which then moves rank 2.
  auto ev = events_of({call(0, MpiCall::Send, 1, 0, 1000, 1001), call(1, MpiCall::Recv, 0, 0, 10, 20),
                       call(1, MpiCall::Send, 2, 0, 30, 31), call(2, MpiCall::Recv, 1, 0, 500, 900)});
  const Matching m = match_messages(ev);
  EXPECT_EQ(count_violations(ev, m), 1u);  // the second pair is fine before the correction
  clc(ev, m, 3, 0.99);
  EXPECT_EQ(count_violations(ev, m), 0u);
  EXPECT_GE(ev[3].rec.end, ev[2].rec.timestamp);
  EXPECT_GE(ev[2].rec.timestamp, ev[1].rec.end);
}

// The controlled logical clock as first written (every receiving member of a collective depending on every
// sending member; each step scanning every rank): quadratic, but plain. The merge's own pass keeps a count
// per instance and two heaps, and must give exactly this result on any input.
ClcResult reference_clc(std::vector<MpiEvent>& events, const Matching& m, std::size_t inputs, double gamma) {
  ClcResult res;
  res.per_input.resize(inputs);
  for (auto& c : res.per_input) c.fade = 1.0 - gamma;
  const std::size_t n = events.size();
  std::vector<std::vector<std::size_t>> order(inputs);
  for (std::size_t i = 0; i < n; ++i)
    order[events[i].input].push_back(2 * i), order[events[i].input].push_back(2 * i + 1);
  auto time_of = [&](std::size_t node) { return node & 1 ? events[node / 2].rec.end : events[node / 2].rec.timestamp; };
  for (auto& o : order)
    std::stable_sort(o.begin(), o.end(), [&](std::size_t a, std::size_t b) { return time_of(a) < time_of(b); });
  std::vector<std::vector<std::size_t>> deps(n);
  for (const auto& [s, r] : m.pairs) deps[r].push_back(2 * s);
  for (const auto& inst : m.collectives)
    for (std::size_t i : inst)
      if (mpi_receives(mpi_role(events[i].rec)))
        for (std::size_t j : inst)
          if (j != i && mpi_sends(mpi_role(events[j].rec))) deps[i].push_back(2 * j);
  std::vector<std::uint64_t> corrected(2 * n, 0), prev_a(inputs, 0), prev_c(inputs, 0);
  std::vector<char> done(2 * n, 0), has_prev(inputs, 0);
  std::vector<std::size_t> cursor(inputs, 0);
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
          (r == pick_ready && time_of(node) < time_of(order[pick][cursor[pick]])))
        pick = in, pick_ready = r;
    }
    if (pick == inputs) break;
    if (!pick_ready) ++res.forced;
    const std::size_t node = order[pick][cursor[pick]++];
    const std::uint64_t a = time_of(node);
    std::uint64_t c = a;
    if (has_prev[pick]) {
      const std::uint64_t gap = a - prev_a[pick];
      const double shrink = double(gap) * (1.0 - gamma);
      c = std::max(c, sat_add(prev_c[pick], gap - std::min<std::uint64_t>(gap, static_cast<std::uint64_t>(shrink))));
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
    if (c - a != corr.delta_at(a, cur)) corr.steps.emplace_back(a, c - a);
    if (c > a) ++res.events_moved;
    res.max_correction = std::max(res.max_correction, c - a);
  }
  for (std::size_t i = 0; i < n; ++i) {
    events[i].rec.timestamp = corrected[2 * i];
    events[i].rec.end = std::max(corrected[2 * i + 1], corrected[2 * i]);
  }
  return res;
}

// Random jobs (messages with skewed clocks, rooted and all-to-all collectives, receives matched to no send,
// now and then an end before its begin): the merge's pass and the reference agree event by event.
TEST(ClcTest, TheCountedPassGivesTheReferenceResultOnRandomJobs) {
  std::uint64_t seed = 12345;
  auto rnd = [&](std::uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  const MpiCall colls[] = {MpiCall::Barrier, MpiCall::Bcast, MpiCall::Reduce, MpiCall::Allreduce};
  std::uint64_t moved = 0;
  for (int job = 0; job < 200; ++job) {
    const std::uint32_t ranks = 2 + static_cast<std::uint32_t>(rnd(6));
    std::vector<std::uint64_t> clock(ranks), skew(ranks);
    for (auto& k : skew) k = rnd(400);
    std::vector<MpiEvent> ev;
    std::int32_t seq = 0;
    for (int step = 0; step < 30; ++step) {
      if (rnd(3) == 0) {  // a collective on every rank
        const MpiCall c = colls[rnd(4)];
        const std::int32_t root = static_cast<std::int32_t>(rnd(ranks));
        for (std::uint32_t r = 0; r < ranks; ++r) {
          std::uint64_t t0 = clock[r] += 1 + rnd(50);
          std::uint64_t t1 = clock[r] += 1 + rnd(60);
          if (rnd(25) == 0) std::swap(t0, t1);  // damaged: a member that ends before it begins
          MpiRecord rec = call(r, c, c == MpiCall::Barrier || c == MpiCall::Allreduce ? -1 : root, seq, t0 + skew[r],
                               t1 + skew[r], ranks);
          ev.push_back({rec, r});
        }
        ++seq;
      } else {  // a message from a to b (sometimes never sent: a receive left unmatched)
        const std::uint32_t a = static_cast<std::uint32_t>(rnd(ranks)),
                            b = (a + 1 + static_cast<std::uint32_t>(rnd(ranks - 1))) % ranks;
        const std::int32_t tag = static_cast<std::int32_t>(rnd(3));
        const std::uint64_t s0 = clock[a] += 1 + rnd(40), s1 = clock[a] += rnd(20);
        if (rnd(10))
          ev.push_back({call(a, MpiCall::Send, static_cast<std::int32_t>(b), tag, s0 + skew[a], s1 + skew[a]), a});
        std::uint64_t r0 = clock[b] += 1 + rnd(40), r1 = clock[b] += rnd(80);
        if (rnd(25) == 0) std::swap(r0, r1);  // a damaged record: it ends before it begins
        ev.push_back({call(b, MpiCall::Recv, static_cast<std::int32_t>(a), tag, r0 + skew[b], r1 + skew[b]), b});
      }
    }
    const Matching m = match_messages(ev);
    auto mine = ev, theirs = ev;
    const double gamma = rnd(2) ? 0.99 : 0.5;
    const ClcResult r1 = clc(mine, m, ranks, gamma), r2 = reference_clc(theirs, m, ranks, gamma);
    ASSERT_EQ(r1.forced, r2.forced) << "job " << job;
    ASSERT_EQ(r1.events_moved, r2.events_moved) << "job " << job;
    ASSERT_EQ(r1.max_correction, r2.max_correction) << "job " << job;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      ASSERT_EQ(mine[i].rec.timestamp, theirs[i].rec.timestamp) << "job " << job << " event " << i;
      ASSERT_EQ(mine[i].rec.end, theirs[i].rec.end) << "job " << job << " event " << i;
    }
    for (std::uint32_t r = 0; r < ranks; ++r) ASSERT_EQ(r1.per_input[r].steps, r2.per_input[r].steps) << "job " << job;
    moved += r1.events_moved;
  }
  EXPECT_GT(moved, 0u);  // the jobs do need correcting
}

// ---- kron rpt's message rows: 003 class 4 across ranks (ERRATUM E210) ---------------------------------------
TEST(MessageRowsTest, EachMessageIsASendToReceiveIntervalPerRankPairAndForAll) {
  auto ev = events_of({call(0, MpiCall::Send, 1, 1, 100, 110), call(1, MpiCall::Recv, 0, 1, 90, 150),
                       call(0, MpiCall::Send, 1, 1, 200, 210), call(1, MpiCall::Recv, 0, 1, 160, 230),
                       call(1, MpiCall::Send, 0, 2, 300, 305), call(0, MpiCall::Recv, 1, 2, 250, 290),
                       call(1, MpiCall::Send, 0, 3, 400, 405)});
  const auto rows = message_rows(ev, match_messages(ev), false);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "MPI message 0->1");
  EXPECT_EQ(rows[0].stats.count, 2u);
  EXPECT_EQ(rows[0].stats.min, 30u);  // 200 -> 230
  EXPECT_EQ(rows[0].stats.max, 50u);  // 100 -> 150
  EXPECT_EQ(rows[1].name, "MPI message 1->0");
  EXPECT_EQ(rows[1].stats.count, 0u);  // its receive ended (290) before the send began (300)
  EXPECT_EQ(rows[1].stats.unmatched_ends, 1u);
  EXPECT_EQ(rows[2].name, "MPI messages (all)");
  EXPECT_EQ(rows[2].stats.count, 2u);
  EXPECT_EQ(rows[2].stats.unmatched_starts, 1u);  // the send of tag 3 nobody received
  EXPECT_EQ(rows[2].stats.unmatched_ends, 1u);
}

// ---- merge_files on rank files written here ----------------------------------------------------------------
class MergeFilesTest : public ::testing::Test {
 protected:
  std::filesystem::path dir;
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("kron-merge-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  // A rank's file: samples every `step` ticks from `t0` (some named), its calls and its clock offsets.
  std::string rank_file(std::uint32_t rank, std::uint32_t world, std::uint64_t t0, std::uint64_t step, int n,
                        std::vector<MpiRecord> calls, std::vector<ClockOffsetRecord> offs, std::uint16_t name_id) {
    const std::string p = (dir / ("r.rank-" + std::to_string(rank) + ".kron")).string();
    tracefile::FileHeader h = tracefile::make_header();
    h.clock_hz = 1'000'000'000;
    h.start_ticks = t0;
    h.node = rank;
    h.mpi_rank = rank;
    h.mpi_world_size = world;
    tracefile::Writer w(p, h);
    for (int i = 0; i < n; ++i) {
      Sample s;
      s.source = board::source_id(rank, 100 + rank);
      s.thread = 100 + rank;
      s.timestamp = t0 + std::uint64_t(i) * step;
      s.data = i % 2 ? record::named_data(name_id, std::uint64_t(i)) : std::uint64_t(i);
      s.flags = i % 2 ? kFlagNamed : 0;
      w.append(s);
    }
    w.append_mpi(calls);
    w.append_clock(offs);
    h.overruns = rank;  // something lost, counted
    h.passed_filter = std::uint64_t(n) + rank;
    record::NameRecord nr{};
    nr.h.kind = record::RecordKind::Names;
    nr.h.size = sizeof nr;
    nr.name_kind = record::NameKind::Scope;
    nr.id = name_id;
    std::snprintf(nr.name, sizeof nr.name, "%s", "MPI_Send");
    record::NameRecord node{};
    node.h = nr.h;
    node.name_kind = record::NameKind::Node;
    node.thread = rank;
    std::snprintf(node.name, sizeof node.name, "node%u", rank);
    const record::NameRecord names[] = {nr, node};
    w.finish(h, {}, names);
    return p;
  }
};

TEST_F(MergeFilesTest, RanksOnOneTimelineInTimeOrderWithAccountingAndNames) {
  // Rank 1's clock is 5000 ticks behind rank 0's: one message sent by 0 at 10 000 (rank 0's clock) is
  // received by 1 at 6 000 (its clock), which is 11 000 on rank 0's: no violation once aligned.
  const auto a =
      rank_file(0, 2, 1000, 100, 200, {call(0, MpiCall::Send, 1, 3, 10'000, 10'010)}, {offset(0, 1000, 1000, 0)}, 1);
  const auto b = rank_file(1, 2, 1000, 100, 150, {call(1, MpiCall::Recv, 0, 3, 5'900, 6'000)},
                           {offset(1, 2000, 7000, 40), offset(1, 12'000, 17'000, 40)}, 7);
  const std::string out = (dir / "all.kron").string();
  MergeReport r = merge_files({b, a}, out, MergeOptions{});
  EXPECT_EQ(r.samples, 350u);
  EXPECT_EQ(r.messages, 1u);
  EXPECT_EQ(r.violations_found, 0u);
  EXPECT_EQ(r.violations_left, 0u);
  EXPECT_EQ(r.passed_filter, r.samples + r.overruns + r.overwritten);
  tracefile::Reader rd(out);
  const auto& h = rd.header();
  EXPECT_EQ(h.mpi_rank, tracefile::kMergedRank);
  EXPECT_EQ(h.mpi_world_size, 2u);
  EXPECT_EQ(h.merge_flags, tracefile::kMergeMerged | tracefile::kMergeAligned | tracefile::kMergeClc);
  EXPECT_EQ(h.passed_filter, 350u + 1u);
  EXPECT_EQ(h.overruns, 1u);
  Sample s;
  std::uint64_t last = 0, n = 0, named = 0;
  tracefile::NameTable names;
  for (const auto& nr : rd.names()) names.add(nr);
  while (rd.next(s)) {
    EXPECT_GE(s.timestamp, last);
    last = s.timestamp;
    if (board::source_node(s.source) == 1 && s.data == 0) {
      EXPECT_EQ(s.timestamp, 6000u);  // rank 1's first, aligned
    }
    if (s.flags & kFlagNamed) {
      ++named;
      EXPECT_EQ(names.name_of(s), "MPI_Send");  // ids 1 and 7 of the two boards, one id in the merged file
    }
    ++n;
  }
  EXPECT_EQ(n, 350u);
  EXPECT_EQ(named, 175u);
  EXPECT_EQ(rd.mpi_records().size(), 2u);
  EXPECT_EQ(rd.clock_offsets().size(), 3u);
  EXPECT_EQ(h.late, 0u);
}

TEST_F(MergeFilesTest, UnalignedMergeShowsTheViolationTheAlignmentRemoves) {
  const auto a =
      rank_file(0, 2, 1000, 100, 10, {call(0, MpiCall::Send, 1, 3, 10'000, 10'010)}, {offset(0, 1000, 1000, 0)}, 1);
  const auto b =
      rank_file(1, 2, 1000, 100, 10, {call(1, MpiCall::Recv, 0, 3, 5'900, 6'000)}, {offset(1, 2000, 7000, 40)}, 1);
  MergeOptions raw;
  raw.align = false;
  raw.clc = false;
  const MergeReport r = merge_files({a, b}, (dir / "raw.kron").string(), raw);
  EXPECT_EQ(r.violations_found, 1u);
  EXPECT_EQ(r.violations_left, 1u);
  raw.clc = true;  // not aligned, but corrected
  const MergeReport c = merge_files({a, b}, (dir / "clc.kron").string(), raw);
  EXPECT_EQ(c.violations_found, 1u);
  EXPECT_EQ(c.violations_left, 0u);
  EXPECT_EQ(c.max_correction, 4000u);
  tracefile::Reader rd((dir / "clc.kron").string());
  EXPECT_EQ(rd.header().violations_found, 1u);
  EXPECT_EQ(rd.header().violations_left, 0u);
  EXPECT_EQ(rd.header().max_correction, 4000u);
}

TEST_F(MergeFilesTest, TwoFilesOfOneRankAreRefusedNamingTheField) {
  const auto a = rank_file(0, 2, 1000, 100, 10, {}, {}, 1);
  const std::string copy = (dir / "copy.kron").string();
  std::filesystem::copy_file(a, copy);
  try {
    merge_files({a, copy}, (dir / "x.kron").string(), MergeOptions{});
    FAIL() << "merged two files of rank 0";
  } catch (const InputError& e) {
    EXPECT_EQ(e.offset(), offsetof(tracefile::FileHeader, mpi_rank));
    EXPECT_NE(std::string(e.what()).find(copy), std::string::npos);
  }
  EXPECT_THROW(merge_files({a}, a, MergeOptions{}), std::runtime_error);  // the output is an input
  const std::string merged = (dir / "merged.kron").string();
  merge_files({a}, merged, MergeOptions{});
  try {
    merge_files({merged}, (dir / "y.kron").string(), MergeOptions{});
    FAIL() << "merged a merged file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a merged file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kron::merge
