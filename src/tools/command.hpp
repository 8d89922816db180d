// The `kron` command's subcommand table. Each src/tools/cmd_*.cpp registers itself with one
// KRON_COMMAND(...) at namespace scope: an Args struct filled by CLI11, a run function doing the work
// through the library. main.cpp knows no subcommand by name.
#pragma once
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kron/board_ops.hpp"
#include "kron/core/text.hpp"

namespace kron::tools {

// Configures the subcommand's options on `app` and returns the action to run when it is chosen.
// The action returns the process exit status.
using Setup = std::function<std::function<int()>(CLI::App& app)>;

struct CommandInfo {
  std::string name;
  std::string summary;
  int order;  // position in `kron --help`
  Setup setup;
};

std::vector<CommandInfo>& command_table();

struct CommandRegistrar {
  CommandRegistrar(std::string name, std::string summary, int order, Setup setup) {
    command_table().push_back({std::move(name), std::move(summary), order, std::move(setup)});
  }
};

// The check of an option that fills a field of fixed width (a node number, a memory word): a value above
// `max` is refused where it is parsed, with the range and the field in the message, instead of being
// stored whole in one place and cut to the field's width in another. Text that is not a
// number is left to the option's own conversion, which refuses it.
inline CLI::Validator field_range(std::uint64_t max, std::string field) {
  return CLI::Validator(
      [max, field](std::string& text) -> std::string {
        bool too_large = false;
        if (!kron::text::parse_uint(text, max, &too_large) && too_large)
          return text + " out of range 0-" + std::to_string(max) + " (" + field + ")";
        return std::string();
      },
      "0-" + std::to_string(max));
}

// The options of every command that opens or creates a board (docs/board-format.md "Trust model"):
// --trust-board accepts a board that belongs to another user or that others may write (ERRATUM E121);
// --shm-dir the directory boards live in (ERRATUM E122). Both are exported (KRON_TRUST_BOARD, KRON_SHM_DIR)
// so that the program kron record or kron run starts attaches to the same board on the same terms.
inline void add_board_access_options(CLI::App& app) {
  app.add_flag_callback(
      "--trust-board", [] { board::set_trust_boards(true), ::setenv(board::kEnvTrustBoard, "1", 1); },
      "use a board that belongs to another user or that others may write (it can crash or "
      "mislead this command)");
  app.add_option_function<std::string>(
      "--shm-dir", [](const std::string& d) { ::setenv(board::kEnvShmDir, d.c_str(), 1); },
      "directory of the boards (default /dev/shm, or $KRON_SHM_DIR)");
}

// Exit statuses shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;    // the work ran and found a failure (a failed expect, a failed test)
inline constexpr int kExitBadInput = 2;  // bad input or usage: the message names file and offset/line

}  // namespace kron::tools

#define KRON_CAT2(a, b) a##b
#define KRON_CAT(a, b) KRON_CAT2(a, b)
#define KRON_COMMAND(name, summary, order, setup) \
  static const ::kron::tools::CommandRegistrar KRON_CAT(kron_command_, __LINE__) { name, summary, order, setup }
