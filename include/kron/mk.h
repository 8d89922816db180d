/* kron's probes for C programs, in the manner of the MultiKron toolkit's mk.h (003 section 3), with the
 * reach of the C++ probes (kron.hpp):
 *
 *   #include <kron/mk.h>
 *   MK_DEFAULT_MAP();          maps the board named by $KRON_BOARD (0 ok, -1 none: probes record nothing)
 *   mk_trace(1, 10);           Trace sample, filter level 1, user data 10
 *   mk_resource(1, 20);        Resource sample (adds the sixteen resource counters)
 *   mk_count(5, 1);            software increment of resource counter 5
 *   mk_phase(2);               this thread is in phase 2 (004's PhaseID Register): samples, histograms and
 *                              virtual counters of the thread are kept per phase
 *   static MK_HISTOGRAM(h, "get");    a latency histogram declared by name (registered on first use)
 *   mk_record_latency(&h, ticks);     one value into this thread's shard of h
 *   uint64_t t0 = mk_now(); ...; MK_LATENCY_END(&h, t0);   a block's duration in timestamp ticks
 *   mk_vcount(4711, 1);        virtual counter 0-8191 (003's MultiKron_vc)
 *
 * Thresholds and phase watches are armed from outside (kron counters); mk_record_latency and mk_vcount
 * cross them as kron::record_latency and kron::vcount do. In C, mk_phase, mk_record_latency, mk_vcount and
 * mk_now are the C++ hot path itself, inline (the same instructions; see "The C hot path" below).
 *
 * Link with `pkg-config --cflags --libs kron-probe`, or find_package(kron) and kron::kron_probe in CMake:
 * both name the C++ runtime the probe library needs (it is written in C++). Define KRON_DISABLE_PROBES
 * to compile every probe away. The header builds warning-free under -Wall -Wextra -pedantic
 * -Wdeclaration-after-statement (C99 and later; GNU C for KRON_SCOPE_AUTO and MK_LATENCY_AUTO). */
#ifndef KRON_MK_H
#define KRON_MK_H
#include <stdint.h>

#include "kron/site.h"

#ifdef __cplusplus
extern "C" {
#endif

int mk_map(const char* board_name); /* 0 when attached, -1 otherwise */
int mk_map_default(void);           /* the board named by $KRON_BOARD */
void mk_trace_fn(unsigned group, uint64_t data);
void mk_resource_fn(unsigned group, uint64_t data);
void mk_count_fn(unsigned counter, uint64_t n);
void mk_set_filter(uint16_t filter); /* writes the Filter Register */
void mk_write_csr(uint16_t written); /* writes the CSR (000 Table B1: write 1 to act) */
void mk_counter_control(uint64_t enable, uint64_t mode, uint64_t clock_select); /* 000 Tables B5-B7 */
/* Named probes (kron/site.h): a sample of `site` carrying `value`, a signed 48-bit integer (-2^47 .. 2^47-1: the
 * tools show -5 as -5; outside the range the low 48 bits are kept, DECISION D30, D31 in docs/decisions.md);
 * `what`: KRON_NAMED_EVENT, KRON_NAMED_BEGIN or KRON_NAMED_END (a scope's two ends). */
enum { KRON_NAMED_EVENT = 0, KRON_NAMED_BEGIN = 1, KRON_NAMED_END = 2 };
void mk_named_fn(struct kron_site* site, unsigned group, int64_t value, int what);
/* Names the calling thread in the board's name table; a thread other than the main thread also through
 * pthread_setname_np. The process's own name (the main thread's comm) never changes (kron.hpp). */
void mk_thread_name(const char* name);
int mk_attached(void);      /* 1 when probes record into a board */
void mk_release_lane(void); /* detaches this thread from its lane (done at thread exit) */

/* ---- Phases, latency histograms, virtual counters (kron.hpp's; kron/core/stats.hpp) ------------------
 * A histogram declared by name (a string literal, at most 39 bytes kept): `static MK_HISTOGRAM(h, "get");`
 * at file or block scope. Its layout is kron::histogram's (checked in src/probe/probe.cpp). */
struct mk_histogram {
  const char* name;
  uint32_t id; /* the board's id (1-based); 0 until registered; 0xffffffff: the table had no room */
};
#if defined(__GNUC__)
#define KRON_C_UNUSED_ __attribute__((unused))
#else
#define KRON_C_UNUSED_
#endif
#define MK_HISTOGRAM(var, name) struct mk_histogram var KRON_C_UNUSED_ = {(name), 0}
/* Registers `h` now (its first record does it too); its id, or 0xffffffff without a board or room. */
uint32_t mk_register_histogram(struct mk_histogram* h);
/* The out-of-line forms of the inline probes below (for other languages' bindings, e.g. Fortran's
 * bind(C), and C++ code that includes this header): the same effect, plus a call. */
void mk_phase_fn(uint16_t id);
uint16_t mk_current_phase_fn(void);
void mk_record_latency_fn(struct mk_histogram* h, uint64_t ticks);
void mk_vcount_fn(unsigned index, uint64_t n);
uint64_t mk_now_fn(void); /* the probes' clock: TSC ticks, or CLOCK_MONOTONIC ns */
/* The slow paths the inline probes call for anything unusual (first record of a thread, no board). */
void mk_record_latency_slow(struct mk_histogram* h, uint64_t ticks);
void mk_vcount_slow(unsigned index, uint64_t n);
uint64_t mk_now_slow(void);

/* ---- The C hot path ------------------------------------------------------------------------------------
 * C cannot include kron.hpp, so the thread-local state its inline probes read is declared here again, as C
 * structs with the C++ structs' layout (kron::detail::ThreadLane, ThreadStats; static_asserts in
 * src/probe/probe.cpp keep the two the same), under the assembler names kron.hpp gives the C++ variables
 * (kron_t_lane, kron_t_stats, kron_g_stat_gen, kron_g_tsc). Each C probe below is the C++ probe of the same
 * name written in C, line for line. */
#define KRON_C_PHASE_SHIFT 48                    /* record::kPhaseShift */
#define KRON_C_HIST_CACHE 256                    /* detail::kHistCache */
#define KRON_C_COUNTER_PAGES 8                   /* stats::kCounterPages */
#define KRON_C_STAT_GEN_MARK ((uint64_t)1 << 47) /* board::kStatGenMark: no cache entry is empty (E340) */
#define KRON_C_COUNTERS_PER_CELL 1024            /* stats::kCountersPerCell */
#define KRON_C_VIRTUAL_COUNTERS 8192             /* stats::kVirtualCounters */
#define KRON_C_HIST_SUM 1008                     /* stats::kHistSum, kHistMin, kHistMax */
#define KRON_C_HIST_MIN 1009
#define KRON_C_HIST_MAX 1010
struct kron_c_lane_ {
  uint64_t* ring;
  uint64_t mask, head, limit, passed, ids, hdr;
  const volatile uint32_t* cpu;
  void* lane;
  uint64_t phase; /* the thread's phase, as header word bits */
};
struct kron_c_cellref_ {
  uint64_t tag;
  uint64_t* cell;
};
struct kron_c_stats_ {
  struct kron_c_cellref_ hist[KRON_C_HIST_CACHE];
  struct kron_c_cellref_ counters[KRON_C_COUNTER_PAGES];
};

#if !defined(__cplusplus) && defined(__GNUC__) && !defined(KRON_C_OUT_OF_LINE)
/* no_instrument_function: in a program built with the function hooks (-finstrument-functions, kron-functions.pc)
 * the probes stay probes, not functions recorded at every use. */
#define KRON_C_INLINE static __inline__ __attribute__((always_inline, unused, no_instrument_function))
extern __thread struct kron_c_lane_ kron_t_lane __attribute__((tls_model("initial-exec")));
extern __thread struct kron_c_stats_ kron_t_stats __attribute__((tls_model("initial-exec")));
extern const uint64_t* kron_g_stat_gen;
extern unsigned char kron_g_tsc; /* a C++ bool */
#ifndef KRON_DISABLE_PROBES
KRON_C_INLINE void mk_phase(uint16_t id) { kron_t_lane.phase = (uint64_t)id << KRON_C_PHASE_SHIFT; }
KRON_C_INLINE uint16_t mk_current_phase(void) { return (uint16_t)(kron_t_lane.phase >> KRON_C_PHASE_SHIFT); }
KRON_C_INLINE uint64_t mk_now(void) {
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_expect(kron_g_tsc, 1)) return __builtin_ia32_rdtsc();
#endif
  return mk_now_slow();
}
KRON_C_INLINE uint64_t kron_c_load_(const uint64_t* w) { return __atomic_load_n(w, __ATOMIC_RELAXED); }
KRON_C_INLINE void kron_c_store_(uint64_t* w, uint64_t v) { __atomic_store_n(w, v, __ATOMIC_RELAXED); }
/* stats::bucket_of */
KRON_C_INLINE unsigned kron_c_bucket_(uint64_t ticks) {
  const unsigned e = 59u - (unsigned)__builtin_clzll(ticks | 16u);
  return 16u * e + (unsigned)(ticks >> e);
}
KRON_C_INLINE void mk_record_latency(struct mk_histogram* h, uint64_t ticks) {
  const uint32_t i = __atomic_load_n(&h->id, __ATOMIC_RELAXED) - 1; /* id 0 (unregistered) wraps */
  const uint64_t tag = kron_t_lane.phase | __atomic_load_n(kron_g_stat_gen, __ATOMIC_RELAXED) | KRON_C_STAT_GEN_MARK;
  uint64_t* c;
  uint64_t* b;
  if (__builtin_expect(i >= KRON_C_HIST_CACHE || kron_t_stats.hist[i].tag != tag, 0)) {
    mk_record_latency_slow(h, ticks);
    return;
  }
  c = kron_t_stats.hist[i].cell;
  b = &c[kron_c_bucket_(ticks)];
  kron_c_store_(b, kron_c_load_(b) + 1);
  kron_c_store_(&c[KRON_C_HIST_SUM], kron_c_load_(&c[KRON_C_HIST_SUM]) + ticks);
  if (ticks < kron_c_load_(&c[KRON_C_HIST_MIN])) kron_c_store_(&c[KRON_C_HIST_MIN], ticks);
  if (ticks > kron_c_load_(&c[KRON_C_HIST_MAX])) kron_c_store_(&c[KRON_C_HIST_MAX], ticks);
}
KRON_C_INLINE void mk_vcount(unsigned index, uint64_t n) {
  const unsigned page = (index / KRON_C_COUNTERS_PER_CELL) % KRON_C_COUNTER_PAGES;
  const uint64_t tag = kron_t_lane.phase | __atomic_load_n(kron_g_stat_gen, __ATOMIC_RELAXED) | KRON_C_STAT_GEN_MARK;
  uint64_t* w;
  if (__builtin_expect(index >= KRON_C_VIRTUAL_COUNTERS || kron_t_stats.counters[page].tag != tag, 0)) {
    mk_vcount_slow(index, n);
    return;
  }
  w = &kron_t_stats.counters[page].cell[index % KRON_C_COUNTERS_PER_CELL];
  kron_c_store_(w, kron_c_load_(w) + n);
}
#endif
#endif

#ifndef KRON_DISABLE_PROBES
#if defined(__cplusplus) || !defined(__GNUC__) || defined(KRON_C_OUT_OF_LINE)
/* C++ (which has kron.hpp), compilers without GNU C, and KRON_C_OUT_OF_LINE: the out-of-line forms. */
#define mk_phase(id) mk_phase_fn((uint16_t)(id))
#define mk_current_phase() mk_current_phase_fn()
#define mk_record_latency(h, ticks) mk_record_latency_fn((h), (uint64_t)(ticks))
#define mk_vcount(index, n) mk_vcount_fn((index), (uint64_t)(n))
#define mk_now() mk_now_fn()
#endif
/* A latency timer: `const uint64_t t0 = mk_now(); ... MK_LATENCY_END(&h, t0);` records the ticks between. */
#define MK_LATENCY_END(h, t0) mk_record_latency((h), mk_now() - (t0))
#else
#define mk_phase(id) ((void)(id))
#define mk_current_phase() ((uint16_t)0)
#define mk_record_latency(h, ticks) ((void)(h), (void)(ticks))
#define mk_vcount(index, n) ((void)(index), (void)(n))
#define mk_now() ((uint64_t)0)
#define MK_LATENCY_END(h, t0) ((void)(h), (void)(t0))
#endif

#ifndef KRON_DISABLE_PROBES
#define MK_DEFAULT_MAP() mk_map_default()
#define mk_trace(group, data) mk_trace_fn((group), (uint64_t)(data))
#define mk_resource(group, data) mk_resource_fn((group), (uint64_t)(data))
#define mk_count(counter, n) mk_count_fn((counter), (uint64_t)(n))
#else
#define MK_DEFAULT_MAP() (-1)
#define mk_trace(group, data) ((void)0)
#define mk_resource(group, data) ((void)0)
#define mk_count(counter, n) ((void)0)
#endif

/* Named probes from C (the name a string literal). The site is a static of the enclosing function,
 * registered in the board's name table the first time the probe passes the filter (filter level
 * KRON_NAMED_GROUP, 0 unless defined before this header):
 *
 *   KRON_SCOPE_BEGIN(blk, "compress");       a named scope `blk` begins (KRON_SCOPE_BEGIN_V: with a value)
 *   ...
 *   KRON_SCOPE_END(blk);                     and ends (every path out of the block must pass here)
 *   KRON_SCOPE_AUTO("write");                GNU C: a scope ended by the compiler at the end of the block
 *   KRON_EVENT("bytes out", n);              a named event with a value (C; C++ takes kron.hpp's)
 *   mk_thread_name("writer");                names this thread
 * A value is taken as an int64_t and kept as mk_named_fn says: signed, 48 bits (DECISION D30). */
#ifndef KRON_NAMED_GROUP
#define KRON_NAMED_GROUP 0
#endif
#define KRON_C_CAT2_(a, b) a##b
#define KRON_C_CAT_(a, b) KRON_C_CAT2_(a, b)
#define KRON_C_SITE_(var, kind, name) static struct kron_site var = {(name), __FILE__, __func__, __LINE__, (kind), 0, 0}
/* KRON_SCOPE_BEGIN, KRON_SCOPE_AUTO and MK_LATENCY_AUTO are declarations only (their probe runs in an
 * initializer), so that declarations may follow them in a block built with -Wdeclaration-after-statement;
 * put them where a declaration may go. */
#ifndef KRON_DISABLE_PROBES
/* The begin of a named scope in an initializer: its value. */
static __inline__ KRON_C_UNUSED_ int64_t kron_c_named_begin_(struct kron_site* site, int64_t value) {
  mk_named_fn(site, KRON_NAMED_GROUP, value, KRON_NAMED_BEGIN);
  return value;
}
#define KRON_SCOPE_BEGIN_V(ctx, name, value)            \
  KRON_C_SITE_(ctx##_kron_site, KRON_SITE_SCOPE, name); \
  const int64_t ctx##_kron_value = kron_c_named_begin_(&ctx##_kron_site, (int64_t)(value))
#define KRON_SCOPE_BEGIN(ctx, name) KRON_SCOPE_BEGIN_V(ctx, name, 0)
#define KRON_SCOPE_END(ctx) mk_named_fn(&ctx##_kron_site, KRON_NAMED_GROUP, ctx##_kron_value, KRON_NAMED_END)
#define KRON_EVENT_C(name, value)                                                         \
  do {                                                                                    \
    KRON_C_SITE_(kron_site_event_, KRON_SITE_EVENT, name);                                \
    mk_named_fn(&kron_site_event_, KRON_NAMED_GROUP, (int64_t)(value), KRON_NAMED_EVENT); \
  } while (0)
#if defined(__GNUC__)
struct kron_scope_c {
  struct kron_site* site;
  int64_t value;
};
static __inline__ void kron_scope_c_end(struct kron_scope_c* s) {
  mk_named_fn(s->site, KRON_NAMED_GROUP, s->value, KRON_NAMED_END);
}
#define KRON_SCOPE_AUTO_V(name, value)                                                                          \
  KRON_C_SITE_(KRON_C_CAT_(kron_site_, __LINE__), KRON_SITE_SCOPE, name);                                       \
  __attribute__((cleanup(kron_scope_c_end), unused)) struct kron_scope_c KRON_C_CAT_(kron_scope_, __LINE__) = { \
      &KRON_C_CAT_(kron_site_, __LINE__), kron_c_named_begin_(&KRON_C_CAT_(kron_site_, __LINE__), (int64_t)(value))}
#define KRON_SCOPE_AUTO(name) KRON_SCOPE_AUTO_V(name, 0)
/* GNU C: the rest of the block's duration into histogram `h` (a struct mk_histogram*). */
struct kron_latency_c {
  struct mk_histogram* h;
  uint64_t t0;
};
static __inline__ void kron_latency_c_end(struct kron_latency_c* t) { mk_record_latency(t->h, mk_now() - t->t0); }
#define MK_LATENCY_AUTO(h)                                                                                            \
  __attribute__((cleanup(kron_latency_c_end), unused)) struct kron_latency_c KRON_C_CAT_(kron_latency_, __LINE__) = { \
      (h), mk_now()}
#endif
#else
#define KRON_SCOPE_BEGIN_V(ctx, name, value) const int64_t ctx##_kron_value KRON_C_UNUSED_ = (int64_t)(value)
#define KRON_SCOPE_BEGIN(ctx, name) KRON_SCOPE_BEGIN_V(ctx, name, 0)
#define KRON_SCOPE_END(ctx) ((void)ctx##_kron_value)
#define KRON_EVENT_C(name, value) ((void)(value))
#define KRON_SCOPE_AUTO_V(name, value) \
  const int64_t KRON_C_CAT_(kron_scope_, __LINE__) KRON_C_UNUSED_ = (int64_t)(value)
#define KRON_SCOPE_AUTO(name) KRON_SCOPE_AUTO_V(name, 0)
#define MK_LATENCY_AUTO(h) struct mk_histogram* const KRON_C_CAT_(kron_latency_, __LINE__) KRON_C_UNUSED_ = (h)
#endif
#ifndef __cplusplus
#define KRON_EVENT(name, value) KRON_EVENT_C(name, value)
#endif

#ifdef __cplusplus
}
#endif
#endif
