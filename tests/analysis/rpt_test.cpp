// kron rpt's matcher and report against the hand-checked trace (fixtures.hpp): 003 section 3.5,
// interval classes 1-4; statistics decided in docs/errata.md E41, unmatched events E44, class 4 E46.
#include "analysis/rpt.hpp"

#include <gtest/gtest.h>

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/input.hpp"
#include "fixtures.hpp"
#include "kron/core/error.hpp"

using namespace kron;
using namespace kron::analysis;
using namespace kron::testing;

namespace {

struct Run {
  IntervalInfo info;
  std::unique_ptr<Matcher> m;
  Report r;
};

std::unique_ptr<Run> run(const std::vector<Sample>& v, RptOptions opt = {}, bool summary = true,
                         std::uint64_t mask = ~std::uint64_t{0}) {
  auto r = std::make_unique<Run>();
  r->info = parse_interval_info(kIntervalInfo, "interval.info");
  r->m = std::make_unique<Matcher>(r->info, opt, mask);
  for (const auto& s : v) r->m->feed(s);
  r->m->finish();
  r->r = report_rows(*r->m, summary);
  r->r.clock_hz = 10'000'000;
  return r;
}

const ReportRow& row(const Report& r, const std::string& name, const std::string& stream) {
  for (const auto& x : r.rows)
    if (x.name == name && x.stream == stream) return x;
  throw std::runtime_error("no row " + name + " " + stream);
}

void expect_stats(const Stats& s, std::uint64_t n, std::uint64_t total, std::uint64_t min, std::uint64_t max,
                  double mean, double sd, std::uint64_t us, std::uint64_t ue) {
  EXPECT_EQ(s.count, n);
  EXPECT_EQ(s.total, total);
  EXPECT_EQ(s.min, min);
  EXPECT_EQ(s.max, max);
  EXPECT_NEAR(s.mean(), mean, 1e-9);
  EXPECT_NEAR(s.stddev(), sd, 1e-9);
  EXPECT_EQ(s.unmatched_starts, us);
  EXPECT_EQ(s.unmatched_ends, ue);
}

const std::string A = "0x00010001/cpu0", B = "0x00010002/cpu1";

}  // namespace

// 003 section 3.5, class 1: "a single interval delineated by 2 events".
TEST(RptMatcher, Class1PerStreamAndSummary) {
  auto r = run(hand_checked());
  expect_stats(*row(r->r, "whole program", A).stats, 2, 800, 300, 500, 400, 100, 0, 1);
  expect_stats(*row(r->r, "whole program", B).stats, 1, 100, 100, 100, 100, 0, 1, 0);
  expect_stats(*row(r->r, "whole program", "all").stats, 3, 900, 100, 500, 300, std::sqrt(80000.0 / 3), 1, 1);
}

// 003 section 3.5, class 2: "a single interval with 2 possible outcomes"; each outcome its own row.
TEST(RptMatcher, Class2TwoOutcomes) {
  auto r = run(hand_checked());
  expect_stats(*row(r->r, "if then", A).stats, 2, 80, 30, 50, 40, 10, 1, 0);
  expect_stats(*row(r->r, "if else", A).stats, 2, 80, 10, 70, 40, 30, 0, 1);
}

// 003 section 3.5, class 3: two consecutive sub-intervals and the whole, named "sub-interval-1 sub-interval-2".
TEST(RptMatcher, Class3SubIntervalsAndTheirSum) {
  auto r = run(hand_checked());
  expect_stats(*row(r->r, "process input", B).stats, 2, 60, 20, 40, 30, 10, 0, 1);
  expect_stats(*row(r->r, "write output", B).stats, 3, 190, 50, 80, 190.0 / 3, std::sqrt(1400.0 / 9), 0, 0);
  expect_stats(*row(r->r, "process input + write output", B).stats, 2, 200, 100, 100, 100, 0, 0, 1);
}

// 003 section 3.5, class 4: starts and ends out of sequence, k-th end with k-th start, across streams.
TEST(RptMatcher, Class4AcrossStreams) {
  auto r = run(hand_checked());
  expect_stats(*row(r->r, "message timer", "all").stats, 3, 440, 100, 240, 440.0 / 3, std::sqrt(39200.0 / 9), 1, 1);
  for (const auto& x : r->r.rows)
    if (x.cls == 4) {
      EXPECT_EQ(x.stream, "all") << "class 4 is reported across all streams only (E46)";
    }
}

TEST(RptMatcher, CountsEverySample) {
  auto r = run(hand_checked());
  EXPECT_EQ(r->r.samples, hand_checked().size());
  EXPECT_EQ(r->r.resource_samples, 1u);  // 003: treated as a Trace sample, counters discarded
  EXPECT_EQ(r->r.other_events, 2u);      // events 5 and 99
  EXPECT_EQ(r->r.matched_events + r->r.other_events, r->r.samples);
}

TEST(RptMatcher, WithoutSummaryNoAllRowsExceptClass4) {
  auto r = run(hand_checked(), {}, false);
  for (const auto& x : r->r.rows)
    if (x.cls != 4) {
      EXPECT_NE(x.stream, "all") << x.name;
    }
}

// ERRATUM E144: -s adds "all" where two streams or more saw the interval; over one stream it would
// repeat that stream's row ("if then" is seen on A only, "whole program" on A and B).
TEST(RptMatcher, SummaryRowOnlyOverTwoStreamsOrMore) {
  auto r = run(hand_checked(), {}, true);
  EXPECT_NO_THROW(row(r->r, "whole program", "all"));
  EXPECT_NO_THROW(row(r->r, "if then", A));
  EXPECT_THROW(row(r->r, "if then", "all"), std::runtime_error);
  const std::string text = render_text(r->r, {});
  std::size_t rows = 0;
  for (std::size_t p = 0; (p = text.find("\nif then ", p)) != std::string::npos; ++p) ++rows;
  EXPECT_EQ(rows, 1u) << text;
}

// ERRATUM E140: on-CPU time from a task-clock counter (ns) at both ends of an interval, scaled to ticks
// (10 MHz: 1 tick = 100 ns). A start or an end that is a Trace sample gives no on-CPU time; a counter
// that went back gives none either. The "all" row sums the streams.
// ERRATUM E157: on-CPU time from context switches (kron record --sched): running from a switch in to the
// next switch out, summed between an interval's two ends; before a thread's first switch, the state that
// switch leaves; a thread without switches gets none. Every figure below is worked out by hand.
TEST(RptMatcher, OnCpuTimeFromContextSwitches) {
  auto sw = [](std::uint32_t thread, std::uint64_t t, bool out) {
    record::SchedRecord r{};
    r.h.kind = record::RecordKind::SchedSwitch;
    r.h.size = sizeof r;
    r.h.flags = out ? record::kSchedOut : 0;
    r.source = kSrcA;
    r.thread = thread;
    r.timestamp = t;
    return r;
  };
  // Thread 7: in 100, out 300, in 600, out 700. Thread 8: out 400 (so it ran before). Thread 9: none.
  const std::vector<record::SchedRecord> switches{sw(7, 600, false), sw(7, 100, false), sw(8, 400, true),
                                                  sw(7, 300, true), sw(7, 700, true)};
  const OnCpuTimeline tl(switches);
  EXPECT_EQ(tl.running_at(kSrcA, 9, 500), OnCpuTimeline::kNone);
  EXPECT_EQ(tl.running_at(kSrcA, 7, 700) - tl.running_at(kSrcA, 7, 0), 300u);    // 100-300 and 600-700
  EXPECT_EQ(tl.running_at(kSrcA, 7, 1000) - tl.running_at(kSrcA, 7, 700), 0u);  // out after 700
  EXPECT_EQ(tl.running_at(kSrcA, 8, 400) - tl.running_at(kSrcA, 8, 250), 150u);  // running before its out
  auto at = [](std::uint64_t t, std::uint32_t thread, std::uint64_t data) {
    Sample s = ev(t, true, data);
    s.thread = thread;
    return s;
  };
  auto info = parse_interval_info(kIntervalInfo, "interval.info");
  Matcher m(info, RptOptions{}, ~std::uint64_t{0});
  m.set_timeline(&tl);
  // "whole program" is events 10 -> 20. Thread 7: 200-650 (100 + 50 on a CPU), 50-150 (50: off before
  // its first switch in at 100). Thread 8: 300-500 (100). Thread 9: 0-100 (no switches: no on-CPU time).
  for (const Sample& s : {at(0, 9, 10), at(50, 7, 10), at(100, 9, 20), at(150, 7, 20), at(200, 7, 10), at(300, 8, 10),
                          at(500, 8, 20), at(650, 7, 20)})
    m.feed(s);
  m.finish();
  const Report r = report_rows(m, false);
  const auto stats_of = [&](std::uint32_t thread) -> const Stats& {
    return *row(r, "whole program", fmt::format("0x{:08x}/tid{}", kSrcA, thread)).stats;
  };
  EXPECT_EQ(stats_of(7).count, 2u);
  EXPECT_EQ(stats_of(7).cpu_count, 2u);
  EXPECT_DOUBLE_EQ(stats_of(7).cpu_total, 200.0);
  EXPECT_DOUBLE_EQ(stats_of(7).cpu_min, 50.0);
  EXPECT_DOUBLE_EQ(stats_of(7).cpu_max, 150.0);
  EXPECT_DOUBLE_EQ(stats_of(7).cpu_share(), 200.0 / 550.0);
  EXPECT_DOUBLE_EQ(stats_of(8).cpu_total, 100.0);
  EXPECT_EQ(stats_of(9).count, 1u);
  EXPECT_EQ(stats_of(9).cpu_count, 0u);
}

TEST(RptMatcher, OnCpuTimeFromTaskClockCounter) {
  RptOptions opt;
  const CpuCounter cc = find_cpu_counter({"clock", "", "task-clock"}, 10'000'000);
  ASSERT_EQ(cc.counter, 2);
  EXPECT_DOUBLE_EQ(cc.scale, 0.01);
  opt.cpu_counter = cc.counter;
  opt.cpu_scale = cc.scale;
  auto res = [](std::uint64_t t, bool on_a, std::uint64_t data, std::uint64_t ns) {
    Sample s = ev(t, on_a, data);
    s.type = SampleType::Resource;
    s.counters[2] = ns;
    return s;
  };
  // A: 1000 ticks of wall time, 40000 ns = 400 ticks on a CPU; then 500 ticks, 50000 ns = 500 ticks.
  // B: 200 ticks, 2000 ns = 20 ticks; then one with a Trace end (no on-CPU time), one that went back.
  auto r = run({res(0, true, 10, 1000), res(1000, true, 20, 41000), res(2000, true, 10, 50000),
                res(2500, true, 20, 100000), res(100, false, 10, 0), res(300, false, 20, 2000),
                res(400, false, 10, 5000), ev(500, false, 20), res(600, false, 10, 9000), res(700, false, 20, 10)},
               opt);
  const Stats& a = *row(r->r, "whole program", A).stats;
  EXPECT_EQ(a.count, 2u);
  EXPECT_EQ(a.cpu_count, 2u);
  EXPECT_DOUBLE_EQ(a.cpu_total, 900.0);
  EXPECT_DOUBLE_EQ(a.cpu_min, 400.0);
  EXPECT_DOUBLE_EQ(a.cpu_max, 500.0);
  EXPECT_DOUBLE_EQ(a.cpu_share(), 900.0 / 1500.0);
  const Stats& b = *row(r->r, "whole program", B).stats;
  EXPECT_EQ(b.count, 3u);
  EXPECT_EQ(b.cpu_count, 1u);
  EXPECT_DOUBLE_EQ(b.cpu_total, 20.0);
  EXPECT_DOUBLE_EQ(b.cpu_share(), 0.1);
  const Stats& all = *row(r->r, "whole program", "all").stats;
  EXPECT_EQ(all.cpu_count, 3u);
  EXPECT_DOUBLE_EQ(all.cpu_total, 920.0);
  EXPECT_DOUBLE_EQ(all.cpu_min, 20.0);
  EXPECT_TRUE(r->r.has_cpu);
  const std::string text = render_text(r->r, {});
  EXPECT_NE(text.find("on-cpu"), std::string::npos) << text;
  EXPECT_NE(text.find("   60%"), std::string::npos) << text;  // A: 900 of 1500 ticks
  // Without the counter named, nothing is taken (003: counters are discarded).
  EXPECT_EQ(find_cpu_counter({"clock", "page-faults"}, 1).counter, -1);
  EXPECT_EQ(find_cpu_counter({"", "oncpu"}, 1).counter, 1);
}

// ERRATUM E140: an interval spent wholly off the CPU (the thread blocked: its task-clock did not move) has
// an on-CPU time of 0, which counts: its row's on-CPU share is 0%, not "no on-CPU time known".
TEST(RptMatcher, AnIntervalSpentBlockedHasZeroOnCpuTime) {
  RptOptions opt;
  opt.cpu_counter = 2;
  opt.cpu_scale = 0.01;
  auto res = [](std::uint64_t t, std::uint64_t data, std::uint64_t ns) {
    Sample s = ev(t, true, data);
    s.type = SampleType::Resource;
    s.counters[2] = ns;
    return s;
  };
  auto r = run({res(0, 10, 7000), res(1000, 20, 7000), res(2000, 10, 7000), res(2100, 20, 17000)}, opt);
  const Stats& a = *row(r->r, "whole program", A).stats;
  EXPECT_EQ(a.count, 2u);
  EXPECT_EQ(a.cpu_count, 2u);
  EXPECT_DOUBLE_EQ(a.cpu_min, 0.0);
  EXPECT_DOUBLE_EQ(a.cpu_total, 100.0);
  EXPECT_DOUBLE_EQ(a.cpu_share(), 100.0 / 1100.0);
}

// ERRATUM E40: -e VALUE is the width of the event number; the default 32 ignores a qualifier above it.
TEST(RptMatcher, EventSizeSelectsTheEventBits) {
  RptOptions opt;
  opt.event_bits = 64;  // now (7 << 32) | 10 is not event 10: A's second "whole program" never starts,
  auto r = run(hand_checked(), opt);  // and its ends at 1500 and 1600 are both unmatched
  expect_stats(*row(r->r, "whole program", A).stats, 1, 300, 300, 300, 300, 0, 0, 2);
  EXPECT_EQ(r->r.other_events, 3u);
}

TEST(RptMatcher, EventNumberWiderThanEventSizeIsAnInputError) {
  const auto info = parse_interval_info("1 10 300 \"x\"\n", "i.info");
  RptOptions opt;
  opt.event_bits = 8;
  try {
    Matcher m(info, opt, ~std::uint64_t{0});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("i.info:1:6: event 300 does not fit", 0), 0u) << e.what();
  }
}

// ERRATUM E43: a MultiKron II timestamp is 56 bits (000 Table B2); an interval across its wrap is right.
TEST(RptMatcher, DurationAcrossTimestampWrap) {
  const std::uint64_t top = (std::uint64_t{1} << 56) - 50;
  auto r = run({ev(top, true, 10), ev(30, true, 20)}, {}, false, classic::ts_mask(classic::Chip::Mk2));
  expect_stats(*row(r->r, "whole program", A).stats, 1, 80, 80, 80, 80, 0, 0, 0);
}

TEST(RptMatcher, IntervalNeverSeenHasOneEmptyRow) {
  auto r = run({});
  const auto& x = row(r->r, "whole program", "all");
  EXPECT_EQ(x.stats->count, 0u);
  const std::string text = render_text(r->r, {});
  EXPECT_NE(text.find("whole program"), std::string::npos);
}

TEST(RptMatcher, HistogramHoldsEveryInterval) {
  RptOptions opt;
  opt.histograms = true;
  auto r = run(hand_checked(), opt);
  for (const auto& x : r->r.rows) {
    if (!x.stats->count) continue;
    ASSERT_TRUE(x.stats->hist) << x.name;
    std::uint64_t n = 0;
    for (unsigned b = 0; b < Histogram::kBuckets; ++b) {
      n += x.stats->hist->counts[b];
      if (x.stats->hist->counts[b]) {
        EXPECT_LE(Histogram::lower(b), x.stats->max);
        EXPECT_GE(Histogram::upper(b), x.stats->min);
      }
    }
    EXPECT_EQ(n, x.stats->count) << x.name;
  }
}

TEST(Histogram, BucketsCoverEveryValueOnce) {
  for (std::uint64_t v : {0ull, 1ull, 7ull, 8ull, 15ull, 16ull, 17ull, 100ull, 1000ull, 123456789ull, ~0ull}) {
    const unsigned b = Histogram::bucket(v);
    ASSERT_LT(b, Histogram::kBuckets);
    EXPECT_LE(Histogram::lower(b), v);
    EXPECT_GE(Histogram::upper(b), v);
  }
  for (unsigned b = 0; b + 1 < Histogram::kBuckets; ++b) EXPECT_EQ(Histogram::upper(b) + 1, Histogram::lower(b + 1));
  for (unsigned b = 8; b < Histogram::kBuckets; ++b)  // no bucket wider than 1/8 of its lower bound
    EXPECT_LE(Histogram::upper(b) - Histogram::lower(b) + 1, Histogram::lower(b) / 8 + 1);
}

// The JSON report (docs/rpt-json.md) read back with nlohmann-json.
TEST(RptJson, SchemaAndValues) {
  RptOptions opt;
  opt.histograms = true;
  auto r = run(hand_checked(), opt);
  const auto j = nlohmann::json::parse(render_json(r->r, true));
  EXPECT_EQ(j["clock_hz"], 10'000'000);
  bool seen = false;
  for (const auto& x : j["rows"]) {
    for (const char* k : {"name", "class", "stream", "count", "total", "min", "max", "mean", "stddev",
                          "unmatched_starts", "unmatched_ends", "total_us", "mean_us", "histogram"})
      EXPECT_TRUE(x.contains(k)) << k;
    if (x["name"] == "message timer") {
      seen = true;
      EXPECT_EQ(x["class"], 4);
      EXPECT_EQ(x["stream"], "all");
      EXPECT_EQ(x["count"], 3);
      EXPECT_EQ(x["total"], 440);
      EXPECT_EQ(x["min"], 100);
      EXPECT_EQ(x["max"], 240);
      EXPECT_NEAR(x["mean"].get<double>(), 440.0 / 3, 1e-9);
      EXPECT_NEAR(x["stddev"].get<double>(), std::sqrt(39200.0 / 9), 1e-9);
      EXPECT_NEAR(x["total_us"].get<double>(), 44.0, 1e-9);  // 440 ticks at 10 MHz
      EXPECT_EQ(x["unmatched_starts"], 1);
      EXPECT_EQ(x["unmatched_ends"], 1);
    }
  }
  EXPECT_TRUE(seen);
}

TEST(RptJson, EmptyIntervalHasNullMinimum) {
  auto r = run({});
  const auto j = nlohmann::json::parse(render_json(r->r, false));
  EXPECT_TRUE(j["rows"][0]["min"].is_null());
  EXPECT_EQ(j["rows"][0]["count"], 0);
}

// Several inputs merged in time order give the report of the one combined trace (003 concatenates the
// files of two machines; kron merges them).
TEST(RptInputs, MergedFilesEqualOneFile) {
  const auto dir = temp_dir("merge");
  std::vector<Sample> a, b;
  for (const auto& s : hand_checked()) (s.source == kSrcA ? a : b).push_back(s);
  write_kron(dir / "a.kron", a);
  write_bytes(dir / "b.mk2", encode_stream(classic::Chip::Mk2, b));
  write_kron(dir / "all.kron", hand_checked());
  InputOptions io;
  io.format = InputFormat::Mk2;  // kron files are still recognised by their header
  auto merged = open_inputs({(dir / "a.kron").string(), (dir / "b.mk2").string()}, io);
  auto one = open_inputs({(dir / "all.kron").string()}, {});
  const auto info = parse_interval_info(kIntervalInfo, "interval.info");
  Matcher m1(info, {}, merged.ts_mask()), m2(info, {}, one.ts_mask());
  Sample s;
  std::vector<std::uint64_t> t1;
  while (merged.next(s)) {
    t1.push_back(s.timestamp);
    m1.feed(s);
  }
  while (one.next(s)) m2.feed(s);
  m1.finish();
  m2.finish();
  EXPECT_TRUE(std::is_sorted(t1.begin(), t1.end()));
  EXPECT_EQ(merged.out_of_order(), 0u);
  auto r1 = report_rows(m1, true), r2 = report_rows(m2, true);
  r1.clock_hz = r2.clock_hz = 10'000'000;
  EXPECT_EQ(render_json(r1, false), render_json(r2, false));
  std::filesystem::remove_all(dir);
}

// ERRATUM E48: live-recorder samples (thread != 0) are matched per (source, thread), whatever CPU the
// thread ran on; two threads on one CPU do not mix.
TEST(RptMatcher, LiveSamplesMatchPerThreadAcrossCpuMigration) {
  auto live = [](std::uint64_t t, std::uint32_t tid, std::uint16_t cpu, std::uint64_t data) {
    Sample s = ev(t, true, data);
    s.thread = tid;
    s.cpu = cpu;
    return s;
  };
  auto r = run({live(100, 501, 0, 10), live(110, 502, 0, 10), live(150, 502, 0, 20), live(300, 501, 1, 20)}, {},
               false);
  expect_stats(*row(r->r, "whole program", "0x00010001/tid501").stats, 1, 200, 200, 200, 200, 0, 0, 0);
  expect_stats(*row(r->r, "whole program", "0x00010001/tid502").stats, 1, 40, 40, 40, 40, 0, 0, 0);
}
