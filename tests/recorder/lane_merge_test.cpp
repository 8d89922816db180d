// The recorder's time-order merge (recorder::LaneMerge, docs/trace-format.md "Time order", ERRATA
// E31-E33), apart from any board: lanes' records go in pass by pass, each lane's in its own order, and
// must come out merged by timestamp up to each pass's watermark, the rest held, every record written
// exactly once, and `late` counting exactly the records written after one with a later timestamp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "kron/core/codec.hpp"
#include "kron/core/record.hpp"
#include "kron/format/trace_file.hpp"
#include "recorder/recorder.hpp"

namespace kron {
namespace {

constexpr std::uint64_t kForever = std::numeric_limits<std::uint64_t>::max();

// What the merge wrote, record by record.
struct Got {
  std::uint64_t ts, data;
  std::uint32_t lane;  // from the record's thread field
  bool resource;
};

struct Harness {
  std::vector<std::uint8_t> bytes;
  std::uint64_t counted = 0;
  recorder::LaneMerge merge{[this](std::span<const std::uint8_t> r, std::uint64_t n) {
    bytes.insert(bytes.end(), r.begin(), r.end());
    counted += n;
  }};
  std::vector<Got> written() {
    merge.flush();
    std::vector<Got> out;
    for (std::size_t off = 0; off < bytes.size(); off += record::size_at(bytes.data() + off)) {
      tracefile::TraceRecord t;
      std::memcpy(&t, bytes.data() + off, sizeof t);
      out.push_back({t.timestamp, t.data, t.thread, t.h.kind == tracefile::RecordKind::Resource});
    }
    return out;
  }
};

// Appends one record of lane `lane` (a Resource record when `resource`) to `buf`.
void put(std::vector<std::uint8_t>& buf, std::uint32_t lane, std::uint64_t ts, std::uint64_t data, bool resource = false) {
  Sample s;
  s.type = resource ? SampleType::Resource : SampleType::Trace;
  s.thread = lane;
  s.timestamp = ts;
  s.data = data;
  std::uint8_t rec[codec::kMaxRecordBytes];
  const std::size_t n = codec::encode(s, rec);
  buf.insert(buf.end(), rec, rec + n);
}

// Checks what a merge wrote: timestamps never go down, each lane's records in the order they were added
// (data counts up from 0 per lane), `total` records in all.
void expect_time_and_lane_order(const std::vector<Got>& got, std::size_t total) {
  ASSERT_EQ(got.size(), total);
  std::map<std::uint32_t, std::uint64_t> next;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (i) {
      ASSERT_LE(got[i - 1].ts, got[i].ts) << "record " << i;
    }
    ASSERT_EQ(got[i].data, next[got[i].lane]++) << "lane " << got[i].lane << " out of its order at record " << i;
  }
}

// 64 lanes, timestamps interleaved at random, records added in many passes of random size with a rising
// watermark; the caller's buffer is scribbled after every merge (the reader reuses it). Resource records
// (160 bytes) are mixed in.
TEST(LaneMerge, ManyLanesInterleavedComeOutInTimestampOrder) {
  Harness h;
  std::mt19937_64 rng(10);
  constexpr std::uint32_t kLanes = 64;
  std::vector<std::uint64_t> ts(kLanes, 1000), seq(kLanes, 0);
  std::vector<std::vector<std::uint8_t>> bufs(kLanes);
  std::size_t total = 0;
  std::uint64_t clock = 1000, written = 0;
  for (int pass = 0; pass < 200; ++pass) {
    for (std::uint32_t l = 0; l < kLanes; ++l) {
      bufs[l].clear();
      const std::uint64_t n = rng() % 50;
      for (std::uint64_t k = 0; k < n; ++k) {
        ts[l] = std::max(ts[l], clock) + rng() % 7;  // a lane's clock never goes back
        put(bufs[l], l, ts[l], seq[l]++, rng() % 16 == 0);
      }
      h.merge.add(l, bufs[l], n);
      total += n;
    }
    clock += 40;
    // A watermark behind every lane's newest record: some of each pass is held for the next one.
    written += h.merge.merge(clock - 100);
    for (auto& b : bufs) std::fill(b.begin(), b.end(), 0xee);
    EXPECT_EQ(h.merge.held() + written, total);
  }
  written += h.merge.merge(kForever);
  EXPECT_EQ(written, total);
  EXPECT_EQ(h.merge.held(), 0u);
  EXPECT_EQ(h.merge.late(), 0u);
  const std::vector<Got> got = h.written();
  expect_time_and_lane_order(got, total);
  EXPECT_EQ(h.counted, total);
  EXPECT_EQ(h.merge.records(), total);
  EXPECT_EQ(h.merge.bytes(), h.bytes.size());
}

// Records younger than the watermark are held, not written, and survive the caller reusing its buffer.
TEST(LaneMerge, RecordsYoungerThanTheWatermarkAreHeldIntact) {
  Harness h;
  std::vector<std::uint8_t> a, b;
  for (std::uint64_t i = 0; i < 10; ++i) put(a, 0, 100 + 10 * i, i);  // 100..190
  for (std::uint64_t i = 0; i < 10; ++i) put(b, 1, 105 + 10 * i, i);  // 105..195
  h.merge.add(0, a, 10);
  h.merge.add(1, b, 10);
  EXPECT_EQ(h.merge.merge(150), 11u);  // 100..150 of lane 0 (6) and 105..145 of lane 1 (5)
  EXPECT_EQ(h.merge.held(), 9u);
  std::fill(a.begin(), a.end(), 0), std::fill(b.begin(), b.end(), 0);
  EXPECT_EQ(h.merge.merge(150), 0u);  // nothing new is old enough
  EXPECT_EQ(h.merge.merge(kForever), 9u);
  const std::vector<Got> got = h.written();
  expect_time_and_lane_order(got, 20);
  EXPECT_EQ(got[10].ts, 150u);
  EXPECT_EQ(got[11].ts, 155u);  // held lane 1 record, intact
}

// Equal timestamps across lanes: every record written, once, each lane's in its order; none is late.
TEST(LaneMerge, EqualTimestampsAreAllWrittenAndNoneIsLate) {
  Harness h;
  constexpr std::uint32_t kLanes = 33;
  std::vector<std::vector<std::uint8_t>> bufs(kLanes);
  for (std::uint32_t l = 0; l < kLanes; ++l) {
    for (std::uint64_t i = 0; i < 100; ++i) put(bufs[l], l, 5000 + i / 10, i);  // ten records per timestamp
    h.merge.add(l, bufs[l], 100);
  }
  EXPECT_EQ(h.merge.merge(5004), kLanes * 50u);  // the watermark is inclusive
  EXPECT_EQ(h.merge.merge(kForever), kLanes * 50u);
  EXPECT_EQ(h.merge.late(), 0u);
  expect_time_and_lane_order(h.written(), kLanes * 100u);
}

// A record older than one already written comes in a later pass: written where it arrives (never dropped)
// and counted in late, once; a record equal to the newest written is not late.
TEST(LaneMerge, ARecordBehindTheWatermarkIsWrittenAndCountedLate) {
  Harness h;
  std::vector<std::uint8_t> a, b, c;
  put(a, 0, 100, 0), put(a, 0, 200, 1);
  h.merge.add(0, a, 2);
  EXPECT_EQ(h.merge.merge(300), 2u);
  put(b, 1, 150, 0), put(b, 1, 200, 1), put(b, 1, 250, 2);  // 150 comes after 200 was written: late
  h.merge.add(1, b, 3);
  EXPECT_EQ(h.merge.merge(300), 3u);
  EXPECT_EQ(h.merge.late(), 1u);
  put(c, 2, 240, 0);  // behind 250: late too
  h.merge.add(2, c, 1);
  EXPECT_EQ(h.merge.merge(kForever), 1u);
  EXPECT_EQ(h.merge.late(), 2u);
  const std::vector<Got> got = h.written();
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[2].ts, 150u);  // where it arrived
  EXPECT_EQ(got[5].ts, 240u);
}

// One busy lane well beyond the stage (and a chunk) per pass: written in pieces without the stage, chunks
// recycled pass after pass, every byte kept in order.
TEST(LaneMerge, OneBusyLaneLargerThanTheStage) {
  Harness h;
  std::vector<std::uint8_t> buf;
  std::uint64_t seq = 0, ts = 1, total = 0;
  for (int pass = 0; pass < 12; ++pass) {
    buf.clear();
    const std::uint64_t n = 3 * recorder::LaneMerge::kStageBytes / sizeof(tracefile::TraceRecord) / 2;
    for (std::uint64_t k = 0; k < n; ++k) put(buf, 7, ts++, seq++);
    h.merge.add(7, buf, n);
    total += n;
    h.merge.merge(ts - n / 3);  // a third of each pass held
    std::fill(buf.begin(), buf.end(), 0);
  }
  h.merge.merge(kForever);
  expect_time_and_lane_order(h.written(), total);
  EXPECT_EQ(h.merge.late(), 0u);
}

// The merge takes a busy lane's records in the buffer the drain copied them into (LaneMerge::add with a
// buffer, BoardReader::adopt) and from then on knows a chunk by its count, last timestamp and order without
// walking it: a chunk due whole goes out whole, one cut by the watermark or by another lane is cut by a
// search. Against the records themselves, pass after pass: 24 lanes, each piece added either way (copied, or
// taken with junk before it as the drain's buffer has), Resource records in some lanes (no search), a clock
// that goes back in some (no shortcut: every record walked). After every merge(w): nothing newer than w was
// written; where every lane's clock only goes forward, everything up to w was; `late` is exactly the records
// written after one with a later timestamp; at the end every record once, each lane's in its order.
void merge_taken_buffers(bool clock_goes_back, std::uint64_t seed) {
  Harness h;
  std::mt19937_64 rng(seed);
  constexpr std::uint32_t kLanes = 24;
  std::vector<std::uint64_t> ts(kLanes, 1000), seq(kLanes, 0);
  std::vector<std::uint64_t> pending;  // timestamps of records added and not yet due
  std::size_t total = 0, written = 0, taken = 0, due = 0;
  std::uint64_t clock = 1000, highest_w = 0;
  std::vector<std::vector<std::uint8_t>> copies(kLanes);  // the caller's buffers: valid until the merge
  for (int pass = 0; pass < 60; ++pass) {
    for (std::uint32_t l = 0; l < kLanes; ++l) {
      // Busy lanes (the first eight) write thousands of records a pass, the others a few.
      const std::uint64_t n = l < 8 ? 500 + rng() % 2500 : rng() % 40;
      const bool resource_lane = l % 5 == 4, back_lane = clock_goes_back && l % 3 == 1;
      recorder::Bytes buf(rng() % 3 * 32, 0xee);  // junk before the records, as in the drain's buffer
      const std::size_t first = buf.size();
      std::vector<std::uint8_t> recs;
      for (std::uint64_t k = 0; k < n; ++k) {
        ts[l] = std::max(ts[l], clock) + rng() % 5;
        std::uint64_t t = ts[l];
        if (back_lane && rng() % 500 == 0) t -= std::min<std::uint64_t>(t, 30);  // this record's clock went back
        put(recs, l, t, seq[l]++, resource_lane && rng() % 8 == 0);
        pending.push_back(t);
      }
      buf.insert(buf.end(), recs.begin(), recs.end());
      buf.resize(buf.size() + rng() % 2 * 64, 0xee);  // and junk after them
      const std::span<const std::uint8_t> span(buf.data() + first, recs.size());
      if (rng() % 2) {
        h.merge.add(l, std::move(buf), span, n);
        taken += n;
      } else {
        copies[l].assign(span.begin(), span.end());
        h.merge.add(l, copies[l], n);
      }
      total += n;
    }
    clock += 2000;
    const std::uint64_t w = clock - 500 - rng() % 2500;  // (clock >= 3000 here; may be below the last pass's)
    highest_w = std::max(highest_w, w);
    const std::size_t before = h.bytes.size();
    written += h.merge.merge(w);
    for (auto& c : copies) std::fill(c.begin(), c.end(), 0xee);  // the caller reuses its buffers
    h.merge.flush();
    for (std::size_t off = before; off < h.bytes.size(); off += record::size_at(h.bytes.data() + off))
      ASSERT_LE(record::timestamp_at(h.bytes.data() + off), w)
          << "pass " << pass << ": a record newer than the watermark";
    if (!clock_goes_back) {
      const auto still =
          std::partition(pending.begin(), pending.end(), [&](std::uint64_t t) { return t <= highest_w; });
      due += static_cast<std::size_t>(still - pending.begin());
      pending.erase(pending.begin(), still);
      ASSERT_EQ(written, due) << "pass " << pass << ": every record up to the watermark is written";
    }
    ASSERT_EQ(h.merge.held() + written, total);
  }
  ASSERT_GT(taken, total / 4);
  written += h.merge.merge(kForever);
  EXPECT_EQ(written, total);
  const std::vector<Got> got = h.written();
  ASSERT_EQ(got.size(), total);
  std::map<std::uint32_t, std::uint64_t> next;
  std::uint64_t late = 0, newest = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].data, next[got[i].lane]++) << "lane " << got[i].lane << " out of its order at record " << i;
    if (got[i].ts < newest) ++late;
    newest = std::max(newest, got[i].ts);
  }
  EXPECT_EQ(h.merge.late(), late);
  if (clock_goes_back) {
    EXPECT_GT(late, 0u);
  } else {
    EXPECT_EQ(late, 0u);
  }
  EXPECT_EQ(h.counted, total);
}

TEST(LaneMerge, TakenBuffersAndCopiedOnesMergeAlikeInTimeOrder) {
  for (std::uint64_t seed : {1, 2, 3}) merge_taken_buffers(false, seed);
}

TEST(LaneMerge, AClockThatGoesBackIsWalkedRecordByRecordAndCountedLate) {
  for (std::uint64_t seed : {4, 5}) merge_taken_buffers(true, seed);
}

// A chunk taken whole or cut by a search is never walked, yet `late` still knows its newest record: a record
// of another lane that comes behind it later is written where it arrives and counted late (ERRATUM E33).
TEST(LaneMerge, ARecordBehindATakenChunkWrittenWholeOrCutIsLate) {
  for (const bool whole : {true, false}) {
    Harness h;
    std::vector<std::uint8_t> recs;
    for (std::uint64_t i = 0; i < 11; ++i) put(recs, 0, 100 + 10 * i, i);  // 100..200
    recorder::Bytes buf(recs.begin(), recs.end());
    const std::span<const std::uint8_t> span(buf.data(), buf.size());
    h.merge.add(0, std::move(buf), span, 11);
    EXPECT_EQ(h.merge.merge(whole ? 300 : 155), whole ? 11u : 6u);  // all of it, or 100..150
    std::vector<std::uint8_t> b;
    put(b, 1, 120, 0), put(b, 1, 140, 1), put(b, 1, 145, 2);  // behind 200 (whole) or 150 (cut)
    h.merge.add(1, b, 3);
    EXPECT_EQ(h.merge.merge(kForever), whole ? 3u : 8u);
    EXPECT_EQ(h.merge.late(), 3u) << (whole ? "whole" : "cut");
    EXPECT_EQ(h.written().size(), 14u);
  }
}

// A buffer given with records that do not lie in it is refused (the merge would hold memory it does not own).
TEST(LaneMerge, ABufferThatDoesNotHoldTheRecordsIsRefused) {
  Harness h;
  std::vector<std::uint8_t> recs;
  put(recs, 0, 10, 0);
  recorder::Bytes buf(64);
  EXPECT_THROW(h.merge.add(0, std::move(buf), recs, 1), std::logic_error);
  recorder::Bytes inside(recs.begin(), recs.end());
  const std::span<const std::uint8_t> over(inside.data() + 8, inside.size());  // runs past its end
  EXPECT_THROW(h.merge.add(0, std::move(inside), over, 1), std::logic_error);
  EXPECT_EQ(h.merge.held(), 0u);
}

}  // namespace
}  // namespace kron
