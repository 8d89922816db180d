// A library that carries its own copy of the probe with its symbols hidden, as libkron_mpi and libkron_omp do
// (linked with --exclude-libs), and exports the process's attach word (kron/process_attach.hpp).
#include "kron/kron.hpp"
#include "kron/process_attach.hpp"

KRON_DEFINE_PROCESS_ATTACH();

extern "C" __attribute__((visibility("default"))) int two_copies_lib_probe() {
  kron::trace(1, 42);  // through this library's copy
  return kron::attached() ? 1 : 0;
}
