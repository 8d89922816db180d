// kron record: create a board, run a program with it, drain its samples into one trace file while it
// runs (no size limit: the toolkit's external collection path, 003 sections 1.3 and 2.6), summarise.
// The work is recorder::record_program (src/recorder/record_session.hpp); this file parses and prints.
#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kron/core/error.hpp"
#include "recorder/options.hpp"
#include "recorder/record_session.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {

struct Args {
  std::string output = "kron.trace";
  std::string buffer = "16M";
  std::string mode = "simple";
  std::string filter = "0xffff";
  bool wait = false, huge_pages = false;
  std::vector<std::string> counters;
  unsigned lanes = board::kDefaultLanes;
  unsigned node = 0;
  bool quiet = false;
  double hold_ms = double(recorder::Recorder::kDefaultHoldMs);
  std::vector<std::string> program;
};

int run(const Args& a) {
  if (!(a.hold_ms >= 0 && a.hold_ms <= 60000))
    throw InputError::at_offset("--hold-back " + std::to_string(a.hold_ms), 0, "expected milliseconds from 0 to 60000");
  recorder::RecordOptions o;
  o.board.name = "record-" + std::to_string(::getpid());
  o.board.replace = true;
  recorder::apply_board_options(a.buffer, a.lanes, a.mode, a.filter, o.board);
  o.board.csr = board::kCsrSamplingEnabled | (a.wait ? board::kCsrWriteWait : 0);
  o.board.node = a.node;
  o.board.huge_pages = a.huge_pages;
  recorder::apply_counters(a.counters, o.board);
  o.output = a.output;
  o.program = a.program;
  o.hold_ms = a.hold_ms;

  const bool tty = !a.quiet && ::isatty(STDERR_FILENO);
  recorder::Progress progress;
  if (tty)
    progress = [](std::uint64_t records, std::uint64_t bytes, double secs) {
      fmt::print(stderr, "\rkron record: {} samples, {:.1f} MB, {:.1f} s   ", records, double(bytes) / 1e6, secs);
    };
  const recorder::RecordResult r = recorder::record_program(o, progress);
  if (tty) fmt::print(stderr, "\r\033[K");
  if (!r.board_note.empty()) fmt::print(stderr, "kron record: {}\n", r.board_note);
  const auto& t = r.totals;
  const double secs = r.seconds;
  fmt::print("kron record: {} samples in {:.2f} s ({:.0f}/s) to {}; overruns {}, overwritten {}, waits {} ({:.3f} ms); "
             "passed {} {} recorded + overruns + overwritten\n",
             r.records, secs, double(r.records) / (secs > 0 ? secs : 1), a.output, t.overruns, t.overwritten, t.waits,
             double(t.wait_ticks) * 1e3 / double(r.clock_hz), t.passed, t.exact() ? "=" : "!=");
  if (r.late)
    fmt::print(stderr, "kron record: {} samples were written late, after a sample with a later timestamp (their probe "
               "was held longer than --hold-back between its timestamp and its publication); counted in the file\n",
               r.late);
  for (const auto& p : r.problems) fmt::print(stderr, "kron record: {}\n", p);
  const int status = r.wait_status;
  if (WIFSIGNALED(status)) {
    fmt::print(stderr, "kron record: {} was killed by signal {}\n", a.program[0], WTERMSIG(status));
    return kExitFailed;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return kExitBadInput;
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    fmt::print(stderr, "kron record: {} exited with status {}\n", a.program[0], WEXITSTATUS(status));
    return kExitFailed;
  }
  return t.exact() && r.problems.empty() ? kExitOk : kExitFailed;
}

KRON_COMMAND("record", "run a program on a new board and record its samples into a trace file", 30, [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("-o,--output", a->output, "trace file to write")->capture_default_str();
  app.add_option("--buffer", a->buffer, "board memory (16M default, up to gigabytes)")->capture_default_str();
  app.add_flag("--huge-pages", a->huge_pages, "back the board with 2 MiB pages where the kernel allows (else says why not)");
  app.add_option("--mode", a->mode, "simple (keep oldest) or circular (keep newest)")->capture_default_str();
  app.add_option("--filter", a->filter, "Filter Register: groups recorded (bit n = group n)")->capture_default_str();
  app.add_flag("--wait", a->wait, "hold a probe while its lane is full (CSR Write Wait) instead of discarding");
  app.add_option("--counter", a->counters, "resource counter N=SOURCE (clock, software, page-faults, ...)");
  app.add_option("--lanes", a->lanes, "lanes (threads writing at once)")->capture_default_str();
  app.add_option("--node", a->node, "node number of the source identification")->capture_default_str();
  app.add_option("--hold-back", a->hold_ms,
                 "ms a sample is held before it is written, so that the file is in time order across threads")
      ->capture_default_str();
  app.add_flag("-q,--quiet", a->quiet, "no progress line");
  app.add_option("program", a->program, "-- PROGRAM ARGS")->required();
  return [a] { return run(*a); };
});

}  // namespace
}  // namespace kron::tools
