/* kprimes: a small C program with no kron code (docs/functions.md, make demo). Built with
 *   cc -g kprimes.c $(pkg-config --cflags --libs kron-functions) -o kprimes
 * it runs as before; under `kron record` every function's entry and exit is recorded, and `kron rpt` names
 * them: is_prime once per candidate, sieve_mark once per prime up to sqrt(N), and so on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_prime(unsigned n) {
  if (n < 2) return 0;
  for (unsigned d = 2; d * d <= n; ++d)
    if (n % d == 0) return 0;
  return 1;
}

static unsigned count_by_division(unsigned limit) {
  unsigned count = 0;
  for (unsigned n = 0; n < limit; ++n) count += (unsigned)is_prime(n);
  return count;
}

static void sieve_mark(unsigned char* composite, unsigned p, unsigned limit) {
  for (unsigned m = p * p; m < limit; m += p) composite[m] = 1;
}

static unsigned count_by_sieve(unsigned limit) {
  unsigned char* composite = calloc(limit, 1);
  if (!composite) return 0;
  for (unsigned p = 2; p * p < limit; ++p)
    if (!composite[p]) sieve_mark(composite, p, limit);
  unsigned count = 0;
  for (unsigned n = 2; n < limit; ++n) count += !composite[n];
  free(composite);
  return count;
}

int main(int argc, char** argv) {
  const unsigned limit = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20000;
  const unsigned a = count_by_division(limit), b = count_by_sieve(limit);
  printf("primes below %u: %u by division, %u by the sieve\n", limit, a, b);
  return a == b ? 0 : 1;
}
