/* Signed values from C (mk.h), compiled as C99: KRON_EVENT("signed", v) for -5, 0, 2^47-1 and -2^47, the
 * same from an unsigned variable (2^64-5 is -5's bits), two values outside the range (DECISION D31), and a
 * scope carrying -5. signed_values_test.sh records it and reads the values back with the tools (DECISION D30). */
#include <stdint.h>
#include <stdio.h>

#include "kron/mk.h"

int main(void) {
  const int64_t in_range[] = {-5, 0, (INT64_C(1) << 47) - 1, -(INT64_C(1) << 47)};
  const int64_t outside[] = {INT64_C(1) << 47, -(INT64_C(1) << 47) - 1}; /* read back as -2^47, 2^47-1 */
  const uint64_t minus_five_bits = UINT64_MAX - 4;
  unsigned i;
  for (i = 0; i < 4; ++i) KRON_EVENT("signed", in_range[i]);
  KRON_EVENT("signed unsigned", minus_five_bits);
  for (i = 0; i < 2; ++i) KRON_EVENT("signed outside", outside[i]);
  {
    KRON_SCOPE_BEGIN_V(s, "signed scope", -5);
    KRON_SCOPE_END(s);
  }
  printf("attached %d\n", mk_attached());
  return 0;
}
