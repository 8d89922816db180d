// The two lock-free structures of the block pool (board format 2.0, include/kron/board.hpp), shared by the
// probe's slow paths (src/probe/probe.cpp) and the reader (src/recorder/board_reader.cpp): the free-block
// stack and the circular board's sealed-block queue. No third-party dependency (linked into programs).
// Both take indices from shared memory that another process may have scribbled on: an index outside the
// table is never followed (the structure then reads as empty), and no loop waits on a word another process
// may hold still forever: a queue cell whose sequence number is ahead of the queue (only in a scribbled
// segment) ends the retry after kMaxRetries (ERRATUM E123).
#pragma once
#include <sched.h>

#include <atomic>
#include <cstdint>

#include "kron/board.hpp"

namespace kron::board::pool {

// Retries of a queue operation that sees a cell ahead of the queue's position (another thread moved the
// position meanwhile: the next load catches up at once). More than this is a scribbled segment.
inline constexpr unsigned kMaxRetries = 1u << 16;

// The free-block stack (Treiber): top = tag << 32 | index (kNoBlock: empty). The tag, bumped by every
// push and pop, defeats ABA (a block popped, given back and pushed again between a popper's load and CAS).
inline std::uint32_t pop_free(std::atomic<std::uint64_t>& top, BlockHeader* blocks, std::uint32_t count) {
  std::uint64_t t = top.load(std::memory_order_acquire);
  for (;;) {
    const std::uint32_t i = static_cast<std::uint32_t>(t);
    if (i >= count) return kNoBlock;  // empty (or a scribbled index: never followed)
    const std::uint32_t next = blocks[i].next_free.load(std::memory_order_relaxed);
    const std::uint64_t nt = ((t >> 32) + 1) << 32 | next;
    // Acquire: the drainer finished reading the block before the release CAS that pushed it.
    if (top.compare_exchange_weak(t, nt, std::memory_order_acquire, std::memory_order_acquire)) return i;
  }
}
inline void push_free(std::atomic<std::uint64_t>& top, BlockHeader* blocks, std::uint32_t i) {
  std::uint64_t t = top.load(std::memory_order_relaxed);
  for (;;) {
    blocks[i].next_free.store(static_cast<std::uint32_t>(t), std::memory_order_relaxed);
    const std::uint64_t nt = ((t >> 32) + 1) << 32 | i;
    // Release: the block's last reads (the drainer's copy) happen before anyone pops it.
    if (top.compare_exchange_weak(t, nt, std::memory_order_release, std::memory_order_relaxed)) return;
  }
}

// The sealed-block queue: a bounded MPMC ring of `count` cells (Vyukov), oldest first. Each block is in
// it at most once, so with count == block_count it is never full. Cells start with seq = their index.
inline bool enqueue_sealed(std::atomic<std::uint64_t>& enq, SealedCell* cells, std::uint64_t count,
                           std::uint32_t block) {
  std::uint64_t pos = enq.load(std::memory_order_relaxed);
  for (unsigned retry = 0; retry < kMaxRetries; ++retry) {
    SealedCell& c = cells[pos % count];
    const std::uint64_t s = c.seq.load(std::memory_order_acquire);
    if (s == pos) {
      if (enq.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        c.block.store(block, std::memory_order_relaxed);
        c.seq.store(pos + 1, std::memory_order_release);  // release: the block (and its Sealed state) visible
        return true;
      }
    } else if (s < pos) {
      return false;  // full: only in a scribbled segment
    } else {
      pos = enq.load(std::memory_order_relaxed);
    }
  }
  return false;  // a cell ahead of the queue that never moves: scribbled (the block is not queued)
}
inline std::uint32_t dequeue_sealed(std::atomic<std::uint64_t>& deq, SealedCell* cells, std::uint64_t count) {
  std::uint64_t pos = deq.load(std::memory_order_relaxed);
  for (unsigned retry = 0; retry < kMaxRetries; ++retry) {
    SealedCell& c = cells[pos % count];
    const std::uint64_t s = c.seq.load(std::memory_order_acquire);
    if (s == pos + 1) {
      if (deq.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        const std::uint32_t b = c.block.load(std::memory_order_relaxed);
        c.seq.store(pos + count, std::memory_order_release);  // free for the enqueue one lap later
        return b;
      }
    } else if (s < pos + 1) {
      return kNoBlock;  // empty (or its oldest cell is still being filled by a preempted writer)
    } else {
      pos = deq.load(std::memory_order_relaxed);
    }
  }
  return kNoBlock;  // as empty: a scribbled queue
}

// A lock word in shared memory: the holder's pid, 0 when free (the circular board's pool lock: recycling,
// and the drainer detaching a freed lane's blocks; the counter-control lock). Never the fast path. A
// holder found dead (`gone(pid)`) is replaced (ERRATUM E124). Gives up,
// false, after `timeout` ticks of `now()` (a holder stopped by SIGSTOP or a debugger): the caller then
// counts an overrun or retries later rather than stall.
template <class Now, class Gone>
bool lock(std::atomic<std::uint32_t>& word, std::uint32_t me, std::uint64_t timeout, Now now, Gone gone) {
  const std::uint64_t t0 = now();
  for (unsigned spin = 1;; ++spin) {
    std::uint32_t h = 0;
    // Acquire: what the last holder wrote under the lock is visible.
    if (word.compare_exchange_weak(h, me, std::memory_order_acquire, std::memory_order_relaxed)) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (spin % 256 == 0) {
      if (h && gone(h)) word.compare_exchange_strong(h, 0, std::memory_order_relaxed);
      if (now() - t0 > timeout) return false;
      sched_yield();
    }
  }
}
// Release: the next holder sees everything written under the lock.
inline void unlock(std::atomic<std::uint32_t>& word) { word.store(0, std::memory_order_release); }

}  // namespace kron::board::pool
