/* kron_fortran.c's functions, which kron.f90 binds (bind(C)). Strings come as (characters, length): Fortran's
 * own, not NUL-terminated. */
#ifndef KRON_FORTRAN_H
#define KRON_FORTRAN_H
#include <stddef.h>
#include <stdint.h>

struct mk_histogram;
void kron_f_scope_begin(const char* name, size_t len, int64_t value);
int kron_f_scope_end(void); /* -1: no scope open on this thread */
void kron_f_event(const char* name, size_t len, int64_t value);
struct mk_histogram* kron_f_histogram(const char* name, size_t len);
void kron_f_thread_name(const char* name, size_t len);
void kron_f_record_latency(struct mk_histogram* h, uint64_t ticks);
void kron_f_vcount(unsigned index, uint64_t n);
void kron_f_phase(unsigned id);
unsigned kron_f_current_phase(void);
uint64_t kron_f_now(void);
uint64_t kron_f_scopes_dropped(void); /* scopes begun deeper than 256 on a thread: not recorded */
#endif
