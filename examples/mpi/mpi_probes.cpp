// An MPI program with kron probes of its own (linked with `pkg-config kron-probe`), recorded whole:
//
//   mpirun -np 4 kron record --mpi -o run -- build/examples/mpi_probes 100          # run.rank-R.kron
//   mpirun -np 4 -x LD_PRELOAD=build/lib/libkron_mpi.so -x KRON_MPI_OUT=run build/examples/mpi_probes 100
//
// Each iteration is a named scope "iteration" holding two trace samples (group 1, data = rank << 32 |
// iteration, then the same + 1 << 31), a token passed round a ring (MPI_Send / MPI_Recv), a halo exchange
// with both neighbours (MPI_Irecv, MPI_Isend, MPI_Waitall) and an MPI_Allreduce. `mpi_probes ITERATIONS DIE_RANK
// DIE_AT` makes rank DIE_RANK kill itself with SIGKILL at iteration DIE_AT, after that iteration's first sample and
// before its ring step (a rank that dies with its work half done), 100 ms later and after one more sample (data + 1 <<
// 30), so that the others are all waiting for it by then; the others wait in the ring until the launcher ends them. A
// fourth argument `abort` makes it call MPI_Abort there instead.
//
// `mpi_probes late-root` is another program: rank 0 arrives 20 ms late to each of five MPI_Bcasts of nothing
// (count 0), which the other ranks may leave at once, then every rank meets in an MPI_Barrier (where they wait
// for rank 0). kron merge must move nothing of it on one machine (docs/decisions.md D10, D12).
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kron/kron.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1 && std::string(argv[1]) == "late-root") {
    for (int k = 0; k < 5; ++k) {
      if (rank == 0) ::usleep(20000);
      MPI_Bcast(nullptr, 0, MPI_INT, 0, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
  }
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  const int die_rank = argc > 3 ? std::atoi(argv[2]) : -1;
  const int die_at = argc > 3 ? std::atoi(argv[3]) : -1;
  const bool abort = argc > 4 && std::string(argv[4]) == "abort";
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  double sum = 0;
  for (int it = 0; it < iterations; ++it) {
    KRON_SCOPE("iteration");
    const std::uint64_t data = std::uint64_t(unsigned(rank)) << 32 | unsigned(it);
    kron::trace(1, data);
    if (rank == die_rank && it == die_at) {  // a while after the others began to wait for it, a last sample
      ::usleep(100000);
      kron::trace(1, data | std::uint64_t{1} << 30);
      if (abort) MPI_Abort(MPI_COMM_WORLD, 3);
      ::raise(SIGKILL);
    }
    int token = it;
    if (size > 1) {
      if (rank == 0) {
        MPI_Send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
      }
    }
    // A halo exchange with both neighbours: non-blocking, completed by one MPI_Waitall.
    double halo_out[2] = {double(it), double(rank)}, halo_in[2] = {0, 0};
    MPI_Request req[4];
    MPI_Irecv(&halo_in[0], 1, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(&halo_in[1], 1, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(&halo_out[0], 1, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(&halo_out[1], 1, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &req[3]);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    const double mine = double(rank + it) + halo_in[0] * 0;
    double all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    sum += all;
    kron::trace(1, data | std::uint64_t{1} << 31);
  }
  if (rank == 0) std::printf("mpi_probes: %d ranks, %d iterations, sum %.0f\n", size, iterations, sum);
  MPI_Finalize();
  return 0;
}
