// `kron sim [--chip mk1|mk2|numachine] [--board pci] [--net FILE] [--net-bits] SCRIPT`: a device model driven by a
// script (language: src/sim/script.hpp, README "kron sim"). Exit 0, 1 for a failed expect, 2 for a
// script error (FILE:LINE: what).
#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "kron/format/text_file.hpp"
#include "sim/registry.hpp"
#include "sim/script.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {

struct SimArgs {
  std::string chip;
  std::string board;
  std::string net;
  bool net_bits = false;
  std::string script;
};

int run_sim(const SimArgs& a) {
  std::unique_ptr<sim::Device> device;
  try {
    device = sim::make_device(a.board, a.chip);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "kron sim: {}\n", e.what());
    return kExitBadInput;
  }
  std::vector<sim::Command> commands;
  {
    // ERRATUM E130: the script is read whole within kSimScriptLimits (a named file: a regular file only).
    std::istringstream in(a.script == "-" ? read_text_stream(std::cin, "<stdin>", kSimScriptLimits)
                                          : read_text_file(a.script, kSimScriptLimits));
    commands = sim::parse_script(in, a.script == "-" ? "<stdin>" : a.script, device.get());
  }
  std::ofstream net;
  sim::RunOptions options;
  options.net_bits = a.net_bits;
  if (!a.net.empty()) {
    net.open(a.net, std::ios::binary | std::ios::trunc);
    if (!net) {
      fmt::print(stderr, "kron sim: {}: cannot create: {}\n", a.net, std::strerror(errno));
      return kExitBadInput;
    }
    options.net = &net;
  }
  // A board whose external cable goes to standard output (`cable -`, a reader at the other end of a pipe)
  // owns standard output: the script's printed lines go to standard error instead.
  const bool cable_to_stdout = std::any_of(commands.begin(), commands.end(), [](const sim::Command& c) {
    return c.op == sim::Op::Other && c.word == "cable" && c.words.size() == 1 && c.words[0] == "-";
  });
  const unsigned failures = sim::run_script(commands, a.script == "-" ? "<stdin>" : a.script, *device,
                                            cable_to_stdout ? std::cerr : std::cout, options);
  if (net.is_open() && !net.flush()) {
    fmt::print(stderr, "kron sim: {}: write error\n", a.net);
    return kExitBadInput;
  }
  if (failures) fmt::print(stderr, "kron sim: {} expect(s) failed\n", failures);
  return failures ? kExitFailed : kExitOk;
}

}  // namespace

KRON_COMMAND("sim", "Run a device model (MultiKron, NUMAchine monitor) from a script", 10, [](CLI::App& app) {
  auto a = std::make_shared<SimArgs>();
  app.add_option("--chip", a->chip, "Chip model: mk2 (default), mk1, numachine");
  app.add_option("--board", a->board, "Board carrying the chip: pci");
  app.add_option("--net", a->net, "Write the raw data bytes of the network stream to FILE");
  app.add_flag("--net-bits", a->net_bits, "Print every 10-bit network element");
  app.add_option("SCRIPT", a->script, "Script file, or - for standard input")->required();
  return [a] { return run_sim(*a); };
});

}  // namespace kron::tools
