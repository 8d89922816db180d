/* The C side of the Fortran module kron (kron.f90): what Fortran cannot do through bind(C) alone. A Fortran
 * program has no static string for a probe site, so a named scope's site is made here once per name (kept for
 * the life of the process, as a C site is: registered in the board's name table on first use); scopes are
 * ended by kron_scope_end() without an argument, so each thread keeps the scopes it opened on a small stack.
 * The probes themselves are mk.h's inline C probes. */
#include <kron/mk.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kron_fortran.h"

/* ---- sites and histograms by name (a mutex: made once per name, then found) ---- */
struct named_entry {
  struct named_entry* next;
  int kind; /* KRON_SITE_SCOPE, KRON_SITE_EVENT, or 0: a histogram */
  struct kron_site site;
  struct mk_histogram hist;
  char name[];
};
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct named_entry* g_entries;

static struct named_entry* find_or_make(const char* name, size_t len, int kind) {
  struct named_entry* e;
  pthread_mutex_lock(&g_lock);
  for (e = g_entries; e; e = e->next)
    if (e->kind == kind && strlen(e->name) == len && memcmp(e->name, name, len) == 0) break;
  if (!e && (e = calloc(1, sizeof *e + len + 1)) != NULL) {
    memcpy(e->name, name, len);
    e->kind = kind;
    e->site.name = e->name;
    e->site.file = "fortran";
    e->site.function = "";
    e->site.kind = (uint32_t)kind;
    e->hist.name = e->name;
    e->next = g_entries;
    g_entries = e;
  }
  pthread_mutex_unlock(&g_lock);
  return e;
}

/* ---- each thread's open scopes ---- */
#define KRON_FORTRAN_DEPTH 256
struct open_scope {
  struct kron_site* site;
  int64_t value;
};
static __thread struct open_scope t_open[KRON_FORTRAN_DEPTH];
static __thread unsigned t_depth, t_lost; /* t_lost: scopes opened beyond the stack's depth */
static uint64_t g_dropped;                 /* such scopes, every thread (kron_scopes_dropped) */

void kron_f_scope_begin(const char* name, size_t len, int64_t value) {
  struct named_entry* e = find_or_make(name, len, KRON_SITE_SCOPE);
  if (!e || t_depth == KRON_FORTRAN_DEPTH) {
    ++t_lost; /* ERRATUM E381: begun and ended nowhere, the pair is dropped whole and counted */
    __atomic_fetch_add(&g_dropped, 1, __ATOMIC_RELAXED);
    return;
  }
  t_open[t_depth].site = &e->site;
  t_open[t_depth].value = value;
  ++t_depth;
  mk_named_fn(&e->site, KRON_NAMED_GROUP, value, KRON_NAMED_BEGIN);
}
int kron_f_scope_end(void) {
  if (t_lost) {
    --t_lost;
    return 0;
  }
  if (t_depth == 0) return -1; /* an end without a begin */
  --t_depth;
  mk_named_fn(t_open[t_depth].site, KRON_NAMED_GROUP, t_open[t_depth].value, KRON_NAMED_END);
  return 0;
}
void kron_f_event(const char* name, size_t len, int64_t value) {
  struct named_entry* e = find_or_make(name, len, KRON_SITE_EVENT);
  if (e) mk_named_fn(&e->site, KRON_NAMED_GROUP, value, KRON_NAMED_EVENT);
}
struct mk_histogram* kron_f_histogram(const char* name, size_t len) {
  struct named_entry* e = find_or_make(name, len, 0);
  return e ? &e->hist : NULL;
}
void kron_f_thread_name(const char* name, size_t len) {
  char buf[64];
  if (len >= sizeof buf) len = sizeof buf - 1;
  memcpy(buf, name, len);
  buf[len] = 0;
  mk_thread_name(buf);
}
void kron_f_record_latency(struct mk_histogram* h, uint64_t ticks) {
  if (h) mk_record_latency(h, ticks);
}
void kron_f_vcount(unsigned index, uint64_t n) { mk_vcount(index, n); }
void kron_f_phase(unsigned id) { mk_phase((uint16_t)id); }
unsigned kron_f_current_phase(void) { return mk_current_phase(); }
uint64_t kron_f_now(void) { return mk_now(); }
uint64_t kron_f_scopes_dropped(void) { return __atomic_load_n(&g_dropped, __ATOMIC_RELAXED); }
