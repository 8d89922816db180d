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
#include <map>
#include <string>
#include <vector>

#include "kron/board.hpp"
#include "kron/core/error.hpp"
#include "kron/format/trace_file.hpp"
#include "support/mpi_records.hpp"
#include "support/rank_files.hpp"

namespace kron::merge {
namespace {

using namespace analysis;

using record::ClockOffsetRecord;
using record::MpiCall;
using record::MpiRecord;

// A call that moves `bytes` (8 unless said: a collective of no data orders nothing, DECISION D12).
MpiRecord call(std::uint32_t rank, MpiCall c, std::int32_t peer, std::int32_t tag, std::uint64_t t0, std::uint64_t t1,
               std::uint32_t comm_size = 2, std::uint64_t bytes = 8) {
  return testing::mpi_call(rank, c, 0, comm_size, peer, tag, t0, t1, bytes);
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

// ERRATUM E433, E434, DECISION D12: a non-blocking or `v` collective depends as its blocking form does (MPI 4.0
// sections 6.12, 6.5-6.11); a Scan's member waits only for the members before it. Rank 1 ends each call at 15,
// before rank 2 entered (20).
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

// DECISION D12 (MPI 4.0 section 6.1: a collective "may, or may not, have the effect of synchronizing all
// calling processes"; section 6.3: a barrier blocks "until all group members have called it"): a collective
// that moves no data orders nothing, a barrier excepted, and a `v` collective's member that gives nothing is
// waited for by no one. Rank 1 leaves at 15, before rank 0 (the root where there is one) entered at 20.
TEST(MatchTest, ACollectiveOfNoDataOrdersNothingButABarrier) {
  auto violations = [](MpiCall c, std::int32_t root, std::uint64_t bytes) {
    auto ev = events_of({call(0, c, root, 0, 20, 30, 2, bytes), call(1, c, root, 0, 11, 15, 2, bytes)});
    return count_violations(ev, match_messages(ev));
  };
  for (MpiCall c : {MpiCall::Bcast, MpiCall::Ibcast, MpiCall::Scatter, MpiCall::Scatterv}) {
    EXPECT_EQ(violations(c, 0, 8), 1u) << int(c);
    EXPECT_EQ(violations(c, 0, 0), 0u) << int(c);  // the late root's zero-count broadcast
  }
  for (MpiCall c : {MpiCall::Allreduce, MpiCall::Iallreduce, MpiCall::Allgather, MpiCall::Alltoall,
                    MpiCall::Alltoallv, MpiCall::ReduceScatter}) {
    EXPECT_EQ(violations(c, -1, 8), 1u) << int(c);
    EXPECT_EQ(violations(c, -1, 0), 0u) << int(c);
  }
  for (MpiCall c : {MpiCall::Gather, MpiCall::Gatherv, MpiCall::Reduce, MpiCall::Igatherv}) {  // rooted at rank 1
    EXPECT_EQ(violations(c, 1, 8), 1u) << int(c);
    EXPECT_EQ(violations(c, 1, 0), 0u) << int(c);
  }
  EXPECT_EQ(violations(MpiCall::Barrier, -1, 0), 1u);
  EXPECT_EQ(violations(MpiCall::Ibarrier, -1, 0), 1u);
  // An Allgatherv where rank 0 gives nothing: rank 1 does not wait for it; rank 0 still waits for rank 1's data.
  auto ev = events_of({call(0, MpiCall::Allgatherv, -1, 0, 20, 30, 2, 0), call(1, MpiCall::Allgatherv, -1, 0, 11, 15, 2, 8)});
  EXPECT_EQ(count_violations(ev, match_messages(ev)), 0u);
  EXPECT_EQ(mpi_role(ev[0].rec), MpiRole::Receiver);
  EXPECT_EQ(mpi_role(ev[1].rec), MpiRole::Both);
}

// FNV-1a of world ranks in communicator order, as ERRATUM E203 defines a communicator's id.
std::uint32_t comm_id(std::initializer_list<std::uint32_t> world_ranks) {
  std::uint32_t h = 2166136261u;
  for (std::uint32_t w : world_ranks)
    for (int b = 0; b < 4; ++b) h = (h ^ ((w >> (8 * b)) & 0xffu)) * 16777619u;
  return h ? h : 1;
}

// DECISION D12 (MPI 4.0 section 6.11.1: MPI_Scan's result at process i is the reduction of the values of
// processes 0..i): a member's end waits for the begin of each member before it, never of one after it.
TEST(MatchTest, AScanOrdersEachMemberAfterTheMembersBeforeIt) {
  for (MpiCall c : {MpiCall::Scan, MpiCall::Exscan}) {
    // Rank 0 enters at 50; rank 1 has left at 20: a violation. Rank 2 leaves at 60, after all entered.
    auto ev = events_of({call(0, c, -1, 0, 50, 70, 3), call(1, c, -1, 0, 10, 20, 3), call(2, c, -1, 0, 30, 60, 3)});
    const Matching m = match_messages(ev);
    EXPECT_EQ(m.ordered.size(), 3u);  // 0 before 1, 0 before 2, 1 before 2
    const auto v = find_violations(ev, m);
    ASSERT_EQ(v.size(), 1u) << int(c);
    EXPECT_EQ(v[0].before, 0u);
    EXPECT_EQ(v[0].after, 1u);
    // Rank 0 leaving before rank 2 entered is allowed: its result holds nobody else's data.
    auto early = events_of({call(0, c, -1, 0, 10, 12, 3), call(1, c, -1, 0, 11, 40, 3), call(2, c, -1, 0, 30, 60, 3)});
    EXPECT_EQ(count_violations(early, match_messages(early)), 0u);
    // No data, no order.
    auto none = events_of({call(0, c, -1, 0, 50, 70, 3, 0), call(1, c, -1, 0, 10, 20, 3, 0), call(2, c, -1, 0, 30, 60, 3, 0)});
    EXPECT_EQ(count_violations(none, match_messages(none)), 0u);
  }
  // On a communicator of ranks 0, 1 and 2 in world order (its id says so) the same; on one whose id says
  // another order (or that is not of these members) no order is claimed (ERRATUM E434).
  for (std::uint32_t comm : {comm_id({0, 1, 2}), comm_id({2, 1, 0})}) {
    std::vector<MpiEvent> ev;
    for (std::uint32_t r = 0; r < 3; ++r) {
      const std::uint64_t t0 = r == 0 ? 50 : r == 1 ? 10 : 30;
      ev.push_back({testing::mpi_call(r, MpiCall::Scan, comm, 3, -1, 0, t0, r == 1 ? 20 : 70, 8), r});
    }
    EXPECT_EQ(count_violations(ev, match_messages(ev)), comm == comm_id({0, 1, 2}) ? 1u : 0u) << comm;
  }
}

// The unmatched receives and the incomplete collectives are named, not only counted.
TEST(MatchTest, UnmatchedReceivesAndIncompleteCollectivesAreListed) {
  auto ev = events_of({call(1, MpiCall::Recv, 0, 4, 30, 40), call(0, MpiCall::Send, 1, 5, 5, 6),
                       call(1, MpiCall::Recv, 0, 5, 7, 9), call(1, MpiCall::Irecv, 0, 9, 10, 50),
                       call(0, MpiCall::Barrier, -1, 0, 60, 70, 3), call(2, MpiCall::Barrier, -1, 0, 61, 71, 3)});
  const Matching m = match_messages(ev);
  EXPECT_EQ(m.unmatched_recv_events, (std::vector<std::size_t>{3, 0}));  // in posting order
  ASSERT_EQ(m.incomplete.size(), 1u);
  EXPECT_EQ(m.incomplete[0], (std::vector<std::size_t>{4, 5}));
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
  EXPECT_EQ(r.of_input(1).delta_at(900, cur), 100u);
  EXPECT_EQ(r.of_input(1).delta_at(800, cur), 0u);
  EXPECT_LT(r.of_input(1).delta_at(5000, cur), 100u);
  EXPECT_EQ(r.of_input(0).delta_at(1000, cur = 0), 0u);
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

// DECISION D10: ranks of one clock are one timeline already. The CLC corrects nothing between them, and what is
// violated among them stays as recorded (a recording fault, named by the merge).
TEST(ClcTest, RanksOfOneClockAreNeverMovedAgainstEachOther) {
  // Rank 1's receive ends (900) before rank 0's send began (1000); then a barrier where rank 1 left early.
  const auto job = events_of({call(0, MpiCall::Send, 1, 1, 1000, 1010), call(1, MpiCall::Recv, 0, 1, 850, 900),
                              call(0, MpiCall::Barrier, -1, 0, 2000, 2100), call(1, MpiCall::Barrier, -1, 0, 1500, 1600)});
  auto ev = job;
  const Matching m = match_messages(ev);
  const std::vector<std::uint32_t> one_clock{0, 0};
  const ClcResult r = clc(ev, m, one_clock, 0.99);
  EXPECT_EQ(r.forced, 0u);  // no dependency inside one clock: none to wait for, no cycle to break
  EXPECT_EQ(r.events_moved, 0u);
  EXPECT_EQ(r.max_correction, 0u);
  for (std::size_t i = 0; i < ev.size(); ++i) {
    EXPECT_EQ(ev[i].rec.timestamp, job[i].rec.timestamp) << i;
    EXPECT_EQ(ev[i].rec.end, job[i].rec.end) << i;
  }
  const auto left = find_violations(ev, m, one_clock);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].before, 0u);  // the send's begin
  EXPECT_EQ(left[0].after, 1u);   // the receive that ended before it
  EXPECT_EQ(left[1].after, 3u);   // rank 1's barrier
  // Two clocks: the same job is corrected (the CLC still works where clocks were measured).
  auto two = job;
  const ClcResult c = clc(two, m, 2, 0.99);
  EXPECT_GT(c.events_moved, 0u);
  EXPECT_EQ(count_violations(two, m), 0u);
}

// DECISION D10: between measured clocks the CLC corrects real dependencies, and all the ranks of one clock move
// together: one correction for the clock, so their order among themselves is kept.
TEST(ClcTest, MeasuredClocksAreCorrectedTogetherForRealDependencies) {
  // Ranks 1 and 2 share a clock read 100 ticks behind rank 0's: rank 1's receive ends (900) before rank 0's
  // send began (1000). Rank 1 then sends to rank 2, on their clock (950 -> 970): fine as recorded.
  auto ev = events_of({call(0, MpiCall::Send, 1, 1, 1000, 1010), call(1, MpiCall::Recv, 0, 1, 850, 900),
                       call(1, MpiCall::Send, 2, 2, 950, 960), call(2, MpiCall::Recv, 1, 2, 955, 970)});
  const Matching m = match_messages(ev);
  const std::vector<std::uint32_t> clocks{0, 1, 1};
  const ClcResult r = clc(ev, m, clocks, 0.99);
  EXPECT_EQ(count_violations(ev, m), 0u);
  EXPECT_EQ(ev[1].rec.end, 1000u);  // the receive's end moved to its send's begin
  EXPECT_EQ(ev[0].rec.timestamp, 1000u);
  EXPECT_EQ(&r.of_input(1), &r.of_input(2));  // one correction for both ranks of the clock
  // Rank 2, which depends on nothing of rank 0's, moved with its clock, by that clock's correction.
  std::size_t cur = 0;
  EXPECT_EQ(ev[3].rec.end, 970 + r.of_input(2).delta_at(970, cur));
  EXPECT_GT(ev[3].rec.end, 970u);
  EXPECT_GE(ev[3].rec.end, ev[2].rec.timestamp);  // their order among themselves kept
  EXPECT_EQ(r.of_input(0).steps.size(), 0u);      // rank 0's clock not moved
}

// The controlled logical clock as first written (every receiving member of a collective depending on every
// sending member on another clock; each step scanning every clock): quadratic, but plain. The merge's own pass
// keeps a count per instance and clock and two heaps, and must give exactly this result on any input.
ClcResult reference_clc(std::vector<MpiEvent>& events, const Matching& m, const std::vector<std::uint32_t>& clock_of,
                        double gamma) {
  ClcResult res;
  std::size_t clocks = 0;
  for (auto c : clock_of) clocks = std::max<std::size_t>(clocks, c + 1);
  res.per_clock.resize(clocks);
  res.clock_of_input = clock_of;
  for (auto& c : res.per_clock) c.fade = 1.0 - gamma;
  const std::size_t n = events.size();
  auto clk = [&](std::size_t e) { return clock_of[events[e].input]; };
  std::vector<std::vector<std::size_t>> order(clocks);
  for (std::size_t i = 0; i < n; ++i) order[clk(i)].push_back(2 * i), order[clk(i)].push_back(2 * i + 1);
  auto time_of = [&](std::size_t node) { return node & 1 ? events[node / 2].rec.end : events[node / 2].rec.timestamp; };
  for (auto& o : order)
    std::stable_sort(o.begin(), o.end(), [&](std::size_t a, std::size_t b) { return time_of(a) < time_of(b); });
  std::vector<std::vector<std::size_t>> deps(n);
  for (const auto& [s, r] : m.pairs)
    if (clk(s) != clk(r)) deps[r].push_back(2 * s);
  for (const auto& [s, r] : m.ordered)
    if (clk(s) != clk(r)) deps[r].push_back(2 * s);
  for (const auto& inst : m.collectives)
    for (std::size_t i : inst)
      if (mpi_receives(mpi_role(events[i].rec)))
        for (std::size_t j : inst)
          if (clk(j) != clk(i) && mpi_sends(mpi_role(events[j].rec))) deps[i].push_back(2 * j);
  std::vector<std::uint64_t> corrected(2 * n, 0), prev_a(clocks, 0), prev_c(clocks, 0);
  std::vector<char> done(2 * n, 0), has_prev(clocks, 0);
  std::vector<std::size_t> cursor(clocks, 0);
  auto ready = [&](std::size_t node) {
    if (!(node & 1)) return true;
    for (std::size_t d : deps[node / 2])
      if (!done[d]) return false;
    return true;
  };
  for (;;) {
    std::size_t pick = clocks;
    bool pick_ready = false;
    for (std::size_t g = 0; g < clocks; ++g) {
      if (cursor[g] >= order[g].size()) continue;
      const std::size_t node = order[g][cursor[g]];
      const bool r = ready(node);
      if (pick == clocks || (r && !pick_ready) ||
          (r == pick_ready && time_of(node) < time_of(order[pick][cursor[pick]])))
        pick = g, pick_ready = r;
    }
    if (pick == clocks) break;
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
    Correction& corr = res.per_clock[pick];
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

// Random jobs (messages with skewed clocks, some ranks sharing a clock, rooted, all-to-all and prefix
// collectives with and without data, receives matched to no send, now and then an end before its begin):
// the merge's pass and the reference agree event by event.
TEST(ClcTest, TheCountedPassGivesTheReferenceResultOnRandomJobs) {
  std::uint64_t seed = 12345;
  auto rnd = [&](std::uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  const MpiCall colls[] = {MpiCall::Barrier, MpiCall::Bcast,   MpiCall::Reduce, MpiCall::Allreduce,
                           MpiCall::Gatherv, MpiCall::Scatter, MpiCall::Scan,   MpiCall::Exscan};
  std::uint64_t moved = 0, shared = 0;
  for (int job = 0; job < 300; ++job) {
    const std::uint32_t ranks = 2 + static_cast<std::uint32_t>(rnd(6));
    std::vector<std::uint64_t> clock(ranks), skew(ranks);
    std::vector<std::uint32_t> clock_of(ranks);
    for (auto& k : skew) k = rnd(400);
    for (std::uint32_t r = 0; r < ranks; ++r) {
      clock_of[r] = job % 3 == 0 ? r : static_cast<std::uint32_t>(rnd(ranks));  // a third: every rank its own
      shared += clock_of[r] != r;
    }
    std::vector<MpiEvent> ev;
    std::int32_t seq = 0;
    for (int step = 0; step < 30; ++step) {
      if (rnd(3) == 0) {  // a collective on every rank
        const MpiCall c = colls[rnd(8)];
        const std::int32_t root = static_cast<std::int32_t>(rnd(ranks));
        const bool rooted = c == MpiCall::Bcast || c == MpiCall::Reduce || c == MpiCall::Gatherv || c == MpiCall::Scatter;
        const std::uint64_t bytes = rnd(4) == 0 ? 0 : 8;  // now and then no data
        for (std::uint32_t r = 0; r < ranks; ++r) {
          std::uint64_t t0 = clock[r] += 1 + rnd(50);
          std::uint64_t t1 = clock[r] += 1 + rnd(60);
          if (rnd(25) == 0) std::swap(t0, t1);  // damaged: a member that ends before it begins
          const std::uint64_t b = c == MpiCall::Gatherv && rnd(3) == 0 ? 0 : bytes;  // a v collective: per member
          ev.push_back({call(r, c, rooted ? root : -1, seq, t0 + skew[r], t1 + skew[r], ranks, b), r});
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
    const ClcResult r1 = clc(mine, m, clock_of, gamma), r2 = reference_clc(theirs, m, clock_of, gamma);
    ASSERT_EQ(r1.forced, r2.forced) << "job " << job;
    ASSERT_EQ(r1.events_moved, r2.events_moved) << "job " << job;
    ASSERT_EQ(r1.max_correction, r2.max_correction) << "job " << job;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      ASSERT_EQ(mine[i].rec.timestamp, theirs[i].rec.timestamp) << "job " << job << " event " << i;
      ASSERT_EQ(mine[i].rec.end, theirs[i].rec.end) << "job " << job << " event " << i;
    }
    ASSERT_EQ(r1.per_clock.size(), r2.per_clock.size());
    for (std::size_t g = 0; g < r1.per_clock.size(); ++g)
      ASSERT_EQ(r1.per_clock[g].steps, r2.per_clock[g].steps) << "job " << job;
    moved += r1.events_moved;
  }
  EXPECT_GT(moved, 0u);   // the jobs do need correcting
  EXPECT_GT(shared, 0u);  // and some ranks do share a clock
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
    testing::RankFileSpec f;
    f.rank = rank;
    f.world = world;
    f.t0 = t0;
    f.step = step;
    f.samples = n;
    f.calls = std::move(calls);
    f.offsets = std::move(offs);
    f.name_id = name_id;
    return rank_file(f);
  }
  std::string rank_file(const testing::RankFileSpec& f) {
    const std::string p = (dir / ("r.rank-" + std::to_string(f.rank) + ".kron")).string();
    testing::write_rank_file(p, f);
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

// ---- One clock or measured ones (DECISIONS D10-D12) ----------------------------------------------------------
// The late root: rank 0 (the root) arrives 20 ms late to each of five MPI_Bcasts that move nothing (count 0),
// rank 1 leaves each at once (15 us), then both meet in an MPI_Barrier, where rank 1 really waits. Ticks are ns.
constexpr std::uint64_t kT0 = 1'000'000;
std::vector<MpiRecord> late_root_calls(std::uint32_t rank, std::uint64_t bcast_bytes) {
  std::vector<MpiRecord> c;
  for (std::int32_t k = 0; k < 5; ++k) {
    const std::uint64_t b = rank == 0 ? kT0 + std::uint64_t(k + 1) * 20'000'000 : kT0 + 1000 + std::uint64_t(k) * 20'000;
    c.push_back(call(rank, MpiCall::Bcast, 0, k, b, b + (rank == 0 ? 10'000 : 15'000), 2, bcast_bytes));
  }
  const std::uint64_t enter = rank == 0 ? kT0 + 100'020'000 : kT0 + 101'000;
  c.push_back(call(rank, MpiCall::Barrier, -1, 5, enter, kT0 + 100'030'000, 2, 0));
  return c;
}
// Rank `rank`'s file of the late-root job on `node`, its clock read `behind` ticks behind rank 0's (+3: jitter).
testing::RankFileSpec late_root_rank(std::uint32_t rank, const std::string& node, std::uint64_t bcast_bytes,
                                     std::uint64_t behind = 0) {
  testing::RankFileSpec f;
  f.rank = rank;
  f.t0 = kT0;
  f.step = 1'000'000;
  f.samples = 100;
  f.node = node;
  f.tsc = true;
  f.calls = late_root_calls(rank, bcast_bytes);
  for (std::uint64_t t : {kT0, kT0 + 100'040'000})
    f.offsets.push_back(rank == 0 ? offset(0, t, t, 0) : offset(rank, t, t + behind + 3, 40));
  return f;
}
// Rank 1's time in each call kind, from the merged file's MPI records (ns).
std::map<MpiCall, std::uint64_t> time_in(const std::string& merged, std::uint32_t rank) {
  tracefile::Reader rd(merged);
  rd.read_annex();
  std::map<MpiCall, std::uint64_t> t;
  for (const auto& r : rd.mpi_records())
    if (r.rank == rank) t[r.call] += r.end - r.timestamp;
  return t;
}

TEST_F(MergeFilesTest, TheLateRootsEmptyBroadcastsMoveNothingOnOneMachine) {
  const auto a = rank_file(late_root_rank(0, "hostA", 0)), b = rank_file(late_root_rank(1, "hostA", 0));
  const std::string out = (dir / "all.kron").string();
  const MergeReport r = merge_files({a, b}, out, MergeOptions{});
  EXPECT_EQ(r.ranks[1].clock, ClockKind::Exact);
  EXPECT_EQ(r.clocks, 1u);
  EXPECT_EQ(r.violations_found, 0u);
  EXPECT_EQ(r.violations_left, 0u);
  EXPECT_EQ(r.events_moved, 0u);
  const auto t = time_in(out, 1);
  EXPECT_LT(t.at(MpiCall::Bcast), 1'000'000u);    // five times 15 us
  EXPECT_GT(t.at(MpiCall::Barrier), 99'000'000u);  // where rank 1 waited for rank 0
}

TEST_F(MergeFilesTest, BetweenMeasuredClocksTheCorrectionStaysForRealDependenciesOnly) {
  // Rank 1 on another machine, its clock 0.5 ms behind rank 0's (its ticks, plus 0.5 ms, are rank 0's).
  auto a = late_root_rank(0, "hostA", 4), b = late_root_rank(1, "hostB", 4, 500'000);
  for (auto& c : b.calls) c.timestamp -= 500'000, c.end -= 500'000;
  const std::string out = (dir / "all.kron").string();
  // Broadcasts of data: each non-root's end depends on the root's begin, and is corrected past it.
  MergeReport r = merge_files({rank_file(a), rank_file(b)}, out, MergeOptions{});
  EXPECT_EQ(r.ranks[1].clock, ClockKind::Measured);
  EXPECT_EQ(r.clocks, 2u);
  EXPECT_EQ(r.violations_found, 5u);
  EXPECT_EQ(r.violations_left, 0u);
  EXPECT_GT(r.events_moved, 0u);
  EXPECT_GT(time_in(out, 1).at(MpiCall::Bcast), 19'000'000u);
  // Broadcasts of nothing: no dependency, nothing to correct.
  a = late_root_rank(0, "hostA", 0);
  b = late_root_rank(1, "hostB", 0, 500'000);
  for (auto& c : b.calls) c.timestamp -= 500'000, c.end -= 500'000;
  r = merge_files({rank_file(a), rank_file(b)}, out, MergeOptions{});
  EXPECT_EQ(r.violations_found, 0u);
  EXPECT_EQ(r.events_moved, 0u);
  EXPECT_LT(time_in(out, 1).at(MpiCall::Bcast), 1'000'000u);
}

TEST_F(MergeFilesTest, AViolationOnOneClockIsARecordingFaultNamedNotCorrected) {
  // The late root's broadcasts with data, on one machine: rank 1 cannot have left before the root entered.
  const auto a = rank_file(late_root_rank(0, "hostA", 4)), b = rank_file(late_root_rank(1, "hostA", 4));
  const MergeReport r = merge_files({a, b}, (dir / "all.kron").string(), MergeOptions{});
  EXPECT_EQ(r.violations_found, 5u);
  EXPECT_EQ(r.violations_left, 5u);
  EXPECT_EQ(r.recording_faults, 5u);
  EXPECT_EQ(r.events_moved, 0u);
  ASSERT_EQ(r.violations.size(), 5u);
  const ViolationLeft& v = r.violations[0];
  EXPECT_TRUE(v.recording_fault);
  EXPECT_EQ(v.rank, 1u);
  EXPECT_EQ(v.peer, 0u);
  EXPECT_EQ(v.call, MpiCall::Bcast);
  EXPECT_EQ(v.peer_call, MpiCall::Bcast);
  EXPECT_EQ(v.comm, 0u);
  EXPECT_EQ(v.tag, 0);
  EXPECT_NEAR(v.end_s, 16e-6, 1e-9);   // rank 1 left at 1 us + 15 us after rank 0's start
  EXPECT_NEAR(v.begin_s, 20e-3, 1e-9);  // the root entered 20 ms after it
}

// Per rank: how its clock was mapped, and every measurement as measured (DECISION D10).
TEST_F(MergeFilesTest, EachRanksClockIsReportedWithEveryMeasurement) {
  // Ranks 0 and 1 on hostA; ranks 2 and 3 on hostB, one clock 5000 ticks behind rank 0's; rank 4 on hostA
  // with measurements 1 ms off (a rank whose time base claims hostA's clock but whose measurements disagree).
  // Each rank's measurements carry its own jitter of `rank` ticks.
  std::vector<std::string> files;
  for (std::uint32_t r = 0; r < 5; ++r) {
    testing::RankFileSpec f;
    f.rank = r;
    f.world = 5;
    f.tsc = true;
    f.node = r == 2 || r == 3 ? "hostB" : "hostA";
    const std::uint64_t off = r == 2 || r == 3 ? 5000 : r == 4 ? 1'000'000 : 0;
    for (std::uint64_t t : {10'000u, 2'000'000u})
      f.offsets.push_back(r == 0 ? offset(0, t, t, 0) : offset(r, t, t + off + r, 30 + r));
    files.push_back(rank_file(f));
  }
  const MergeReport r = merge_files(files, (dir / "all.kron").string(), MergeOptions{});
  ASSERT_EQ(r.ranks.size(), 5u);
  EXPECT_EQ(r.ranks[0].clock, ClockKind::Reference);
  EXPECT_EQ(r.ranks[1].clock, ClockKind::Exact);
  EXPECT_EQ(r.ranks[1].clock_rank, 0u);
  EXPECT_EQ(r.ranks[2].clock, ClockKind::Measured);
  EXPECT_EQ(r.ranks[3].clock, ClockKind::Measured);
  EXPECT_EQ(r.ranks[3].clock_rank, 2u);  // one clock with rank 2: one map for both
  EXPECT_EQ(r.ranks[4].clock, ClockKind::Measured);
  EXPECT_EQ(r.ranks[4].clock_rank, 4u);
  EXPECT_EQ(r.clocks, 3u);
  // Every measurement kept as measured: time, offset, round trip; used by the map where the clock was measured.
  for (std::uint32_t k = 1; k < 5; ++k) {
    ASSERT_EQ(r.ranks[k].measurements.size(), 2u) << k;
    const Measurement& m = r.ranks[k].measurements[1];
    EXPECT_EQ(m.local, 2'000'000u);
    EXPECT_EQ(m.rtt, 30u + k);
    EXPECT_DOUBLE_EQ(m.rtt_ns, 30.0 + k);
    const double off = k == 2 || k == 3 ? 5000.0 : k == 4 ? 1e6 : 0.0;
    EXPECT_DOUBLE_EQ(m.offset_ns, off + k) << k;
    EXPECT_EQ(m.used, k == 2 || k == 4) << k;  // an exact clock uses none; rank 3's clock is rank 2's map
  }
  EXPECT_NEAR(r.ranks[2].offset_ns, 5002, 0.5);
  EXPECT_EQ(r.ranks[3].offset_ns, r.ranks[2].offset_ns);  // one clock, one map
  // Rank 4 is said by name: its time base claims rank 0's clock, its measurements another.
  bool named = false;
  for (const auto& w : r.warnings)
    named |= w.find("rank 4 (" + files[4] + "): its node and time base are rank 0's") != std::string::npos;
  EXPECT_TRUE(named) << ::testing::PrintToString(r.warnings);
}

// DECISION D11: clock-offset records that contradict each other or their file are refused, naming the file
// and the record.
TEST_F(MergeFilesTest, ClockRecordsThatContradictEachOtherAreRefusedNamingFileAndRecord) {
  auto refused = [&](std::vector<ClockOffsetRecord> offs0, std::vector<ClockOffsetRecord> offs1) {
    const auto a = rank_file(0, 2, 1000, 100, 10, {}, std::move(offs0), 1);
    const auto b = rank_file(1, 2, 1000, 100, 10, {}, std::move(offs1), 1);
    try {
      merge_files({a, b}, (dir / "x.kron").string(), MergeOptions{});
      return std::string("merged");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
  };
  const std::vector<ClockOffsetRecord> good0{offset(0, 1000, 1000, 0)};
  auto bad_ref = offset(1, 1000, 1000, 10);
  bad_ref.reference_rank = 1;
  std::string e = refused(good0, {offset(1, 500, 500, 10), bad_ref});
  EXPECT_EQ(e.find(dir.string()), 0u) << e;
  EXPECT_NE(e.find("r.rank-1.kron: offset"), std::string::npos) << e;
  EXPECT_NE(e.find("clock-offset record 1 of 2 (local tick 1000) measures against rank 1"), std::string::npos) << e;
  e = refused({offset(0, 1000, 1200, 0)}, {offset(1, 1000, 1000, 10)});
  EXPECT_NE(e.find("r.rank-0.kron: offset"), std::string::npos) << e;
  EXPECT_NE(e.find("of the reference rank reads 1200"), std::string::npos) << e;
  // One instant, references 100 apart, round trips 40 and 60: at most 50 apart.
  e = refused(good0, {offset(1, 5000, 5000, 40), offset(1, 5000, 5100, 60)});
  EXPECT_NE(e.find("r.rank-1.kron: offset"), std::string::npos) << e;
  EXPECT_NE(e.find("read rank 0's clock 100 ticks apart at one instant"), std::string::npos) << e;
  EXPECT_EQ(refused(good0, {offset(1, 5000, 5000, 40), offset(1, 5000, 5050, 60)}), "merged");  // 50: allowed
}

}  // namespace
}  // namespace kron::merge

