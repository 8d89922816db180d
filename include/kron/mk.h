/* kron's probes for C programs, in the manner of the MultiKron toolkit's mk.h (003 section 3):
 *
 *   #include <kron/mk.h>
 *   MK_DEFAULT_MAP();          maps the board named by $KRON_BOARD (0 ok, -1 none: probes record nothing)
 *   mk_trace(1, 10);           Trace sample, filter level 1, user data 10
 *   mk_resource(1, 20);        Resource sample (adds the sixteen resource counters)
 *   mk_count(5, 1);            software increment of resource counter 5
 *
 * Link with `pkg-config --cflags --libs kron-probe`, or find_package(kron) and kron::kron_probe in CMake:
 * both name the C++ runtime the probe library needs (it is written in C++). Define KRON_DISABLE_PROBES
 * to compile every probe away. */
#ifndef KRON_MK_H
#define KRON_MK_H
#include <stdint.h>

#include "kron/site.h"

#ifdef __cplusplus
extern "C" {
#endif

int mk_map(const char* board_name);        /* 0 when attached, -1 otherwise */
int mk_map_default(void);                  /* the board named by $KRON_BOARD */
void mk_trace_fn(unsigned group, uint64_t data);
void mk_resource_fn(unsigned group, uint64_t data);
void mk_count_fn(unsigned counter, uint64_t n);
void mk_set_filter(uint16_t filter);       /* writes the Filter Register */
void mk_write_csr(uint16_t written);       /* writes the CSR (000 Table B1: write 1 to act) */
void mk_counter_control(uint64_t enable, uint64_t mode, uint64_t clock_select); /* 000 Tables B5-B7 */
/* Named probes (kron/site.h): a sample of `site` carrying `value` (48 bits); `what`: KRON_NAMED_EVENT,
 * KRON_NAMED_BEGIN or KRON_NAMED_END (a scope's two ends). */
enum { KRON_NAMED_EVENT = 0, KRON_NAMED_BEGIN = 1, KRON_NAMED_END = 2 };
void mk_named_fn(struct kron_site* site, unsigned group, uint64_t value, int what);
/* Names the calling thread (pthread_setname_np and the board's name table). */
void mk_thread_name(const char* name);

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
 *   mk_thread_name("writer");                names this thread */
#ifndef KRON_NAMED_GROUP
#define KRON_NAMED_GROUP 0
#endif
#define KRON_C_CAT2_(a, b) a##b
#define KRON_C_CAT_(a, b) KRON_C_CAT2_(a, b)
#define KRON_C_SITE_(var, kind, name) static struct kron_site var = {(name), __FILE__, __func__, __LINE__, (kind), 0, 0}
#ifndef KRON_DISABLE_PROBES
#define KRON_SCOPE_BEGIN_V(ctx, name, value)                    \
  KRON_C_SITE_(ctx##_kron_site, KRON_SITE_SCOPE, name);         \
  const uint64_t ctx##_kron_value = (uint64_t)(value);          \
  mk_named_fn(&ctx##_kron_site, KRON_NAMED_GROUP, ctx##_kron_value, KRON_NAMED_BEGIN)
#define KRON_SCOPE_BEGIN(ctx, name) KRON_SCOPE_BEGIN_V(ctx, name, 0)
#define KRON_SCOPE_END(ctx) mk_named_fn(&ctx##_kron_site, KRON_NAMED_GROUP, ctx##_kron_value, KRON_NAMED_END)
#define KRON_EVENT_C(name, value)                                  \
  do {                                                             \
    KRON_C_SITE_(kron_site_event_, KRON_SITE_EVENT, name);         \
    mk_named_fn(&kron_site_event_, KRON_NAMED_GROUP, (uint64_t)(value), KRON_NAMED_EVENT); \
  } while (0)
#if defined(__GNUC__)
struct kron_scope_c {
  struct kron_site* site;
  uint64_t value;
};
static inline void kron_scope_c_end(struct kron_scope_c* s) { mk_named_fn(s->site, KRON_NAMED_GROUP, s->value, KRON_NAMED_END); }
#define KRON_SCOPE_AUTO_V(name, value)                                                                      \
  KRON_C_SITE_(KRON_C_CAT_(kron_site_, __LINE__), KRON_SITE_SCOPE, name);                                  \
  __attribute__((cleanup(kron_scope_c_end), unused)) struct kron_scope_c KRON_C_CAT_(kron_scope_, __LINE__) = { \
      &KRON_C_CAT_(kron_site_, __LINE__), (uint64_t)(value)};                                               \
  mk_named_fn(&KRON_C_CAT_(kron_site_, __LINE__), KRON_NAMED_GROUP, (uint64_t)(value), KRON_NAMED_BEGIN)
#define KRON_SCOPE_AUTO(name) KRON_SCOPE_AUTO_V(name, 0)
#endif
#else
#define KRON_SCOPE_BEGIN_V(ctx, name, value) ((void)(value))
#define KRON_SCOPE_BEGIN(ctx, name) ((void)0)
#define KRON_SCOPE_END(ctx) ((void)0)
#define KRON_EVENT_C(name, value) ((void)(value))
#define KRON_SCOPE_AUTO_V(name, value) ((void)(value))
#define KRON_SCOPE_AUTO(name) ((void)0)
#endif
#ifndef __cplusplus
#define KRON_EVENT(name, value) KRON_EVENT_C(name, value)
#endif

#ifdef __cplusplus
}
#endif
#endif
