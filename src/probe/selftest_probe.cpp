// kron-selftest-probe BOARD LEVEL CPU OP DATA [OP DATA]...: the probes of `kron selftest basic|sample
// --board BOARD` (src/toolkit/live_selftest.cpp), run in a process of their own. The kron command never
// links the probe side (it must never attach to a board); it starts this small instrumented
// program with KRON_BOARD=BOARD instead, so that the samples land on BOARD and nowhere else.
//   LEVEL  filter level of every probe;  CPU  the CPU to run on (-1: wherever);
//   OP     trace | resource;             DATA the probe's user data.
// Exit status: 0 every probe was taken; 2 usage; 3 not attached to BOARD; 4 cannot run on CPU.
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kron/board.hpp"
#include "kron/kron.hpp"

int main(int argc, char** argv) {
  if (argc < 6 || (argc - 4) % 2 != 0) {
    std::fprintf(stderr, "usage: kron-selftest-probe BOARD LEVEL CPU trace|resource DATA [trace|resource DATA]...\n");
    return 2;
  }
  // The probe attached at start-up to $KRON_BOARD, which the caller set to BOARD.
  const char* env = std::getenv(kron::board::kEnvBoard);
  if (!env || std::strcmp(env, argv[1]) != 0 || !kron::attached()) {
    std::fprintf(stderr, "kron-selftest-probe: not attached to board %s\n", argv[1]);
    return 3;
  }
  const auto level = static_cast<unsigned>(std::strtoul(argv[2], nullptr, 0));
  const long cpu = std::strtol(argv[3], nullptr, 0);
  if (cpu >= 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(static_cast<int>(cpu), &one);
    if (::sched_setaffinity(0, sizeof one, &one) != 0) return 4;
  }
  for (int i = 4; i + 1 < argc; i += 2) {
    const std::uint64_t data = std::strtoull(argv[i + 1], nullptr, 0);
    if (std::strcmp(argv[i], "trace") == 0)
      kron::trace(level, data);
    else if (std::strcmp(argv[i], "resource") == 0)
      kron::resource(level, data);
    else
      return 2;
  }
  return 0;
}
