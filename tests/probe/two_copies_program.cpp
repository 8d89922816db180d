// A program with two copies of the probe: its own (kron_probe, linked statically) and the library's
// (two_copies_lib.cpp). Both attach at start-up to $KRON_BOARD. It probes through each, prints "ready", and
// exits normally when a line arrives on its standard input (ERRATUM E322: the board counts it once).
#include <cstdio>

#include "kron/kron.hpp"

extern "C" int two_copies_lib_probe();

int main() {
  kron::trace(0, 1);  // through the program's copy
  const int lib = two_copies_lib_probe();
  std::printf("ready %d %d\n", kron::attached() ? 1 : 0, lib);
  std::fflush(stdout);
  char line[16];
  return std::fgets(line, sizeof line, stdin) ? 0 : 1;
}
