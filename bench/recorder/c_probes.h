/* bench_recorder's C batches (c_probes.c). */
#ifndef KRON_BENCH_C_PROBES_H
#define KRON_BENCH_C_PROBES_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
void kron_bench_c_hist(const uint64_t* values, uint64_t n);
void kron_bench_c_timer(uint64_t n);
void kron_bench_c_vcount(uint64_t n);
void kron_bench_c_phase(uint64_t n);
void kron_bench_c_trace(uint64_t n);
#ifdef __cplusplus
}
#endif
#endif
