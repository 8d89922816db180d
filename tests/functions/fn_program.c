/* A C program with no kron code for the function hooks' test (functions_test.sh): built with the flags of
 * `pkg-config --cflags --libs kron-functions`, it must print the same under `kron record`, and `kron rpt` must
 * count each function's calls as the program's own counters do (printed on its last line). It also recurses
 * past the hooks' depth limit, leaves functions by longjmp, and calls into a shared library (fn_lib.c). */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

unsigned lib_work(unsigned x); /* fn_lib.c */

static unsigned long fib_calls, leaf_calls, deep_calls, jumps;
static jmp_buf where;

static unsigned long fib(unsigned n) {
  ++fib_calls;
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) unsigned leaf(unsigned x) {
  ++leaf_calls;
  return x * 2654435761u;
}

static unsigned deep(unsigned d) {
  ++deep_calls;
  return d == 0 ? 0 : 1 + deep(d - 1);
}

__attribute__((noinline)) static void thrower(unsigned k) {
  ++jumps;
  longjmp(where, (int)k + 1);
}

__attribute__((noinline)) static void jumper(unsigned k) {
  thrower(k);
  puts("not reached");
}

__attribute__((noinline)) static unsigned guarded(unsigned k) {
  if (setjmp(where) == 0) jumper(k);
  return k;
}

int main(int argc, char** argv) {
  const unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1000;
  unsigned sum = 0;
  for (unsigned i = 0; i < n; ++i) sum += leaf(i);
  for (unsigned i = 0; i < 7; ++i) sum += guarded(i);
  for (unsigned i = 0; i < 3; ++i) sum += lib_work(i);
  printf("fib(15) = %lu\n", fib(15));
  printf("depth %u\n", deep(700));
  printf("checksum %u\n", sum);
  printf("counts fib=%lu leaf=%lu deep=%lu jumps=%lu lib=3\n", fib_calls, leaf_calls, deep_calls, jumps);
  return 0;
}
