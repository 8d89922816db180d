/* A C program that names its main thread and a worker through kron (mk_thread_name): the process keeps its
 * own name (/proc/self/comm, what ps and pidof read), the worker's kernel name is the one given. Exits 1
 * with a message on the first difference; prints "main OLD, worker NAME" otherwise. Built with the probes
 * and once with KRON_DISABLE_PROBES (main_name_test.sh runs both, with and without a board). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kron/mk.h"

static void comm_of(const char* path, char out[32]) {
  FILE* f = fopen(path, "r");
  size_t n = 0;
  out[0] = 0;
  if (!f) return;
  n = fread(out, 1, 31, f);
  fclose(f);
  out[n] = 0;
  out[strcspn(out, "\n")] = 0;
}

static char worker_comm[32];

static void* worker(void* arg) {
  char path[64];
  (void)arg;
  mk_thread_name("worker 1");
  mk_trace(1, 2);
  snprintf(path, sizeof path, "/proc/self/task/%ld/comm", (long)syscall(SYS_gettid));
  comm_of(path, worker_comm);
  return NULL;
}

int main(void) {
  char before[32], after[32];
  pthread_t t;
  comm_of("/proc/self/comm", before);
  mk_thread_name("reader");
  mk_trace(1, 1);
  comm_of("/proc/self/comm", after);
  if (strcmp(before, after) != 0) {
    fprintf(stderr, "the process was renamed: /proc/self/comm was '%s', is '%s'\n", before, after);
    return 1;
  }
  if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0) return 1;
  if (strcmp(worker_comm, "worker 1") != 0) {
    fprintf(stderr, "the worker's kernel name is '%s', not 'worker 1'\n", worker_comm);
    return 1;
  }
  mk_trace(1, 3);
  printf("main %s, worker %s\n", after, worker_comm);
  return 0;
}
