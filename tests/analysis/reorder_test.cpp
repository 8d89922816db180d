// The merge's bounded reorder window (ERRATUM E50): a straggler within the window is put in its place, one
// beyond it is delivered and counted out of time order (E49), memory stays at the window's capacity, and
// a class-4 pair (003 section 3.5, mk_rpt class 4: k-th end with k-th start in time order) whose receive
// arrived before its send is matched right.
#include "analysis/reorder.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/input.hpp"
#include "analysis/matcher.hpp"
#include "fixtures.hpp"

using namespace kron;
using namespace kron::analysis;
using namespace kron::testing;

namespace {

// A raw MultiKron II stream of these samples, in this order.
Merged merged(const std::vector<Sample>& v, std::vector<std::uint8_t>& keep, std::size_t window) {
  keep = encode_stream(classic::Chip::Mk2, v);
  std::vector<std::unique_ptr<Input>> ins;
  ins.push_back(std::make_unique<ClassicStream>("mem", classic::Chip::Mk2, keep, 10'000'000));
  return Merged(std::move(ins), window);
}

std::vector<std::uint64_t> times(Merged& m) {
  std::vector<std::uint64_t> t;
  Sample s;
  while (m.next(s)) t.push_back(s.timestamp);
  return t;
}

std::vector<Sample> at_times(std::initializer_list<std::uint64_t> ts) {
  std::vector<Sample> v;
  std::uint64_t k = 0;
  for (auto t : ts) v.push_back(ev(t, true, k++));
  return v;
}

}  // namespace

TEST(ReorderWindow, InOrderPassesThroughAndNothingIsCounted) {
  std::vector<std::uint8_t> keep;
  auto m = merged(at_times({1, 2, 2, 3, 10, 11}), keep, 4);
  EXPECT_EQ(times(m), (std::vector<std::uint64_t>{1, 2, 2, 3, 10, 11}));
  EXPECT_EQ(m.reordered(), 0u);
  EXPECT_EQ(m.out_of_order(), 0u);
  EXPECT_TRUE(m.warnings().empty());
}

TEST(ReorderWindow, StragglerWithinTheWindowIsPutInItsPlace) {
  std::vector<std::uint8_t> keep;
  // 5 arrives three samples late; the window holds 4.
  auto m = merged(at_times({1, 6, 7, 8, 5, 9}), keep, 4);
  EXPECT_EQ(times(m), (std::vector<std::uint64_t>{1, 5, 6, 7, 8, 9}));
  EXPECT_EQ(m.reordered(), 1u);
  EXPECT_EQ(m.out_of_order(), 0u);
  ASSERT_EQ(m.warnings().size(), 1u);  // never silent: the reorder is reported
  EXPECT_NE(m.warnings()[0].find("1 samples arrived after a later sample"), std::string::npos) << m.warnings()[0];
}

TEST(ReorderWindow, StragglerBeyondTheWindowIsDeliveredAndCounted) {
  std::vector<std::uint8_t> keep;
  // 2 arrives five samples late; the window holds 2: 3 and 4 are already out, so it comes next and is
  // counted out of time order (E49), never dropped.
  auto m = merged(at_times({1, 3, 4, 5, 6, 7, 2, 8}), keep, 2);
  const auto t = times(m);
  EXPECT_EQ(t.size(), 8u);
  EXPECT_EQ(m.out_of_order(), 1u);
  EXPECT_EQ(std::count(t.begin(), t.end(), 2u), 1);
  EXPECT_EQ(m.reordered(), 0u);
  bool counted = false;
  for (const auto& w : m.warnings()) counted |= w.find("1 samples were earlier") != std::string::npos;
  EXPECT_TRUE(counted);
}

TEST(ReorderWindow, WindowZeroKeepsTheInputsOrder) {
  std::vector<std::uint8_t> keep;
  auto m = merged(at_times({10, 5, 20}), keep, 0);
  EXPECT_EQ(times(m), (std::vector<std::uint64_t>{10, 5, 20}));
  EXPECT_EQ(m.out_of_order(), 1u);
}

TEST(ReorderWindow, EqualTimestampsKeepArrivalOrderAndInputsAreTracked) {
  ReorderWindow w(8, ~std::uint64_t{0});
  const std::uint64_t ts[] = {5, 7, 5, 7, 3};
  for (std::uint32_t i = 0; i < 5; ++i) {
    w.insert(ev(ts[i], true, i), i);
  }
  std::vector<std::uint64_t> data;
  std::vector<std::uint32_t> inputs;
  while (!w.empty()) {
    Sample f;
    w.front(f);
    data.push_back(f.data);
    inputs.push_back(w.front_input());
    w.pop();
  }
  EXPECT_EQ(data, (std::vector<std::uint64_t>{4, 0, 2, 1, 3}));
  EXPECT_EQ(inputs, (std::vector<std::uint32_t>{4, 0, 2, 1, 3}));
  EXPECT_EQ(w.reordered(), 2u);  // the second 5 and the 3
}

// A Resource sample's counters move with it when a straggler overtakes it.
TEST(ReorderWindow, ResourceCountersStayWithTheirSample) {
  ReorderWindow w(4, ~std::uint64_t{0});
  Sample r = ev(20, true, 1);
  r.type = SampleType::Resource;
  for (unsigned c = 0; c < kResourceCounters; ++c) r.counters[c] = 100 + c;
  w.insert(r, 0);
  w.insert(ev(10, false, 2), 1);  // overtakes the Resource sample
  Sample a, b;
  w.front(a);
  w.pop();
  w.front(b);
  EXPECT_EQ(a.data, 2u);
  EXPECT_FALSE(a.is_resource());
  EXPECT_EQ(a.counters[3], 0u);
  EXPECT_EQ(b, r);
}

// Every field of a sample leaves the window as it came in, a straggler's too (DECISION D1: the window moves a
// SampleFields whole; it once dropped the phase).
TEST(ReorderWindow, EveryFieldOfASampleComesOutAsItWentIn) {
  ReorderWindow w(4, ~std::uint64_t{0});
  Sample a;
  a.type = SampleType::Resource;
  a.flags = 0xff, a.group = 15, a.cpu = 1023, a.phase = 0xffff, a.source = 0xffffffffu, a.thread = 0x3fffff;
  a.timestamp = 20, a.data = ~std::uint64_t{0};
  a.counters.fill(~std::uint64_t{0});
  Sample b;
  b.flags = kFlagNamed, b.group = 0, b.cpu = 1, b.phase = 1, b.source = 7, b.thread = 9, b.timestamp = 10, b.data = 5;
  w.insert(a, 0);
  w.insert(b, 1);  // a straggler: overtakes a
  Sample x, y;
  w.front(x);
  EXPECT_EQ(w.front_input(), 1u);
  w.pop();
  w.front(y);
  EXPECT_EQ(x, b);
  EXPECT_EQ(y, a);
}

// Memory is flat: the window never holds more than its capacity, however long the input.
TEST(ReorderWindow, HoldsAtMostItsCapacity) {
  ReorderWindow w(16, ~std::uint64_t{0});
  std::uint64_t last = 0, n = 0;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    if (w.full()) {
      EXPECT_GE(w.front_timestamp(), last);
      last = w.front_timestamp();
      w.pop();
      ++n;
    }
    // Every eighth sample is 10 ticks late (within 16 samples).
    w.insert(ev(1000 + 10 * i - (i % 8 == 7 ? 100 : 0), true, i), 0);
    ASSERT_LE(w.size(), w.capacity());
  }
  EXPECT_EQ(w.capacity(), 16u);
  EXPECT_GT(w.reordered(), 10000u);
  EXPECT_EQ(n, 100000u - 16u);
}

// E43: a 40-bit MultiKron timestamp that wrapped is later, not a straggler to move back.
TEST(ReorderWindow, TimestampWrapIsNotAStraggler) {
  const std::uint64_t mask = (std::uint64_t{1} << 40) - 1;
  ReorderWindow w(4, mask);
  for (std::uint64_t t : {mask - 2, mask, std::uint64_t{3}}) {
    w.insert(ev(t, true, t), 0);
  }
  EXPECT_EQ(w.front_timestamp(), mask - 2);
  w.pop();
  EXPECT_EQ(w.front_timestamp(), mask);
  EXPECT_EQ(w.reordered(), 0u);
}

// The bug it is for: a recorder file where one receive (36) was written before its send (27). Matched in
// file order, every later pair is off by one and one start and one end stay unmatched; with the window
// the class-4 row has none and every latency is the true one (2 ticks).
TEST(ReorderWindow, Class4PairsMatchWhenAReceiveArrivedBeforeItsSend) {
  std::vector<Sample> v;
  for (std::uint64_t k = 0; k < 50; ++k) {
    v.push_back(ev(100 + 10 * k, true, 27));    // send on A
    v.push_back(ev(100 + 10 * k + 2, false, 36));  // receive on B
  }
  std::swap(v[40], v[41]);  // receive 20 written before send 20
  std::rotate(v.begin() + 41, v.begin() + 42, v.begin() + 45);  // and send 20 three samples late
  const auto info = parse_interval_info(kIntervalInfo, "interval.info");
  auto run = [&](std::size_t window) {
    std::vector<std::uint8_t> keep;
    auto m = merged(v, keep, window);
    Matcher mt(info, {}, m.ts_mask());
    Sample s;
    while (m.next(s)) mt.feed(s);
    mt.finish();
    return std::pair{mt.stats(3, 0, Matcher::kAll).unmatched_starts + mt.stats(3, 0, Matcher::kAll).unmatched_ends,
                     mt.stats(3, 0, Matcher::kAll).max};
  };
  const auto [unmatched0, max0] = run(0);
  EXPECT_GT(unmatched0, 0u);  // the failure the window removes
  EXPECT_NE(max0, 2u);
  const auto [unmatched, max] = run(kDefaultReorderWindow);
  EXPECT_EQ(unmatched, 0u);
  EXPECT_EQ(max, 2u);
}

// Trace format 1.1: a recording's `late` count (E33) is reported with the input's warnings.
TEST(ReorderWindow, RecordingsLateCountIsReported) {
  const auto dir = temp_dir("late");
  const auto path = (dir / "late.kron").string();
  {
    auto h = tracefile::make_header();
    h.clock_hz = 10'000'000;
    tracefile::Writer w(path, h);
    for (const auto& s : at_times({5, 7, 6})) w.append(s);
    h.passed_filter = 3;
    h.late = 1;
    w.finish(h, {});
  }
  auto m = open_inputs({path}, {});
  EXPECT_EQ(times(m), (std::vector<std::uint64_t>{5, 6, 7}));
  const auto w = m.warnings();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("the recorder wrote 1 samples late"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("put back in time order"), std::string::npos) << w[1];
  std::filesystem::remove_all(dir);
}
