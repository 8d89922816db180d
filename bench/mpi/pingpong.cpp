// The per-call cost of libkron_mpi, for make bench: an MPI ping-pong between ranks 0 and 1,
// run by scripts/bench.sh twice under mpirun: as it is, and with libkron_mpi preloaded. Each round trip
// is four MPI calls on the critical path (0 sends, 1 receives, 1 sends, 0 receives), so the cost a call
// adds is (instrumented - plain) / 4. Rank 0 prints its figure as JSON: the best of several runs of N
// round trips (the least disturbed by the other processes of a shared machine). With a third argument
// "procnull" (one rank): N calls of MPI_Send to MPI_PROC_NULL instead, the wrapper's cost alone.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = argc > 1 ? std::atoi(argv[1]) : 100000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  char byte = 0;
  double best = 1e30;
  if (argc > 3 && std::string_view(argv[3]) == "procnull") {
    // The wrapper's own work without a partner: MPI_Send to MPI_PROC_NULL returns at once in MPI, so the
    // difference with and without libkron_mpi is what a call costs the program's thread (two named probes,
    // two clock reads, a mutex, a 64-byte record), no busy-polling peer competing for the cores.
    for (int run = 0; run < runs; ++run) {
      const double t0 = MPI_Wtime();
      for (int i = 0; i < n; ++i) MPI_Send(&byte, 1, MPI_CHAR, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
      best = std::min(best, (MPI_Wtime() - t0) / n);
    }
    if (rank == 0) std::printf("{\"calls\": %d, \"runs\": %d, \"call_ns\": %.1f}\n", n, runs, best * 1e9);
    MPI_Finalize();
    return 0;
  }
  for (int run = 0; run < runs; ++run) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
      if (rank == 0) {
        MPI_Send(&byte, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&byte, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
      }
    }
    best = std::min(best, (MPI_Wtime() - t0) / n);
  }
  if (rank == 0) std::printf("{\"round_trips\": %d, \"runs\": %d, \"round_trip_ns\": %.1f}\n", n, runs, best * 1e9);
  MPI_Finalize();
  return 0;
}
