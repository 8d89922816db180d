// kron record: create a board, run a program with it, drain its samples into one trace file while it
// runs (no size limit: the toolkit's external collection path, 003 sections 1.3 and 2.6), summarise.
#include <fmt/core.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "kron/core/error.hpp"
#include "recorder/options.hpp"
#include "recorder/recorder.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {

struct Args {
  std::string output = "kron.trace";
  std::string buffer = "16M";
  std::string mode = "simple";
  std::string filter = "0xffff";
  bool wait = false;
  std::vector<std::string> counters;
  unsigned lanes = board::kDefaultLanes;
  unsigned node = 0;
  bool quiet = false;
  double hold_ms = double(recorder::Recorder::kDefaultHoldMs);
  std::vector<std::string> program;
};

volatile sig_atomic_t g_child = 0;
void forward(int sig) {
  if (g_child > 0) ::kill(g_child, sig);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run(const Args& a) {
  if (!(a.hold_ms >= 0 && a.hold_ms <= 60000))
    throw InputError::at_offset("--hold-back " + std::to_string(a.hold_ms), 0, "expected milliseconds from 0 to 60000");
  board::CreateOptions o;
  o.name = "record-" + std::to_string(::getpid());
  o.replace = true;
  recorder::apply_board_options(a.buffer, a.lanes, a.mode, a.filter, o);
  o.csr = board::kCsrSamplingEnabled | (a.wait ? board::kCsrWriteWait : 0);
  o.node = a.node;
  recorder::apply_counters(a.counters, o);

  std::string err;
  board::Mapping created = board::Mapping::create(o, &err);
  if (!created) throw std::runtime_error(err);
  created = board::Mapping{};
  recorder::BoardReader reader = recorder::BoardReader::open(o.name);
  struct Unlink {
    std::string name;
    ~Unlink() {
      std::string e;
      board::unlink(name, &e);
    }
  } unlink_at_end{o.name};

  tracefile::FileHeader fh = reader.file_header();
  std::string cmdline;
  for (const auto& p : a.program) cmdline += (cmdline.empty() ? "" : " ") + p;
  tracefile::set_program(fh, cmdline);
  tracefile::Writer writer(a.output, fh);
  recorder::Recorder rec(reader, writer,
                         static_cast<std::uint64_t>(a.hold_ms * 1e-3 * double(reader.header().clock_hz)));
  reader.set_drainer(true);

  struct sigaction sa {};
  sa.sa_handler = forward;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (child == 0) {
    ::setenv(board::kEnvBoard, o.name.c_str(), 1);
    ::setenv(board::kEnvNode, std::to_string(a.node).c_str(), 1);
    std::vector<char*> argv;
    for (const auto& p : a.program) argv.push_back(const_cast<char*>(p.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    fmt::print(stderr, "kron record: cannot run {}: {}\n", a.program[0], std::strerror(errno));
    ::_exit(127);
  }
  g_child = child;
  const bool tty = !a.quiet && ::isatty(STDERR_FILENO);
  auto last_progress = t0;
  int status = 0;
  for (;;) {
    const std::uint64_t n = rec.drain_once();
    const pid_t w = ::waitpid(child, &status, WNOHANG);
    if (w == child) break;
    if (tty && std::chrono::steady_clock::now() - last_progress > std::chrono::milliseconds(250)) {
      last_progress = std::chrono::steady_clock::now();
      fmt::print(stderr, "\rkron record: {} samples, {:.1f} MB, {:.1f} s   ", rec.records(), double(rec.bytes()) / 1e6,
                 seconds_since(t0));
    }
    // Busy board: come back at once; idle: poll every 2 ms.
    if (n < 1024) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  g_child = 0;
  rec.drain_once(true);  // what the program published before it ended, and everything held
  rec.drain_once(true);  // and lanes freed by the pass before
  reader.set_drainer(false);
  const double secs = seconds_since(t0);
  rec.finish(fh);
  if (tty) fmt::print(stderr, "\r\033[K");
  const auto& t = rec.totals();
  fmt::print("kron record: {} samples in {:.2f} s ({:.0f}/s) to {}; overruns {}, overwritten {}, waits {} ({:.3f} ms); "
             "passed {} {} recorded + overruns + overwritten\n",
             rec.records(), secs, double(rec.records()) / (secs > 0 ? secs : 1), a.output, t.overruns, t.overwritten,
             t.waits, double(t.wait_ticks) * 1e3 / double(reader.header().clock_hz), t.passed, t.exact() ? "=" : "!=");
  if (rec.late())
    fmt::print(stderr, "kron record: {} samples were written late, after a sample with a later timestamp (their probe "
               "was held longer than --hold-back between its timestamp and its publication); counted in the file\n",
               rec.late());
  for (const auto& p : reader.problems()) fmt::print(stderr, "kron record: {}\n", p);
  if (WIFSIGNALED(status)) {
    fmt::print(stderr, "kron record: {} was killed by signal {}\n", a.program[0], WTERMSIG(status));
    return kExitFailed;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return kExitBadInput;
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    fmt::print(stderr, "kron record: {} exited with status {}\n", a.program[0], WEXITSTATUS(status));
    return kExitFailed;
  }
  return t.exact() && reader.problems().empty() ? kExitOk : kExitFailed;
}

KRON_COMMAND("record", "run a program on a new board and record its samples into a trace file", 30, [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("-o,--output", a->output, "trace file to write")->capture_default_str();
  app.add_option("--buffer", a->buffer, "board memory (16M default, up to gigabytes)")->capture_default_str();
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
