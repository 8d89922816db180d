// The MPI example of make demo and of libkron_mpi's tests: an ordinary MPI program, no kron in it.
// Each iteration: a token passed around a ring (MPI_Send / MPI_Recv), a halo exchange with both neighbours
// (MPI_Irecv, MPI_Isend, MPI_Waitall), a little work, an MPI_Allreduce of a residual, and every fourth
// iteration a report to rank 0 received with MPI_ANY_SOURCE, and an MPI_Sendrecv shift.
//
//   mpirun -np 4 -x LD_PRELOAD=build/lib/libkron_mpi.so -x KRON_MPI_OUT=demo build/examples/mpi_demo 50
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  std::vector<double> cells(1024 + 2, double(rank));
  double residual = 0;
  for (int it = 0; it < iterations; ++it) {
    // Ring: rank 0 starts the token, every other rank passes it on.
    int token = it;
    if (size > 1) {
      if (rank == 0) {
        MPI_Send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        ++token;
        MPI_Send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
      }
    }
    // Halo exchange: the edge cells to both neighbours.
    MPI_Request req[4];
    MPI_Irecv(&cells[0], 1, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(&cells[cells.size() - 1], 1, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(&cells[cells.size() - 2], 1, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(&cells[1], 1, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &req[3]);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    // Work: a smoothing sweep.
    double local = 0;
    for (std::size_t i = 1; i + 1 < cells.size(); ++i) {
      const double v = 0.25 * cells[i - 1] + 0.5 * cells[i] + 0.25 * cells[i + 1];
      local += std::fabs(v - cells[i]);
      cells[i] = v;
    }
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (it % 4 == 3) {  // reports to rank 0, in whatever order they come
      if (rank == 0) {
        for (int k = 1; k < size; ++k) {
          double r = 0;
          MPI_Status st;
          MPI_Recv(&r, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st);
        }
      } else {
        MPI_Send(&local, 1, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD);
      }
      double in = 0;
      MPI_Sendrecv(&local, 1, MPI_DOUBLE, right, 5, &in, 1, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  if (rank == 0) std::printf("mpi_demo: %d ranks, %d iterations, residual %.6g\n", size, iterations, residual);
  MPI_Finalize();
  return 0;
}
