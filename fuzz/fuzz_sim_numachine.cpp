// Fuzz target: the `kron sim --chip numachine` path: the script parser with the monitor's register names,
// then the script run on the NUMAchine monitor model (its own commands included). Any input must either be
// refused with kron::InputError or run to the end; nothing else may escape.
#include <cstdint>
#include <sstream>
#include <string>

#include "kron/core/error.hpp"
#include "models/numachine/numachine.hpp"
#include "sim/script.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  kron::numachine::Numachine monitor;
  try {
    const auto commands = kron::sim::parse_script(in, "fuzz.sim", &monitor);
    std::ostringstream out;
    kron::sim::run_script(commands, "fuzz.sim", monitor, out);
  } catch (const kron::InputError&) {
  }
  return 0;
}
