// Reading a board: drain, snapshot, lane figures. See board_reader.hpp and docs/board-format.md.
#include "recorder/board_reader.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "kron/board_ops.hpp"
#include "kron/board_pool.hpp"
#include "kron/core/error.hpp"
#include "kron/core/record.hpp"

namespace kron::recorder {

using namespace kron::board;

namespace {
// A lane's owner is gone when its pid no longer exists (signal 0 only checks). A pid outside Linux's
// range (a hostile segment) is never passed to kill(): 0 and negative values name process groups.
bool process_gone(std::uint32_t pid) {
  if (pid == 0 || pid > (1u << 22)) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// (tail, evicted) of a circular lane under its seqlock. False when the writer is inside its update
// (tail_seq odd, or changing) for all of a short spin: it was preempted or stopped there (SIGSTOP, a
// debugger) or it died there. The caller then defers that lane to a later pass, or, where it cannot
// wait (the owner is dead, a snapshot), takes the fields as they are (the seqlock reader
// never fails a recording).
bool load_tail(const LaneHeader* L, std::uint64_t* tail, std::uint64_t* evicted) {
  for (int tries = 0; tries < 4096; ++tries) {
    const std::uint64_t s0 = L->tail_seq.load(std::memory_order_acquire);  // acquire: fields after it
    *tail = L->tail.load(std::memory_order_relaxed);
    *evicted = L->evicted.load(std::memory_order_relaxed);
    // Acquire fence: the two loads above happen before the re-check.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (!(s0 & 1) && L->tail_seq.load(std::memory_order_relaxed) == s0) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  return false;
}
}  // namespace

BoardReader BoardReader::open(const std::string& name) {
  std::string err;
  std::uint64_t off = 0;
  Mapping m = Mapping::open(name, &err, &off);
  if (!m) throw InputError::at_offset("board " + name, off, err);
  BoardReader r(std::move(m), "board " + name);
  r.check_claims(true);
  return r;
}

BoardReader BoardReader::view(void* base, std::uint64_t size, const std::string& label) {
  Problem p;
  Mapping m = Mapping::view(base, size, &p);
  if (!m) throw InputError::at_offset(label, p.offset, "board refused: " + p.what);
  BoardReader r(std::move(m), label);
  r.check_claims(true);
  return r;
}

void BoardReader::check_claims(bool refuse) {
  // ERRATUM E125. Lanes were claimed above the lane count: the count was changed after they were (a lane
  // count one short would hide the last lane, its samples and its probes alike, and the figures would
  // still balance). Refused when opened; met later, a problem naming the field (the command fails).
  const std::uint32_t hwm = header().lane_hwm.load(std::memory_order_acquire);
  if (hwm <= geo().lane_count) return;
  const std::string what = "lane count " + std::to_string(geo().lane_count) + " is below the " + std::to_string(hwm) +
                           " lanes claimed (lane_hwm): lanes above it would not be read";
  if (refuse) throw InputError::at_offset(label_, offsetof(BoardHeader, lane_count), "board refused: " + what);
  add_problem(label_ + ": offset " + std::to_string(offsetof(BoardHeader, lane_count)) + ": " + what);
}

void BoardReader::check_blocks() {
  // ERRATUM E125. A block that holds records of a lane at or above the lane count (Writing or Sealed):
  // those records would be neither read nor counted.
  const BlockHeader* blocks = map_.blocks();
  for (std::uint32_t x = 0; x < geo().block_count; ++x) {
    const BlockState s = blocks[x].state.load(std::memory_order_relaxed);
    const std::uint32_t l = blocks[x].lane.load(std::memory_order_relaxed);
    if ((s == BlockState::Writing || s == BlockState::Sealed) && l != kNoBlock && l >= geo().lane_count) {
      add_problem(
          label_ + ": offset " +
          std::to_string(geo().blocks_offset + std::uint64_t{x} * sizeof(BlockHeader) + offsetof(BlockHeader, lane)) +
          ": block " + std::to_string(x) + " holds records of lane " + std::to_string(l) + ", beyond the lane count " +
          std::to_string(geo().lane_count) + " (offset " + std::to_string(offsetof(BoardHeader, lane_count)) +
          "): they would be neither read nor counted");
      return;
    }
  }
}

void BoardReader::add_problem(const std::string& p) {
  if (std::find(problems_.begin(), problems_.end(), p) == problems_.end()) problems_.push_back(p);
}

void BoardReader::set_drainer(bool on) {
  heartbeat();
  header().drainer_pid.store(on ? static_cast<std::uint32_t>(::getpid()) : 0, std::memory_order_relaxed);
}
void BoardReader::heartbeat() {
  // Relaxed: waiting probes only compare it with their clock.
  header().drainer_beat.store(ticks(geo().clock_kind), std::memory_order_relaxed);
}

std::uint64_t BoardReader::count_in_place(std::uint32_t x, std::uint64_t a, std::uint64_t e, std::string* bad,
                                          std::uint64_t* bad_at) const {
  const Geometry& b = geo();
  const std::uint64_t B = b.block_slots();
  const std::uint8_t* data = map_.block_data(x);
  std::uint64_t count = 0;
  for (std::uint64_t pos = a; pos < e;) {
    const std::uint64_t w = record::header_word_at(data + (pos % B) * kSlot);
    const std::uint64_t n = record::valid_slots(w);  // 0: unknown kind, or a size not its kind's
    if (!n || pos + n > e) {
      *bad_at = b.data_offset + std::uint64_t{x} * b.block_bytes + (pos % B) * kSlot;
      *bad = !n ? "record of kind " + std::to_string(record::kind_of(w)) + " and size " +
                      std::to_string(record::size_of_word(w)) + " is not a Trace or Resource record"
                : "record runs past the end of its block or the lane's head";
      return count;
    }
    pos += n;
    ++count;
  }
  return count;
}

void BoardReader::set_corrupt(Pass& p, std::uint32_t lane, std::uint64_t off, const std::string& what) const {
  p.corrupt = true;
  p.problem = label_ + ": offset " + std::to_string(off) + ": lane " + std::to_string(lane) + ": " + what;
}

// The records of the segments from `keep` on, each one's kind and size checked, handed to the sink in one
// piece (or, for figures, counted where they are). Sets p.corrupt, naming the offset, at a bad record.
void BoardReader::emit_kept(std::uint32_t i, const LaneView& v, const Sink& sink, std::size_t keep, Pass& p) {
  const Geometry& b = geo();
  const std::uint64_t B = b.block_slots();
  Bytes& buf = bufs_[i];
  std::vector<Seg>& segs = segs_;
  auto corrupt = [&](std::uint64_t off, const std::string& what) { set_corrupt(p, i, off, what); };
  // Walk the records kept, checking each one's kind and size.
  constexpr auto kTraceWord = static_cast<std::uint32_t>(record::header_word(record::RecordKind::Trace));
  static_assert(record::kKindShift + 16 <= 32 && record::kSizeShift + 16 <= 32, "kind and size in the low word");
  const bool upgrade = geo().minor < 2;
  std::uint64_t count = 0, bytes = 0;
  for (std::size_t k = keep; k < segs.size() && !p.corrupt; ++k) {
    Seg& sg = segs[k];
    if (!sink) {  // counted in place already
      count += sg.counted;
      p.r = std::max(p.r, sg.to);
      continue;
    }
    // The common record, a Trace record, is recognised by its header word's kind and size alone (a
    // predicted branch), so that the address of the next record does not wait for this one's load.
    std::uint8_t* const first = buf.data() + sg.at;
    std::uint8_t* q = first;
    std::uint8_t* const end = first + (sg.to - sg.from) * kSlot;
    std::uint64_t c = 0;
    while (q < end) {
      const std::uint64_t w = record::header_word_at(q);
      std::uint64_t n = 1;
      if (static_cast<std::uint32_t>(w) != kTraceWord) [[unlikely]] {
        n = record::valid_slots(w);  // 0: unknown kind, or a size not its kind's
        if (!n || n > static_cast<std::uint64_t>(end - q) / kSlot) {
          const std::uint64_t pos = sg.from + static_cast<std::uint64_t>(q - first) / kSlot;
          const std::uint64_t at = b.data_offset + std::uint64_t{sg.block} * b.block_bytes + (pos % B) * kSlot;
          corrupt(at, !n ? "record of kind " + std::to_string(record::kind_of(w)) + " and size " +
                               std::to_string(record::size_of_word(w)) + " is not a Trace or Resource record"
                         : "record runs past the end of its block or the lane's head");
          break;
        }
      }
      // ERRATUM E180: a 2.1 board's samples hold the cpu in the header; the file (1.4) wants them phased.
      if (upgrade) record::upgrade_to_phased(q);
      q += n * kSlot;
      ++c;
    }
    const std::uint64_t pos = sg.from + static_cast<std::uint64_t>(q - first) / kSlot;
    count += c;
    sg.counted += c;
    bytes = sg.at + (pos - sg.from) * kSlot - (keep < segs.size() ? segs[keep].at : 0);
    p.r = std::max(p.r, pos);
  }
  if (count && sink && i < gap_.size() && gap_[i]) {
    // DECISION D27: the first record after lost ones says so (the analysis cuts what was open, D20).
    buf[segs[keep].at + offsetof(record::RecordHeader, flags)] |= kFlagOverwritten;
    gap_[i] = 0;
  }
  if (count && sink) {
    if (draining_) emitting_ = i;  // adopt() may take the buffer during this call
    struct Done {
      std::uint32_t& e;
      ~Done() { e = ~0u; }
    } done{emitting_};
    sink(v, std::span<const std::uint8_t>(buf.data() + segs[keep].at, bytes), count);
  }
  p.emitted += count;
  used_ = 0;
}

Bytes BoardReader::adopt(std::uint32_t lane, Bytes spare) {
  if (lane != emitting_ || lane >= bufs_.size())
    throw std::logic_error("BoardReader::adopt outside a drain's sink call for that lane");
  bufs_[lane].swap(spare);
  return spare;
}

void BoardReader::let_go(std::uint64_t n) {
  if (!drop_behind_ || !map_.shared()) return;
  read_since_drop_ += n;
  if (read_since_drop_ >= kDropEvery) drop_now();
}

void BoardReader::drop_now() {
  if (!drop_behind_ || !map_.shared() || !read_since_drop_) return;
  read_since_drop_ = 0;
  // The whole record area at once, every kDropEvery bytes read: one call (a range never mapped costs the
  // kernel nothing), and whatever the kernel mapped around the faults of a read goes too. MAP_SHARED: the
  // pages leave this process's page tables only, the records stay in the board's file, a later read maps
  // them again (a failure leaves them resident: no harm).
  const auto from = (reinterpret_cast<std::uintptr_t>(map_.block_data(0)) + 4095) & ~std::uintptr_t{4095};
  const auto to =
      (reinterpret_cast<std::uintptr_t>(map_.block_data(0)) + std::uint64_t{geo().block_count} * geo().block_bytes) &
      ~std::uintptr_t{4095};
  if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

namespace {
// Makes `buf` hold at least `need` bytes, keeping its first `used`: it grows to a power of two
// (LaneMerge::spare), what it holds copied once.
void grow(Bytes& buf, std::size_t used, std::size_t need) {
  if (buf.capacity() < need) {
    Bytes bigger;
    bigger.reserve(std::bit_ceil(need));
    bigger.resize(used);
    if (used) std::memcpy(bigger.data(), buf.data(), used);
    buf.swap(bigger);
  }
  if (buf.size() < need) buf.resize(std::max(need, std::min(2 * buf.size(), buf.capacity())));
}
}  // namespace

BoardReader::Pass BoardReader::pass(std::uint32_t i, std::uint64_t r, std::uint64_t rr, const LaneView& v,
                                    const Sink& sink, bool defer) {
  const LaneHeader* L = map_.lane(i);
  const Geometry& b = geo();  // ERRATUM E120: the validated copy, never the live header
  const std::uint64_t B = b.block_slots();
  const std::uint32_t nb = b.block_count;
  const BlockHeader* blocks = map_.blocks();
  const std::uint64_t lane_off = b.lanes_offset + std::uint64_t{i} * b.lane_header_size;
  auto block_off = [&](std::uint32_t x) { return b.blocks_offset + std::uint64_t{x} * sizeof(BlockHeader); };
  Pass p;
  p.r = r, p.rr = rr;
  auto corrupt = [&](std::uint64_t off, const std::string& what) { set_corrupt(p, i, off, what); };
  const bool circ = circular();
  // ERRATUM E34. A recycler stopped inside this lane's seqlock: a drain defers the lane (nothing taken,
  // nothing counted: the next pass retries it), unless the lane's owner is dead and the fields are taken
  // as they stand; snapshots and figures take them as they stand too.
  const bool may_defer = defer && !v.owner_dead;
  std::uint64_t t0 = 0, e0 = 0;
  if (circ && !load_tail(L, &t0, &e0) && may_defer) {
    p.deferred = true;
    return p;
  }
  // Acquire: every record below head is complete (pairs with the probe's release store).
  const std::uint64_t h = L->head.load(std::memory_order_acquire);
  // A circular lane whose last block was recycled after it retired has its tail (a block bound) beyond
  // its head, and the reader's position at that tail: nothing there, not a fault.
  if (h < r && !(circ && r <= t0)) {
    corrupt(lane_off + offsetof(LaneHeader, head), "head is behind the read position");
    return p;
  }
  const std::uint64_t from = std::max(r, t0);
  if (sink && circ && t0 > r) note_gap(i);  // [r, t0) recycled before this pass: lost (D27)
  // Copy [from, h) block by block along the lane's chain into this lane's private buffer (what a sink
  // receives stays valid until the next pass over the lane; in pieces, ERRATUM E348, until it returns).
  // On a circular board a block may be recycled under the reader: its generation is checked after the
  // copy, and the walk stops where the chain moved (the rest is taken next pass; what was recycled is
  // below the new tail and counted as overwritten).
  if (bufs_.size() <= i) bufs_.resize(i + 1);
  Bytes& buf = bufs_[i];
  std::vector<Seg>& segs = segs_;
  segs.clear();
  used_ = 0;
  std::size_t flushed = 0;  // segments handed to the sink already (in pieces)
  bool at_end = false;      // the walk reached the head (else it stopped where the chain moved, or corrupt)
  std::uint64_t expect = ~0ull, off_of_index = lane_off + offsetof(LaneHeader, first);
  // Acquire: the block's header was written before it was linked.
  std::uint32_t x = L->first.load(std::memory_order_acquire);
  for (std::uint32_t steps = 0; x != kNoBlock && !p.corrupt; ++steps) {
    if (x >= nb) {
      corrupt(off_of_index, "block index " + std::to_string(x) + " is outside the pool of " + std::to_string(nb));
      break;
    }
    if (steps >= nb) {
      corrupt(off_of_index, "the lane's block chain is longer than the pool (a cycle)");
      break;
    }
    const BlockHeader& X = blocks[x];
    const std::uint32_t g = X.gen.load(std::memory_order_acquire);  // acquire: the fields below after it
    // Odd: a writer is rewriting the block's header (recycled, not yet handed out again): the chain
    // moved; next pass goes on (a simple board never recycles: its generations stay even).
    if (circ && (g & 1u)) break;
    const std::uint64_t s = X.start.load(std::memory_order_relaxed);
    if (X.lane.load(std::memory_order_relaxed) != i || s % B || (expect != ~0ull && s != expect)) {
      if (circ) break;  // recycled and handed out again meanwhile: the chain moved, next pass goes on
      corrupt(block_off(x), "block " + std::to_string(x) + " does not continue the lane's chain");
      break;
    }
    // Acquire: end (and the records below it) were stored before the link or the sealed state.
    const std::uint32_t nx = X.next.load(std::memory_order_acquire);
    const bool sealed = nx != kNoBlock || X.state.load(std::memory_order_acquire) == BlockState::Sealed;
    const std::uint64_t end = sealed ? X.end.load(std::memory_order_relaxed) : s + B;
    if (end < s || end > s + B) {
      if (circ) {
        // The block may have been recycled between the loads of start and end: its new owner stored a
        // new start and end after bumping gen. That is the chain moving, not a corrupt board.
        std::atomic_thread_fence(std::memory_order_acquire);
        if (X.gen.load(std::memory_order_relaxed) != g) break;
      }
      corrupt(block_off(x) + offsetof(BlockHeader, end), "block end is outside the block");
      break;
    }
    const std::uint64_t e = std::min(end, h);  // never past the head read above
    const std::uint64_t a = std::max(from, s);
    if (before_copy_for_test) before_copy_for_test(i, x);
    if (a < e && !sink) {  // figures only: counted where they are (ERRATUM E348)
      std::string bad;
      std::uint64_t bad_at = 0;
      const std::uint64_t n = count_in_place(x, a, e, &bad, &bad_at);
      if (circ) {
        std::atomic_thread_fence(std::memory_order_acquire);
        if (X.gen.load(std::memory_order_relaxed) != g) break;  // recycled under the count: the chain moved
      }
      if (!bad.empty()) {
        corrupt(bad_at, bad);
        break;
      }
      segs.push_back({a, e, 0, x, n});
    } else if (a < e) {
      const std::uint64_t n = (e - a) * kSlot;
      if (piece_bytes_ && used_ && used_ + n > piece_bytes_) {  // a piece, each block's copy checked: out
        emit_kept(i, v, sink, flushed, p);
        flushed = segs.size();
        if (p.corrupt) break;
      }
      grow(buf, used_, used_ + n);
      std::memcpy(buf.data() + used_, map_.block_data(x) + (a - s) * kSlot, n);
      segs.push_back({a, e, used_, x});
      used_ += n;
    }
    if (circ) {
      // Acquire fence: the copy and the link load happen before the generation is checked again.
      std::atomic_thread_fence(std::memory_order_acquire);
      if (X.gen.load(std::memory_order_relaxed) != g) {
        if (a < e) segs.pop_back();
        break;
      }
    }
    if (a < e) let_go((e - a) * kSlot);
    // A drain gives a simple board's block back as soon as it holds a copy of all of it and its writer
    // has moved on: the writer may be waiting for it (a pass over a 16 MiB lane takes milliseconds).
    if (defer && !circ && nx != kNoBlock && end <= h) unlink_first(i, x, nx, end, true);
    if (!sealed || e >= h) {
      at_end = true;
      break;
    }
    expect = s + B;
    off_of_index = block_off(x) + offsetof(BlockHeader, next);
    x = nx;
  }
  if (p.corrupt) {
    p.r = h;
    p.rr = rr + p.emitted;
    return p;
  }
  p.moved = circ && !at_end && x != kNoBlock;
  std::size_t keep = flushed;  // the first segment kept
  if (circ && !settle_tail(i, r, rr, flushed, may_defer, p, &keep)) return p;
  // DECISION D27: records recycled under the walk (beyond those lost before it, noted above) leave a gap
  // before the records kept from here on (in pieces, after those handed out already).
  if (sink && p.overwritten > (e0 > rr ? e0 - rr : 0)) note_gap(i);
  emit_kept(i, v, sink, keep, p);
  p.rr = rr + p.overwritten + p.emitted;
  if (p.corrupt) p.r = h;
  return p;
}

bool BoardReader::settle_tail(std::uint32_t i, std::uint64_t r, std::uint64_t rr, std::size_t flushed, bool may_defer,
                              Pass& p, std::size_t* keep) {
  const LaneHeader* L = map_.lane(i);
  std::uint64_t t1 = 0, e1 = 0;
  // Acquire fence: the copies happen before the tail load below; a block recycled during a copy lies below
  // the tail its recycler published first.
  std::atomic_thread_fence(std::memory_order_acquire);
  if (!load_tail(L, &t1, &e1) && may_defer) {  // (a pass that may defer hands its lane in one piece, at the end)
    p = Pass{};
    p.r = r, p.rr = rr, p.deferred = true;
    return false;
  }
  if (t1 > r) {
    // The records in [r, t1) were recycled before this reader took them, but for those of the pieces
    // handed out already: each block's copy was whole (its generation unchanged over it), and is in the
    // output; the rest count as overwritten. ERRATUM E348.
    std::uint64_t taken = 0;
    for (std::size_t k = 0; k < flushed; ++k)
      if (segs_[k].from < t1) taken += segs_[k].counted;
    if (e1 < rr + taken) {
      set_corrupt(p, i, geo().lanes_offset + std::uint64_t{i} * geo().lane_header_size + offsetof(LaneHeader, evicted),
                  e1 < rr ? "evicted count went backwards" : "evicted count is below the records read under the tail");
      p.rr = rr + p.emitted;
      return false;
    }
    p.overwritten = e1 - rr - taken;
    p.r = std::max(p.r, t1);
  }
  while (*keep < segs_.size() && segs_[*keep].from < t1) ++*keep;  // t1 is a block bound: whole segments
  return true;
}

LaneView BoardReader::view_lane(std::uint32_t i) {
  const LaneHeader* L = map_.lane(i);
  LaneView v;
  v.index = i;
  // Acquire: the owner fields were written before the state was published.
  v.state = L->state.load(std::memory_order_acquire);
  v.pid = L->pid;
  v.tid = L->tid;
  v.source = L->source;
  v.occupancy = L->occupancy.load(std::memory_order_relaxed);
  v.owner_dead = v.state == LaneState::Active && process_gone(v.pid);
  v.passed = L->passed.load(std::memory_order_relaxed);
  v.overruns = L->overruns.load(std::memory_order_relaxed);
  v.waits = L->waits.load(std::memory_order_relaxed);
  v.wait_ticks = L->wait_ticks.load(std::memory_order_relaxed);
  v.drained = L->drained.load(std::memory_order_relaxed);
  v.overwritten = L->overwritten.load(std::memory_order_relaxed);
  v.capacity_slots = std::uint64_t{geo().block_count} * geo().block_slots();
  return v;
}

void BoardReader::drain(const Sink& sink, std::vector<tracefile::LaneEntry>* finished) {
  draining_ = true;
  struct Done {
    bool& d;
    ~Done() { d = false; }
  } done{draining_};
  heartbeat();
  check_claims(false);
  // A pool lock that could not be had is not tried again in this pass: its holder (stopped, or a scribbled
  // word naming a live process) would cost every finishing lane the lock's timeout (thousands of lanes:
  // minutes). Those lanes wait for the next pass (ERRATUM E123).
  bool pool_busy = false;
  const std::uint32_t n = map_.lanes_in_use();
  for (std::uint32_t i = 0; i < n; ++i) {
    LaneHeader* L = map_.lane(i);
    LaneView v = view_lane(i);
    if (v.state != LaneState::Active && v.state != LaneState::Retired) continue;
    bool finishing = false;
    if (finished && (v.state == LaneState::Retired || v.owner_dead)) {
      // Take the lane with a CAS: a new thread may be adopting a Retired lane at this moment.
      LaneState s = v.state;
      finishing = L->state.compare_exchange_strong(s, LaneState::Claiming, std::memory_order_acquire);
      if (!finishing) continue;  // adopted: drained as an active lane next pass
    }
    // A circular lane is freed under the pool lock: no recycler moves its chain between the last pass and
    // the detach. A lock that cannot be had (its holder stopped) leaves the lane for a later pass.
    const bool locked = finishing && circular() && !pool_busy && lock_pool();
    if (finishing && circular() && !locked) {
      pool_busy = true;
      ++deferred_;
      L->state.store(v.state, std::memory_order_release);  // as it was (release: as when freed)
      continue;
    }
    Pass p = pass(i, L->read.load(std::memory_order_relaxed), L->read_records.load(std::memory_order_relaxed), v, sink,
                  true);
    if (p.deferred) {  // its writer is inside an update: the other lanes go on, this one next pass
      ++deferred_;
      if (locked) pool::unlock(header().pool_lock);
      if (finishing) L->state.store(v.state, std::memory_order_release);  // as it was (release: as when freed)
      continue;
    }
    if (p.corrupt) add_problem(p.problem);
    // Relaxed stores of the reader line; `read` last, with release: the writer may reuse the slots
    // below it only after this process finished copying them.
    L->drained.store(v.drained + p.emitted, std::memory_order_relaxed);
    L->overwritten.store(v.overwritten + p.overwritten, std::memory_order_relaxed);
    L->read_records.store(p.rr, std::memory_order_relaxed);
    L->read.store(p.r, std::memory_order_release);
    if (!finishing) {
      if (!circular()) give_back(i, p.r, false);
      continue;
    }
    // The owner is gone: record the lane's final figures and free it for another thread.
    const std::uint64_t passed = L->passed.load(std::memory_order_relaxed);
    const std::uint64_t torn = passed > v.overruns + p.rr ? passed - v.overruns - p.rr : 0;
    tracefile::LaneEntry e{
        v.pid, v.tid, v.drained + p.emitted, v.overruns + torn, v.overwritten + p.overwritten, v.waits, v.wait_ticks};
    finished->push_back(e);
    freed_.passed += passed;
    freed_.recorded += e.samples;
    freed_.overruns += e.overruns;
    freed_.overwritten += e.overwritten;
    freed_.waits += e.waits;
    freed_.wait_ticks += e.wait_ticks;
    freed_.torn += torn;
    for (auto* a : {&L->head, &L->passed, &L->overruns, &L->waits, &L->wait_ticks, &L->tail_seq, &L->tail, &L->evicted,
                    &L->read, &L->read_records, &L->drained, &L->overwritten, &L->torn, &L->returned})
      a->store(0, std::memory_order_relaxed);
    give_back(i, p.r, true);
    if (i < gap_.size()) gap_[i] = 0;  // the lane's next owner is another thread
    if (locked) pool::unlock(header().pool_lock);
    // Release: the next owner (acquire CAS) sees the zeroed lane.
    L->state.store(LaneState::Free, std::memory_order_release);
  }
}

void BoardReader::unlink_first(std::uint32_t i, std::uint32_t x, std::uint32_t nx, std::uint64_t end, bool to_pool) {
  LaneHeader* L = map_.lane(i);
  BlockHeader& X = map_.blocks()[x];
  L->first.store(nx, std::memory_order_relaxed);
  X.lane.store(kNoBlock, std::memory_order_relaxed);
  if (to_pool) {
    X.next.store(kNoBlock, std::memory_order_relaxed);
    X.state.store(BlockState::Free, std::memory_order_relaxed);
    pool::push_free(header().free_top, map_.blocks(), x);  // release: this process's copy of it is done
  }
  L->returned.store(end, std::memory_order_release);  // release: as the push
}

void BoardReader::give_back(std::uint32_t i, std::uint64_t read, bool all) {
  LaneHeader* L = map_.lane(i);
  BlockHeader* blocks = map_.blocks();
  const std::uint32_t nb = geo().block_count;
  std::uint32_t x = L->first.load(std::memory_order_acquire);
  for (std::uint32_t steps = 0; x < nb && steps < nb; ++steps) {
    BlockHeader& X = blocks[x];
    if (X.lane.load(std::memory_order_relaxed) != i) break;  // a scribbled chain: never give back another's
    // Acquire: the link was stored after the block's end (and after the writer's last record in it).
    const std::uint32_t nx = X.next.load(std::memory_order_acquire);
    if (!all && (nx == kNoBlock || read < X.end.load(std::memory_order_relaxed))) break;  // still written or unread
    // A circular board's sealed block stays in the recycling queue, detached from the lane (its recycler
    // then touches no lane); a dead writer's current block was never queued and goes back like a simple
    // board's blocks.
    unlink_first(i, x, nx, X.end.load(std::memory_order_relaxed),
                 !circular() || X.state.load(std::memory_order_relaxed) == BlockState::Writing);
    x = nx;
  }
  if (all) L->first.store(kNoBlock, std::memory_order_relaxed), L->cur.store(kNoBlock, std::memory_order_relaxed);
}

bool BoardReader::lock_pool() {
  // 10 ms by this process's own clock (the board's clock rate is the segment's word, not trusted here).
  auto now_ns = [] { return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()); };
  return pool::lock(header().pool_lock, static_cast<std::uint32_t>(::getpid()), 10'000'000, now_ns, process_gone);
}

BoardReader::PoolView BoardReader::pool() const {
  PoolView v;
  const BoardHeader& b = header();
  v.blocks = geo().block_count;
  v.block_bytes = geo().block_bytes;
  v.recycled = b.recycled.load(std::memory_order_relaxed);
  v.waits = b.pool_waits.load(std::memory_order_relaxed);
  const BlockHeader* blocks = map_.blocks();
  for (std::uint32_t x = 0; x < geo().block_count; ++x) {
    switch (blocks[x].state.load(std::memory_order_relaxed)) {
      case BlockState::Free: ++v.free; break;
      case BlockState::Writing: ++v.writing; break;
      case BlockState::Sealed: ++v.sealed; break;
      case BlockState::Recycling: ++v.recycling; break;
      default: break;  // a scribbled state: counted in none
    }
  }
  return v;
}

void BoardReader::take(std::uint32_t i, LaneView& v, const Sink& sink) {
  const LaneHeader* L = map_.lane(i);
  // DECISION D27: a snapshot marks each lane's gaps afresh, and leaves a drain's pending mark as it was.
  if (gap_.size() <= i) gap_.resize(std::size_t{i} + 1, 0);
  const std::uint8_t drain_gap = std::exchange(gap_[i], 0);
  const std::uint64_t r = L->read.load(std::memory_order_relaxed);
  Pass p = pass(i, r, L->read_records.load(std::memory_order_relaxed), v, sink);
  std::uint64_t held = p.emitted, overwritten = p.overwritten;
  // A circular lane whose chain moved under the walk (its oldest blocks recycled): the walk goes on from
  // where it stopped, as a drain's next pass would (everything below it taken or counted as overwritten),
  // a few times at most (a writer lapping the reader: the rest is the board's, counted by its figures).
  for (int again = 0; p.moved && !p.corrupt && again < 8; ++again) {
    p = pass(i, p.r, p.rr, v, sink);
    held += p.emitted, overwritten += p.overwritten;
  }
  gap_[i] = drain_gap;
  v.held = held;
  v.overwritten += overwritten;
  v.written = p.rr;
  std::uint64_t tail = 0, evicted = 0;
  if (circular()) load_tail(L, &tail, &evicted);
  const std::uint64_t head = L->head.load(std::memory_order_relaxed), from = std::max(r, tail);
  v.used_slots = std::min(head > from ? head - from : 0, v.capacity_slots);
  if (v.state == LaneState::Retired || v.owner_dead)
    v.torn = v.passed > v.overruns + v.written ? v.passed - v.overruns - v.written : 0;
  if (p.corrupt) v.problem = p.problem;
}

std::vector<LaneView> BoardReader::snapshot(const Sink& sink, std::uint64_t piece_bytes) {
  piece_bytes_ = sink ? piece_bytes : 0;
  check_claims(false);
  check_blocks();
  std::vector<LaneView> out;
  const std::uint32_t n = map_.lanes_in_use();
  for (std::uint32_t i = 0; i < n; ++i) {
    LaneView v = view_lane(i);
    const bool empty = v.state == LaneState::Free && map_.lane(i)->head.load(std::memory_order_relaxed) == 0;
    take(i, v, empty ? nullptr : sink);
    if (!v.problem.empty()) add_problem(v.problem);
    if (piece_bytes_ && i < bufs_.size()) Bytes().swap(bufs_[i]);
    out.push_back(v);
  }
  piece_bytes_ = 0;
  drop_now();
  return out;
}

std::vector<LaneView> BoardReader::lanes() {
  std::vector<LaneView> out;
  const std::uint32_t n = map_.lanes_in_use();
  for (std::uint32_t i = 0; i < n; ++i) {
    LaneView v = view_lane(i);
    take(i, v, nullptr);
    out.push_back(v);
  }
  drop_now();
  return out;
}

Totals BoardReader::totals() {
  check_claims(false);
  check_blocks();
  return totals(lanes());
}

Totals BoardReader::totals(const std::vector<LaneView>& lanes) const {
  Totals t = freed_;
  for (const LaneView& v : lanes) {
    t.passed += v.passed;
    t.recorded += v.drained + v.held;
    t.overruns += v.overruns + v.torn;
    t.overwritten += v.overwritten;
    t.waits += v.waits;
    t.wait_ticks += v.wait_ticks;
    t.torn += v.torn;
  }
  t.no_lane = header().no_lane.load(std::memory_order_relaxed);
  t.passed += t.no_lane;
  t.overruns += t.no_lane;
  return t;
}

std::vector<record::NameRecord> BoardReader::names(std::uint64_t* lost, std::uint64_t* bad) const {
  std::vector<record::NameRecord> out;
  const std::uint32_t slots = geo().name_slots;  // the validated copy (ERRATUM E120), never the live field
  // Relaxed: each slot's own header word (acquired below) says whether it is written.
  const std::uint64_t used = header().names_used.load(std::memory_order_relaxed);
  if (lost) *lost = used > slots ? used - slots : 0;
  if (bad) *bad = 0;
  const std::uint32_t n = static_cast<std::uint32_t>(std::min<std::uint64_t>(used, slots));
  for (std::uint32_t i = 0; i < n; ++i) {
    const board::NameSlot* slot = map_.name_slot(i);
    // Acquire: pairs with the registering thread's release store after it filled the slot.
    const std::uint64_t w = slot->header.load(std::memory_order_acquire);
    if (w == 0) continue;  // being written now (its probe's samples show the id without a name)
    record::NameRecord r;
    std::memcpy(&r, &w, sizeof w);
    std::memcpy(reinterpret_cast<std::uint8_t*>(&r) + sizeof w, slot->body, sizeof slot->body);
    if (record::name_record_problem(r, record::name_has_id(r.name_kind) ? i + 1 : 0)) {
      if (bad) ++*bad;
      continue;
    }
    out.push_back(r);
  }
  return out;
}

std::vector<tracefile::LaneEntry> BoardReader::lane_entries() { return lane_entries(lanes()); }

std::vector<tracefile::LaneEntry> BoardReader::lane_entries(const std::vector<LaneView>& lanes) {
  std::vector<tracefile::LaneEntry> out;
  for (const LaneView& v : lanes)
    if (v.passed || v.written)
      out.push_back({v.pid, v.tid, v.drained + v.held, v.overruns + v.torn, v.overwritten, v.waits, v.wait_ticks});
  return out;
}

std::uint16_t BoardReader::csr_read() {
  std::uint16_t c = csr_stored(header());
  // A simple board is full when its pool has no free block (the chip's FIFO Full: the next sample that
  // needs a block waits or is dropped).
  if (!circular() && static_cast<std::uint32_t>(header().free_top.load(std::memory_order_relaxed)) >= geo().block_count)
    c |= kCsrFifoFull;
  if (header().trace_overrun.load(std::memory_order_relaxed)) c |= kCsrFifoOverrun;
  if (header().resource_overrun.load(std::memory_order_relaxed)) c |= kCsrShadowOverrun;
  return c;
}

void fill_totals(tracefile::FileHeader& h, const Totals& t) {
  h.overruns = t.overruns;
  h.overwritten = t.overwritten;
  h.passed_filter = t.passed;
  h.waits = t.waits;
  h.wait_ticks = t.wait_ticks;
}

namespace {
// The time base of a recording of a board with clock `kind` (E300-E303): CLOCK_MONOTONIC ticks are the
// kernel's ns; TSC ticks convert by the kernel's conversion where this process found it, else by anchors
// (this one the start; close_time_base the end).
void set_time_base(tracefile::FileHeader& f, board::ClockKind kind) {
  const board::ClockSource& c = board::clock_source();
  if (kind != board::ClockKind::Tsc) {
    f.time_source = static_cast<std::uint32_t>(tracefile::TimeSource::KernelClock);
    return;
  }
  const tracefile::Anchor a = board::take_anchor(kind);
  f.anchor0_ticks = a.ticks;
  f.anchor0_ns = a.ns;
  f.anchor_half_ns = static_cast<std::uint32_t>(std::min<std::uint64_t>(a.half_ns, 0xffffffffu));
  if (c.kind == board::ClockKind::Tsc && c.source == tracefile::TimeSource::Kernel) {
    f.time_source = static_cast<std::uint32_t>(tracefile::TimeSource::Kernel);
    f.time_mult = c.kernel.mult;
    f.time_shift = c.kernel.shift;
    f.time_zero = c.kernel.zero;
    f.clock_hz = c.hz;
    f.rate_uncertainty_ppb = static_cast<std::uint32_t>(std::ceil(c.uncertainty_ppm * 1e3 + 0.5e9 / double(c.hz)));
    return;
  }
  // Anchors. Until the end anchor: the board's calibration (this process's when it calibrated, E301).
  f.time_source = static_cast<std::uint32_t>(tracefile::TimeSource::Anchors);
  if (c.kind == board::ClockKind::Tsc) f.clock_hz = c.hz;
  f.rate_uncertainty_ppb = static_cast<std::uint32_t>(std::min(1e7, std::ceil(c.uncertainty_ppm * 1e3 + 1)));
}

}  // namespace

void BoardReader::close_time_base(tracefile::FileHeader& h) const {
  if (tracefile::time_source(h) != tracefile::TimeSource::Anchors) return;
  tracefile::close_anchors(h, board::take_anchor(geo().clock_kind));
}

tracefile::FileHeader BoardReader::file_header() {
  tracefile::FileHeader f = tracefile::make_header();
  const BoardHeader& b = header();
  f.clock_hz = geo().clock_hz;
  set_time_base(f, geo().clock_kind);
  f.start_ticks = geo().created_ticks;
  f.start_realtime_ns = geo().created_realtime_ns;
  f.node = geo().node;
  f.origin = tracefile::Origin::Live;
  if (circular()) f.flags |= tracefile::kFlagCircular;
  if (csr_stored(b) & kCsrWriteWait) f.flags |= tracefile::kFlagWait;
  f.filter = filter_of(b);
  const std::uint64_t mode = b.mode_reg.load(std::memory_order_relaxed);
  for (unsigned n = 0; n < kCounters; ++n) {
    std::string name(b.sources[n].name, strnlen(b.sources[n].name, sizeof b.sources[n].name));
    if (name.empty() && mode_of(field(mode, n)) == Mode::Clock) name = "clock";
    if (name.empty() && mode_of(field(mode, n)) == Mode::Software) name = "software";
    tracefile::set_counter_name(f, n, name);
  }
  return f;
}

std::string BoardReader::program() const {
  if (geo().minor < 1) return {};  // 2.0: reserved bytes
  const char* p = header().program;
  std::size_t n = 0;
  while (n < sizeof header().program && p[n]) ++n;
  return std::string(p, n);
}

void BoardReader::set_program(const std::string& command) {
  if (geo().minor < 1) return;
  char* p = header().program;
  const std::size_t n = std::min(command.size(), sizeof header().program - 1);
  std::memcpy(p, command.data(), n);
  std::memset(p + n, 0, sizeof header().program - n);
}

}  // namespace kron::recorder
