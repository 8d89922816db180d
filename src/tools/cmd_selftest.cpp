// `kron selftest mem START COUNT | basic | sample | nite [--seconds S] [--seed N]`: the Experimenter's
// Toolkit test programs of 003 section 3.4 (mk_mem_test, test_mk, mk_sample_test, mk_nite_test) run
// against the PCI toolkit board model. Exit 0 when they find no error, 1 when they do, 2 for bad usage.
#include <fmt/core.h>

#include <iostream>

#include "models/pcib/pcib.hpp"
#include "toolkit/selftest.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {

struct SelftestArgs {
  std::uint32_t start = 0, count = 0;
  toolkit::NiteOptions nite;
};

std::function<int()> setup_selftest(CLI::App& app) {
auto a = std::make_shared<SelftestArgs>();
app.require_subcommand(1);
auto* mem = app.add_subcommand("mem", "mk_mem_test: write and read back memory words START..START+COUNT-1");
mem->add_option("START", a->start, "first memory word (0-0x3fffff)")->required();
mem->add_option("COUNT", a->count, "number of words")->required();
app.add_subcommand("basic", "test_mk: registers, a resource sample, memory, the timestamp rate");
app.add_subcommand("sample", "mk_sample_test: trace and resource samples from CPU 0 then CPU 1");
auto* nite = app.add_subcommand("nite", "mk_nite_test: randomized soak checked against expected results");
nite->add_option("--seconds", a->nite.seconds, "wall-clock bound (default 2)")->check(CLI::PositiveNumber);
nite->add_option("--seed", a->nite.seed, "pseudo-random seed (default 1)");
return [a, mem, nite, &app]() -> int {
  pcib::PciBoard board;
  std::uint64_t errors = 0;
  try {
    if (mem->parsed()) errors = toolkit::mem_test(board, a->start, a->count, std::cout);
    else if (nite->parsed()) errors = toolkit::nite_test(board, a->nite, std::cout);
    else if (app.got_subcommand("basic")) errors = toolkit::basic_test(board, std::cout);
    else errors = toolkit::sample_test(board, std::cout);
  } catch (const sim::ConfigError& e) {
    fmt::print(stderr, "kron selftest: {}\n", e.what());
    return kExitBadInput;
  }
  return errors ? kExitFailed : kExitOk;
};
}

}  // namespace

KRON_COMMAND("selftest", "Run the toolkit's board test programs (003 3.4) against the PCI board model", 60,
             setup_selftest);

}  // namespace kron::tools
