// Fuzz target: the `kron sim` script parser, then the script run on the MultiKron II model.
// Any input must either be refused with kron::InputError or run to the end; nothing else may escape.
#include <cstdint>
#include <sstream>
#include <string>

#include "kron/core/error.hpp"
#include "models/mk2/mk2.hpp"
#include "sim/script.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const auto commands = kron::sim::parse_script(in, "fuzz.sim");
    kron::mk2::Mk2 chip;
    std::ostringstream out, net;
    kron::sim::RunOptions options;
    options.net = &net;
    options.net_bits = size % 2;
    kron::sim::run_script(commands, "fuzz.sim", chip, out, options);
  } catch (const kron::InputError&) {
  }
  return 0;
}
