/* Named probes from C (mk.h): compiled as C. KRON_SCOPE_BEGIN/END, KRON_SCOPE_AUTO (GNU C cleanup),
 * KRON_EVENT and mk_thread_name. */
#include "kron/mk.h"

int kron_c_named_program(void);
int kron_c_named_line(void);

static int inner(int i) {
  KRON_SCOPE_AUTO_V("c auto", i);
  return i + 1;
}

int kron_c_named_line(void) { return __LINE__ + 5; } /* the line of KRON_SCOPE_BEGIN_V below */

int kron_c_named_program(void) {
  if (MK_DEFAULT_MAP() != 0) return 10;
  mk_thread_name("c-main");
  KRON_SCOPE_BEGIN_V(outer, "c outer", 42);
  int x = inner(1);
  KRON_EVENT("c event", 7);
  KRON_SCOPE_END(outer);
  return x == 2 ? 0 : 11;
}
