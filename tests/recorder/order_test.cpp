// The recorder's time order (ERRATA E31-E33, docs/trace-format.md "Time order"): records published late
// by another lane are still written in timestamp order when they come within the hold-back, and counted
// in the header's `late` when they come after it. The lanes here are written by hand (what a probe does:
// the record's slots, `passed`, then head with release) so that the publication delay is exact, not left
// to the scheduler.
#include <unistd.h>

#include "kron/board_pool.hpp"
#include "kron/format/trace_file.hpp"
#include "recorder/recorder.hpp"
#include "recorder_test_util.hpp"

namespace kron {
namespace {
using testing::ScratchBoard;

// Publishes one Trace record with timestamp `ts` on lane `i`, as a probe of thread 1000 + i would.
void publish(board::Mapping& m, std::uint32_t i, std::uint64_t ts, std::uint64_t data) {
  board::LaneHeader* L = m.lane(i);
  if (L->state.load(std::memory_order_acquire) == board::LaneState::Free) {
    L->pid = static_cast<std::uint32_t>(::getpid());
    L->tid = 1000 + i;
    L->source = board::source_id(0, L->pid);
    if (m.header()->lane_hwm.load() < i + 1) m.header()->lane_hwm.store(i + 1);  // as a claim raises it
    L->state.store(board::LaneState::Active, std::memory_order_release);
  }
  const std::uint64_t h = L->head.load(std::memory_order_relaxed);
  const std::uint64_t slots = m.header()->block_bytes / board::kSlot;
  if (L->cur.load() == board::kNoBlock) {  // the lane's one block, taken as a probe's slow path does
    const std::uint32_t x = board::pool::pop_free(m.header()->free_top, m.blocks(), m.header()->block_count);
    ASSERT_NE(x, board::kNoBlock);
    m.blocks()[x].lane.store(i);
    m.blocks()[x].start.store(0);
    m.blocks()[x].state.store(board::BlockState::Writing);
    L->first.store(x);
    L->cur.store(x);
  }
  ASSERT_LT(h, slots);  // these tests write fewer records than a block holds
  auto* p = reinterpret_cast<std::uint64_t*>(m.block_data(L->cur.load())) + h * 4;
  p[0] = 1u | (32u << 16);
  p[1] = std::uint64_t{L->source} | (std::uint64_t{L->tid} << 32);
  p[2] = ts;
  p[3] = data;
  L->passed.store(L->passed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  L->head.store(h + 1, std::memory_order_release);
}

struct Written {
  std::vector<std::uint64_t> data;
  std::uint64_t late = 0, passed = 0, samples = 0;
};
Written read_back(const std::string& path) {
  tracefile::Reader r(path);
  Written w;
  Sample s;
  while (r.next(s)) w.data.push_back(s.data);
  w.late = r.header().late;
  w.passed = r.header().passed_filter;
  w.samples = r.header().samples;
  return w;
}

board::CreateOptions small() {
  board::CreateOptions o;
  o.size = 64 << 10;
  o.lanes = 4;
  return o;
}

// The sample1 failure: a pass read lane 0, then the send on lane 0 and the (later) receive on lane 1 were
// published, then the pass read lane 1. The receive must not be written before the send.
TEST(RecorderOrder, RecordPublishedAfterItsLaneWasReadStillSortsWithinTheHoldBack) {
  ScratchBoard b(small(), "order");
  auto reader = b.reader();
  const std::string path = ::testing::TempDir() + "order-" + std::to_string(::getpid()) + ".trace";
  const std::uint64_t now = board::ticks(reader.header().clock_kind);
  {
    tracefile::Writer w(path, reader.file_header());
    recorder::Recorder rec(reader, w, /*hold_ticks=*/reader.header().clock_hz * 3600);  // an hour: nothing is old enough
    publish(b.map, 1, now - 10, 2);   // receive, timestamp now - 10
    EXPECT_EQ(rec.drain_once(), 0u);  // younger than the watermark: held, not written
    EXPECT_EQ(rec.held(), 1u);
    publish(b.map, 0, now - 20, 1);   // its send, older, published after the pass (a preempted probe)
    publish(b.map, 0, now - 5, 3);
    EXPECT_EQ(rec.drain_once(), 0u);
    EXPECT_EQ(rec.held(), 3u);
    EXPECT_EQ(rec.drain_once(true), 3u);  // the final pass: everything, merged by timestamp
    EXPECT_EQ(rec.held(), 0u);
    EXPECT_EQ(rec.late(), 0u);
    rec.finish(reader.file_header());
  }
  const Written got = read_back(path);
  EXPECT_EQ(got.data, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(got.late, 0u);
  EXPECT_EQ(got.passed, got.samples);  // nothing lost by holding
  std::remove(path.c_str());
}

// Records older than the watermark are written at once; one published later than the hold-back allows is
// written where it arrives, never dropped, and counted in the header's `late`.
TEST(RecorderOrder, RecordLaterThanTheHoldBackIsWrittenAndCounted) {
  ScratchBoard b(small(), "late");
  auto reader = b.reader();
  const std::string path = ::testing::TempDir() + "late-" + std::to_string(::getpid()) + ".trace";
  const std::uint64_t hold = 1000;
  const std::uint64_t now = board::ticks(reader.header().clock_kind);
  {
    tracefile::Writer w(path, reader.file_header());
    recorder::Recorder rec(reader, w, hold);
    publish(b.map, 0, now - 3 * hold, 1);
    publish(b.map, 1, now - 2 * hold, 2);
    EXPECT_EQ(rec.drain_once(), 2u);  // both older than now - hold: written, in order
    publish(b.map, 1, now - 4 * hold, 3);  // a probe that took its timestamp before both and published now
    EXPECT_EQ(rec.drain_once(), 1u);
    EXPECT_EQ(rec.late(), 1u);
    publish(b.map, 0, now + reader.header().clock_hz * 3600, 4);  // an hour ahead: held until the end
    EXPECT_EQ(rec.drain_once(), 0u);
    rec.finish(reader.file_header());  // writes what is still held
  }
  const Written got = read_back(path);
  EXPECT_EQ(got.data, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(got.late, 1u);
  EXPECT_EQ(got.samples, 4u);
  EXPECT_EQ(got.passed, 4u);
  std::remove(path.c_str());
}

// A lane freed while its records are held (its thread retired) and claimed again: the held records still
// come first, in lane order, and the lane's entry keeps its figures.
TEST(RecorderOrder, HeldRecordsOfAFreedLaneAreKept) {
  ScratchBoard b(small(), "freed");
  auto reader = b.reader();
  const std::string path = ::testing::TempDir() + "freed-" + std::to_string(::getpid()) + ".trace";
  const std::uint64_t now = board::ticks(reader.header().clock_kind);
  {
    tracefile::Writer w(path, reader.file_header());
    recorder::Recorder rec(reader, w, reader.header().clock_hz * 3600);
    publish(b.map, 0, now + 1, 1);
    publish(b.map, 0, now + 2, 2);
    b.map.lane(0)->state.store(board::LaneState::Retired, std::memory_order_release);
    EXPECT_EQ(rec.drain_once(), 0u);  // taken off, lane freed, records held
    EXPECT_EQ(b.map.lane(0)->state.load(), board::LaneState::Free);
    publish(b.map, 0, now + 3, 3);  // a new thread on the same lane
    publish(b.map, 1, now, 0);
    EXPECT_EQ(rec.drain_once(true), 4u);
    rec.finish(reader.file_header());
  }
  const Written got = read_back(path);
  EXPECT_EQ(got.data, (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(got.late, 0u);
  tracefile::Reader r(path);
  EXPECT_EQ(r.lanes().size(), 3u);  // the freed occupancy, lane 0 again, lane 1
  std::remove(path.c_str());
}

}  // namespace
}  // namespace kron
