// The probe side's out-of-line half: attaching to a board, claiming a lane per thread, and every slow
// path of the probes in kron.hpp (lane full: wait or discard; circular eviction; Resource samples and
// the resource counters). Linked into instrumented programs: no third-party dependency, never throws,
// never blocks the program for long (a wait gives up when no drainer is alive), never crashes it.
//
// Sources: 000 Table B3a (wait or discard, Overrun and Wait Error Counters), "SAMPLING" (the header's
//   error flags: "previous sample(s) lost (reset by next successful sample)"), Tables B5-B7 (counters);
//   003 section 2.7 (simple buffer keeps the oldest, circular keeps the newest).
// Not modelled: the chip's shadow-register busy time (a Resource sample never waits for shadow
//   registers: it is one record in the lane like a Trace sample).
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "kron/core/record.hpp"
#include "kron/core/vocabulary.hpp"
#include "kron/board_ops.hpp"
#include "kron/kron.hpp"
#include "kron/mk.h"

namespace kron {
namespace detail {
constinit thread_local ThreadLane t_lane KRON_TLS_MODEL{};
namespace {
const std::atomic<std::uint32_t> g_zero{0};
}
const std::atomic<std::uint32_t>* g_control = &g_zero;
bool g_tsc = false;

std::uint64_t now_slow() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}
std::uint32_t cpu_slow() noexcept {
  const int c = sched_getcpu();
  return c < 0 ? 0xffffu : static_cast<std::uint32_t>(c);
}
}  // namespace detail

namespace {
using namespace board;

board::Mapping* g_map = nullptr;  // never unmapped: probes may run until the last instruction
BoardHeader* g_board = nullptr;
std::uint32_t g_pid = 0;
std::uint64_t g_slots = 0;  // slots per ring
bool g_circular = false;
pthread_key_t g_key;
pthread_once_t g_once = PTHREAD_ONCE_INIT;

// Per-thread resource counter state: the thread's "virtual" counters (000: counters saved and restored
// per process). Software and signal counters count for this thread; clock counters are board-wide.
struct ThreadCounters {
  std::uint32_t gen = 0;         // board counter_gen + 1 this plan was made for (0 = never planned)
  std::uint32_t sw_mask = 0;     // counters whose software increments count now
  std::uint64_t value[kCounters] = {};
  std::uint32_t reset_gen[kCounters] = {};
  int perf_leader = -1;          // -1: none opened
  int perf_fd[kCounters] = {};   // every fd of the group, to close
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
  const std::uint64_t age = now > beat ? now - beat : 0;
  if (age < g_board->clock_hz) return true;  // beat within the last second
  // Silent for a while: still waiting for it while its process exists (a loaded machine may stall it),
  // for at most ten seconds; a drainer that died is noticed at once.
  return age < 10 * g_board->clock_hz && pid <= (1u << 22) && ::kill(static_cast<pid_t>(pid), 0) == 0;
}

void on_thread_exit(void*) { release_lane(); }

void init_once() {
  pthread_key_create(&g_key, on_thread_exit);
  // A forked child must not write into its parent's lane (one writer per lane): start afresh.
  pthread_atfork(nullptr, nullptr, [] {
    detail::t_lane = detail::ThreadLane{};
    close_perf(t_ctr);  // they measured the parent's thread
    t_ctr = ThreadCounters{};
    g_pid = static_cast<std::uint32_t>(::getpid());
  });
  std::atexit([] { release_lane(); });  // the main thread's lane (key destructors do not run for it)
}

// Claims a free lane for this thread (slow path: CAS allowed here). False when every lane is taken.
bool claim(detail::ThreadLane& t) {
  const std::uint32_t n = g_board->lane_count;
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
    L->source = source_id(g_board->node, g_pid);
    L->claim_ticks = detail::now();
    L->occupancy.fetch_add(1, std::memory_order_relaxed);
    t.lane = L;
    t.ring = reinterpret_cast<std::uint64_t*>(g_map->ring(i));
    t.mask = g_slots - 1;
    t.head = L->head.load(std::memory_order_relaxed);
    t.passed = L->passed.load(std::memory_order_relaxed);
    // Acquire: the drainer finished copying everything below `read` before publishing it.
    t.limit = g_circular ? L->tail.load(std::memory_order_relaxed) + g_slots : L->read.load(std::memory_order_acquire) + g_slots;
    t.ids = record::ids_word(L->source, L->tid);
    t.hdr = record::header_word(record::RecordKind::Trace);
    t.cpu = nullptr;
    if (__rseq_size > 0) {
      const auto* r = reinterpret_cast<const struct rseq*>(static_cast<const char*>(__builtin_thread_pointer()) + __rseq_offset);
      if (static_cast<std::int32_t>(r->cpu_id) >= 0) t.cpu = &r->cpu_id;
    }
    // Release: tools that see Active see the owner fields above.
    L->state.store(LaneState::Active, std::memory_order_release);
    pthread_setspecific(g_key, L);
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

// ERRATUM E29. Circular mode: evicts the oldest whole records so that `need` slots (plus 1/16 of the ring, to
// amortise) fit, and publishes the new tail under the lane's seqlock before any slot is overwritten.
void evict(detail::ThreadLane& t, std::uint64_t need) {
  LaneHeader* L = t.lane;
  std::uint64_t tail = L->tail.load(std::memory_order_relaxed);
  std::uint64_t evicted = L->evicted.load(std::memory_order_relaxed);
  const std::uint64_t target = t.head + need + g_slots / 16 - g_slots;
  while (tail < target && tail < t.head) {
    const std::uint64_t w = t.ring[(tail & t.mask) * record::kSlotWords];
    // The lane is this thread's own memory, but another process could scribble on it: never loop on it.
    const std::uint64_t slots = record::size_of_word(w) == sizeof(record::ResourceRecord) ? kResourceSlots : 1;
    tail += slots;
    ++evicted;
  }
  if (tail > t.head) tail = t.head;
  const std::uint64_t seq = L->tail_seq.load(std::memory_order_relaxed);
  L->tail_seq.store(seq + 1, std::memory_order_relaxed);  // odd: (tail, evicted) changing
  // Release fence: the odd sequence is visible before the new tail.
  std::atomic_thread_fence(std::memory_order_release);
  L->tail.store(tail, std::memory_order_relaxed);
  L->evicted.store(evicted, std::memory_order_relaxed);
  L->tail_seq.store(seq + 2, std::memory_order_release);  // even: consistent
  // Release fence: the new tail is visible before the slots below it are overwritten (a reader that
  // copied an overwritten slot and then loads the tail sees this tail; x86-64 keeps stores in order).
  std::atomic_thread_fence(std::memory_order_release);
  t.limit = tail + g_slots;
}

// Makes room for `need` slots. False when the sample is dropped (counted).
bool make_room(detail::ThreadLane& t, std::uint64_t need, bool resource) {
  if (t.head + need <= t.limit) return true;
  LaneHeader* L = t.lane;
  if (g_circular) {  // 003 2.7: circular keeps the newest. ERRATUM E23: the wait bit does not apply.
    evict(t, need);
    return true;
  }
  // Acquire: the drainer copied out everything below `read` before publishing it.
  t.limit = L->read.load(std::memory_order_acquire) + g_slots;
  if (t.head + need <= t.limit) return true;
  const std::uint64_t t0 = detail::now();
  // 000 Table B3a: with "Wait on Overrun" set, hold the probe until there is room, counting the time
  // (ERRATUM E28: in timestamp ticks, 64 bits).
  // ERRATUM E22: only while a drainer is alive; without one nobody would ever make room.
  if ((g_board->control.load(std::memory_order_relaxed) & kCtlWait) && drainer_alive(t0)) {
    for (unsigned spin = 1;; ++spin) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      t.limit = L->read.load(std::memory_order_acquire) + g_slots;  // acquire, as above
      if (t.head + need <= t.limit) {
        L->waits.store(L->waits.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        L->wait_ticks.store(L->wait_ticks.load(std::memory_order_relaxed) + (detail::now() - t0), std::memory_order_relaxed);
        return true;
      }
      if (spin % 1024 == 0) {
        if (!drainer_alive(detail::now())) break;
        if (spin % 65536 == 0) sched_yield();
      }
    }
    L->waits.store(L->waits.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    L->wait_ticks.store(L->wait_ticks.load(std::memory_order_relaxed) + (detail::now() - t0), std::memory_order_relaxed);
  }
  overrun(t, resource);
  return false;
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
    if (m == Mode::Clock) c.kind[n] = kClock, c.clock_mask |= 1u << n;
    else if (m == Mode::Software) c.kind[n] = kSoftware;
    else if (m == Mode::ExternalSignal && c.perf_index[n] >= 0) c.kind[n] = kSignal;
    else if (m == Mode::ExternalEnable && c.perf_index[n] >= 0) c.kind[n] = kGated;
    else c.kind[n] = kZero;
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
    for (;;) {
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
          v = static_cast<std::uint64_t>(static_cast<double>(v) * static_cast<double>(g_board->clock_hz) / 1e9);
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
  g_map = new board::Mapping(std::move(m));  // lives as long as the process
  g_board = g_map->header();
  g_pid = static_cast<std::uint32_t>(::getpid());
  g_slots = g_board->ring_bytes / kSlot;
  g_circular = !(g_board->config & kCfgWrapB);
  detail::g_tsc = g_board->clock_kind == ClockKind::Tsc;
  g_board->attached.fetch_add(1, std::memory_order_relaxed);
  // Release: a probe that sees the board's control word also sees the globals set above.
  std::atomic_thread_fence(std::memory_order_release);
  detail::g_control = &g_board->control;
  return true;
}

bool attached() noexcept { return g_board != nullptr; }

void release_lane() noexcept {
  detail::ThreadLane& t = detail::t_lane;
  if (!t.lane) return;
  // Release: a drainer that sees Retired sees the final head and counts.
  t.lane->state.store(LaneState::Retired, std::memory_order_release);
  t = detail::ThreadLane{};
  close_perf(t_ctr);
  t_ctr = ThreadCounters{};
}

void counter_control(std::uint64_t enable, std::uint64_t mode, std::uint64_t clock_select) noexcept {
  if (g_board) board::write_counter_control(*g_board, enable, mode, clock_select);
}

namespace detail {

void trace_slow(unsigned group, std::uint64_t data) noexcept {
  ThreadLane& t = t_lane;
  if (!ensure_lane(t)) return;
  if (!make_room(t, 1, false)) return;
  const std::uint64_t rec[record::kSlotWords] = {t.hdr | record::group_bits(group) | record::cpu_bits(cpu_of(t)), t.ids,
                                                 now(), data};
  put(t, rec, 1);
}

void resource_slow(unsigned group, std::uint64_t data) noexcept {
  ThreadLane& t = t_lane;
  if (!ensure_lane(t)) return;
  if (!make_room(t, kResourceSlots, true)) return;
  std::uint64_t rec[record::kSlotWords * kResourceSlots];
  const std::uint64_t ts = now();
  // The pending flags of the prepared header word, with the Resource record's kind and size.
  rec[0] = (t.hdr & ~record::kKindSizeMask) | record::header_word(record::RecordKind::Resource) | record::group_bits(group) |
           record::cpu_bits(cpu_of(t));
  rec[1] = t.ids;
  rec[2] = ts;
  rec[3] = data;
  read_counters(ts, rec + 4);  // the sixteen counters at the sample's timestamp
  put(t, rec, kResourceSlots);
}

void count_slow(unsigned counter, std::uint64_t n) noexcept {
  if (!g_board || counter >= kCounters) return;
  ThreadCounters& c = t_ctr;
  replan_if_needed(c);
  if (c.sw_mask & (1u << counter)) c.value[counter] += n;
}

}  // namespace detail

// Attach at start-up when the environment names a board (as the toolkit's MK_DEFAULT_MAP did).
namespace {
__attribute__((constructor)) void auto_attach() { attach(nullptr); }
}  // namespace

}  // namespace kron

// ---- C API (mk.h) --------------------------------------------------------------------------------------------
extern "C" {
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
}
