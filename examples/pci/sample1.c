/* sample1.c: the toolkit's sample program (003 section 3.6, src/sample/sample1.c) against kron's PCI
 * board model. "The program does some system calls inside of a loop, and the overall time spent in
 * various parts of the program can be calculated from the data captured by the MultiKron", using interval
 * classes 1, 2 and 3 (examples/pci/interval.info). At the end it saves the board's local memory with its
 * memory address pointer (default file board.img), as taking the board's state after the run; then
 *   kron rdsample --pci-memory board.img      (003's mk_rdsample: writes mk.dat)
 *   kron expand --input-format mk2 mk.dat; kron rpt --input-format mk2 -f interval.info mk.dat
 *
 * Usage: sample1 [FILE [LOOPS]]         exit 0, or 1 when the memory does not hold what was probed */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "mkboard.h"

/* Sequence numbers (003 3.5 "sequence numbers are the numbers assigned to arbitrary events"). */
#define PROGRAM_START 10 /* class 1: 10 20 "whole program" */
#define PROGRAM_END 20
#define IF_START 81      /* class 2: 81 82 83 "if then" "if else" */
#define IF_THEN 82
#define IF_ELSE 83
#define INPUT_START 8    /* class 3: 8 17 12 "process input" "write output" */
#define INPUT_DONE 17
#define OUTPUT_DONE 12

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "board.img";
  const int loops = argc > 2 ? atoi(argv[2]) : 100;
  long probes = 0;

  MK_DEFAULT_MAP(); /* init MultiKron device */
  MK_SOURCE(0, (uint64_t)getpid());

  MK_TS1(PROGRAM_START), ++probes;
  for (int i = 0; i < loops; ++i) {
    MK_TS1(IF_START), ++probes;
    if (getppid() > 0 && i % 3 != 0) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      MK_TS1(IF_THEN), ++probes;
    } else {
      (void)getpid();
      MK_TS1(IF_ELSE), ++probes;
    }
    MK_TS1(INPUT_START), ++probes;
    char buf[64];
    snprintf(buf, sizeof buf, "%d", i); /* "process input" */
    MK_TS1(INPUT_DONE), ++probes;
    FILE* null = fopen("/dev/null", "w"); /* "write output": a few system calls */
    if (null) {
      fputs(buf, null);
      fclose(null);
    }
    MK_TS1(OUTPUT_DONE), ++probes;
  }
  MK_TS1(PROGRAM_END), ++probes;

  const long bytes = mkb_save_memory(mkb_default, path);
  const uint64_t pointer = mkb_read(mkb_default, MKB_POINTER) & 0xffffff;
  printf("sample1: %ld probes, memory address pointer 0x%06llx, %ld bytes of samples saved to %s\n", probes,
         (unsigned long long)pointer, bytes, path);
  /* Every probe is one 20-byte MultiKron II Trace sample (000 Table B2) in local memory. */
  int ok = bytes == probes * 20;
  for (long s = 0; ok && s < probes; ++s) {
    const uint32_t header = (uint32_t)mkb_read(mkb_default, MKB_MEMORY + (uint32_t)(s * 20)) >> 24;
    ok = (header & 0x18) == 0x10; /* type 10 = Trace */
  }
  mkb_close(mkb_default);
  if (!ok) fprintf(stderr, "sample1: the board memory does not hold one Trace sample per probe\n");
  return ok ? 0 : 1;
}
