// `kron selftest mem START COUNT | basic | sample | nite [--seconds S] [--seed N]`: the Experimenter's
// Toolkit test programs of 003 section 3.4 (mk_mem_test, test_mk, mk_sample_test, mk_nite_test) run
// against the PCI toolkit board model; `basic --board NAME` and `sample --board NAME` run against a live
// board (src/toolkit/live_selftest.hpp says why mem and nite do not). Exit 0 when they find no error, 1
// when they do, 2 for bad usage or a board they cannot run on.
#include <fmt/core.h>

#include <iostream>

#include "models/pcib/pcib.hpp"
#include "kron/core/error.hpp"
#include "toolkit/live_selftest.hpp"
#include "toolkit/selftest.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {

struct SelftestArgs {
  std::uint32_t start = 0, count = 0;
  toolkit::NiteOptions nite;
  std::string board;  // a live board (basic, sample)
};

std::function<int()> setup_selftest(CLI::App& app) {
  auto a = std::make_shared<SelftestArgs>();
  app.require_subcommand(1);
  auto* mem = app.add_subcommand("mem", "mk_mem_test: write and read back memory words START..START+COUNT-1");
  mem->add_option("START", a->start, "first memory word (0-0x3fffff)")->required();
  mem->add_option("COUNT", a->count, "number of words")->required();
  auto* basic = app.add_subcommand("basic", "test_mk: registers, a resource sample, memory, the timestamp rate");
  auto* sample = app.add_subcommand("sample", "mk_sample_test: trace and resource samples from CPU 0 then CPU 1");
  for (auto* sub : {mem, basic, sample})
    sub->add_option("--board", a->board,
                    sub == mem ? "(refused: a live board's memory is its lanes, see kron selftest --help)"
                               : "run against the live board NAME instead of the board model");
  auto* nite = app.add_subcommand("nite", "mk_nite_test: randomized soak checked against expected results");
  nite->add_option("--seconds", a->nite.seconds, "wall-clock bound (default 2)")->check(CLI::PositiveNumber);
  nite->add_option("--seed", a->nite.seed, "pseudo-random seed (default 1)");
  nite->add_option("--board", a->board, "(refused: not run against a live board, see src/toolkit/live_selftest.hpp)");
  return [a, mem, nite, &app]() -> int {
    pcib::PciBoard board;
    std::uint64_t errors = 0;
    if (!a->board.empty()) {
      if (mem->parsed() || nite->parsed()) {
        fmt::print(stderr, "kron selftest: {} is not run against a live board: {}\n", mem->parsed() ? "mem" : "nite",
                   mem->parsed() ? "its memory is the lanes' rings, written only by their threads through the probe; a "
                                   "pattern would destroy recorded samples (the memory is ordinary RAM)"
                                 : "its memory half is mem, and its register half would rewrite the Filter Register "
                                   "under the measured programs; the recorder's stress tests soak the lanes");
        return kExitBadInput;
      }
      try {
        errors = app.got_subcommand("basic") ? toolkit::live_basic_test(a->board, std::cout)
                                             : toolkit::live_sample_test(a->board, std::cout);
      } catch (const std::exception& e) {
        fmt::print(stderr, "kron selftest: {}\n", e.what());
        return kExitBadInput;
      }
      return errors ? kExitFailed : kExitOk;
    }
    try {
      if (mem->parsed())
        errors = toolkit::mem_test(board, a->start, a->count, std::cout);
      else if (nite->parsed())
        errors = toolkit::nite_test(board, a->nite, std::cout);
      else if (app.got_subcommand("basic"))
        errors = toolkit::basic_test(board, std::cout);
      else
        errors = toolkit::sample_test(board, std::cout);
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
