// kron run --board NAME -- PROGRAM: run a program on an existing board and leave its samples there
// (read them later with kron rdsample, as 003's programs left them in the board's local memory).
#include <fmt/core.h>
#include <unistd.h>

#include <cstring>

#include "kron/core/text.hpp"
#include "recorder/board_reader.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {
struct Args {
  std::string board;
  std::vector<std::string> program;
};
int run(const Args& a) {
  // Refuse a missing or corrupt board up front; leave the command on it for kron rdsample --board.
  recorder::BoardReader::open(a.board).set_program(text::shell_command(a.program));
  ::setenv(board::kEnvBoard, a.board.c_str(), 1);
  std::vector<char*> argv;
  for (const auto& p : a.program) argv.push_back(const_cast<char*>(p.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::execvp(argv[0], argv.data());
  fmt::print(stderr, "kron run: cannot run {}: {}\n", a.program[0], std::strerror(errno));
  return kExitBadInput;
}
KRON_COMMAND("run", "run a program on an existing board, leaving the samples on the board", 32, [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--board", a->board, "board name")->required();
  add_board_access_options(app);
  app.add_option("program", a->program, "-- PROGRAM ARGS")->required();
  return [a] { return run(*a); };
});
}  // namespace
}  // namespace kron::tools
