/* A C program with phases, latency histograms and virtual counters through kron/mk.h alone (compiled as C99
 * with -Wall -Wextra -pedantic -Wdeclaration-after-statement -Werror): stats_c_test.sh records it under kron
 * record and checks what kron hist shows, per phase, against what this program did.
 *
 *   stats_c_program N     phase 1: N requests; phase 2: 2N requests
 *
 * Each request: its fixed "size" 1 + i % 7 into histogram "c sizes" (mk_record_latency: a value at hand),
 * its duration into "c work" (mk_now + MK_LATENCY_END) and, every other request, into "c auto"
 * (MK_LATENCY_AUTO); virtual counter i % 3 counts it, counter 5000 (the second page of counters) adds 2. */
#include <kron/mk.h>
#include <stdio.h>
#include <stdlib.h>

static MK_HISTOGRAM(h_sizes, "c sizes");
static MK_HISTOGRAM(h_work, "c work");
static MK_HISTOGRAM(h_auto, "c auto");
static volatile uint64_t sink;

static void request(uint64_t i) {
  const uint64_t t0 = mk_now();
  uint64_t k;
  KRON_SCOPE_BEGIN(req, "c request");
  uint64_t x = i | 1;
  for (k = 0; k < 64; ++k) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  sink = x;
  mk_record_latency(&h_sizes, 1 + i % 7);
  mk_vcount((unsigned)(i % 3), 1);
  mk_vcount(5000, 2);
  if (i % 2 == 0) {
    MK_LATENCY_AUTO(&h_auto);
    sink = x * 3;
  }
  MK_LATENCY_END(&h_work, t0);
  KRON_SCOPE_END(req);
}

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000;
  uint64_t i;
  if (MK_DEFAULT_MAP() != 0) {
    fprintf(stderr, "stats_c_program: no board (run it under kron record)\n");
    return 2;
  }
  if (mk_register_histogram(&h_sizes) == 0xffffffffu) return 3;
  mk_thread_name("c-stats");
  mk_phase(1);
  for (i = 0; i < n; ++i) request(i);
  mk_phase(2);
  for (i = 0; i < 2 * n; ++i) request(i);
  printf("phase %u\n", (unsigned)mk_current_phase());
  return 0;
}
