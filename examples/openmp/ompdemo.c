/* ompdemo: an OpenMP program with no kron code (docs/functions.md "OpenMP", tests/omp/omp_test.sh), built with clang
 * -fopenmp (LLVM's libomp): a parallel region with a loop, an explicit barrier, a critical section and tasks. It prints
 * what it did, counted by itself, on its last line. */
#include <omp.h>
#include <stdio.h>

int main(void) {
  long sum = 0, critical = 0, tasks = 0;
  int threads = 0;
  omp_set_num_threads(3); /* more threads than a two-core machine's cores; each single: one executor, two others */
#pragma omp parallel reduction(+ : sum)
  {
#pragma omp single
    threads = omp_get_num_threads();
#pragma omp for schedule(dynamic, 50)
    for (int i = 0; i < 1000; ++i) sum += i;
#pragma omp barrier
    for (int k = 0; k < 25; ++k) {
#pragma omp critical
      ++critical;
    }
#pragma omp single
    {
      for (int t = 0; t < 20; ++t) {
#pragma omp task shared(tasks)
        {
#pragma omp atomic
          ++tasks;
        }
      }
#pragma omp taskwait
    }
  }
  printf("sum %ld\n", sum);
  printf("counts threads=%d regions=1 critical=%ld tasks=%ld\n", threads, critical, tasks);
  return 0;
}
