// kron's probes for C++ programs: the software MultiKron. A probe is the modern "one store to the chip":
//
//   #include <kron/kron.hpp>
//   kron::trace(3, 27);              // Trace sample, filter level (group) 3, user data 27
//   kron::resource(3, 28);           // Resource sample: the same plus the sixteen resource counters
//   kron::count(5, 1);               // software increment of resource counter 5 (000 Table B5 "Software")
//   { kron::Scope s(1, 10, 20); ... } // emits trace(1, 10) now and trace(1, 20) at scope exit
//   { KRON_SCOPE("compress"); ... }    // a named scope: name and source location registered once
//   KRON_SCOPE_V("block", n);          // the same, carrying a value at begin and end (signed, 48 bits: below)
//   KRON_EVENT("bytes out", n);        // a named event with a value
//   kron::thread_name("writer");       // names this thread (the board's name table; not the process's name)
//   kron::phase(2);                    // this thread is in phase 2 (004's PhaseID Register): every sample,
//   { kron::phase_scope p(3); ... }    //   histogram and counter of the thread is kept per phase
//   static kron::histogram h("get");   // a latency histogram declared by name (registered on first use)
//   kron::record_latency(h, ticks);    // one value into this thread's shard of h (kron/core/stats.hpp)
//   { kron::latency_timer t(h); ... }  // the block's duration in timestamp ticks
//   kron::vcount(4711, 1);             // virtual counter 0-8191 (003's MultiKron_vc), this thread's shard
//
// Named probes (Tracy's ZoneScopedN, Perfetto's TRACE_EVENT): the name must be a string literal (static
// storage). The first time a probe passes the filter it registers its site (name, file, line, function)
// in the board's name table (slow path, once per site and process) and keeps the small id it got; from
// then on it is trace() plus one load of that id: the sample is a Trace record with kFlagNamed whose data
// word holds the id and the value (kron/core/record.hpp named_data()). The value is a signed 48-bit integer,
// -2^47 .. 2^47-1, that the tools show as given (-5 as -5); one outside that range keeps its low 48 bits (an
// unsigned 2^47 or more shows as itself minus 2^48): DECISION D30, D31 (docs/decisions.md). Named probes use
// filter level KRON_NAMED_GROUP (0 unless defined before this header). The tools show the names; kron rpt pairs named
// scopes by itself. Thread names (/proc/self/task/TID/comm, read when a thread first records and when it
// ends, or kron::thread_name) are in the table too.
//
// Link with kron::kron_probe (no third-party dependency). The program attaches at start-up to the board
// named by $KRON_BOARD (kron record / kron run set it); without a board every probe is a load, a test
// and a return. Define KRON_DISABLE_PROBES to compile every probe away.
//
// The hot path, whole (trace): read the control word (Filter Register + CSR), test the group's bit and
// sampling enable; check the thread's lane has room; rdtsc; one load of the rseq cpu_id; store the
// `passed` count, the 32-byte record (the thread's phase or'ed into its header word, the cpu into its ids
// word: ERRATUM E180), and publish it with one release store of the lane's head. No lock, no atomic
// read-modify-write, no shared cache line written. Anything unusual (no lane yet, lane full, circular
// eviction) goes to an out-of-line slow path in src/probe/probe.cpp. record_latency and vcount: one check
// of the thread's cell cache (histogram id, phase, the board's stat_gen), then plain adds in the thread's
// own cell of the board (kron/core/stats.hpp).
#pragma once
#if defined(__cplusplus) && __cplusplus < 201703L
#error "kron/kron.hpp needs C++17 or later: g++ 12 uses it by default; with clang add -std=c++17 (or -std=c++20)"
#endif
#include <cstdint>

#include "kron/board.hpp"
#include "kron/core/record.hpp"
#include "kron/core/stats.hpp"
#include "kron/site.h"

// ERRATUM E155: the filter level of named probes.
#ifndef KRON_NAMED_GROUP
#define KRON_NAMED_GROUP 0
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

// no_instrument_function: in a program built with the function hooks (-finstrument-functions, kron-functions.pc)
// the probes stay probes, not functions recorded at every use.
#if defined(__GNUC__)
#define KRON_ALWAYS_INLINE inline __attribute__((always_inline, no_instrument_function))
#else
#define KRON_ALWAYS_INLINE inline
#endif
// The probe's thread-locals are initial-exec (one %fs-relative operand) in programs that link the probe
// library; a loadable module that carries the probe (the Python extension) builds it with KRON_TLS_MODEL
// defined empty (global-dynamic), as initial-exec variables of a dlopen()ed object would take the
// process's small static TLS reserve.
#ifndef KRON_TLS_MODEL
#if defined(__GNUC__)
#define KRON_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define KRON_TLS_MODEL
#endif
#endif
// The probe's thread-locals are constant-initialised: declared so, every access is a plain %fs-relative load
// with no TLS wrapper call. This header also compiles at g++ 12's and clang's default standard (C++17), where
// constinit is spelled __constinit (g++) or require_constant_initialization (clang): the same code either way.
#if defined(__cpp_constinit)
#define KRON_CONSTINIT constinit
#elif defined(__clang__)
#define KRON_CONSTINIT __attribute__((require_constant_initialization))
#elif defined(__GNUC__)
#define KRON_CONSTINIT __constinit
#else
#define KRON_CONSTINIT
#endif
// The assembler names of the state the inline probes read: mk.h's C probes read the same variables by
// these names (kron_t_lane, kron_t_stats, kron_g_stat_gen, kron_g_tsc).
#define KRON_C_NAME(name) __asm__(name)

namespace kron {

// Attaches to board `name` (nullptr: $KRON_BOARD). Returns false, leaving probes off, when there is no
// board or it fails validation (the reason goes to stderr once). Called automatically at start-up.
bool attach(const char* name = nullptr) noexcept;
// True when probes record into a board.
bool attached() noexcept;
// Detaches this thread from its lane (done automatically at thread exit).
void release_lane() noexcept;
// Writes the counter control registers with 000 Tables B5-B7 semantics (a 0 field leaves a field alone).
void counter_control(std::uint64_t enable, std::uint64_t mode, std::uint64_t clock_select) noexcept;
// Names the calling thread (15 bytes kept, as the kernel does): with a board, an entry of its name table, so
// that the tools label the thread's track; a thread other than the main thread also gets the name from
// pthread_setname_np (ps, top, gdb show it). The main thread's kernel name is the process's name (ps, pidof,
// /proc/self/comm): kron never changes it (ERRATUM E410).
void thread_name(const char* name) noexcept;

// A latency histogram, declared by name (a string literal: static storage; at most 39 bytes kept). Registered
// in the board's histogram table the first time it records with a board (slow path); the id is the board's.
class histogram {
 public:
  explicit constexpr histogram(const char* name) noexcept : name_(name) {}
  histogram(const histogram&) = delete;
  histogram& operator=(const histogram&) = delete;
  const char* name() const noexcept { return name_; }
  // The board's id (1-based); 0 until registered (kNoHistogram: the table had no room).
  std::uint32_t id() const noexcept { return __atomic_load_n(&id_, __ATOMIC_RELAXED); }
  static constexpr std::uint32_t kNoHistogram = 0xffffffffu;

  // Public for the inline probes only: the name, and the id (stored once by the registering slow path).
  const char* name_;
  std::uint32_t id_ = 0;
};
// Registers `h` now (also done by its first record); returns its id, histogram::kNoHistogram without a board
// or room.
std::uint32_t register_histogram(histogram& h) noexcept;

namespace detail {
// ---- phases, histograms, virtual counters (kron/core/stats.hpp) ----
// A thread's cache of its cells: valid while `tag` equals stat_tag(). ERRATUM E340: the tag always has
// board::kStatGenMark set, whatever the board's stat_gen holds (a program may write 0 there), so an entry
// never filled (tag 0, no cell) can never match.
struct CellRef {
  std::uint64_t tag;
  std::uint64_t* cell;
};
inline constexpr unsigned kHistCache = 256;  // histograms with ids 1-256 take the fast path
struct ThreadStats {
  CellRef hist[kHistCache];
  CellRef counters[stats::kCounterPages];
};
extern KRON_CONSTINIT thread_local ThreadStats t_stats KRON_C_NAME("kron_t_stats") KRON_TLS_MODEL;
// The board's stat_gen, or a word holding board::kNoBoardGen while no board is attached.
extern const std::atomic<std::uint64_t>* g_stat_gen KRON_C_NAME("kron_g_stat_gen");
// Relaxed: the generation only tells the cache to refill; a probe needs some recent value.
KRON_ALWAYS_INLINE std::uint64_t stat_tag(std::uint64_t phase_bits) noexcept {
  return phase_bits | g_stat_gen->load(std::memory_order_relaxed) | board::kStatGenMark;
}
void record_latency_slow(histogram& h, std::uint64_t ticks) noexcept;
void vcount_slow(unsigned index, std::uint64_t n) noexcept;

// One thread writes a cell; readers (other processes) load its words: relaxed atomics, plain moves.
KRON_ALWAYS_INLINE std::uint64_t cell_load(const std::uint64_t& w) noexcept {
  return __atomic_load_n(&w, __ATOMIC_RELAXED);
}
KRON_ALWAYS_INLINE void cell_store(std::uint64_t& w, std::uint64_t v) noexcept {
  __atomic_store_n(&w, v, __ATOMIC_RELAXED);
}

// Per-thread probe state: trivially destructible so that access is a plain %fs-relative load.
struct ThreadLane {
  std::uint64_t* ring;                // the lane's ring as 64-bit words (4 per slot)
  std::uint64_t mask;                 // slots - 1
  std::uint64_t head;                 // this thread's copy of the lane's head
  std::uint64_t limit;                // the fast path may fill slots below this (0: no lane yet)
  std::uint64_t passed;               // this thread's copy of the lane's passed count
  std::uint64_t ids;                  // record word 1: record::ids_word(source, thread)
  std::uint64_t hdr;                  // record word 0 without group and cpu: kind, size, pending flags
  const volatile std::uint32_t* cpu;  // rseq cpu_id (kept current by the kernel), or nullptr
  board::LaneHeader* lane;
  // record::phase_bits(the thread's phase): or'ed into every sample's header word (ERRATUM E180). Here, beside
  // the fields the probe loads anyway, so that it is one %fs-relative operand; kept when the lane goes.
  std::uint64_t phase;
};
extern KRON_CONSTINIT thread_local ThreadLane t_lane KRON_C_NAME("kron_t_lane") KRON_TLS_MODEL;
// Points at the board's control word, or at a zero word while no board is attached.
extern const std::atomic<std::uint32_t>* g_control;
extern bool g_tsc KRON_C_NAME("kron_g_tsc");  // timestamps from rdtsc (else clock_gettime)

std::uint64_t now_slow() noexcept;  // clock_gettime(CLOCK_MONOTONIC) in ns
std::uint32_t cpu_slow() noexcept;  // sched_getcpu()
// `flags`: record::flag_bits() of per-record flags (named probes), 0 for trace().
void trace_slow(unsigned group, std::uint64_t data, std::uint64_t flags) noexcept;
void resource_slow(unsigned group, std::uint64_t data) noexcept;
void count_slow(unsigned counter, std::uint64_t n) noexcept;

// The timestamp: the invariant TSC. Caveats: rdtsc is not serialising (a probe's timestamp may be taken
// a few instructions early or late); kron only uses the TSC when /proc/cpuinfo reports constant_tsc and
// nonstop_tsc, so ticks have one rate on every CPU of the node (calibrated once, stored in the board);
// otherwise CLOCK_MONOTONIC nanoseconds.
KRON_ALWAYS_INLINE std::uint64_t now() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  if (g_tsc) [[likely]]
    return __rdtsc();
#endif
  return now_slow();
}
}  // namespace detail

#ifndef KRON_DISABLE_PROBES
// Each variant lives in its own inline namespace, so that translation units built with and without
// KRON_DISABLE_PROBES can be linked into one program without two definitions of one inline function.
inline namespace probes_on {

// trace() past the filter: one Trace record, `flags` (constant per call site) or'ed into its header word.
KRON_ALWAYS_INLINE void put_trace_(unsigned group, std::uint64_t data, std::uint64_t flags) noexcept {
  detail::ThreadLane& t = detail::t_lane;
  const std::uint64_t h = t.head;
  if (h >= t.limit) [[unlikely]]
    return detail::trace_slow(group, data, flags);  // no lane, or lane full
  const std::uint64_t ts = detail::now();
  const std::uint64_t cpu = t.cpu ? *t.cpu : detail::cpu_slow();
  // Relaxed: `passed` is published by the release store of head below; stored first so that a record
  // cut by a crash shows as passed - recorded - overruns == 1.
  t.lane->passed.store(++t.passed, std::memory_order_relaxed);
  std::uint64_t* p = t.ring + (h & t.mask) * record::kSlotWords;
  // One TraceRecord (kron/core/record.hpp) as four words: header word, ids word, timestamp, data.
  // ERRATUM E180: the phase in the header word (one thread-local load, one or), the cpu in the ids word
  // (claim() leaves t.cpu null where a cpu number could exceed 1023: cpu_slow() saturates).
  p[0] = t.hdr | flags | record::group_bits(group) | detail::t_lane.phase;
  p[1] = t.ids | cpu << record::kIdsCpuShift;
  p[2] = ts;
  p[3] = data;
  t.hdr &= record::kKindSizeMask;  // pending overrun flags go with one record only
  t.head = h + 1;
  // Release: a reader that acquires head == h + 1 sees the whole record (and `passed`).
  t.lane->head.store(h + 1, std::memory_order_release);
}

KRON_ALWAYS_INLINE void trace(unsigned group, std::uint64_t data) noexcept {
  const std::uint32_t need = (1u << (group & 15u)) | board::kCtlEnable;
  // Relaxed: the Filter Register may change at any time; a probe only needs some recent value.
  if ((detail::g_control->load(std::memory_order_relaxed) & need) != need) return;
  put_trace_(group, data, 0);
}

// What a named probe's sample is: the header word's flags (kron/core/vocabulary.hpp).
enum class Named : std::uint8_t {
  Event = kFlagNamed,
  Begin = kFlagNamed | kFlagScopeBegin,
  End = kFlagNamed | kFlagScopeEnd
};

// A named probe's sample: trace() with the site's id beside the value, its flags saying event, begin or
// end. The id is registered the first time the probe passes the filter (slow path).
KRON_ALWAYS_INLINE void named(kron_site& site, unsigned group, std::int64_t value, Named what) noexcept {
  const std::uint32_t need = (1u << (group & 15u)) | board::kCtlEnable;
  // Relaxed, as in trace().
  if ((detail::g_control->load(std::memory_order_relaxed) & need) != need) return;
  // Relaxed: the id is a value of this process's own making; the entry it names was published (release)
  // on the board before the registering thread stored it here.
  std::uint32_t id = __atomic_load_n(&site.id, __ATOMIC_RELAXED);
  if (id == 0) [[unlikely]]
    id = kron_site_register(&site);
  // DECISION D30: the value's two's complement bits, the low 48 kept.
  put_trace_(group, record::named_data(id, static_cast<std::uint64_t>(value)),
             record::flag_bits(static_cast<std::uint8_t>(what)));
}

// A named scope: named(begin) now, named(end) when the scope ends, both carrying `value`.
class NamedScope {
 public:
  KRON_ALWAYS_INLINE NamedScope(kron_site& site, std::int64_t value = 0, unsigned group = KRON_NAMED_GROUP) noexcept
      : site_(site), value_(value), group_(group) {
    named(site_, group_, value_, Named::Begin);
  }
  KRON_ALWAYS_INLINE ~NamedScope() { named(site_, group_, value_, Named::End); }
  NamedScope(const NamedScope&) = delete;
  NamedScope& operator=(const NamedScope&) = delete;

 private:
  kron_site& site_;
  std::int64_t value_;
  unsigned group_;
};

KRON_ALWAYS_INLINE void resource(unsigned group, std::uint64_t data) noexcept {
  const std::uint32_t need = (1u << (group & 15u)) | board::kCtlEnable;
  // Relaxed, as in trace().
  if ((detail::g_control->load(std::memory_order_relaxed) & need) != need) return;
  detail::resource_slow(group, data);  // reads sixteen counters: not worth inlining
}

// Software increment of resource counter `counter` (0-15): counts when the Mode Register selects
// Software for it and it is enabled (000 "Processor Incrementing of a Resource Counter").
KRON_ALWAYS_INLINE void count(unsigned counter, std::uint64_t n = 1) noexcept {
  // Relaxed, as in trace(): without a board the word is 0 and nothing counts.
  if (!(detail::g_control->load(std::memory_order_relaxed) & board::kCtlEnable)) return;
  detail::count_slow(counter, n);
}

// The calling thread's phase (004 4.4.1 PhaseID Register, 16 bits): a plain thread-local store. Every later
// sample of the thread carries it; its histograms and virtual counters are kept per phase.
KRON_ALWAYS_INLINE void phase(std::uint16_t id) noexcept { detail::t_lane.phase = record::phase_bits(id); }
KRON_ALWAYS_INLINE std::uint16_t current_phase() noexcept {
  return static_cast<std::uint16_t>(detail::t_lane.phase >> record::kPhaseShift);
}
// Sets a phase for a block and restores the previous one at its end.
class phase_scope {
 public:
  KRON_ALWAYS_INLINE explicit phase_scope(std::uint16_t id) noexcept : saved_(detail::t_lane.phase) { phase(id); }
  KRON_ALWAYS_INLINE ~phase_scope() { detail::t_lane.phase = saved_; }
  phase_scope(const phase_scope&) = delete;
  phase_scope& operator=(const phase_scope&) = delete;

 private:
  std::uint64_t saved_;
};

// One value (timestamp ticks, or any unit) into the calling thread's shard of `h` in its phase: a bucket
// increment, the sum, the minimum and the maximum, all in the thread's own cell on the board. Anything
// unusual (first record of the thread in this phase, no board, a phase watch changed) goes out of line.
KRON_ALWAYS_INLINE void record_latency(histogram& h, std::uint64_t ticks) noexcept {
  detail::ThreadStats& t = detail::t_stats;
  const std::uint32_t i = __atomic_load_n(&h.id_, __ATOMIC_RELAXED) - 1;  // id 0 (unregistered) wraps
  const std::uint64_t tag = detail::stat_tag(detail::t_lane.phase);
  if (i >= detail::kHistCache || t.hist[i].tag != tag) [[unlikely]]
    return detail::record_latency_slow(h, ticks);
  std::uint64_t* c = t.hist[i].cell;
  std::uint64_t& b = c[stats::bucket_of(ticks)];
  detail::cell_store(b, detail::cell_load(b) + 1);
  detail::cell_store(c[stats::kHistSum], detail::cell_load(c[stats::kHistSum]) + ticks);
  if (ticks < detail::cell_load(c[stats::kHistMin])) detail::cell_store(c[stats::kHistMin], ticks);
  if (ticks > detail::cell_load(c[stats::kHistMax])) detail::cell_store(c[stats::kHistMax], ticks);
}

// Adds `n` to virtual counter `index` (0-8191) of the calling thread in its phase.
KRON_ALWAYS_INLINE void vcount(unsigned index, std::uint64_t n = 1) noexcept {
  detail::ThreadStats& t = detail::t_stats;
  const unsigned page = (index / stats::kCountersPerCell) % stats::kCounterPages;
  const std::uint64_t tag = detail::stat_tag(detail::t_lane.phase);
  if (index >= stats::kVirtualCounters || t.counters[page].tag != tag) [[unlikely]]
    return detail::vcount_slow(index, n);
  std::uint64_t& w = t.counters[page].cell[index % stats::kCountersPerCell];
  detail::cell_store(w, detail::cell_load(w) + n);
}

// Measures a block: record_latency(h, ticks from construction to destruction).
class latency_timer {
 public:
  KRON_ALWAYS_INLINE explicit latency_timer(histogram& h) noexcept : h_(h), t0_(detail::now()) {}
  KRON_ALWAYS_INLINE ~latency_timer() { record_latency(h_, detail::now() - t0_); }
  latency_timer(const latency_timer&) = delete;
  latency_timer& operator=(const latency_timer&) = delete;

 private:
  histogram& h_;
  std::uint64_t t0_;
};

// An interval: trace(group, begin) now, trace(group, end) when the scope ends (mk_rpt class 1).
class Scope {
 public:
  KRON_ALWAYS_INLINE Scope(unsigned group, std::uint64_t begin, std::uint64_t end) noexcept : group_(group), end_(end) {
    trace(group, begin);
  }
  KRON_ALWAYS_INLINE ~Scope() { trace(group_, end_); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  unsigned group_;
  std::uint64_t end_;
};

}  // namespace probes_on
#else  // KRON_DISABLE_PROBES: every probe compiles to nothing.
inline namespace probes_off {

inline void trace(unsigned, std::uint64_t) noexcept {}
enum class Named : std::uint8_t {
  Event = kFlagNamed,
  Begin = kFlagNamed | kFlagScopeBegin,
  End = kFlagNamed | kFlagScopeEnd
};
inline void named(kron_site&, unsigned, std::int64_t, Named) noexcept {}
inline void resource(unsigned, std::uint64_t) noexcept {}
inline void count(unsigned, std::uint64_t = 1) noexcept {}
inline void phase(std::uint16_t) noexcept {}
inline std::uint16_t current_phase() noexcept { return 0; }
class phase_scope {
 public:
  explicit phase_scope(std::uint16_t) noexcept {}
  phase_scope(const phase_scope&) = delete;
  phase_scope& operator=(const phase_scope&) = delete;
};
inline void record_latency(histogram&, std::uint64_t) noexcept {}
inline void vcount(unsigned, std::uint64_t = 1) noexcept {}
class latency_timer {
 public:
  explicit latency_timer(histogram&) noexcept {}
  latency_timer(const latency_timer&) = delete;
  latency_timer& operator=(const latency_timer&) = delete;
};
class Scope {
 public:
  Scope(unsigned, std::uint64_t, std::uint64_t) noexcept {}
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
};
class NamedScope {
 public:
  NamedScope(kron_site&, std::int64_t = 0, unsigned = 0) noexcept {}
  NamedScope(const NamedScope&) = delete;
  NamedScope& operator=(const NamedScope&) = delete;
};

}  // namespace probes_off
#endif

}  // namespace kron

// ---- Named probes as macros (the site is a static of the enclosing function) -------------------------------
#define KRON_CAT2_(a, b) a##b
#define KRON_CAT_(a, b) KRON_CAT2_(a, b)
#define KRON_SITE_(var, kind, name) \
  static ::kron_site var { (name), __FILE__, __func__, __LINE__, (kind), 0, 0 }
#ifndef KRON_DISABLE_PROBES
// A named scope until the end of the enclosing block; KRON_SCOPE_V carries a value (signed 48 bits, DECISION D30).
#define KRON_SCOPE_V(name, value)                                     \
  KRON_SITE_(KRON_CAT_(kron_site_, __LINE__), KRON_SITE_SCOPE, name); \
  ::kron::NamedScope KRON_CAT_(kron_scope_, __LINE__)(KRON_CAT_(kron_site_, __LINE__), static_cast<std::int64_t>(value))
#define KRON_SCOPE(name) KRON_SCOPE_V(name, 0)
// A named event carrying a value (signed 48 bits, DECISION D30).
#define KRON_EVENT(name, value)                                                                                \
  do {                                                                                                         \
    KRON_SITE_(kron_site_event_, KRON_SITE_EVENT, name);                                                       \
    ::kron::named(kron_site_event_, KRON_NAMED_GROUP, static_cast<std::int64_t>(value), ::kron::Named::Event); \
  } while (0)
#else
#define KRON_SCOPE_V(name, value) ((void)(value))
#define KRON_SCOPE(name) ((void)0)
#define KRON_EVENT(name, value) ((void)(value))
#endif
