// The two lock-free structures of the block pool (include/kron/board_pool.hpp) under contention: every
// block handed out to one thread at a time, none lost; the sealed queue FIFO; scribbled indices refused.
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "kron/board_pool.hpp"

namespace kron::board::pool {
namespace {

TEST(BoardPoolTest, FreeStackHandsEachBlockToOneThreadAtATime) {
  constexpr std::uint32_t kBlocks = 64;
  auto blocks = std::make_unique<BlockHeader[]>(kBlocks);
  std::atomic<std::uint64_t> top{kNoBlock};
  for (std::uint32_t i = 0; i < kBlocks; ++i) push_free(top, blocks.get(), i);
  std::vector<std::atomic<int>> held(kBlocks);
  std::atomic<int> twice{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int n = 0; n < 200000; ++n) {
        const std::uint32_t b = pop_free(top, blocks.get(), kBlocks);
        if (b == kNoBlock) continue;
        if (held[b].fetch_add(1) != 0) twice.fetch_add(1);
        held[b].fetch_sub(1);
        push_free(top, blocks.get(), b);
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(twice.load(), 0);
  std::uint32_t n = 0;
  while (pop_free(top, blocks.get(), kBlocks) != kNoBlock) ++n;
  EXPECT_EQ(n, kBlocks);  // none lost
}

TEST(BoardPoolTest, SealedQueueIsFifoAndRefusesScribbledIndices) {
  constexpr std::uint64_t kCells = 8;
  auto cells = std::make_unique<SealedCell[]>(kCells);
  for (std::uint64_t i = 0; i < kCells; ++i) cells[i].seq.store(i);
  std::atomic<std::uint64_t> enq{0}, deq{0};
  EXPECT_EQ(dequeue_sealed(deq, cells.get(), kCells), kNoBlock);
  for (std::uint32_t lap = 0; lap < 3; ++lap) {
    for (std::uint32_t b = 0; b < kCells; ++b) EXPECT_TRUE(enqueue_sealed(enq, cells.get(), kCells, 100 * lap + b));
    for (std::uint32_t b = 0; b < kCells; ++b) EXPECT_EQ(dequeue_sealed(deq, cells.get(), kCells), 100 * lap + b);
  }
  auto blocks = std::make_unique<BlockHeader[]>(2);
  std::atomic<std::uint64_t> top{7};  // an index past the table: never followed
  EXPECT_EQ(pop_free(top, blocks.get(), 2), kNoBlock);
}

}  // namespace
}  // namespace kron::board::pool
