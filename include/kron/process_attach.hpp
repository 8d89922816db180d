// ERRATUM E322. One count a process in a board's `attached`, however many copies of the probe the process
// carries: the program's own, and one in each library that carries a copy with its symbols hidden
// (libkron_mpi, libkron_omp). Such a library exports the process's word (KRON_DEFINE_PROCESS_ATTACH) and
// every copy finds it by name through the dynamic linker (dlsym, once, at attach); a copy that finds none
// counts alone, as before. A copy counts the process in only when it is the first on that board, and out
// only when it is the last.
#pragma once
#include <atomic>
#include <cstdint>

namespace kron::detail {
struct ProcessAttach {
  std::atomic<std::uint64_t> board{0};   // the board the process is counted on (an identity of it), 0: none
  std::atomic<std::uint32_t> copies{0};  // copies of the probe counted through this word
};
inline constexpr char kProcessAttachSymbol[] = "kron_process_attach_v1";
}  // namespace kron::detail

// In a library that carries its own copy of the probe (at namespace scope, once).
#define KRON_DEFINE_PROCESS_ATTACH()                                                         \
  extern "C" {                                                                               \
  __attribute__((visibility("default"))) kron::detail::ProcessAttach kron_process_attach_v1; \
  }                                                                                          \
  static_assert(true, "a definition, exported")
