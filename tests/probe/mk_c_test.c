/* The C probe API (mk.h) as a C program uses it: compiled as C, not C++. */
#include "kron/mk.h"

int kron_c_probe_program(void);
int kron_c_probe_program(void) {
  if (MK_DEFAULT_MAP() != 0) return 10;
  mk_trace(1, 10);
  mk_resource(1, 15);
  mk_trace(1, 20);
  return 0;
}
