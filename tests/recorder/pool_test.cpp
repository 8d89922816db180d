// The block pool (board format 2.0): one memory for every thread. A single thread fills
// the whole board; a circular board keeps the newest samples of the whole board; threads beyond the old
// lane count lose nothing in wait mode; 4096 threads across processes record at once; drained blocks go
// back to the pool. Sources: 003 section 2.7 (simple buffer keeps the oldest, circular the newest), 000
// Table B3a (wait or discard). The accounting identity is checked exactly every time.
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kron/format/trace_file.hpp"
#include "recorder/record_session.hpp"
#include "recorder/recorder.hpp"
#include "recorder_test_util.hpp"

namespace kron {
namespace {
using testing::in_child;
using testing::pool_slots;
using testing::samples_of;
using testing::ScratchBoard;

board::CreateOptions board_of(board::BufferMode mode, std::uint64_t size = board::kDefaultSize) {
  board::CreateOptions o;
  o.size = size;
  o.mode = mode;
  return o;
}

// The goal: not "2 threads on a 16 MiB board could use only 2 MiB of it". Simple buffer (003 2.7): two threads
// with no drainer fill the whole pool, every slot, and the rest is counted.
TEST(PoolTest, TwoThreadsFillTheWholeSixteenMegabyteBoard) {
  ScratchBoard b(board_of(board::BufferMode::Simple));
  const std::uint64_t cap = pool_slots(b.header());
  ASSERT_EQ(cap * board::kSlot, 16u << 20);
  ASSERT_EQ(in_child(b.name, [&] {
              auto flood = [&](unsigned t) {
                for (std::uint64_t i = 0; i < cap; ++i) kron::trace(0, (std::uint64_t{t} << 32) | i);
              };
              std::thread a(flood, 1), c(flood, 2);
              a.join(), c.join();
              return 0;
            }),
            0);
  auto r = b.reader();
  const auto t = r.totals();
  EXPECT_EQ(t.recorded, cap) << "the two threads did not fill every slot of the pool";
  EXPECT_EQ(t.overruns, cap);  // 2 * cap probes: the rest dropped and counted
  EXPECT_EQ(t.no_lane, 0u);
  EXPECT_TRUE(t.exact());
  // Each thread's records are its oldest, in order (the simple buffer keeps the oldest).
  std::map<std::uint64_t, std::uint64_t> next;
  for (const auto& s : samples_of(r)) {
    const std::uint64_t who = s.data >> 32, seq = s.data & 0xffffffffu;
    ASSERT_EQ(seq, next[who]++) << "thread " << who;
  }
  EXPECT_EQ(r.pool().free, 0u);
}

// 000 Table B1 bit 6, FIFO Full: on a board it reads 1 while a simple board's pool has no free block (the
// next sample that needs a block waits or is dropped), 0 before; a circular board never fills.
TEST(PoolTest, CsrFifoFullIsAnEmptyPool) {
  for (const auto mode : {board::BufferMode::Simple, board::BufferMode::Circular}) {
    ScratchBoard b(board_of(mode, 64u << 10));
    EXPECT_FALSE(b.reader().csr_read() & board::kCsrFifoFull);
    ASSERT_EQ(testing::trace_in_child(b.name, 2 * pool_slots(b.header())), 0);
    EXPECT_EQ(bool(b.reader().csr_read() & board::kCsrFifoFull), mode == board::BufferMode::Simple);
  }
}

// Done means: "one thread on a 16 MiB circular board keeps at least 90% of the board's capacity in
// samples", and they are the newest (003 2.7 circular buffer).
TEST(PoolTest, OneThreadKeepsNinetyPercentOfACircularBoardNewestFirst) {
  ScratchBoard b(board_of(board::BufferMode::Circular));
  const std::uint64_t cap = pool_slots(b.header()), n = 3 * cap + 12345;
  ASSERT_EQ(testing::trace_in_child(b.name, n), 0);
  auto r = b.reader();
  const auto s = samples_of(r);
  EXPECT_GE(s.size() * 10, cap * 9) << s.size() << " of " << cap << " slots kept";
  for (std::size_t i = 0; i < s.size(); ++i) ASSERT_EQ(s[i].data, n - s.size() + i) << "not the newest, in order";
  const auto t = r.totals();
  EXPECT_EQ(t.overwritten, n - s.size());
  EXPECT_EQ(t.overruns, 0u);
  EXPECT_TRUE(t.exact());
}

// The circular board keeps the newest samples of the whole board, not of each lane: a thread that wrote
// early and retired loses its samples to a later thread's, oldest first, all but its last block (ERRATUM
// E320: every lane keeps its newest block).
TEST(PoolTest, CircularBoardRecyclesTheOldestBlocksOfAnyLane) {
  ScratchBoard b(board_of(board::BufferMode::Circular, 1u << 20));
  const std::uint64_t cap = pool_slots(b.header()), B = b.header().block_bytes / board::kSlot;
  ASSERT_EQ(in_child(b.name, [&] {
              std::thread([&] {
                for (std::uint64_t i = 0; i < cap / 2; ++i) kron::trace(0, (1ull << 32) | i);
              }).join();
              std::thread([&] {
                for (std::uint64_t i = 0; i < cap; ++i) kron::trace(0, (2ull << 32) | i);
              }).join();
              return 0;
            }),
            0);
  auto r = b.reader();
  std::vector<std::uint64_t> first;
  std::uint64_t second = 0;
  for (const auto& s : samples_of(r))
    if ((s.data >> 32) == 1) first.push_back(s.data & 0xffffffffu);
    else ++second;
  EXPECT_EQ(second, cap - B) << "the newest thread's samples did not take the rest of the board";
  ASSERT_EQ(first.size(), B) << "the first thread did not keep exactly its last block";
  for (std::uint64_t i = 0; i < B; ++i) ASSERT_EQ(first[i], cap / 2 - B + i) << "not the first thread's end";
  EXPECT_TRUE(r.totals().exact());
}

// ERRATUM E320, a flight recorder keeps every thread's end: four threads of 300-400 k probes each (ending
// at different times) on a 1 MiB circular board with no drain keep each thread's newest sample, in every
// one of 20 runs (before, the board recycled the oldest block of any lane and kept only 1-3 of the 4
// threads' ends); what each thread kept is its newest samples, in order, and the accounting is exact.
TEST(PoolTest, FourThreadsOnACircularBoardEachKeepTheirNewestSample) {
  constexpr unsigned kThreads = 4, kRuns = 20;
  const std::uint64_t count[kThreads] = {300000, 333333, 366666, 400000};
  for (unsigned run = 0; run < kRuns; ++run) {
    ScratchBoard b(board_of(board::BufferMode::Circular, 1u << 20));
    ASSERT_EQ(in_child(b.name, [&] {
                std::vector<std::thread> ts;
                for (unsigned t = 0; t < kThreads; ++t)
                  ts.emplace_back([&, t] {
                    for (std::uint64_t i = 0; i < count[t]; ++i) kron::trace(0, (std::uint64_t{t} << 32) | i);
                  });
                for (auto& t : ts) t.join();
                return 0;
              }),
              0);
    auto r = b.reader();
    std::uint64_t last[kThreads] = {}, kept[kThreads] = {}, total = 0;
    for (const auto& s : samples_of(r)) {
      const std::uint64_t t = s.data >> 32, i = s.data & 0xffffffffu;
      ASSERT_LT(t, kThreads);
      if (kept[t]) {
        ASSERT_EQ(i, last[t] + 1) << "run " << run << ", thread " << t << ": not in order";
      }
      last[t] = i;
      ++kept[t], ++total;
    }
    for (unsigned t = 0; t < kThreads; ++t) {
      ASSERT_GT(kept[t], 0u) << "run " << run << ": thread " << t << " kept nothing";
      ASSERT_EQ(last[t], count[t] - 1) << "run " << run << ": thread " << t << " lost its newest sample";
    }
    const auto tot = r.totals();
    ASSERT_TRUE(tot.exact()) << "run " << run;
    ASSERT_EQ(tot.overruns, 0u) << "run " << run;
    ASSERT_GE(total * 10, pool_slots(b.header()) * 9) << "run " << run << ": the board kept under 90%";
  }
}

// The same 1 MiB circular board with one thread alone keeps at least 90% of its capacity, the newest
// samples: keeping each lane's newest block costs a lone thread nothing (ERRATUM E320).
TEST(PoolTest, OneThreadKeepsNinetyPercentOfASmallCircularBoard) {
  ScratchBoard b(board_of(board::BufferMode::Circular, 1u << 20));
  const std::uint64_t cap = pool_slots(b.header()), n = 350000;
  ASSERT_EQ(testing::trace_in_child(b.name, n), 0);
  auto r = b.reader();
  const auto s = samples_of(r);
  EXPECT_GE(s.size() * 10, cap * 9) << s.size() << " of " << cap << " slots kept";
  for (std::size_t i = 0; i < s.size(); ++i) ASSERT_EQ(s[i].data, n - s.size() + i) << "not the newest, in order";
  EXPECT_TRUE(r.totals().exact());
}

// ERRATUM E320's limit: more threads than blocks. 40 threads one after the other, each ending with a block
// of its own, on a circular board of 16 blocks: once every sealed block is some lane's newest, the oldest
// of them goes, so the threads that ended last keep their ends, no probe is dropped, and the figures add up.
TEST(PoolTest, MoreThreadsThanBlocksLoseTheOldestEndsFirst) {
  ScratchBoard b(board_of(board::BufferMode::Circular, 64u << 10));
  ASSERT_EQ(b.header().block_count, 16u);
  constexpr unsigned kThreads = 40;
  constexpr std::uint64_t kEach = 200;  // a block and a half of 4 KiB each
  ASSERT_EQ(in_child(b.name, [&] {
              for (unsigned t = 0; t < kThreads; ++t)
                std::thread([t] {
                  for (std::uint64_t i = 0; i < kEach; ++i) kron::trace(0, (std::uint64_t{t} << 32) | i);
                }).join();
              return 0;
            }),
            0);
  auto r = b.reader();
  std::vector<bool> ended(kThreads);
  for (const auto& s : samples_of(r))
    if ((s.data & 0xffffffffu) == kEach - 1) ended[s.data >> 32] = true;
  EXPECT_TRUE(ended[kThreads - 1]) << "the last thread lost its end";
  unsigned kept = 0;
  for (unsigned t = 0; t < kThreads; ++t) {
    if (ended[t]) ++kept;
    else EXPECT_EQ(kept, 0u) << "thread " << t << " lost its end while an older thread kept its own";
  }
  EXPECT_GE(kept, 8u);
  const auto tot = r.totals();
  EXPECT_EQ(tot.overruns, 0u);
  EXPECT_TRUE(tot.exact());
}

// A thread adopting a retired lane of a circular board links its first block after the lane's last one
// under the pool lock (E36: that block may be recycled meanwhile). With the lock held by another live
// process it drops its sample after the lock's wait (counted) and never links without the lock; once
// the lock is free it records.
// ERRATUM E29's recycler on another core takes a block while the reader is about to copy or count it: the
// reader has checked the block's header, then the lane's (tail, evicted) move past it, its generation goes
// odd, its new owner starts rewriting it (here: zeros, no record written yet) and the generation goes even
// again. The reader must see the generation change: the block's records are overwritten (counted), the
// rest of the lane is read, and nothing is reported damaged (a block being rewritten is not a corrupt board).
TEST(PoolTest, ABlockRecycledUnderTheReaderIsOverwrittenNotCorrupt) {
  ScratchBoard b(board_of(board::BufferMode::Circular, 64u << 10));
  const std::uint64_t per_block = b.header().block_bytes / board::kSlot;
  const std::uint64_t n = 3 * per_block + 5;  // three sealed blocks and part of a fourth; nothing recycled yet
  ASSERT_LT(n + per_block, pool_slots(b.header()));
  ASSERT_EQ(testing::trace_in_child(b.name, n), 0);
  auto r = b.reader();
  std::uint64_t evicted = 0;
  auto recycle_first = [&](std::uint32_t lane, std::uint32_t x) {
    if (evicted) return;
    board::LaneHeader* L = b.map.lane(lane);
    board::BlockHeader& X = b.map.blocks()[x];
    L->tail_seq.fetch_add(1);  // odd: (tail, evicted) changing, as recycle() in src/probe/probe.cpp
    L->tail.store(X.start.load() + per_block);
    evicted = X.records.load();
    L->evicted.fetch_add(evicted);
    L->first.store(X.next.load());
    L->tail_seq.fetch_add(1);
    X.gen.fetch_add(1);  // odd: being rewritten
    std::memset(b.map.block_data(x), 0, b.header().block_bytes);
    X.lane.store(board::kNoBlock);
    X.gen.fetch_add(1);  // even: its new header written
  };
  // The figures (kron status, totals): counted in place.
  r.before_copy_for_test = recycle_first;
  const auto lanes = r.lanes();
  ASSERT_EQ(evicted, per_block);
  ASSERT_EQ(lanes.size(), 1u);
  EXPECT_EQ(lanes[0].problem, "") << "a block recycled under the reader was taken for a corrupt one";
  EXPECT_EQ(lanes[0].overwritten, per_block);
  EXPECT_LE(lanes[0].held, n - per_block);  // the walk may stop where the chain moved: the rest next pass
  EXPECT_TRUE(r.problems().empty());
  const auto t = r.totals();
  EXPECT_EQ(t.passed, n);
  EXPECT_EQ(t.recorded, n - per_block);
  EXPECT_EQ(t.overwritten, per_block);
  EXPECT_EQ(t.torn, 0u);
  EXPECT_TRUE(t.exact()) << t.passed << " " << t.recorded << " " << t.overruns << " " << t.overwritten;
  // The records themselves: the newest, consecutive, none of the zeros the new owner left.
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), n - per_block);
  for (std::size_t i = 0; i < s.size(); ++i) ASSERT_EQ(s[i].data, per_block + i) << i;
  EXPECT_TRUE(r.problems().empty());
  // DECISION D27: the first record after the ones overwritten says so, and no other; also when the
  // snapshot hands the lane out a block at a time (kron rdsample --board, E348), its first piece before the
  // pass has settled the lane's tail.
  for (const std::uint64_t piece : {std::uint64_t{0}, std::uint64_t{1}}) {
    const auto p = piece ? samples_of(r, piece) : s;
    ASSERT_EQ(p.size(), n - per_block);
    EXPECT_EQ(p[0].flags & kFlagOverwritten, kFlagOverwritten) << "pieces " << piece;
    for (std::size_t i = 1; i < p.size(); ++i) ASSERT_EQ(p[i].flags & kFlagOverwritten, 0) << i << " pieces " << piece;
  }
}

// kron rdsample copies a lane a piece at a time (ERRATUM E348): here a piece a block, while the recycler
// takes the lane's oldest blocks under it. A block copied whole before it was recycled is in the file; a
// block recycled under its copy is counted as overwritten; the walk goes on from the lane's new oldest
// block. Every record the thread wrote is in the file or counted, and the file's figures add up.
TEST(PoolTest, ASnapshotInPiecesOfARecycledLaneKeepsOrCountsEveryRecord) {
  ScratchBoard b(board_of(board::BufferMode::Circular, 64u << 10));
  const std::uint64_t per_block = b.header().block_bytes / board::kSlot;
  const std::uint64_t n = 5 * per_block + 5;  // five sealed blocks and part of a sixth; nothing recycled yet
  ASSERT_LT(n + per_block, pool_slots(b.header()));
  ASSERT_EQ(testing::trace_in_child(b.name, n), 0);
  auto r = b.reader();
  // As recycle() in src/probe/probe.cpp: the lane's (tail, evicted) past block x, its first block the next
  // one, then the generation odd, the block rewritten (zeros), the generation even.
  auto recycle = [&](std::uint32_t lane, std::uint32_t x) {
    board::LaneHeader* L = b.map.lane(lane);
    board::BlockHeader& X = b.map.blocks()[x];
    L->tail_seq.fetch_add(1);
    L->tail.store(X.start.load() + per_block);
    L->evicted.fetch_add(X.records.load());
    L->first.store(X.next.load());
    L->tail_seq.fetch_add(1);
    X.gen.fetch_add(1);
    std::memset(b.map.block_data(x), 0, b.header().block_bytes);
    X.lane.store(board::kNoBlock);
    X.gen.fetch_add(1);
  };
  std::vector<std::uint32_t> met;  // the blocks in the order the reader met them
  r.before_copy_for_test = [&](std::uint32_t lane, std::uint32_t x) {
    met.push_back(x);
    if (met.size() == 2) recycle(lane, met[0]);  // copied whole already (and handed out): in the file
    if (met.size() == 3) recycle(lane, met[1]), recycle(lane, x);  // the second copied; the third under its copy
  };
  const std::string path = ::testing::TempDir() + "pool-pieces-" + std::to_string(::getpid()) + ".trace";
  recorder::SnapshotOptions o;
  o.piece_bytes = 1;  // a piece a block
  const recorder::SnapshotResult res = recorder::snapshot_to_file(r, path, o);
  EXPECT_TRUE(res.problems.empty()) << res.problems.front();
  ASSERT_GE(met.size(), 6u) << "the walk did not go on past the block recycled under its copy";
  tracefile::Reader rd(path);
  const tracefile::FileHeader& h = rd.header();
  EXPECT_EQ(h.samples, n - per_block);
  EXPECT_EQ(h.overwritten, per_block);  // the third block alone
  EXPECT_EQ(h.overruns, 0u);
  EXPECT_EQ(h.passed_filter, n);
  EXPECT_EQ(h.passed_filter, h.samples + h.overruns + h.overwritten);
  ASSERT_EQ(rd.lanes().size(), 1u);
  EXPECT_EQ(rd.lanes()[0].samples, n - per_block);
  EXPECT_EQ(rd.lanes()[0].overwritten, per_block);
  // The records: the first two blocks', then from the fourth block on; none of the recycled zeros.
  std::vector<std::uint64_t> data;
  std::vector<std::uint8_t> flags;
  std::vector<Sample> batch(1024);
  for (std::size_t k; (k = rd.next_batch(batch)) > 0;)
    for (std::size_t j = 0; j < k; ++j) data.push_back(batch[j].data), flags.push_back(batch[j].flags);
  ASSERT_EQ(data.size(), n - per_block);
  for (std::uint64_t i = 0; i < data.size(); ++i)
    ASSERT_EQ(data[i], i < 2 * per_block ? i : i + per_block) << "record " << i;
  // DECISION D27: the record after the block recycled under its copy carries the mark, no other.
  for (std::uint64_t i = 0; i < flags.size(); ++i)
    ASSERT_EQ(flags[i] & kFlagOverwritten, i == 2 * per_block ? kFlagOverwritten : 0) << "record " << i;
  std::remove(path.c_str());
}

TEST(PoolTest, AdoptingACircularLaneWithoutThePoolLockDropsAndCounts) {
  board::CreateOptions o = board_of(board::BufferMode::Circular, 64u << 10);
  o.lanes = 1;  // the second thread must adopt the first one's lane
  ScratchBoard b(o);
  const auto parent = static_cast<std::uint32_t>(::getpid());  // alive: its lock is never taken over
  ASSERT_EQ(in_child(b.name, [&] {
              std::thread([] { kron::trace(0, 1); }).join();  // retires the lane, its block sealed
              std::thread([&] {
                b.header().pool_lock.store(parent);  // another process holds the pool lock
                kron::trace(0, 2);                   // waits for the lock, then drops: an overrun
                b.header().pool_lock.store(0);
                kron::trace(0, 3);                   // the lock's back-off (E36): dropped too
              }).join();
              std::thread([] { kron::trace(0, 4); }).join();  // a new occupancy: the lock is free
              return 0;
            }),
            0);
  auto r = b.reader();
  const auto t = r.totals();
  EXPECT_EQ(t.passed, 4u);
  EXPECT_EQ(t.overruns, 2u);
  EXPECT_EQ(t.recorded, 2u);
  EXPECT_TRUE(t.exact());
  std::vector<std::uint64_t> data;
  for (const auto& s : samples_of(r)) data.push_back(s.data);
  EXPECT_EQ(data, (std::vector<std::uint64_t>{1, 4}));
  EXPECT_TRUE(r.problems().empty());
}

// Done means: "a stress test with more threads than the old lane count (16) loses nothing in wait mode".
// 64 threads flood a small board (1 MiB) drained live; drained blocks go back to the pool.
TEST(PoolTest, SixtyFourThreadsLoseNothingInWaitMode) {
  board::CreateOptions o = board_of(board::BufferMode::Simple, 1u << 20);
  o.csr = board::kCsrSamplingEnabled | board::kCsrWriteWait;
  ScratchBoard b(o, "pool64");
  auto reader = b.reader();
  const std::string path = ::testing::TempDir() + "pool64-" + std::to_string(::getpid()) + ".trace";
  constexpr unsigned kThreads = 64;
  constexpr std::uint64_t kEach = 20000;
  {
    tracefile::Writer w(path, reader.file_header());
    recorder::Recorder rec(reader, w);
    reader.set_drainer(true);
    const int status = testing::drain_threads_in_child(b.name, rec, kThreads, [](unsigned t) {
      for (std::uint64_t i = 0; i < kEach; ++i)
        if (i % 50 == 0) kron::resource(1, (std::uint64_t{t} << 32) | i);
        else kron::trace(0, (std::uint64_t{t} << 32) | i);
    });
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    reader.set_drainer(false);
    rec.finish(reader.file_header());
    EXPECT_TRUE(reader.problems().empty());
    EXPECT_EQ(reader.pool().free, reader.pool().blocks) << "drained blocks were not given back";
  }
  tracefile::Reader r(path);
  const auto& h = r.header();
  EXPECT_EQ(h.passed_filter, kThreads * kEach);
  EXPECT_EQ(h.samples, kThreads * kEach) << "samples lost in wait mode";
  EXPECT_EQ(h.overruns, 0u);
  std::map<std::uint64_t, std::uint64_t> next;
  Sample s;
  while (r.next(s)) {
    const std::uint64_t who = s.data >> 32, seq = s.data & 0xffffffffu;
    ASSERT_EQ(seq, next[who]++) << "thread " << who << ": out of order or missing";
  }
  EXPECT_EQ(next.size(), kThreads);
  std::remove(path.c_str());
}

// The drain's one copy: two threads each write 4.8 MB to a 16 MiB board before a pass, so that each lane's
// piece is far beyond LaneMerge::kAdoptBytes; the merge keeps the records in the buffers the reader copied
// them into (BoardReader::adopt) and cuts the two interleaved lanes by search. The file holds every record,
// each thread's in its order, in timestamp order, none late.
TEST(PoolTest, BusyLanesGoToTheFileInTheReadersOwnBuffersInOrder) {
  ScratchBoard b(board_of(board::BufferMode::Simple), "adopt");
  auto reader = b.reader();
  const std::string path = ::testing::TempDir() + "pool-adopt-" + std::to_string(::getpid()) + ".trace";
  constexpr std::uint64_t kEach = 150000;
  std::uint64_t taken = 0;
  {
    tracefile::Writer w(path, reader.file_header());
    recorder::Recorder rec(reader, w, /*hold_ticks=*/0);
    ASSERT_EQ(in_child(b.name,
                       [&] {
                         auto flood = [&](unsigned t) {
                           for (std::uint64_t i = 0; i < kEach; ++i) kron::trace(0, (std::uint64_t{t} << 32) | i);
                         };
                         std::thread a(flood, 1), c(flood, 2);
                         a.join(), c.join();
                         return 0;
                       }),
              0);
    rec.drain_once(true);
    rec.drain_once(true);
    taken = rec.taken_in_place();
    rec.finish(reader.file_header());
    EXPECT_TRUE(reader.problems().empty());
  }
  EXPECT_EQ(taken, 2 * kEach) << "the lanes' pieces were copied again, not taken";
  tracefile::Reader r(path);
  EXPECT_EQ(r.header().samples, 2 * kEach);
  EXPECT_EQ(r.header().late, 0u);
  std::map<std::uint64_t, std::uint64_t> next;
  std::uint64_t last_ts = 0;
  Sample s;
  while (r.next(s)) {
    const std::uint64_t who = s.data >> 32, seq = s.data & 0xffffffffu;
    ASSERT_EQ(seq, next[who]++) << "thread " << who << ": out of order or missing";
    ASSERT_GE(s.timestamp, last_ts);
    last_ts = s.timestamp;
  }
  EXPECT_EQ(next[1] + next[2], 2 * kEach);
  std::remove(path.c_str());
}

// BoardReader::adopt hands over the buffer of the records a drain's sink is receiving, for that lane, and
// only then: outside a drain, in a snapshot's sink, or for another lane it refuses (a consumer that kept a
// buffer the reader goes on writing would see its records change).
TEST(PoolTest, ADrainsBufferIsTakenOnlyInsideItsSinkForItsLane) {
  ScratchBoard b(board_of(board::BufferMode::Simple, 1u << 20), "adopt1");
  ASSERT_EQ(testing::trace_in_child(b.name, 1000), 0);
  auto reader = b.reader();
  EXPECT_THROW(reader.adopt(0, {}), std::logic_error);
  reader.snapshot([&](const recorder::LaneView& v, std::span<const std::uint8_t>, std::uint64_t) {
    EXPECT_THROW(reader.adopt(v.index, {}), std::logic_error);
  });
  std::vector<recorder::Bytes> kept;
  std::size_t kept_at = 0, kept_bytes = 0;  // where the records lie in it
  std::uint64_t got = 0;
  reader.drain(
      [&](const recorder::LaneView& v, std::span<const std::uint8_t> recs, std::uint64_t n) {
        EXPECT_THROW(reader.adopt(v.index + 1, {}), std::logic_error);
        recorder::Bytes buf = reader.adopt(v.index, {});
        ASSERT_GE(recs.data(), buf.data());
        ASSERT_LE(recs.data() + recs.size(), buf.data() + buf.size()) << "the span is not in the buffer handed over";
        got += n;
        kept_at = static_cast<std::size_t>(recs.data() - buf.data());
        kept_bytes = recs.size();
        kept.push_back(std::move(buf));
      },
      nullptr);
  EXPECT_EQ(got, 1000u);
  ASSERT_EQ(testing::trace_in_child(b.name, 10), 0);  // the lane's next pass copies into its new buffer
  std::vector<std::uint64_t> data;
  reader.drain(
      [&](const recorder::LaneView&, std::span<const std::uint8_t> recs, std::uint64_t) {
        for (std::size_t off = 0; off < recs.size(); off += sizeof(tracefile::TraceRecord)) {
          tracefile::TraceRecord t;
          std::memcpy(&t, recs.data() + off, sizeof t);
          data.push_back(t.data);
        }
      },
      nullptr);
  EXPECT_EQ(data, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  // What was taken is unchanged by the second pass.
  ASSERT_EQ(kept.size(), 1u);
  ASSERT_EQ(kept_bytes, 1000 * sizeof(tracefile::TraceRecord));
  for (std::uint64_t i = 0; i < 1000; ++i) {
    tracefile::TraceRecord t;
    std::memcpy(&t, kept[0].data() + kept_at + i * sizeof t, sizeof t);
    ASSERT_EQ(t.data, i);
  }
}

// The goal: "any number of threads, at least 4,096 per board and across processes, records without a lane
// shortage". Four processes of 1024 threads each, all alive at once (each holds its lane and its block
// until all 4096 threads have probed: a process-shared barrier), on the default board (4096 lane headers,
// 4096 blocks of 4 KiB): no probe finds no lane, none is dropped, every thread has a lane of its own.
TEST(PoolTest, FourThousandNinetySixThreadsAcrossProcessesAtOnce) {
  ScratchBoard b(board_of(board::BufferMode::Simple));
  ASSERT_GE(b.header().lane_count, 4096u);
  constexpr unsigned kProcs = 4, kThreads = 1024, kEach = 8;
  auto* all = static_cast<pthread_barrier_t*>(
      ::mmap(nullptr, sizeof(pthread_barrier_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(all, MAP_FAILED);
  pthread_barrierattr_t ba;
  pthread_barrierattr_init(&ba);
  pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
  ASSERT_EQ(pthread_barrier_init(all, &ba, kProcs * kThreads), 0);
  std::fflush(nullptr);
  std::vector<pid_t> kids;
  for (unsigned p = 0; p < kProcs; ++p) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (!kron::attach(b.name.c_str())) std::_Exit(3);
      struct Arg {
        pthread_barrier_t* all;
        std::uint64_t tag;
      };
      std::vector<Arg> args(kThreads);
      std::vector<pthread_t> ts(kThreads);
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      pthread_attr_setstacksize(&attr, 256 << 10);
      for (unsigned t = 0; t < kThreads; ++t) {
        args[t] = {all, (std::uint64_t{p} << 40) | (std::uint64_t{t} << 20)};
        if (pthread_create(&ts[t], &attr, [](void* v) -> void* {
              auto* a = static_cast<Arg*>(v);
              for (unsigned i = 0; i < kEach; ++i) kron::trace(0, a->tag | i);
              pthread_barrier_wait(a->all);  // all 4096 threads hold their lanes now
              return nullptr;
            }, &args[t]) != 0)
          std::_Exit(4);
      }
      for (auto& t : ts) pthread_join(t, nullptr);
      std::_Exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(k, &status, 0), k);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  ::munmap(all, sizeof(pthread_barrier_t));
  auto r = b.reader();
  const auto t = r.totals();
  EXPECT_EQ(t.no_lane, 0u) << "a thread found no lane";
  EXPECT_EQ(t.overruns, 0u);
  EXPECT_EQ(t.recorded, std::uint64_t{kProcs} * kThreads * kEach);
  EXPECT_TRUE(t.exact());
  std::uint64_t lanes = 0;
  for (const auto& v : r.lanes()) lanes += v.passed == kEach ? 1 : 0;
  EXPECT_EQ(lanes, std::uint64_t{kProcs} * kThreads) << "threads did not each have a lane of their own";
}

}  // namespace
}  // namespace kron
