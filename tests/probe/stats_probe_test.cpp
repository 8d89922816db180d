// Phases, latency histograms and virtual counters on a real board. Each test runs its probes in
// a forked child and reads the board from the parent, as kron hist --board does.
// Sources: 004 4.4.1 (PhaseID Register, PhaseID Watch), 4.4.5 (SRAM counters: negative preload, interrupt
// on overflow = kron's thresholds), 003 (MultiKron_vc, 8,192 virtual counters).
#include <signal.h>
#include <sys/syscall.h>

#include <thread>

#include "analysis/hist.hpp"
#include "recorder/stats_reader.hpp"
#include "kron/core/stats.hpp"
#include "recorder_test_util.hpp"

namespace kron {
namespace {
using testing::in_child;
using testing::samples_of;
using testing::ScratchBoard;

board::CreateOptions small(std::uint32_t cells = 64) {
  board::CreateOptions o;
  o.size = 256 << 10;
  o.lanes = 8;
  o.stat_cells = cells;
  return o;
}
analysis::SnapshotTotals merged(ScratchBoard& b, recorder::BoardStats* out = nullptr) {
  recorder::BoardStats s = recorder::read_board_stats(b.map, 0);
  EXPECT_TRUE(s.problems.empty());
  analysis::SnapshotSum m;
  m.add(s.records);
  if (out) *out = s;
  return m.result();
}
// The values thread `t` records in phase `p`: deterministic, so the parent can compute the same histogram.
std::uint64_t value(unsigned t, unsigned p, unsigned i) { return (i * 2654435761u + t * 977u + p * 131u) % 200000u; }

TEST(PhaseTest, SamplesCarryTheThreadsPhaseAndPhaseScopeRestoresIt) {  // 004 4.4.1 PR
  ScratchBoard b(small());
  ASSERT_EQ(in_child(b.name, [] {
              kron::trace(0, 1);  // phase 0
              kron::phase(0xbeef);
              kron::trace(0, 2);
              {
                kron::phase_scope s(7);
                kron::trace(0, 3);
                if (kron::current_phase() != 7) return 1;
              }
              kron::trace(0, 4);
              kron::resource(0, 5);
              return kron::current_phase() == 0xbeef ? 0 : 2;
            }),
            0);
  auto r = b.reader();
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].phase, 0);
  EXPECT_EQ(s[1].phase, 0xbeef);
  EXPECT_EQ(s[2].phase, 7);
  EXPECT_EQ(s[3].phase, 0xbeef);
  EXPECT_EQ(s[4].phase, 0xbeef);
  for (const auto& x : s) {
    EXPECT_LT(x.cpu, 1024);  // ERRATUM E180: 10 bits of the thread field
    EXPECT_EQ(x.thread, board::source_pid(x.source));  // the child's main thread: tid = pid, cpu bits apart
  }
}

TEST(HistogramProbeTest, PerThreadPerPhaseShardsMergeExactly) {
  ScratchBoard b(small());
  constexpr unsigned kThreads = 3, kPhases = 2, kValues = 5000;
  ASSERT_EQ(in_child(b.name, [] {
              static kron::histogram h("request");
              std::vector<std::thread> ts;
              for (unsigned t = 0; t < kThreads; ++t)
                ts.emplace_back([t] {
                  for (unsigned p = 0; p < kPhases; ++p) {
                    kron::phase_scope s(static_cast<std::uint16_t>(p + 1));
                    for (unsigned i = 0; i < kValues; ++i) kron::record_latency(h, value(t, p, i));
                  }
                });
              for (auto& t : ts) t.join();
              return h.id() == 1 ? 0 : 1;
            }),
            0);
  recorder::BoardStats s;
  const analysis::SnapshotTotals m = merged(b, &s);
  EXPECT_EQ(s.count, kThreads * kPhases);  // one cell, one snapshot per thread and phase
  EXPECT_EQ(s.stat_lost, 0u);
  ASSERT_EQ(m.hists.count("request"), 1u);
  const auto& phases = m.hists.at("request");
  ASSERT_EQ(phases.size(), kPhases);
  for (unsigned p = 0; p < kPhases; ++p) {
    analysis::LatencyHistogram want;
    for (unsigned t = 0; t < kThreads; ++t)
      for (unsigned i = 0; i < kValues; ++i) analysis::record_value(want, value(t, p, i));
    const analysis::LatencyHistogram& got = phases.at(static_cast<std::uint16_t>(p + 1));
    EXPECT_EQ(got.buckets, want.buckets) << "phase " << p + 1;
    EXPECT_EQ(got.sum, want.sum);
    EXPECT_EQ(got.min, want.min);
    EXPECT_EQ(got.max, want.max);
  }
}

TEST(HistogramProbeTest, LatencyTimerRecordsOneValuePerBlock) {
  ScratchBoard b(small());
  ASSERT_EQ(in_child(b.name, [] {
              static kron::histogram h("block");
              for (int i = 0; i < 10; ++i) kron::latency_timer t(h);
              return 0;
            }),
            0);
  const analysis::SnapshotTotals m = merged(b);
  ASSERT_EQ(m.hists.count("block"), 1u);
  EXPECT_EQ(m.hists.at("block").at(0).count(), 10u);
}

// The board outlives its writer: kill -9 in the middle of recording loses no value recorded before it.
TEST(HistogramProbeTest, HistogramsAndCountersSurviveKillNine) {
  ScratchBoard b(small());
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    kron::attach(b.name.c_str());
    static kron::histogram h("survivor");
    for (unsigned i = 0; i < 10000; ++i) {
      kron::record_latency(h, value(0, 0, i));
      kron::vcount(4711, 3);
    }
    const char c = 1;
    if (::write(ready[1], &c, 1) != 1) std::_Exit(3);
    for (std::uint64_t i = 0;; ++i) kron::vcount(100, 0);  // still running (adds 0) when killed
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  const analysis::SnapshotTotals m = merged(b);
  analysis::LatencyHistogram want;
  for (unsigned i = 0; i < 10000; ++i) analysis::record_value(want, value(0, 0, i));
  ASSERT_EQ(m.hists.count("survivor"), 1u);
  EXPECT_EQ(m.hists.at("survivor").at(0).buckets, want.buckets);
  EXPECT_EQ(m.counters.at(0).at(4711), 30000u);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(VirtualCounterTest, EightThousandCountersPerThreadShardsSummed) {  // 003: MultiKron_vc, 8,192 counters
  ScratchBoard b(small());
  ASSERT_EQ(in_child(b.name, [] {
              std::vector<std::thread> ts;
              for (unsigned t = 0; t < 2; ++t)
                ts.emplace_back([t] {
                  for (unsigned i = 0; i < stats::kVirtualCounters; ++i) kron::vcount(i, i + t);
                  kron::phase(9);
                  kron::vcount(8191, 1);
                  kron::vcount(8192, 1);  // not a counter: refused and counted as lost
                });
              for (auto& t : ts) t.join();
              return 0;
            }),
            0);
  recorder::BoardStats s;
  const analysis::SnapshotTotals m = merged(b, &s);
  ASSERT_EQ(m.counters.count(0), 1u);
  const auto& c = m.counters.at(0);
  for (unsigned i = 1; i < stats::kVirtualCounters; ++i) ASSERT_EQ(c.at(i), 2u * i + 1u) << i;
  EXPECT_EQ(c.at(0), 1u);
  EXPECT_EQ(m.counters.at(9).at(8191), 2u);
  EXPECT_EQ(s.stat_lost, 2u);
}

// 004 4.4.1 PW, set from outside while the program runs.
TEST(PhaseWatchTest, WatchSetFromOutsideKeepsOnlyItsPhase) {
  ScratchBoard b(small());
  int ready[2], go[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(go), 0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    kron::attach(b.name.c_str());
    static kron::histogram h("watched");
    auto both = [] {
      for (std::uint16_t p = 0; p < 2; ++p) {
        kron::phase(p);
        for (int i = 0; i < 10; ++i) kron::record_latency(h, 100);
        for (int i = 0; i < 10; ++i) kron::vcount(5, 1);
      }
    };
    both();
    char c = 1;
    if (::write(ready[1], &c, 1) != 1 || ::read(go[0], &c, 1) != 1) std::_Exit(3);
    both();
    std::exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  board::HistSlot* slot = b.map.hist_slot(0);
  ASSERT_EQ(slot->header.load(), board::kHistSlotWord);
  slot->watch_phase.store(1);
  slot->watch.store(static_cast<std::uint32_t>(stats::Watch::Only));
  b.header().counter_watch_phase.store(1);
  b.header().counter_watch.store(static_cast<std::uint32_t>(stats::Watch::Except));
  b.header().stat_gen.fetch_add(1);
  ASSERT_EQ(::write(go[1], &c, 1), 1);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const analysis::SnapshotTotals m = merged(b);
  EXPECT_EQ(m.hists.at("watched").at(0).count(), 10u);  // phase 0 counted only before the watch
  EXPECT_EQ(m.hists.at("watched").at(1).count(), 20u);
  EXPECT_EQ(m.counters.at(0).at(5), 20u);  // the counters' watch: all but phase 1
  EXPECT_EQ(m.counters.at(1).at(5), 10u);
  for (int fd : {ready[0], ready[1], go[0], go[1]}) ::close(fd);
}

// 004 4.4.5: a negative preload that overflows raises an interrupt; kron emits one sample at the crossing.
TEST(ThresholdTest, HistogramThresholdEmitsOneSampleWhenCrossed) {
  ScratchBoard b(small());
  board::HistSlot* slot = b.map.hist_slot(0);
  // Armed before the program runs: histogram id 1 (the first name registered), 3 values at or above 1000.
  slot->threshold_bucket.store(static_cast<std::uint16_t>(stats::bucket_of(1000)));
  slot->threshold_count.store(3);
  b.header().counter_threshold_index.store(7 + 1);
  b.header().counter_threshold.store(50);
  ASSERT_EQ(in_child(b.name, [] {
              static kron::histogram h("slow");
              for (int i = 0; i < 100; ++i) kron::record_latency(h, 10);
              for (int i = 0; i < 10; ++i) kron::record_latency(h, 5000);
              for (int i = 0; i < 10; ++i) kron::vcount(7, 10);
              return 0;
            }),
            0);
  auto r = b.reader();
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].flags, kFlagThreshold);
  EXPECT_EQ(s[0].data, stats::threshold_data(true, 1, stats::bucket_of(5000)));
  EXPECT_EQ(s[1].data, stats::threshold_data(false, 0, 7));
  EXPECT_EQ(b.header().thresholds_crossed.load(), 2u);
  const analysis::SnapshotTotals m = merged(b);
  EXPECT_EQ(m.hists.at("slow").at(0).count(), 110u);  // every value is counted, armed or not
  EXPECT_EQ(m.counters.at(0).at(7), 100u);
}

// The boundaries of both thresholds (ERRATUM E185): a histogram threshold counts values "at or above its
// bucket" (kHistOver), so the last value of the bucket below never counts and the first of its bucket does;
// it fires on exactly its count-th such value. A counter threshold fires when the counter reaches the limit
// (49 is not yet, 50 is), once (also when the thread's cached cells are refilled with the counter at the
// limit), and never for another counter of its page.
TEST(ThresholdTest, BoundariesOfHistogramAndCounterThresholds) {
  ScratchBoard b(small());
  const unsigned bucket = stats::bucket_of(1000);
  const std::uint64_t lo = stats::bucket_range(bucket).lo;
  ASSERT_EQ(stats::bucket_of(lo - 1), bucket - 1);
  board::HistSlot* slot = b.map.hist_slot(0);
  slot->threshold_bucket.store(static_cast<std::uint16_t>(bucket));
  slot->threshold_count.store(2);
  b.header().counter_threshold_index.store(7 + 1);
  b.header().counter_threshold.store(50);
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  ASSERT_EQ(in_child(b.name,
                     [&] {
                       static kron::histogram h("edge");
                       auto crossed = [&] { return static_cast<std::uint8_t>(b.header().thresholds_crossed.load()); };
                       std::uint8_t seen[6];
                       for (int i = 0; i < 50; ++i) kron::record_latency(h, lo - 1);  // the bucket below: never counted
                       kron::record_latency(h, lo);                                   // the first at the bucket: 1 of 2
                       seen[0] = crossed();
                       kron::record_latency(h, lo);  // 2 of 2: fires
                       seen[1] = crossed();
                       kron::record_latency(h, lo);  // fired already: no second sample
                       kron::vcount(8, 1000);        // the threshold's page, another counter
                       seen[2] = crossed();
                       kron::vcount(7, 49);  // one below the limit
                       seen[3] = crossed();
                       kron::vcount(7, 1);  // at the limit: fires
                       seen[4] = crossed();
                       // As kron hist does: every thread refills its cached cells, so that the next count of 7
                       // starts at the limit itself. Fired already: no second sample.
                       board::stats_changed(b.header());
                       kron::vcount(7, 5);
                       seen[5] = crossed();
                       return ::write(pipefd[1], seen, sizeof seen) == sizeof seen ? 0 : 1;
                     }),
            0);
  std::uint8_t seen[6] = {};
  ASSERT_EQ(::read(pipefd[0], seen, sizeof seen), static_cast<long>(sizeof seen));
  ::close(pipefd[0]);
  ::close(pipefd[1]);
  EXPECT_EQ(seen[0], 0) << "fired on the first value at the bucket, of 2";
  EXPECT_EQ(seen[1], 1) << "did not fire on the second value at the bucket";
  EXPECT_EQ(seen[2], 1) << "another counter of the page fired the counter threshold";
  EXPECT_EQ(seen[3], 1) << "fired one below the limit";
  EXPECT_EQ(seen[4], 2) << "did not fire at the limit";
  EXPECT_EQ(seen[5], 2) << "fired again past the limit";
  auto r = b.reader();
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].data, stats::threshold_data(true, 1, bucket));
  EXPECT_EQ(s[1].data, stats::threshold_data(false, 0, 7));
  const analysis::SnapshotTotals m = merged(b);
  const auto& hist = m.hists.at("edge").at(0);
  EXPECT_EQ(hist.count(), 53u);
  EXPECT_EQ(m.counters.at(0).at(7), 55u);
  EXPECT_EQ(m.counters.at(0).at(8), 1000u);
}

TEST(HistogramProbeTest, AFullStatisticsAreaCountsWhatItLoses) {
  ScratchBoard b(small(1));  // one cell
  ASSERT_EQ(in_child(b.name, [] {
              static kron::histogram h("tight");
              kron::record_latency(h, 1);   // phase 0: the one cell
              kron::phase(1);
              for (int i = 0; i < 5; ++i) kron::record_latency(h, 1);  // no cell: 5 lost, counted
              return 0;
            }),
            0);
  recorder::BoardStats s;
  const analysis::SnapshotTotals m = merged(b, &s);
  EXPECT_EQ(m.hists.at("tight").at(0).count(), 1u);
  EXPECT_EQ(s.stat_lost, 5u);
  EXPECT_EQ(s.cells_lost, 1u);
}

TEST(HistogramProbeTest, ABoardWithoutAStatisticsAreaCountsEveryValueLost) {
  ScratchBoard b(small(0));  // --stat-cells 0
  ASSERT_EQ(in_child(b.name, [] {
              static kron::histogram h("nowhere");
              for (int i = 0; i < 5; ++i) kron::record_latency(h, 1);
              kron::vcount(1, 1), kron::vcount(2, 1);
              return 0;
            }),
            0);
  recorder::BoardStats s;
  const analysis::SnapshotTotals m = merged(b, &s);
  EXPECT_TRUE(m.hists.empty());
  EXPECT_EQ(s.stat_lost, 7u);
}

// ERRATUM E340: any value of the board's stat_gen (offset 136), 0 included, is a generation: the thread's
// empty cache entries (tag 0, no cell) never match it, so the first values of a phase-0 thread go to the
// slow path and into cells, never through a null cell pointer.
TEST(HistogramProbeTest, AnyStatGenWrittenIntoTheBoardIsHarmless) {
  for (const std::uint64_t gen : {std::uint64_t{0}, ~std::uint64_t{0}, std::uint64_t{1} << 48}) {
    ScratchBoard b(small());
    b.header().stat_gen.store(gen);
    ASSERT_EQ(in_child(b.name, [] {
                static kron::histogram h("forged-gen");
                for (int i = 0; i < 3; ++i) kron::record_latency(h, 7), kron::vcount(9, 2);
                return 0;
              }),
              0)
        << "stat_gen " << gen;
    const analysis::SnapshotTotals m = merged(b);
    EXPECT_EQ(m.hists.at("forged-gen").at(0).count(), 3u);
    EXPECT_EQ(m.counters.at(0).at(9), 6u);
  }
}

TEST(HistogramProbeTest, WithoutABoardProbesAreOff) {
  static kron::histogram h("none");
  kron::record_latency(h, 5);  // this test process never attached
  kron::vcount(3, 1);
  EXPECT_EQ(h.id(), 0u);
}

// ERRATUM E180: a 2.1 board's record (cpu in the header) is rewritten as a phased one.
TEST(PhasedRecordTest, UpgradeMovesTheCpuToTheThreadField) {
  record::TraceRecord t{};
  t.h.kind = record::RecordKind::Trace;
  t.h.size = 32;
  t.h.cpu = 37;
  t.thread = 123456;
  record::upgrade_to_phased(reinterpret_cast<std::uint8_t*>(&t));
  const record::PhasedFields f = record::phased_fields(t.h.cpu, t.thread, true);
  EXPECT_EQ(f.cpu, 37);
  EXPECT_EQ(f.phase, 0);
  EXPECT_EQ(f.thread, 123456u);
  t.h.cpu = 5000;  // above 1023: saturates
  t.thread = 1;
  record::upgrade_to_phased(reinterpret_cast<std::uint8_t*>(&t));
  EXPECT_EQ(record::phased_fields(t.h.cpu, t.thread, true).cpu, 1023);
}

}  // namespace
}  // namespace kron
