// The MPI libraries libkron_mpi is built for, as the MPI tests run them (ERRATUM E436): each has its own
// launcher, its own way of passing an environment variable to the ranks, its own interposer (their ABIs
// differ) and the example programs built against it.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace kron::testing {

struct MpiFlavour {
  std::string name, launcher, lib, demo, surface;
  bool hydra = false;  // MPICH's mpiexec.hydra: -genv NAME VALUE, no flag as root
  std::string probes;  // examples/mpi/mpi_probes.cpp built against it
  // One environment variable for every rank: Open MPI's mpirun -x NAME=VALUE, hydra's -genv NAME VALUE.
  std::string env(const std::string& n, const std::string& v) const {
    return hydra ? " -genv " + n + " " + v : " -x " + n + "=" + v;
  }
  // The job's command line (as root and on 2 cores Open MPI needs --allow-run-as-root --oversubscribe).
  std::string run(int np, const std::string& env, const std::string& program) const {
    return "timeout 120 " + launcher + (hydra ? "" : " --allow-run-as-root --oversubscribe") + " -np " +
           std::to_string(np) + env + " " + program;
  }
};
inline void PrintTo(const MpiFlavour& f, std::ostream* os) { *os << f.name; }

inline std::vector<MpiFlavour> mpi_flavours() {
  return {{"OpenMPI", KRON_MPIRUN, KRON_MPI_LIB, KRON_MPI_DEMO, KRON_MPI_SURFACE, false, KRON_MPI_PROBES},
          {"MPICH", KRON_MPICH_RUN, KRON_MPICH_LIB, KRON_MPICH_DEMO, KRON_MPICH_SURFACE, true, KRON_MPICH_PROBES}};
}

}  // namespace kron::testing
