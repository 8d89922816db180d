// The probe side's out-of-line half: attaching to a board, claiming a lane per thread, and every slow
// path of the probes in kron.hpp (lane full: wait or discard; circular eviction; Resource samples and
// the resource counters). Linked into instrumented programs: no third-party dependency, never throws,
// never blocks the program for long (a wait gives up when no drainer is alive), never crashes it.
//
// Sources: 000 Table B3a (wait or discard, Overrun and Wait Error Counters), "SAMPLING" (the header's
//   error flags: "previous sample(s) lost (reset by next successful sample)"), Tables B5-B7 (counters);
//   003 section 2.7 (simple buffer keeps the oldest, circular keeps the newest: here, of the whole board).
// The block pool (board format 2.0, docs/board-format.md "Blocks"): a lane's fast path writes into its
// current block exactly as into a ring; crossing into the next block is the slow path next_block().
// Not modelled: the chip's shadow-register busy time (a Resource sample never waits for shadow
//   registers: it is one record in the lane like a Trace sample).
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/rseq.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "kron/core/record.hpp"
#include "kron/core/vocabulary.hpp"
#include "kron/board_ops.hpp"
#include "kron/board_pool.hpp"
#include "kron/kron.hpp"
#include "kron/mk.h"
#include "kron/process_attach.hpp"

namespace kron {
namespace detail {
constinit thread_local ThreadLane t_lane KRON_TLS_MODEL{};
constinit thread_local ThreadStats t_stats KRON_TLS_MODEL{};
namespace {
const std::atomic<std::uint32_t> g_zero{0};
const std::atomic<std::uint64_t> g_no_board_gen{board::kNoBoardGen};
}  // namespace
const std::atomic<std::uint32_t>* g_control = &g_zero;
const std::atomic<std::uint64_t>* g_stat_gen = &g_no_board_gen;
bool g_tsc = false;

std::uint64_t now_slow() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}
// ERRATUM E180: a phased sample has 10 bits for the cpu; 1023 stands for 1023 and above (and unknown).
std::uint32_t cpu_slow() noexcept {
  const int c = sched_getcpu();
  return c < 0 || c > int{record::kMaxPhasedCpu} ? record::kMaxPhasedCpu : static_cast<std::uint32_t>(c);
}
}  // namespace detail

namespace {
using namespace board;

board::Mapping* g_map = nullptr;  // never unmapped: probes may run until the last instruction
BoardHeader* g_board = nullptr;
std::uint32_t g_pid = 0;
// ERRATUM E120: the board's fixed fields as validated at attach; the live header is never re-read for them.
std::uint64_t g_slots = 0;  // slots per block (B)
std::uint32_t g_blocks = 0;
std::uint32_t g_lanes = 0;  // lane headers
std::uint64_t g_hz = 1;     // timestamp ticks per second (bounds every wait below)
std::uint32_t g_node = 0;
BlockHeader* g_bh = nullptr;
SealedCell* g_cells = nullptr;
bool g_circular = false;
std::uint32_t g_name_slots = 0;  // the board's name table (2.1; 0: none)
bool g_cpu_fits = true;          // every cpu number is below 1024: the rseq cpu_id goes into samples as it is
// The statistics area (2.2; g_stat_cells 0: none).
std::uint32_t g_hist_slots = 0, g_stat_cells = 0;
board::HistSlot* g_hslots = nullptr;
board::CellDesc* g_cdescs = nullptr;
std::uint64_t* g_cells_mem = nullptr;
// Where values go that a phase watch keeps out (never read; written with relaxed atomics by any thread).
std::uint64_t g_discard[stats::kCellWords];
// ERRATUM E321. The blocks whose pages this process has mapped (one bit a block; calloc: untouched pages
// until a block is taken). Opening a board maps nothing, so the slow path that takes a block maps it here
// first and the fast path never takes a page fault. A forked child starts with none mapped (the kernel
// does not copy a shared mapping's page tables into it).
std::atomic<std::uint64_t>* g_mapped = nullptr;
std::size_t g_mapped_words = 0;
// Maps block y and the unmapped blocks after it up to 64 KiB in all (a fresh board hands its blocks out in
// index order): one system call per 64 KiB rather than per 4 KiB block.
bool block_mapped(std::uint32_t b) {
  return g_mapped[b / 64].load(std::memory_order_relaxed) & (std::uint64_t{1} << (b % 64));
}
void commit_block(std::uint32_t y) {
  if (!g_mapped || block_mapped(y)) return;
  const std::uint64_t bytes = g_slots * kSlot;
  std::uint32_t n = 1;
  while (y + n < g_blocks && (n + 1) * bytes <= (64u << 10) && !block_mapped(y + n)) ++n;
  board::populate(g_map->block_data(y), n * bytes);
  for (std::uint32_t b = y; b < y + n; ++b)
    g_mapped[b / 64].fetch_or(std::uint64_t{1} << (b % 64), std::memory_order_relaxed);
}

// The thread's place in the pool (slow paths only; the fast path needs only ThreadLane).
struct BlockCursor {
  std::uint32_t cur = kNoBlock;  // the block being written (kNoBlock: none yet in this occupancy)
  std::uint32_t lane = 0;        // the lane's index
  std::uint64_t recs_base = 0;   // passed - overruns when `cur` was taken: its records at the seal
  bool adopted = false;          // the lane was Retired when claimed: its chain goes on from its last block
};
constinit thread_local BlockCursor t_blk{};
pthread_key_t g_key;
pthread_once_t g_once = PTHREAD_ONCE_INIT;

// Per-thread resource counter state: the thread's "virtual" counters (000: counters saved and restored
// per process). Software and signal counters count for this thread; clock counters are board-wide.
struct ThreadCounters {
  std::uint32_t gen = 0;      // board counter_gen + 1 this plan was made for (0 = never planned)
  std::uint32_t sw_mask = 0;  // counters whose software increments count now
  std::uint64_t value[kCounters] = {};
  std::uint32_t reset_gen[kCounters] = {};
  int perf_leader = -1;                    // -1: none opened
  int perf_fd[kCounters] = {};             // every fd of the group, to close
  std::int8_t perf_index[kCounters] = {};  // position in the group read, -1 none
  std::uint32_t perf_count = 0;
  std::uint64_t perf_last[kCounters] = {};
  std::uint8_t kind[kCounters] = {};  // Kind, per counter
  std::uint8_t div[kCounters] = {};   // Clock Select divider (Table B6)
  std::uint32_t en_mask = 0, clock_mask = 0;
  bool perf_tried = false;
};
void close_perf(ThreadCounters& c) {
  for (std::uint32_t i = 0; i < c.perf_count; ++i) ::close(c.perf_fd[i]);
  c.perf_count = 0;
  c.perf_leader = -1;
}
constinit thread_local ThreadCounters t_ctr{};

std::uint32_t gettid_u32() { return static_cast<std::uint32_t>(::syscall(SYS_gettid)); }

bool drainer_alive(std::uint64_t now) {
  const std::uint32_t pid = g_board->drainer_pid.load(std::memory_order_relaxed);
  if (!pid) return false;
  // Relaxed: a stale heartbeat only makes the wait give up a little early or late.
  const std::uint64_t beat = g_board->drainer_beat.load(std::memory_order_relaxed);
  // ERRATUM E123. A beat from the future (more than a second ahead: a scribbled word, not clock skew
  // between cores) is no heartbeat: it would keep a waiting probe waiting forever.
  if (beat > now + g_hz) return false;
  const std::uint64_t age = now > beat ? now - beat : 0;
  if (age < g_hz) return true;  // beat within the last second
  // Silent for a while: still waiting for it while its process exists (a loaded machine may stall it),
  // for at most ten seconds; a drainer that died is noticed at once.
  return age < 10 * g_hz && pid <= (1u << 22) && ::kill(static_cast<pid_t>(pid), 0) == 0;
}

void on_thread_exit(void*) { release_lane(); }

// ERRATUM E322. Whether this process is counted in the board's `attached` (2.3: processes attached now): from
// attach, or from a forked child's first lane claim (a child that only execs is never counted), until
// it ends normally (atexit). A process killed, or one that execs after probing, cannot take itself off.
// One count a process however many copies of the probe it carries (kron/process_attach.hpp): `g_pa` is the
// process's word when a library exports one, else this copy's own; g_board_id the board's identity.
std::atomic<bool> g_counted{false};
detail::ProcessAttach g_own_attach;
detail::ProcessAttach* g_pa = nullptr;  // set at attach (dlsym: never in a fork handler)
std::uint64_t g_board_id = 0;
bool g_through_process = false;  // this copy counted through the process's word for this board
void count_in() {
  if (g_counted.exchange(true, std::memory_order_relaxed)) return;
  std::uint64_t seen = 0;
  g_through_process = g_pa->board.compare_exchange_strong(seen, g_board_id) || seen == g_board_id;
  if (g_through_process && g_pa->copies.fetch_add(1, std::memory_order_relaxed) != 0) return;  // counted already
  g_board->attached.fetch_add(1, std::memory_order_relaxed);
  g_board->arrivals.fetch_add(1, std::memory_order_relaxed);
}
void count_out() {
  if (!g_board || !g_counted.exchange(false, std::memory_order_relaxed)) return;
  if (g_through_process && g_pa->copies.fetch_sub(1, std::memory_order_relaxed) != 1) return;  // another copy stays
  g_board->attached.fetch_sub(1, std::memory_order_relaxed);
}

// This thread's cells by key (stats::cell_key): slow paths only. nullptr: the pool had no room (counted).
std::unordered_map<std::uint64_t, std::uint64_t*>& thread_cells() {
  static thread_local std::unordered_map<std::uint64_t, std::uint64_t*> cells;
  return cells;
}
void reset_thread_cells() { thread_cells().clear(); }

void init_once() {
  pthread_key_create(&g_key, on_thread_exit);
  // A forked child must not write into its parent's lane (one writer per lane): start afresh.
  pthread_atfork(nullptr, nullptr, [] {
    const std::uint64_t phase = detail::t_lane.phase;  // the child keeps its phase, takes its own lane and cells
    detail::t_lane = detail::ThreadLane{};
    detail::t_lane.phase = phase;
    t_blk = BlockCursor{};
    close_perf(t_ctr);  // they measured the parent's thread
    t_ctr = ThreadCounters{};
    detail::t_stats = detail::ThreadStats{};
    reset_thread_cells();
    g_pid = static_cast<std::uint32_t>(::getpid());
    g_counted.store(false, std::memory_order_relaxed);  // counted at its first lane (ERRATUM E322)
    if (g_pa) g_pa->copies.store(0, std::memory_order_relaxed), g_pa->board.store(0, std::memory_order_relaxed);
    if (g_mapped) std::memset(static_cast<void*>(g_mapped), 0, g_mapped_words * sizeof *g_mapped);  // E321
  });
  std::atexit([] {
    release_lane();  // the main thread's lane (key destructors do not run for it)
    count_out();
  });
}

// ---- the name table (board 2.1) -------------------------------------------------------------------------
// ERRATUM E156. Adds an entry; returns its id (slot + 1), or KRON_NAME_NONE when the board has no table or it is full
// (names_used then exceeds name_slots by the entries that found no room: counted, shown by the tools).
std::uint32_t add_name(record::NameRecord r) {
  if (!g_board || g_name_slots == 0) return KRON_NAME_NONE;
  // Relaxed: the slot's own header word publishes its content (release below).
  const std::uint64_t i = g_board->names_used.fetch_add(1, std::memory_order_relaxed);
  if (i >= g_name_slots) return KRON_NAME_NONE;
  r.h = record::RecordHeader{record::RecordKind::Names, sizeof(record::NameRecord), 0, 0, {0}};
  if (record::name_has_id(r.name_kind)) r.id = static_cast<std::uint16_t>(i + 1);
  NameSlot* slot = g_map->name_slot(static_cast<std::uint32_t>(i));
  std::memcpy(slot->body, reinterpret_cast<const std::uint8_t*>(&r) + sizeof(record::RecordHeader), sizeof slot->body);
  // Release: a reader that acquires the header word reads the whole entry.
  slot->header.store(record::name_header_word(), std::memory_order_release);
  return static_cast<std::uint32_t>(i + 1);
}
void copy_str(char* dst, std::size_t cap, const char* src, bool keep_end = false) {
  if (!src) return;
  std::size_t n = std::strlen(src);
  if (n >= cap) {
    if (keep_end) src += n - (cap - 1);
    n = cap - 1;
  }
  std::memcpy(dst, src, n);
}
record::NameRecord name_entry(record::NameKind kind, std::uint32_t thread) {
  record::NameRecord r{};
  r.name_kind = kind;
  r.source = source_id(g_node, g_pid);
  r.thread = thread;
  return r;
}
// ERRATUM E154: a thread's name is read at its lane claim and at its end, and set by kron::thread_name.
// The name this thread had when it last registered one (its lane claim, kron::thread_name), to register a
// changed name (pthread_setname_np after the first probe) when the thread ends.
constinit thread_local char t_name[16] = {};
// ERRATUM E410: kron::thread_name named the process's main thread. Its kernel name (comm) is the process's
// name (ps, pidof, /proc/PID/comm), which kron never changes: the name lives in kron's table alone, and the
// comm read at the lane's claim and end is not taken for the thread's name.
constinit thread_local bool t_named_main = false;
void comm_of(std::uint32_t tid, char out[16]);
void register_thread(std::uint32_t tid, const char* name) {
  record::NameRecord r = name_entry(record::NameKind::Thread, tid);
  copy_str(r.name, 16, name);
  std::memcpy(t_name, r.name, sizeof t_name);
  comm_of(tid, r.function);  // the kernel's name beside kron's (docs/board-format.md "Name table")
  add_name(r);
}
// The kernel's name of thread `tid` of this process (comm, at most 15 bytes), "" when it cannot be read.
void comm_of(std::uint32_t tid, char out[16]) {
  std::memset(out, 0, 16);
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  const ssize_t n = ::read(fd, out, 15);
  ::close(fd);
  for (ssize_t k = 0; k < n; ++k)
    if (out[k] == '\n') out[k] = 0;
  if (n < 0) std::memset(out, 0, 16);
}
void register_comm(std::uint32_t tid) {
  if (t_named_main) return;
  char comm[16];
  comm_of(tid, comm);
  if (comm[0] && std::strncmp(comm, t_name, sizeof t_name) != 0) register_thread(tid, comm);
}

// Claims a free lane for this thread (slow path: CAS allowed here). False when every lane is taken.
bool claim(detail::ThreadLane& t) {
  const std::uint32_t n = g_lanes;
  // ERRATUM E30. A free lane first; failing that, adopt a retired one (its writer is gone; records carry their own
  // source and thread, so the lane simply continues). The drainer takes Retired lanes with the same CAS.
  for (std::uint32_t k = 0; k < 2 * n; ++k) {
    const std::uint32_t i = k % n;
    LaneHeader* L = g_map->lane(i);
    LaneState s = L->state.load(std::memory_order_relaxed);
    if (s != (k < n ? LaneState::Free : LaneState::Retired)) continue;
    // Acquire: the drainer reset a Free lane, and the last owner published a Retired lane's counts.
    if (!L->state.compare_exchange_strong(s, LaneState::Claiming, std::memory_order_acquire)) continue;
    L->pid = g_pid;
    L->tid = gettid_u32();
    L->source = source_id(g_node, g_pid);
    L->claim_ticks = detail::now();
    L->occupancy.fetch_add(1, std::memory_order_relaxed);
    count_in();  // a forked child's first lane (ERRATUM E322); once per process
    t.lane = L;
    t.ring = nullptr;
    t.mask = g_slots - 1;
    t.head = L->head.load(std::memory_order_relaxed);
    t.passed = L->passed.load(std::memory_order_relaxed);
    t.limit = t.head;  // no block yet: the first record takes one (next_block)
    t_blk = BlockCursor{kNoBlock, i, 0, k >= n};
    t.ids = record::ids_word(L->source, L->tid & record::kThreadMask);  // ERRATUM E180: tids are below 2^22
    t.hdr = record::header_word(record::RecordKind::Trace);
    t.cpu = nullptr;
    if (__rseq_size > 0 && g_cpu_fits) {
      const auto* r =
          reinterpret_cast<const struct rseq*>(static_cast<const char*>(__builtin_thread_pointer()) + __rseq_offset);
      if (static_cast<std::int32_t>(r->cpu_id) >= 0) t.cpu = &r->cpu_id;
    }
    // Raise the claim high-water mark first (release, and before Active): a reader that sees the lane
    // Active below the mark it loaded looks at it.
    std::uint32_t hwm = g_board->lane_hwm.load(std::memory_order_relaxed);
    while (hwm < i + 1 && !g_board->lane_hwm.compare_exchange_weak(hwm, i + 1, std::memory_order_release)) {}
    // Release: tools that see Active see the owner fields above.
    L->state.store(LaneState::Active, std::memory_order_release);
    pthread_setspecific(g_key, L);
    register_comm(L->tid);  // the thread's name, as the program set it so far
    return true;
  }
  return false;
}

// Counts a probe that passed the filter but could not be recorded (000 Table B3a "Data Discarded":
// Overrun Error Counter incremented, the next sample carries the error flag).
void overrun(detail::ThreadLane& t, bool resource) {
  LaneHeader* L = t.lane;
  // Relaxed stores by the lane's only writer; readers tolerate a count one probe behind.
  L->passed.store(++t.passed, std::memory_order_relaxed);
  L->overruns.store(L->overruns.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  // ERRATUM E24: a dropped Trace sample flags FIFO overrun, a dropped Resource sample Shadow overrun.
  t.hdr |= record::flag_bits(resource ? kron::kFlagShadowOverrun : kron::kFlagFifoOverrun);
  auto& sticky = resource ? g_board->resource_overrun : g_board->trace_overrun;
  if (!sticky.load(std::memory_order_relaxed)) sticky.store(1, std::memory_order_relaxed);
}

bool process_gone(std::uint32_t pid) {
  return pid && pid <= (1u << 22) && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// ERRATUM E36. The pool lock is held for a few hundred nanoseconds per recycled block. A holder stopped
// there (SIGSTOP, a debugger) holds up recycling for every writer of the board: a writer waits at most
// 100 ms for the lock (a holder merely preempted on a loaded machine is back well within that), then
// drops its samples (counted overruns) without trying again for the next 100 ms, so a stopped holder
// costs each other thread one 100 ms wait per 100 ms, never a hang. A dead holder is replaced at once.
constinit thread_local std::uint64_t t_lock_retry = 0;  // no lock attempt before this tick
bool lock_pool() {
  const std::uint64_t now = detail::now(), wait = g_hz / 10;
  if (now < t_lock_retry) return false;
  if (pool::lock(g_board->pool_lock, g_pid, wait, detail::now, process_gone)) return true;
  t_lock_retry = detail::now() + wait;
  return false;
}
void unlock_pool() { pool::unlock(g_board->pool_lock); }

// ERRATUM E320. What the recycler does with sealed block x. Order: x is not its lane's oldest block (an
// older one of its lane went to the back of the queue before it: recycling x would cut the lane's chain),
// so it waits its turn. Newest: x is its lane's newest sealed block (a retired lane's last block, or a
// live lane's block before the one being written), kept while other lanes hold older blocks, so that every
// thread's end survives. Loads are relaxed: a stale one only keeps a block one turn more, never breaks the
// order (a lane's `first` moves only under the pool lock, which the caller holds).
enum class Keep { No, Order, Newest };
Keep keep_block(std::uint32_t x, const BlockHeader& X) {
  const std::uint32_t m = X.lane.load(std::memory_order_relaxed);
  if (m >= g_lanes) return Keep::No;  // detached from a freed lane: drained already
  const LaneHeader* L = g_map->lane(m);
  if (L->first.load(std::memory_order_relaxed) != x) return Keep::Order;
  const std::uint32_t c = L->cur.load(std::memory_order_relaxed);
  if (c == x) return Keep::Newest;
  return c < g_blocks && X.next.load(std::memory_order_relaxed) == c &&
                 g_bh[c].state.load(std::memory_order_relaxed) == BlockState::Writing
             ? Keep::Newest
             : Keep::No;
}
// The timestamp of block x's first record (a block taken for a record holds one from its first slot on):
// which kept block is oldest. Untrusted memory, used only to choose.
std::uint64_t first_ticks(std::uint32_t x) {
  return __atomic_load_n(reinterpret_cast<const std::uint64_t*>(g_map->block_data(x)) + 2, __ATOMIC_RELAXED);
}

// ERRATUM E29. Circular board, no free block: recycles the board's oldest sealed block, whatever lane it
// is in (003 2.7: the circular buffer keeps the newest samples, here of the whole board), except each
// lane's newest sealed block (ERRATUM E320: keep_block). Under pool_lock: the lane it leaves gets its
// (tail, evicted) moved past it under the lane's seqlock, then the block's generation is bumped before it
// is written again (a reader copying it sees the change).
std::uint32_t recycle() {
  // A turn of the queue passes over every lane's newest block. When it found nothing else (every sealed
  // block some lane's newest: more threads than blocks), a second turn takes the kept block whose first
  // record is oldest (the thread that ended first loses its end first); past that (a scribbled chain) any.
  const std::uint64_t enq = g_board->sealed_enq.load(std::memory_order_relaxed);
  const std::uint64_t deq = g_board->sealed_deq.load(std::memory_order_relaxed);
  const std::uint64_t turn = enq > deq ? std::min<std::uint64_t>(enq - deq, g_blocks) : 0;
  std::uint32_t oldest = kNoBlock;
  std::uint64_t oldest_ticks = ~std::uint64_t{0};
  for (std::uint64_t tries = 0; tries < 2 * turn + g_blocks; ++tries) {
    std::uint32_t x = pool::dequeue_sealed(g_board->sealed_deq, g_cells, g_blocks);
    // "Empty" while an enqueue was claimed: its writer is between its two stores (preempted there).
    // Wait for it, at most as long as for the lock, rather than drop a sample with sealed blocks queued.
    for (const std::uint64_t t0 = detail::now();
         x >= g_blocks &&
         g_board->sealed_enq.load(std::memory_order_relaxed) > g_board->sealed_deq.load(std::memory_order_relaxed) &&
         detail::now() - t0 < g_hz / 10;) {
      sched_yield();
      x = pool::dequeue_sealed(g_board->sealed_deq, g_cells, g_blocks);
    }
    if (x >= g_blocks) return kNoBlock;  // none sealed (every block is some lane's current one)
    // Acquire: pairs with the seal's release (the block's records, read by first_ticks, are complete).
    if (g_bh[x].state.load(std::memory_order_acquire) != BlockState::Sealed) continue;  // scribbled: off the queue
    bool pass_over = false;
    if (tries < turn) {
      const Keep k = keep_block(x, g_bh[x]);
      pass_over = k != Keep::No;
      if (k == Keep::Newest && first_ticks(x) < oldest_ticks) oldest = x, oldest_ticks = first_ticks(x);
    } else if (tries < 2 * turn) {
      pass_over = oldest < g_blocks ? x != oldest : keep_block(x, g_bh[x]) == Keep::Order;
    }
    if (pass_over) {
      pool::enqueue_sealed(g_board->sealed_enq, g_cells, g_blocks, x);  // the back of the queue
      continue;
    }
    BlockHeader& X = g_bh[x];
    BlockState s = BlockState::Sealed;
    if (!X.state.compare_exchange_strong(s, BlockState::Recycling, std::memory_order_acquire)) continue;
    const std::uint32_t m = X.lane.load(std::memory_order_relaxed);
    if (m < g_lanes) {
      LaneHeader* L = g_map->lane(m);
      const std::uint64_t seq = L->tail_seq.load(std::memory_order_relaxed);
      L->tail_seq.store(seq + 1, std::memory_order_relaxed);  // odd: (tail, evicted) changing
      // Release fence: the odd sequence is visible before the new tail.
      std::atomic_thread_fence(std::memory_order_release);
      const std::uint64_t end = X.start.load(std::memory_order_relaxed) + g_slots;
      if (end > L->tail.load(std::memory_order_relaxed)) L->tail.store(end, std::memory_order_relaxed);
      L->evicted.store(L->evicted.load(std::memory_order_relaxed) + X.records.load(std::memory_order_relaxed),
                       std::memory_order_relaxed);
      const std::uint32_t nx = X.next.load(std::memory_order_relaxed);
      std::uint32_t f = x;
      L->first.compare_exchange_strong(f, nx, std::memory_order_relaxed);  // it is the lane's oldest block
      std::uint32_t c = x;
      L->cur.compare_exchange_strong(c, kNoBlock, std::memory_order_relaxed);  // a retired lane's last block
      L->tail_seq.store(seq + 2, std::memory_order_release);                   // even: consistent
    }
    // The generation goes odd: the block is being rewritten (hand_out makes it even again once its new
    // header is written). A reader that loads it odd, or sees it change over a copy, knows the block moved.
    X.gen.store(X.gen.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    // Release fence: the new tail and generation are visible before the block is written again (a reader
    // that copied an overwritten slot then sees either; x86-64 keeps stores in order).
    std::atomic_thread_fence(std::memory_order_release);
    g_board->recycled.store(g_board->recycled.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return x;
  }
  return kNoBlock;
}

// A simple board's next block. Without Write Wait on Overrun: a free block, or none (the caller counts an
// overrun). With it (000 Table B3a) and a drainer alive (ERRATUM E22), the probe waits, counting the time
// (ERRATUM E28: ticks), until a block is free and, ERRATUM E22, until the drain has given back all of the
// lane but kWaitLagBytes (a thread running further ahead makes the drain copy records that have left the
// cache: one thread on a 16 MiB board delivered 10-16 M samples/s against 28 M/s within 1 MiB). The wait
// gives up when the pool and the lane have not moved for a second and no block is sealed: every block is
// then some live thread's current block, and threads waiting on each other would wait forever.
std::uint32_t simple_block(detail::ThreadLane& t) {
  LaneHeader* L = t.lane;
  const bool wait = g_board->control.load(std::memory_order_relaxed) & kCtlWait;
  const std::uint64_t lag = kWaitLagBytes / kSlot;
  // Acquire: pairs with the drain's release store after it pushed the blocks below `returned`. ERRATUM E123:
  // a lane holds at most the whole pool, so a head further ahead of `returned` than that is a scribbled
  // position (a head of 2^63), never a reason to wait: the drain could never catch up with it.
  const std::uint64_t most = std::uint64_t{g_blocks + 1} * g_slots;
  auto ahead = [&] {
    const std::uint64_t ret = L->returned.load(std::memory_order_acquire);
    return t.head > ret + lag && t.head - ret <= most;
  };
  if (!wait || !ahead()) {
    const std::uint32_t y = pool::pop_free(g_board->free_top, g_bh, g_blocks);
    if (y != kNoBlock || !wait) return y;
  }
  const std::uint64_t t0 = detail::now();
  if (!drainer_alive(t0)) return pool::pop_free(g_board->free_top, g_bh, g_blocks);
  std::uint32_t y = kNoBlock;
  std::uint64_t top = g_board->free_top.load(std::memory_order_relaxed), moved = t0;
  std::uint64_t returned = L->returned.load(std::memory_order_relaxed);
  const std::uint64_t ms = g_hz / 1000;
  // Spin briefly, then yield, then sleep: with more waiting threads than cores, spinning waiters would
  // take the CPU from the drainer they wait for.
  for (unsigned spin = 1;; ++spin) {
    if (!ahead() && (y = pool::pop_free(g_board->free_top, g_bh, g_blocks)) != kNoBlock) break;
    if (spin < 256) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      continue;
    }
    const std::uint64_t now = detail::now();
    if (now - t0 < ms) {
      sched_yield();
    } else {
      const timespec nap{0, 20000};  // 20 us
      nanosleep(&nap, nullptr);
    }
    if (spin % 64 == 0) {
      if (!drainer_alive(now)) break;
      const std::uint64_t top1 = g_board->free_top.load(std::memory_order_relaxed);
      const std::uint64_t ret1 = L->returned.load(std::memory_order_relaxed);
      if (top1 != top || ret1 != returned) {
        top = top1, returned = ret1, moved = now;  // a push, pop or give-back happened: the pool moves
      } else if (now - moved > g_hz) {
        // Still for a second: give up only if no block is sealed (every one is some thread's current
        // block, which no drain can give back); a slow drainer on a loaded machine is waited for.
        bool sealed = false;
        for (std::uint32_t b = 0; b < g_blocks && !sealed; ++b)
          sealed = g_bh[b].state.load(std::memory_order_relaxed) == BlockState::Sealed;
        if (!sealed) break;
        moved = now;
      }
    }
  }
  if (y == kNoBlock) y = pool::pop_free(g_board->free_top, g_bh, g_blocks);  // gave up waiting: any free block
  L->waits.store(L->waits.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  L->wait_ticks.store(L->wait_ticks.load(std::memory_order_relaxed) + (detail::now() - t0), std::memory_order_relaxed);
  g_board->pool_waits.fetch_add(1, std::memory_order_relaxed);
  return y;
}

// Seals block x at the writer's head: its end and record count, then the link to the next block y (or
// none, when the lane retires), then its state; on a circular board it joins the sealed queue, oldest
// first. A reader that sees the link or the state (acquire) sees end and records.
void seal(detail::ThreadLane& t, std::uint32_t x, std::uint32_t y) {
  BlockHeader& X = g_bh[x];
  X.end.store(t.head, std::memory_order_relaxed);
  const std::uint64_t recs = t.passed - t.lane->overruns.load(std::memory_order_relaxed);
  X.records.store(recs - t_blk.recs_base, std::memory_order_relaxed);
  // Release: a reader that follows the link sees Y's header (written before) and X's end.
  if (y != kNoBlock) X.next.store(y, std::memory_order_release);
  X.state.store(BlockState::Sealed, std::memory_order_release);  // release: as for the link
  if (g_circular) pool::enqueue_sealed(g_board->sealed_enq, g_cells, g_blocks, x);
}

// Hands block y to the thread's lane as its new current block (ERRATUM E30: a death between the pop and
// the link below leaves y unreachable until the board is recreated; it held no sample): the block's header, the link
// from the previous block (or the lane's `first`), the seal of the previous block, and the thread's cursor. False (y
// given back to the free stack) when the pool lock it needs cannot be had.
bool hand_out(detail::ThreadLane& t, std::uint32_t y) {
  LaneHeader* L = t.lane;
  BlockHeader& Y = g_bh[y];
  std::uint32_t x = t_blk.cur;
  // The first block of an occupancy continues the lane's chain: an adopted Retired lane's last block is
  // sealed already and may be recycled meanwhile on a circular board, hence the lock there (without it
  // the link could land in a block another lane now owns).
  const bool first_of_occupancy = x == kNoBlock;
  const bool locked = first_of_occupancy && g_circular && t_blk.adopted;  // a Free lane has no chain
  if (locked && !lock_pool()) {
    Y.lane.store(kNoBlock, std::memory_order_relaxed);
    Y.state.store(BlockState::Free, std::memory_order_relaxed);
    pool::push_free(g_board->free_top, g_bh, y);  // release: as the drain's
    return false;
  }
  if (first_of_occupancy) {
    x = L->cur.load(std::memory_order_relaxed);
    if (x < g_blocks && g_bh[x].lane.load(std::memory_order_relaxed) != t_blk.lane) x = kNoBlock;
  }
  const std::uint64_t start =
      x < g_blocks ? g_bh[x].start.load(std::memory_order_relaxed) + g_slots : (t.head + g_slots - 1) & ~(g_slots - 1);
  // Acquire: y's last writer sealed it with a release (seal()) before the drain gave it back. The pool's
  // pop carries that edge already, through the drainer; but the drainer is usually another process,
  // which ThreadSanitizer cannot see, and without this load it reports this thread's records as racing
  // with the last owner's. A plain load on x86-64, once a block, outside the hot path.
  (void)Y.state.load(std::memory_order_acquire);
  commit_block(y);  // ERRATUM E321: its pages mapped here, so that no probe writing it takes a page fault
  Y.lane.store(t_blk.lane, std::memory_order_relaxed);
  Y.start.store(start, std::memory_order_relaxed);
  Y.end.store(start, std::memory_order_relaxed);
  Y.records.store(0, std::memory_order_relaxed);
  Y.next.store(kNoBlock, std::memory_order_relaxed);
  Y.state.store(BlockState::Writing, std::memory_order_relaxed);
  // A recycled block's generation is odd (recycle()): even again now that its new header is written, with
  // release, so that a reader that loads the even generation sees the whole new header. A reader that
  // loaded the generation before (odd, or the old even one) and then any new field sees it changed (a
  // seqlock: the drain once took an old start with a new end for a corrupt board).
  if (const std::uint32_t g = Y.gen.load(std::memory_order_relaxed); g & 1u)
    Y.gen.store(g + 1, std::memory_order_release);
  if (x < g_blocks && !first_of_occupancy) {
    seal(t, x, y);
  } else if (x < g_blocks) {
    g_bh[x].next.store(y, std::memory_order_release);  // sealed when the lane retired; release, as in seal()
  } else {
    L->first.store(y, std::memory_order_release);  // release, as for the link
  }
  L->cur.store(y, std::memory_order_relaxed);
  if (locked) unlock_pool();
  t_blk.cur = y;
  t_blk.recs_base = t.passed - L->overruns.load(std::memory_order_relaxed);
  t.ring = reinterpret_cast<std::uint64_t*>(g_map->block_data(y));
  t.head = start;
  t.limit = start + g_slots;
  return true;
}

// The record of `need` slots does not fit in the thread's block: take the next one. ERRATUM E35: a record never
// straddles two blocks (the slots left at the end of a block stay unused). False when the sample is
// dropped (counted).
bool next_block(detail::ThreadLane& t, std::uint64_t need, bool resource) {
  if (need > g_slots) {  // cannot happen with 4 KiB blocks; never loop on it
    overrun(t, resource);
    return false;
  }
  std::uint32_t y = kNoBlock;
  if (!g_circular) {
    y = simple_block(t);
  } else if ((y = pool::pop_free(g_board->free_top, g_bh, g_blocks)) == kNoBlock && lock_pool()) {
    y = recycle();  // 003 2.7: circular keeps the newest. ERRATUM E23: the wait bit does not apply.
    unlock_pool();
  }
  if (y == kNoBlock || !hand_out(t, y)) {
    overrun(t, resource);
    return false;
  }
  return true;
}

// Makes room for `need` slots. False when the sample is dropped (counted).
bool make_room(detail::ThreadLane& t, std::uint64_t need, bool resource) {
  return t.head + need <= t.limit || next_block(t, need, resource);
}

// Writes one record of `slots` slots (slow path form of the inline trace()).
void put(detail::ThreadLane& t, const std::uint64_t* words, std::uint64_t slots) {
  LaneHeader* L = t.lane;
  // Relaxed: published by the release store of head; stored first so a cut record is detectable.
  L->passed.store(++t.passed, std::memory_order_relaxed);
  for (std::uint64_t s = 0; s < slots; ++s)
    std::memcpy(t.ring + ((t.head + s) & t.mask) * record::kSlotWords, words + record::kSlotWords * s, kSlot);
  t.head += slots;
  t.hdr &= record::kKindSizeMask;
  // Release: a reader acquiring the new head sees every slot of the record.
  L->head.store(t.head, std::memory_order_release);
}

bool ensure_lane(detail::ThreadLane& t) {
  if (t.lane) return true;
  if (!g_board) return false;
  if (claim(t)) return true;
  // Every lane taken: counted as an overrun of the board (accounting stays exact).
  g_board->no_lane.fetch_add(1, std::memory_order_relaxed);
  g_board->trace_overrun.store(1, std::memory_order_relaxed);
  return false;
}

std::uint64_t cpu_of(const detail::ThreadLane& t) { return t.cpu ? *t.cpu : detail::cpu_slow(); }

// ---- resource counters ----------------------------------------------------------------------------------

bool enabled(std::uint64_t enable_reg, unsigned n) {
  const Enable e = enable_of(field(enable_reg, n));
  return e == Enable::Enable || e == Enable::ResetEnable;
}

void open_perf(ThreadCounters& c, std::uint64_t mode_reg) {
  c.perf_tried = true;
  c.perf_leader = -1;
  c.perf_count = 0;
  for (unsigned n = 0; n < kCounters; ++n) {
    c.perf_index[n] = -1;
    const CounterSource& s = g_board->sources[n];
    const Mode m = mode_of(field(mode_reg, n));
    if (s.signal == Signal::None || (m != Mode::ExternalSignal && m != Mode::ExternalEnable)) continue;
    const int fd = board::open_perf_event(s, c.perf_leader);
    if (fd < 0) continue;  // unavailable here: the counter reads 0 (kron record checks sources up front)
    if (c.perf_leader < 0) c.perf_leader = fd;
    c.perf_fd[c.perf_count] = fd;
    c.perf_index[n] = static_cast<std::int8_t>(c.perf_count++);
  }
}

// What each counter reads, decoded once per control write (Tables B5-B7) instead of per sample.
enum Kind : std::uint8_t { kZero, kClock, kSoftware, kSignal, kGated };

// Re-reads the counter control registers after a write (Tables B5-B7) and resets reset counters.
void plan(ThreadCounters& c) {
  const std::uint64_t en = g_board->enable_reg.load(std::memory_order_relaxed);
  const std::uint64_t mode = g_board->mode_reg.load(std::memory_order_relaxed);
  const std::uint64_t clk = g_board->clock_reg.load(std::memory_order_relaxed);
  if (!c.perf_tried) open_perf(c, mode);
  c.sw_mask = c.en_mask = c.clock_mask = 0;
  for (unsigned n = 0; n < kCounters; ++n) {
    const std::uint32_t rg = g_board->reset_gen[n].load(std::memory_order_relaxed);
    if (rg != c.reset_gen[n]) c.reset_gen[n] = rg, c.value[n] = 0;  // Table B7 "Reset & Enable"
    const Mode m = mode_of(field(mode, n));
    const ClockSel cs = clock_of(field(clk, n));
    c.div[n] = cs == ClockSel::NodeClk10 ? 10 : cs == ClockSel::NodeClk100 ? 100 : 1;
    if (enabled(en, n)) c.en_mask |= 1u << n;
    if (m == Mode::Clock)
      c.kind[n] = kClock, c.clock_mask |= 1u << n;
    else if (m == Mode::Software)
      c.kind[n] = kSoftware;
    else if (m == Mode::ExternalSignal && c.perf_index[n] >= 0)
      c.kind[n] = kSignal;
    else if (m == Mode::ExternalEnable && c.perf_index[n] >= 0)
      c.kind[n] = kGated;
    else
      c.kind[n] = kZero;
  }
  c.sw_mask = 0;
  for (unsigned n = 0; n < kCounters; ++n)
    if (c.kind[n] == kSoftware && (c.en_mask & (1u << n))) c.sw_mask |= 1u << n;
}

void replan_if_needed(ThreadCounters& c) {
  // Acquire: pairs with the release store of counter_gen after the registers were written.
  const std::uint32_t gen = g_board->counter_gen.load(std::memory_order_acquire);
  if (c.gen != gen + 1) plan(c), c.gen = gen + 1;  // +1 so that a fresh thread (gen 0) plans once
}

void read_counters(std::uint64_t now, std::uint64_t out[kCounters]) {
  ThreadCounters& c = t_ctr;
  replan_if_needed(c);
  // One read() of the perf group: every signal counter of this thread at the same instant.
  std::uint64_t raw[1 + kCounters];  // not zero-filled: `rep stos` would cost more than the rest
  raw[0] = 0;
  if (c.perf_leader >= 0) {
    if (::read(c.perf_leader, raw, sizeof raw) < static_cast<long>(sizeof(std::uint64_t))) raw[0] = 0;
  }
  // The stopwatches, read under the board's seqlock (retry while a control write is in progress).
  std::uint64_t acc[kCounters], since[kCounters];  // filled for the clock counters, the only readers
  if (c.clock_mask) {
    // ERRATUM E123. A control writer stopped or killed inside its update leaves the sequence odd: after a
    // few thousand tries the fields are taken as they stand (a Resource sample never hangs the program).
    for (unsigned tries = 0; tries < 4096; ++tries) {
      const std::uint64_t s0 = g_board->ctr_seq.load(std::memory_order_acquire);  // acquire: fields after
      for (std::uint32_t m = c.clock_mask; m; m &= m - 1) {
        const unsigned n = static_cast<unsigned>(__builtin_ctz(m));
        acc[n] = g_board->sw_acc[n].load(std::memory_order_relaxed);
        since[n] = g_board->sw_since[n].load(std::memory_order_relaxed);
      }
      // Acquire fence: the field loads above happen before the re-check of the sequence.
      std::atomic_thread_fence(std::memory_order_acquire);
      if (!(s0 & 1) && g_board->ctr_seq.load(std::memory_order_relaxed) == s0) break;
    }
  }
  for (unsigned n = 0; n < kCounters; ++n) {
    std::uint64_t v = 0;
    switch (c.kind[n]) {
      case kZero: break;
      case kClock:
        v = acc[n] + (since[n] && now > since[n] ? now - since[n] : 0);
        if (c.div[n] != 1) v /= c.div[n];
        break;
      case kSoftware: v = c.value[n]; break;
      case kSignal:
      case kGated: {
        if (raw[0] <= std::uint64_t(c.perf_index[n])) break;
        const std::uint64_t r = raw[1 + c.perf_index[n]];
        // ERRATUM E25: enabling or disabling a signal counter takes effect at the thread's next read.
        if ((c.en_mask & (1u << n)) && r >= c.perf_last[n]) c.value[n] += r - c.perf_last[n];
        c.perf_last[n] = r;
        v = c.value[n];
        if (c.kind[n] == kGated) {  // task-clock ns -> ticks of the selected clock
          v = static_cast<std::uint64_t>(static_cast<double>(v) * static_cast<double>(g_hz) / 1e9);
          if (c.div[n] != 1) v /= c.div[n];
        }
        break;
      }
    }
    out[n] = v;
  }
}

}  // namespace

// ---- public API -------------------------------------------------------------------------------------------

bool attach(const char* name) noexcept {
  static std::mutex attach_mutex;  // MK_DEFAULT_MAP() may be called by several threads at once
  std::lock_guard<std::mutex> lock(attach_mutex);
  if (g_board) return true;
  const char* n = name ? name : std::getenv(kEnvBoard);
  if (!n || !*n) return false;
  pthread_once(&g_once, init_once);
  std::string err;
  std::uint64_t off = 0;
  board::Mapping m = board::Mapping::open(n, &err, &off);
  if (!m) {
    std::fprintf(stderr, "kron: %s (offset %llu); probes are off\n", err.c_str(), static_cast<unsigned long long>(off));
    return false;
  }
  if (m.geometry().minor < 2) {  // ERRATUM E180: this probe writes phased samples, which a 2.1 board does not hold
    std::fprintf(stderr,
                 "kron: board '%s' is format 2.%u, this program's probes write 2.2: recreate the board with this "
                 "kron; probes are off\n",
                 n, unsigned{m.geometry().minor});
    return false;
  }
  g_map = new board::Mapping(std::move(m));  // lives as long as the process
  g_board = g_map->header();
  g_pid = static_cast<std::uint32_t>(::getpid());
  const board::Geometry& geo = g_map->geometry();  // validated by Mapping::open (ERRATUM E120)
  g_slots = geo.block_slots();
  g_blocks = geo.block_count;
  g_lanes = geo.lane_count;
  g_hz = geo.clock_hz;
  g_node = geo.node;
  g_bh = g_map->blocks();
  g_cells = g_map->sealed_cells();
  g_circular = geo.circular();
  g_mapped_words = (std::size_t{g_blocks} + 63) / 64;
  g_mapped = static_cast<std::atomic<std::uint64_t>*>(std::calloc(g_mapped_words, sizeof(std::atomic<std::uint64_t>)));
  g_name_slots = geo.name_slots;
  g_hist_slots = geo.hist_slots;
  g_stat_cells = geo.stat_cells;
  if (g_stat_cells) {
    g_hslots = g_map->hist_slot(0);
    g_cdescs = g_map->cell_desc(0);
    g_cells_mem = g_map->cell(0);
  }
  {
    const long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
    g_cpu_fits = cpus > 0 && cpus <= long{record::kMaxPhasedCpu};
  }
  detail::g_tsc = geo.clock_kind == ClockKind::Tsc;
  if (!g_pa) {
    void* word = ::dlsym(RTLD_DEFAULT, detail::kProcessAttachSymbol);
    g_pa = word ? static_cast<detail::ProcessAttach*>(word) : &g_own_attach;
  }
  g_board_id = (geo.created_realtime_ns ^ geo.created_ticks) | 1;
  count_in();
  // Release: a probe that sees the board's control word also sees the globals set above.
  std::atomic_thread_fence(std::memory_order_release);
  if (g_stat_cells) detail::g_stat_gen = &g_board->stat_gen;
  detail::g_control = &g_board->control;
  return true;
}

bool attached() noexcept { return g_board != nullptr; }

void release_lane() noexcept {
  detail::ThreadLane& t = detail::t_lane;
  if (!t.lane) return;
  // The current block is sealed (on a circular board it joins the queue: the oldest to be recycled once
  // it is the oldest); it stays the lane's `cur`, so a thread adopting the lane continues after it.
  if (t_blk.cur < g_blocks) seal(t, t_blk.cur, kNoBlock);
  register_comm(t.lane->tid);  // a name the thread took after its first probe
  // Release: a drainer that sees Retired sees the final head and counts.
  t.lane->state.store(LaneState::Retired, std::memory_order_release);
  const std::uint64_t phase = t.phase;  // the thread's phase outlives its lane
  t = detail::ThreadLane{};
  t.phase = phase;
  t_blk = BlockCursor{};
  close_perf(t_ctr);
  t_ctr = ThreadCounters{};
}

void counter_control(std::uint64_t enable, std::uint64_t mode, std::uint64_t clock_select) noexcept {
  if (g_board) board::write_counter_control(*g_board, enable, mode, clock_select);
}

void thread_name(const char* name) noexcept {
  if (!name) return;
  char n[16] = {};
  copy_str(n, sizeof n, name);
  const std::uint32_t tid = gettid_u32();
  if (tid == static_cast<std::uint32_t>(::getpid())) {
    t_named_main = true;  // ERRATUM E410: the process keeps its name
    std::memcpy(t_name, n, sizeof t_name);
  } else {
    pthread_setname_np(pthread_self(), n);
  }
  if (g_board) register_thread(tid, n);
}

namespace detail {

void trace_slow(unsigned group, std::uint64_t data, std::uint64_t flags) noexcept {
  ThreadLane& t = t_lane;
  if (!ensure_lane(t)) return;
  if (!make_room(t, 1, false)) return;
  const std::uint64_t rec[record::kSlotWords] = {t.hdr | flags | record::group_bits(group) | t.phase,
                                                 t.ids | record::ids_cpu_bits(cpu_of(t)), now(), data};
  put(t, rec, 1);
}

void resource_slow(unsigned group, std::uint64_t data) noexcept {
  ThreadLane& t = t_lane;
  if (!ensure_lane(t)) return;
  if (!make_room(t, kResourceSlots, true)) return;
  std::uint64_t rec[record::kSlotWords * kResourceSlots];
  const std::uint64_t ts = now();
  // The pending flags of the prepared header word, with the Resource record's kind and size.
  rec[0] = (t.hdr & ~record::kKindSizeMask) | record::header_word(record::RecordKind::Resource) |
           record::group_bits(group) | t.phase;
  rec[1] = t.ids | record::ids_cpu_bits(cpu_of(t));
  rec[2] = ts;
  rec[3] = data;
  read_counters(ts, rec + 4);  // the sixteen counters at the sample's timestamp
  put(t, rec, kResourceSlots);
}

// ---- phases, histograms, virtual counters (board 2.2, kron/core/stats.hpp) --------------------------------
namespace {
constinit thread_local std::uint32_t t_tid = 0;
std::uint32_t my_tid() {
  if (!t_tid) t_tid = gettid_u32();
  return t_tid;
}
void lost_stat() { g_board->stat_lost.fetch_add(1, std::memory_order_relaxed); }

// This thread's cell for (kind, object, phase): found, or taken from the pool (ERRATUM E182). nullptr when
// the pool had no room (remembered: the thread does not ask again; the caller counts the value lost).
std::uint64_t* cell_for(stats::CellKind kind, std::uint32_t object, std::uint16_t phase) {
  const std::uint64_t key = stats::cell_key(kind, object, phase);
  auto& cells = thread_cells();
  if (const auto it = cells.find(key); it != cells.end()) return it->second;
  std::uint64_t* cell = nullptr;
  // Relaxed: the descriptor's key publishes the cell (release below). Past the capacity the count goes on
  // (the tools show the requests that found no room).
  const std::uint64_t i = g_board->cells_used.fetch_add(1, std::memory_order_relaxed);
  if (i < g_stat_cells) {
    cell = g_cells_mem + i * stats::kCellWords;  // zero: a fresh board's memory, never reused
    board::populate(cell, stats::kCellBytes);    // ERRATUM E321: mapped now, not in the fast path
    if (kind == stats::CellKind::Histogram) detail::cell_store(cell[stats::kHistMin], ~std::uint64_t{0});
    board::CellDesc& d = g_cdescs[i];
    d.source = source_id(g_node, g_pid);
    d.thread = my_tid();
    d.first_ticks = detail::now();
    // Release: a reader that acquires the key sees the owner and the initialised cell.
    d.key.store(key, std::memory_order_release);
  }
  cells.emplace(key, cell);
  return cell;
}

// A threshold crossing: one Trace sample at this moment (ERRATUM E185), whatever the filter; counted.
void threshold_crossed(std::uint64_t data) {
  g_board->thresholds_crossed.fetch_add(1, std::memory_order_relaxed);
  detail::ThreadLane& t = detail::t_lane;
  if (!ensure_lane(t)) return;  // counted as the board's no_lane overrun
  put_trace_(0, data, record::flag_bits(kFlagThreshold));
}
}  // namespace

void record_latency_slow(histogram& h, std::uint64_t ticks) noexcept {
  if (!g_board) return;                   // no board: probes are off
  if (!g_stat_cells) return lost_stat();  // a board made without a statistics area: counted (ERRATUM E182)
  std::uint32_t id = h.id();
  if (id == 0) id = register_histogram(h);
  if (id == histogram::kNoHistogram || id > g_hist_slots) return lost_stat();
  ThreadStats& t = t_stats;
  // A change after this load only refills the cache once more (ERRATUM E340: the tag is never 0).
  const std::uint64_t tag = stat_tag(t_lane.phase);
  const std::uint16_t phase = static_cast<std::uint16_t>(t_lane.phase >> record::kPhaseShift);
  board::HistSlot& slot = g_hslots[id - 1];
  CellRef* ref = id <= kHistCache ? &t.hist[id - 1] : nullptr;
  // 004 4.4.1 PW, ERRATUM E186: outside its phase the histogram does not count (like a filtered probe: not a loss).
  if (!stats::watch_passes(slot.watch.load(std::memory_order_relaxed), slot.watch_phase.load(std::memory_order_relaxed),
                           phase)) {
    if (ref) *ref = CellRef{tag, g_discard};
    return;
  }
  std::uint64_t* c = cell_for(stats::CellKind::Histogram, id, phase);
  if (!c) return lost_stat();
  const unsigned b = stats::bucket_of(ticks);
  cell_store(c[b], cell_load(c[b]) + 1);
  cell_store(c[stats::kHistSum], cell_load(c[stats::kHistSum]) + ticks);
  if (ticks < cell_load(c[stats::kHistMin])) cell_store(c[stats::kHistMin], ticks);
  if (ticks > cell_load(c[stats::kHistMax])) cell_store(c[stats::kHistMax], ticks);
  // An armed threshold (ERRATUM E185): every value of this cell comes here until it crossed.
  if (const std::uint32_t armed = slot.threshold_count.load(std::memory_order_relaxed)) {
    std::uint64_t over = cell_load(c[stats::kHistOver]);
    if (over < armed) {
      if (b >= slot.threshold_bucket.load(std::memory_order_relaxed)) {
        cell_store(c[stats::kHistOver], ++over);
        if (over == armed) threshold_crossed(stats::threshold_data(true, id, b));
      }
      if (over < armed) return;  // not cached: the next value is checked too
    }
  }
  if (ref) *ref = CellRef{tag, c};
}

void vcount_slow(unsigned index, std::uint64_t n) noexcept {
  if (!g_board) return;
  if (!g_stat_cells) return lost_stat();                     // no statistics area: counted (ERRATUM E182)
  if (index >= stats::kVirtualCounters) return lost_stat();  // ERRATUM E183: not a counter: counted, never written
  ThreadStats& t = t_stats;
  const std::uint64_t tag = stat_tag(t_lane.phase);  // ERRATUM E340
  const std::uint16_t phase = static_cast<std::uint16_t>(t_lane.phase >> record::kPhaseShift);
  const unsigned page = index / stats::kCountersPerCell;
  CellRef& ref = t.counters[page];
  if (!stats::watch_passes(g_board->counter_watch.load(std::memory_order_relaxed),
                           g_board->counter_watch_phase.load(std::memory_order_relaxed), phase)) {
    ref = CellRef{tag, g_discard};
    return;
  }
  std::uint64_t* c = cell_for(stats::CellKind::Counters, page, phase);
  if (!c) return lost_stat();
  std::uint64_t& w = c[index % stats::kCountersPerCell];
  const std::uint64_t before = cell_load(w), after = before + n;
  cell_store(w, after);
  // An armed counter threshold on this page (ERRATUM E185): its page's counts come here until it crossed.
  const std::uint32_t armed = g_board->counter_threshold_index.load(std::memory_order_relaxed);
  if (armed && (armed - 1) / stats::kCountersPerCell == page) {
    const std::uint64_t limit = g_board->counter_threshold.load(std::memory_order_relaxed);
    const std::uint64_t v = cell_load(c[(armed - 1) % stats::kCountersPerCell]);
    if (armed - 1 == index && before < limit && after >= limit)
      threshold_crossed(stats::threshold_data(false, 0, index));
    if (v < limit) return;  // not cached
  }
  ref = CellRef{tag, c};
}

void count_slow(unsigned counter, std::uint64_t n) noexcept {
  if (!g_board || counter >= kCounters) return;
  ThreadCounters& c = t_ctr;
  replan_if_needed(c);
  if (c.sw_mask & (1u << counter)) c.value[counter] += n;
}

}  // namespace detail

// Histograms are declared by name: a name already in the board's table gets its id (several processes, or
// two objects of one name, share it; readers also merge by name).
std::uint32_t register_histogram(histogram& h) noexcept {
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  std::uint32_t id = h.id();
  if (id) return id;
  if (!g_board || !g_stat_cells) return histogram::kNoHistogram;  // not stored: a later attach registers it
  char name[stats::kHistNameBytes] = {};
  copy_str(name, sizeof name, h.name());
  const std::uint64_t used = std::min<std::uint64_t>(g_board->hists_used.load(std::memory_order_acquire), g_hist_slots);
  for (std::uint64_t i = 0; i < used && !id; ++i)
    // Acquire: a published slot's name is complete.
    if (g_hslots[i].header.load(std::memory_order_acquire) == board::kHistSlotWord &&
        std::memcmp(g_hslots[i].name, name, sizeof name) == 0)
      id = static_cast<std::uint32_t>(i + 1);
  if (!id) {
    const std::uint64_t i = g_board->hists_used.fetch_add(1, std::memory_order_relaxed);
    if (i >= g_hist_slots) {
      id = histogram::kNoHistogram;  // no room: its values are counted in stat_lost
    } else {
      std::memcpy(g_hslots[i].name, name, sizeof name);
      // Release: a reader that acquires the header word reads the whole name.
      g_hslots[i].header.store(board::kHistSlotWord, std::memory_order_release);
      id = static_cast<std::uint32_t>(i + 1);
    }
  }
  __atomic_store_n(&h.id_, id, __ATOMIC_RELAXED);
  return id;
}

// Attach at start-up when the environment names a board (as the toolkit's MK_DEFAULT_MAP did).
namespace {
__attribute__((constructor)) void auto_attach() { attach(nullptr); }
}  // namespace

}  // namespace kron

// ---- C API (mk.h, site.h) ----------------------------------------------------------------------------------
// Phases, histograms, virtual counters: mk.h's C structs are kron.hpp's C++ ones, word for word.
namespace {
using kron::detail::ThreadLane;
using kron::detail::ThreadStats;
static_assert(sizeof(mk_histogram) == sizeof(kron::histogram) &&
              offsetof(mk_histogram, id) == offsetof(kron::histogram, id_));
static_assert(sizeof(kron_c_lane_) == sizeof(ThreadLane) &&
              offsetof(kron_c_lane_, phase) == offsetof(ThreadLane, phase));
static_assert(sizeof(kron_c_stats_) == sizeof(ThreadStats) &&
              offsetof(kron_c_stats_, counters) == offsetof(ThreadStats, counters) &&
              sizeof(kron_c_cellref_) == sizeof(kron::detail::CellRef));
static_assert(KRON_C_PHASE_SHIFT == kron::record::kPhaseShift && KRON_C_HIST_CACHE == kron::detail::kHistCache &&
              KRON_C_COUNTER_PAGES == kron::stats::kCounterPages && KRON_C_STAT_GEN_MARK == kron::board::kStatGenMark &&
              KRON_C_COUNTERS_PER_CELL == kron::stats::kCountersPerCell &&
              KRON_C_VIRTUAL_COUNTERS == kron::stats::kVirtualCounters && KRON_C_HIST_SUM == kron::stats::kHistSum &&
              KRON_C_HIST_MIN == kron::stats::kHistMin && KRON_C_HIST_MAX == kron::stats::kHistMax);
static_assert(sizeof(bool) == sizeof(unsigned char));  // kron_g_tsc, read from C as unsigned char
kron::histogram& hist_of(mk_histogram* h) { return *reinterpret_cast<kron::histogram*>(h); }
}  // namespace
extern "C" {
uint32_t kron_site_register(struct kron_site* site) {
  using namespace kron;
  static std::mutex m;  // one registration per site and process, whichever thread gets there first
  std::lock_guard<std::mutex> lock(m);
  std::uint32_t id = __atomic_load_n(&site->id, __ATOMIC_RELAXED);
  if (id) return id;
  if (!g_board) return KRON_NAME_NONE;  // not stored: a later attach registers it
  record::NameRecord r = name_entry(site->kind == KRON_SITE_EVENT      ? record::NameKind::Event
                                    : site->kind == KRON_SITE_FUNCTION ? record::NameKind::Function
                                    : site->kind == KRON_SITE_MODULE   ? record::NameKind::Module
                                                                       : record::NameKind::Scope,
                                    gettid_u32());
  copy_str(r.name, sizeof r.name, site->name);
  copy_str(r.function, sizeof r.function, site->function);
  copy_str(r.file, sizeof r.file, site->file, true);
  r.line = site->line;
  id = add_name(r);  // the slot's copy holds the id too: a reader checks slot + 1 == id
  // Relaxed: see named() in kron.hpp.
  __atomic_store_n(&site->id, id, __ATOMIC_RELAXED);
  return id;
}
void mk_named_fn(struct kron_site* site, unsigned group, int64_t value, int what) {
  kron::named(*site, group, value,
              what == KRON_NAMED_BEGIN ? kron::Named::Begin
              : what == KRON_NAMED_END ? kron::Named::End
                                       : kron::Named::Event);
}
void mk_thread_name(const char* name) { kron::thread_name(name); }
int mk_map(const char* name) { return kron::attach(name) ? 0 : -1; }
int mk_map_default(void) { return kron::attach(nullptr) ? 0 : -1; }
void mk_trace_fn(unsigned group, uint64_t data) { kron::trace(group, data); }
void mk_resource_fn(unsigned group, uint64_t data) { kron::resource(group, data); }
void mk_count_fn(unsigned counter, uint64_t n) { kron::count(counter, n); }
void mk_set_filter(uint16_t filter) {
  if (kron::g_board) kron::board::write_filter(*kron::g_board, filter);
}
void mk_write_csr(uint16_t written) {
  if (kron::g_board) kron::board::write_csr(*kron::g_board, written);
}
void mk_counter_control(uint64_t enable, uint64_t mode, uint64_t clock_select) {
  kron::counter_control(enable, mode, clock_select);
}
int mk_attached(void) { return kron::attached() ? 1 : 0; }
void mk_release_lane(void) { kron::release_lane(); }

uint32_t mk_register_histogram(struct mk_histogram* h) { return kron::register_histogram(hist_of(h)); }
void mk_phase_fn(uint16_t id) { kron::phase(id); }
uint16_t mk_current_phase_fn(void) { return kron::current_phase(); }
void mk_record_latency_fn(struct mk_histogram* h, uint64_t ticks) { kron::record_latency(hist_of(h), ticks); }
void mk_vcount_fn(unsigned index, uint64_t n) { kron::vcount(index, n); }
uint64_t mk_now_fn(void) { return kron::detail::now(); }
void mk_record_latency_slow(struct mk_histogram* h, uint64_t ticks) {
  kron::detail::record_latency_slow(hist_of(h), ticks);
}
void mk_vcount_slow(unsigned index, uint64_t n) { kron::detail::vcount_slow(index, n); }
uint64_t mk_now_slow(void) { return kron::detail::now_slow(); }
}
