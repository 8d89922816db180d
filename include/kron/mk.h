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

#ifdef __cplusplus
}
#endif
#endif
