/* The LTTng-UST probe provider of bench_recorder (compiled as C, once). */
#define TRACEPOINT_CREATE_PROBES
#define TRACEPOINT_DEFINE
#include "recorder/lttng_tp.h"
