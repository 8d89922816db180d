/* The C probes (kron/mk.h) of bench_recorder: the same batches as its C++ ones (hist_batch, timer_batch,
 * vcount_batch, trace_batch), written in C, so that the two languages' costs stand side by side in one run. */
#include "recorder/c_probes.h"

#include <kron/mk.h>

static MK_HISTOGRAM(c_hist, "bench histogram c");

__attribute__((noinline)) void kron_bench_c_hist(const uint64_t* values, uint64_t n) {
  uint64_t i;
  for (i = 0; i < n; ++i) mk_record_latency(&c_hist, values[i & 4095]);
}
__attribute__((noinline)) void kron_bench_c_timer(uint64_t n) {
  uint64_t i;
  for (i = 0; i < n; ++i) {
    const uint64_t t0 = mk_now();
    __asm__ volatile("" ::: "memory"); /* benchmark::ClobberMemory(), as the C++ batch */
    MK_LATENCY_END(&c_hist, t0);
  }
}
__attribute__((noinline)) void kron_bench_c_vcount(uint64_t n) {
  uint64_t i;
  for (i = 0; i < n; ++i) mk_vcount((unsigned)(i & 8191), 1);
}
__attribute__((noinline)) void kron_bench_c_phase(uint64_t n) {
  uint64_t i;
  for (i = 0; i < n; ++i) {
    mk_phase((uint16_t)(i & 1));
    __asm__ volatile("" ::: "memory");
  }
}
__attribute__((noinline)) void kron_bench_c_trace(uint64_t n) {
  uint64_t i;
  for (i = 0; i < n; ++i) mk_trace(1, i);
}
