/* LTTng-UST tracepoint provider for bench_recorder: one event carrying one integer, the peer of
 * kron::trace(group, data). */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER kron_bench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "recorder/lttng_tp.h"

#if !defined(KRON_BENCH_LTTNG_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define KRON_BENCH_LTTNG_TP_H

#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(kron_bench, event, TP_ARGS(uint64_t, value), TP_FIELDS(ctf_integer(uint64_t, value, value)))

#endif

#include <lttng/tracepoint-event.h>
