// The histogram bucket format (kron/core/stats.hpp) and the trace side's summaries (src/analysis/hist.cpp).
// Sources: 004 4.3.6 (the 7-bit compact floating-point latency format; the NUMAchine model's definition,
// src/models/numachine/events.hpp, is the reference), widened to 64 bits (6.25% relative width, exact below 32).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "analysis/hist.hpp"
#include "kron/core/stats.hpp"
#include "models/numachine/events.hpp"

namespace kron {
namespace {

// 004 4.3.6 via the NUMAchine model: kron's 64-bit format restricted to 0-4095 is the 7-bit format, with
// the denormal range (2 cycles a bucket) split into single values (ERRATUM E181).
TEST(HistFormatTest, RestrictedTo4095ItIsNumachinesSevenBitFormat) {
  for (std::uint32_t v = 0; v < numachine::kBusErrorCycles; ++v) {
    const std::uint8_t code = numachine::compact(v);
    const numachine::Bucket theirs = numachine::bucket(code);
    const unsigned ours = stats::bucket_of(v);
    const stats::Range r = stats::bucket_range(ours);
    ASSERT_LE(r.lo, v);
    ASSERT_GE(r.hi, v);
    if (v >= stats::kExactBelow) {
      ASSERT_EQ(ours, code + 16u) << v;  // the same bucket, numbered after kron's 16 extra denormal ones
      ASSERT_EQ(r.lo, theirs.lo) << v;
      ASSERT_EQ(r.hi, theirs.hi) << v;
    } else {
      ASSERT_EQ(ours, v);  // exact below 32
      ASSERT_GE(r.lo, theirs.lo);
      ASSERT_LE(r.hi, theirs.hi);
      ASSERT_EQ(stats::bucket_of(theirs.lo), stats::bucket_of(theirs.hi) - 1);  // 004's bucket = two of kron's
    }
  }
}

TEST(HistFormatTest, BucketsTileTheWholeRangeAtMostSixPointTwoFivePercentWide) {
  std::uint64_t next = 0;
  for (unsigned b = 0; b < stats::kHistBuckets; ++b) {
    const stats::Range r = stats::bucket_range(b);
    ASSERT_EQ(r.lo, next) << b;  // contiguous, no gap, no overlap
    ASSERT_LE(r.lo, r.hi);
    ASSERT_EQ(stats::bucket_of(r.lo), b);
    ASSERT_EQ(stats::bucket_of(r.hi), b);
    if (r.lo >= stats::kExactBelow) {
      ASSERT_LE(static_cast<double>(r.hi - r.lo + 1) / static_cast<double>(r.lo), 1.0 / 16 + 1e-12) << b;
    } else {
      ASSERT_EQ(r.lo, r.hi);
    }
    next = r.hi + 1;
  }
  EXPECT_EQ(next, 0u);  // the last bucket ends at 2^64 - 1 (next wrapped)
}

TEST(HistFormatTest, RandomValuesLandInTheirBucket) {
  std::mt19937_64 rng(12);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t v = rng() >> (rng() % 64);
    const stats::Range r = stats::bucket_range(stats::bucket_of(v));
    ASSERT_LE(r.lo, v);
    ASSERT_GE(r.hi, v);
  }
}

// Done means: the percentiles match a sorted-array computation on the same data within the
// bucket width (nearest rank, ERRATUM E184).
TEST(HistSummaryTest, PercentilesMatchASortedArrayWithinTheBucketWidth) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::lognormal_distribution<double> d(8.0 + round % 5, 1.0 + 0.1 * round);
    const int n = 1 + static_cast<int>(rng() % 50000);
    std::vector<std::uint64_t> v;
    analysis::LatencyHistogram h;
    for (int i = 0; i < n; ++i) {
      const auto x = static_cast<std::uint64_t>(d(rng));
      v.push_back(x);
      analysis::record_value(h, x);
    }
    std::sort(v.begin(), v.end());
    for (const double q : {0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0}) {
      const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(q * static_cast<double>(n))));
      const std::uint64_t exact = v[rank - 1];
      const std::uint64_t got = analysis::percentile(h, q);
      const stats::Range r = stats::bucket_range(stats::bucket_of(exact));
      EXPECT_GE(got, r.lo) << "q " << q << " n " << n;
      EXPECT_LE(got, r.hi) << "q " << q << " n " << n;
      EXPECT_LE(got > exact ? got - exact : exact - got, r.hi - r.lo);
    }
    const analysis::LatencySummary s = analysis::summarize(h);
    EXPECT_EQ(s.count, static_cast<std::uint64_t>(n));
    EXPECT_EQ(s.min, v.front());
    EXPECT_EQ(s.max, v.back());
    double sum = 0;
    for (const auto x : v) sum += static_cast<double>(x);
    EXPECT_NEAR(s.mean, sum / n, 1e-6 * sum / n);
  }
}

TEST(HistSummaryTest, EmptyHistogramHasNoPercentiles) {
  analysis::LatencyHistogram h;
  EXPECT_EQ(analysis::summarize(h).count, 0u);
  EXPECT_EQ(analysis::percentile(h, 0.5), 0u);
}

// Snapshot records merge exactly: the last snapshot of each (thread, histogram, phase), summed across
// threads, equals one histogram of all the values.
TEST(HistMergeTest, MergeOfSnapshotsIsExactBucketSums) {
  auto snapshot = [](std::uint32_t thread, std::uint16_t phase, const analysis::LatencyHistogram& h, const char* name) {
    std::vector<std::uint8_t> out(sizeof(stats::HistSnapshotRecord));
    stats::HistSnapshotRecord s{};
    s.h.kind = record::RecordKind::HistSnapshot;
    s.h.phase = phase;
    s.source = 42, s.thread = thread, s.hist = 1;
    s.sum = h.sum, s.min = h.min, s.max = h.max;
    std::snprintf(s.name, sizeof s.name, "%s", name);
    for (unsigned b = 0; b < stats::kHistBuckets; ++b)
      if (h.buckets[b]) {
        const stats::HistEntry e{b, h.buckets[b]};
        const auto* p = reinterpret_cast<const std::uint8_t*>(&e);
        out.insert(out.end(), p, p + sizeof e);
        ++s.entries;
      }
    s.h.size = static_cast<std::uint16_t>(out.size());
    std::memcpy(out.data(), &s, sizeof s);
    EXPECT_EQ(stats::snapshot_problem(out.data(), out.size()), nullptr);
    return out;
  };
  std::mt19937_64 rng(3);
  analysis::LatencyHistogram all, a1, a2, b1;
  analysis::SnapshotSum m;
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t x = rng() % 100000;
    analysis::record_value(all, x);
    analysis::record_value(i % 3 ? a1 : b1, x);
    if (i == 500) {
      a2 = a1;  // an earlier, cumulative snapshot of thread 1: replaced by the later one
      m.add(snapshot(1, 0, a2, "get"));
    }
  }
  m.add(snapshot(1, 0, a1, "get"));
  m.add(snapshot(2, 1, b1, "get"));
  const analysis::SnapshotTotals r = m.result();
  ASSERT_EQ(r.hists.size(), 1u);
  const auto& phases = r.hists.at("get");
  ASSERT_EQ(phases.size(), 2u);
  analysis::LatencyHistogram total;
  for (const auto& [p, h] : phases) total.add(h);
  EXPECT_EQ(total.buckets, all.buckets);
  EXPECT_EQ(total.sum, all.sum);
  EXPECT_EQ(total.min, all.min);
  EXPECT_EQ(total.max, all.max);
  EXPECT_EQ(phases.at(0).count(), a1.count());
}

TEST(HistMergeTest, SnapshotProblemRefusesDamage) {
  std::vector<std::uint8_t> rec(sizeof(stats::HistSnapshotRecord) + 2 * sizeof(stats::HistEntry));
  stats::HistSnapshotRecord s{};
  s.h.kind = record::RecordKind::HistSnapshot;
  s.h.size = static_cast<std::uint16_t>(rec.size());
  s.hist = 1;
  s.entries = 2;
  std::memcpy(rec.data(), &s, sizeof s);
  stats::HistEntry e[2] = {{5, 1}, {3, 1}};  // not ascending
  std::memcpy(rec.data() + sizeof s, e, sizeof e);
  EXPECT_NE(stats::snapshot_problem(rec.data(), rec.size()), nullptr);
  e[1].bucket = 976;  // out of range
  std::memcpy(rec.data() + sizeof s, e, sizeof e);
  EXPECT_NE(stats::snapshot_problem(rec.data(), rec.size()), nullptr);
  e[1].bucket = 6;
  std::memcpy(rec.data() + sizeof s, e, sizeof e);
  EXPECT_EQ(stats::snapshot_problem(rec.data(), rec.size()), nullptr);
  EXPECT_NE(stats::snapshot_problem(rec.data(), rec.size() - 16), nullptr);  // size and count disagree
}

// ERRATUM E347: an index read from a board past the last bucket (a threshold bucket is 16 bits) never
// reaches the shift of an undefined width: it reads as the last bucket. (Before, 4000 shifted by 249 bits.)
TEST(BucketTest, AnIndexPastTheLastBucketReadsAsTheLast) {
  const stats::Range last = stats::bucket_range(stats::kHistBuckets - 1);
  for (const unsigned i : {976u, 977u, 4000u, 65535u}) {
    const stats::Range r = stats::bucket_range(i);
    EXPECT_EQ(r.lo, last.lo) << i;
    EXPECT_EQ(r.hi, last.hi) << i;
  }
}

}  // namespace
}  // namespace kron
