/* A C program instrumented with kron's C probes (kron/mk.h), built against an installed kron with the
 * documented flags alone (pkg-config --cflags --libs kron-probe, or find_package(kron) + kron::kron_probe
 * from a C-only CMake project). Under kron record it writes N Trace samples (argv[1], default 100) and a
 * Resource sample; without a board the probes record nothing. Exit 0 either way. */
#include <kron/mk.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 100;
  const int attached = MK_DEFAULT_MAP() == 0;
  for (int i = 0; i < n; ++i) mk_trace(1, (uint64_t)i);
  mk_resource(1, 7);
  fprintf(stderr, "probe_c: %s, %d trace samples\n", attached ? "attached" : "no board", n);
  return 0;
}
