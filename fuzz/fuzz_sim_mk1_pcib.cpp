// Fuzz target: `kron sim` scripts run on the first MultiKron model and on the PCI board model. Any input
// must either be refused with kron::InputError or run to the end; nothing else may escape. Scripts that
// name the board's file commands (memdump, cable) are skipped: a fuzzer must not write files.
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>

#include "kron/core/error.hpp"
#include "models/mk1/mk1.hpp"
#include "models/pcib/pcib.hpp"
#include "sim/script.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (text.find("memdump") != std::string::npos || text.find("cable") != std::string::npos) return 0;
  static auto board = std::make_unique<kron::pcib::PciBoard>();  // 16 MB of memory: made once
  try {
    std::istringstream in(text);
    const auto commands = kron::sim::parse_script(in, "fuzz.sim");
    std::ostringstream out;
    kron::sim::RunOptions options;
    options.net_bits = size % 2;
    if (size % 3 == 0) {
      board->hardware_reset();
      kron::sim::run_script(commands, "fuzz.sim", *board, out, options);
    } else {
      kron::mk1::Mk1 chip;
      kron::sim::run_script(commands, "fuzz.sim", chip, out, options);
    }
  } catch (const kron::InputError&) {
  }
  return 0;
}
