// The test programs of the Experimenter's Toolkit (003 section 3.4), run against a PCI toolkit board seen
// through its PCI byte offsets (a kron::sim::Device such as kron::pcib::PciBoard):
//   mem     mk_mem_test START COUNT: five passes, each writing every word then reading it back: the word's
//           address pattern (address * 0x01010101 ^ 0x00a5a5a5: neighbouring words differ, and word 0 is not
//           all zeros), then 0, 0xffffffff, 0x55555555 and 0xaaaaaaaa; a bit stuck at 0 or 1 is reported by
//           each pass that writes the other value there ("word W: wrote V, read R", the first ten)
//   basic   test_mk: Source Address Register round trip, a resource sample, the first 2048 memory words,
//           the timestamp's low 32 bits before and after a (simulated) 10 second wait
//   sample  mk_sample_test: trace then resource samples from CPU 0 then CPU 1, printed as 20 and 84 bytes
//           with the memory address pointer
//   nite    mk_nite_test: a randomized soak of memory, registers and sampling checked against expected
//           results, bounded by wall-clock seconds instead of CTRL-C
// Each returns the number of errors found (0 = pass) and prints its report to `out`.
#pragma once
#include <cstdint>
#include <iosfwd>

#include "kron/sim/device.hpp"

namespace kron::toolkit {

std::uint64_t mem_test(sim::Device& board, std::uint32_t start, std::uint32_t count, std::ostream& out);
std::uint64_t basic_test(sim::Device& board, std::ostream& out);
std::uint64_t sample_test(sim::Device& board, std::ostream& out);

struct NiteOptions {
  double seconds = 2.0;          // wall-clock bound (the original ran until CTRL-C)
  std::uint64_t seed = 1;        // pseudo-random sequence; printed so a failure can be replayed
  std::uint64_t max_rounds = 0;  // 0 = until `seconds` pass
};
std::uint64_t nite_test(sim::Device& board, const NiteOptions& options, std::ostream& out);

}  // namespace kron::toolkit
