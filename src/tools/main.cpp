// `kron`: one binary, one subcommand per file in src/tools/ (see command.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <exception>

#include "kron/core/error.hpp"
#include "tools/command.hpp"

namespace kron::tools {
std::vector<CommandInfo>& command_table() {
  static std::vector<CommandInfo> table;
  return table;
}
}  // namespace kron::tools

int main(int argc, char** argv) {
  using namespace kron::tools;
  CLI::App app{"kron: MultiKron performance instrumentation (device models, live recorder, toolkit)", "kron"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kron ") + KRON_VERSION);
  auto& table = command_table();
  std::stable_sort(table.begin(), table.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  std::function<int()> action;
  std::vector<std::pair<CLI::App*, std::function<int()>>> actions;
  for (auto& c : table) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    actions.emplace_back(sub, c.setup(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }
  for (auto& [sub, act] : actions)
    if (sub->parsed()) action = act;
  try {
    return action ? action() : kExitBadInput;
  } catch (const kron::InputError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "kron: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "kron: {}\n", e.what());
    return kExitFailed;
  }
}
