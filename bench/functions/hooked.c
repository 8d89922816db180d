/* bench_functions: the same small function three ways. hooked_leaf is compiled with -finstrument-functions
 * (the function hooks record its entry and exit); scoped_leaf (bench_functions.cpp) holds a hand-written
 * KRON_SCOPE_V instead; plain_leaf neither. */
#include <stdint.h>

__attribute__((noinline)) uint64_t hooked_leaf(uint64_t x) {
  __asm__ volatile("" : "+r"(x));
  return x * 2654435761u + 1;
}
