// kron top: watch a running program live. `kron top -- PROGRAM ARGS` records it as kron record does
// (kron top is the board's drainer; the trace file is the same) and shows it; `kron top --board NAME`
// reads an existing board without changing it. About twice a second: the header (fill, drain, samples,
// losses), processes and threads, named scopes over the last refresh, latency histograms per phase and
// virtual counters. On a terminal a full screen (top_screen.hpp, ncurses); otherwise, or with --once /
// --json, plain or JSON frames on standard output. The frames come from one model (src/top/model.hpp).
#include <fmt/core.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "kron/board_ops.hpp"
#include "kron/core/error.hpp"
#include "kron/core/text.hpp"
#include "recorder/options.hpp"
#include "recorder/record_session.hpp"
#include "tools/command.hpp"
#include "tools/top_screen.hpp"
#include "top/model.hpp"

namespace kron::tools {
namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string board;
  std::vector<std::string> program;
  bool once = false, json = false, sched = false, wait = false;
  double interval = 0.5;
  unsigned frames = 0, width = 0;
  std::string output = "kron.trace", program_output, buffer = "16M", sort = "count";
  unsigned lanes = board::kDefaultLanes;
};

volatile sig_atomic_t g_quit = 0;
void note_quit(int) { g_quit = 1; }
void quit_on_signals() {
  struct sigaction sa {};
  sa.sa_handler = note_quit;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

top::SortKey parse_sort(const std::string& s) {
  for (auto k : {top::SortKey::Rate, top::SortKey::Mean, top::SortKey::P50, top::SortKey::P99, top::SortKey::Max,
                 top::SortKey::Name})
    if (s == top::sort_name(k) || (s == "count" && k == top::SortKey::Rate)) return k;
  throw InputError::at_offset("--sort " + s, 0, "expected count, mean, p50, p99, max or name");
}

// Where the frames go: the full screen, or plain / JSON frames on standard output.
class Display {
 public:
  explicit Display(const Args& a) : a_(a) {
    c.sort = parse_sort(a.sort);
    if (a.once || a.json || !::isatty(STDOUT_FILENO)) return;
    std::string why;
    screen_ = TopScreen::open(&why);
    if (!screen_) fmt::print(stderr, "kron top: {}: plain frames instead\n", why);
  }
  bool full_screen() const { return screen_ != nullptr; }
  void close() { screen_.reset(); }  // the terminal given back: what is printed next stays on it
  bool done() const { return c.quit || g_quit || printed_all(); }
  // --once or --frames N: the plain frames asked for are printed.
  bool printed_all() const { return !screen_ && (a_.once ? printed_ >= 1 : a_.frames && printed_ >= a_.frames); }
  // Keys typed meanwhile; the screen drawn again when they changed something.
  void poll() {
    if (screen_ && screen_->keys(c) && have_) screen_->draw(shown_, c);
  }
  void show(top::Frame f) {
    if (screen_) {
      if (!c.paused || !have_) shown_ = std::move(f), have_ = true;
      screen_->draw(shown_, c);
    } else if (!done()) {
      print(f);
    }
  }
  // The last frame, with what ended the watch first among its notes: stays on the screen until q; printed
  // once more as a plain frame (it covers the last part of a refresh) unless --once / --frames are printed.
  void last(top::Frame f, const std::string& why) {
    f.notes.insert(f.notes.begin(), why);
    if (!screen_) {
      if (!printed_all()) print(f);
      return;
    }
    c.paused = false;
    show(std::move(f));
    while (!c.quit && !g_quit) {
      if (screen_->wait_key(200)) poll();
    }
  }

 private:
  void print(const top::Frame& f) {
    ++printed_;
    std::string out = a_.json ? top::to_json(f) : top::plain_text(top::layout(f, width())) + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
  }
  unsigned width() const {
    if (a_.width) return a_.width;
    winsize ws{};
    if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col) return ws.ws_col;
    return 120;
  }
  const Args& a_;
  std::unique_ptr<TopScreen> screen_;
  top::Frame shown_;
  bool have_ = false;
  unsigned printed_ = 0;

 public:
  TopControls c;
};

// The board's file now (its inode), 0 when it is gone: kron board rm, or the program's recording ended.
ino_t board_inode(const std::string& name) {
  struct stat st {};
  return ::stat(board::board_path(name).c_str(), &st) == 0 ? st.st_ino : 0;
}

// Waits until `until`, reading keys meanwhile; false when the watch is to end.
bool wait_until(Display& d, Clock::time_point until) {
  while (Clock::now() < until && !d.done()) {
    d.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !d.done();
}

int run_board(const Args& a, Display& d) {
  recorder::BoardReader r = recorder::BoardReader::open(a.board);
  const ino_t ino = board_inode(a.board);
  top::Watcher w({"", true, a.sched});
  w.attach(r);
  w.feed_snapshot(r);
  top::Frame f = w.frame(r, d.c.sort, d.c.totals, d.c.filter);  // the baseline of the first rates
  quit_on_signals();
  const auto step = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.interval));
  for (auto next = Clock::now() + step; wait_until(d, next); next += step) {
    if (board_inode(a.board) != ino) {
      d.last(std::move(f),
             fmt::format("board {} was removed (or replaced): the last frame stays", text::terminal_safe(a.board)));
      return kExitOk;
    }
    w.feed_snapshot(r);
    f = w.frame(r, d.c.sort, d.c.totals, d.c.filter);
    if (!r.problems().empty()) f.notes.push_back("the board's lane memory is damaged: kron status --board says where");
    d.show(f);
  }
  return kExitOk;
}

std::string how_it_ended(const std::string& name, int status, bool quit) {
  if (quit) return fmt::format("{} was stopped (q)", name);
  if (WIFSIGNALED(status)) return fmt::format("{} was killed by signal {}", name, WTERMSIG(status));
  return fmt::format("{} exited with status {}", name, WEXITSTATUS(status));
}

int run_program(const Args& a, Display& d) {
  recorder::RecordOptions o;
  o.board.name = board::unique_name("top");  // O_EXCL, unique: never another's board (ERRATUM E122)
  recorder::apply_board_options(a.buffer, a.lanes, "auto", "simple", "0xffff", o.board);
  o.board.csr = board::kCsrSamplingEnabled | (a.wait ? board::kCsrWriteWait : 0);
  o.output = a.output;
  o.program = a.program;
  o.sched = a.sched;
  // ERRATUM E432: the full screen owns the terminal: the program's output goes to a file beside the trace.
  o.program_output = !a.program_output.empty() ? a.program_output : d.full_screen() ? a.output + ".out" : "";
  top::Watcher w({text::shell_command(a.program), false, a.sched});
  bool attached = false, quit_sent = false;
  auto last = Clock::now();
  const auto step = std::chrono::duration<double>(a.interval);
  top::Frame final_frame;
  o.tap = [&](const recorder::LaneView& v, std::span<const std::uint8_t> recs, std::uint64_t n) { w.feed(v, recs, n); };
  o.watch = [&](recorder::BoardReader& r, bool final) {
    if (!attached) w.attach(r), attached = true;
    d.poll();
    if ((d.c.quit || g_quit) && !quit_sent) quit_sent = true, ::kill(::getpid(), SIGTERM);  // forwarded to it
    const auto now = Clock::now();
    // The drain calls about every 250 ms: a frame at the first call past 80% of the interval.
    if (!final && now - last < step * 0.8) return;
    last = now;
    top::Frame f = w.frame(r, d.c.sort, d.c.totals, d.c.filter);
    if (final)
      final_frame = std::move(f);
    else
      d.show(std::move(f));
  };
  const recorder::RecordResult r = recorder::record_program(o, nullptr);
  quit_on_signals();  // the program is gone: a signal now ends the last frame's wait
  const auto& t = r.totals;
  std::string why = how_it_ended(a.program[0], r.wait_status, quit_sent) +
                    fmt::format("; {} samples in {:.1f} s to {}", r.records, r.seconds, a.output);
  if (!o.program_output.empty()) why += "; its output is in " + o.program_output;
  d.last(std::move(final_frame), why);
  d.close();
  const std::uint64_t lost = t.overruns + t.overwritten;
  fmt::print(stderr, "kron top: {}\n", why);
  if (lost)
    fmt::print(stderr, "kron top: LOST {} of {} samples (overruns {}, overwritten {})\n", lost, t.passed, t.overruns,
               t.overwritten);
  for (const auto& p : r.problems) fmt::print(stderr, "kron top: {}\n", p);
  const int st = r.wait_status;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127) return kExitBadInput;
  const bool program_ok = quit_sent || (WIFEXITED(st) && WEXITSTATUS(st) == 0);
  return program_ok && t.exact() && r.problems.empty() ? kExitOk : kExitFailed;
}

int run(const Args& a) {
  if (a.board.empty() == a.program.empty())
    throw InputError::at_offset("kron top", 0, "give -- PROGRAM ARGS (recorded and shown), or --board NAME (shown)");
  if (!(a.interval >= 0.1 && a.interval <= 3600))
    throw InputError::at_offset("--interval " + std::to_string(a.interval), 0, "expected seconds from 0.1 to 3600");
  Display d(a);
  return a.board.empty() ? run_program(a, d) : run_board(a, d);
}

KRON_COMMAND(
    "top", "watch a running program live: threads, scopes, histograms, counters (or --board NAME)", 34,
    [](CLI::App& app) {
      auto a = std::make_shared<Args>();
      app.add_option("--board", a->board, "watch this existing board, read-only (kron run writes it)");
      app.add_option("-o,--output", a->output, "with a program: the trace file it is recorded into")
          ->capture_default_str();
      app.add_option("--program-output", a->program_output,
                     "with a program: file for its standard output and error (default on the full "
                     "screen: OUTPUT.out; else they stay on the terminal)");
      app.add_option("--buffer", a->buffer, "with a program: board memory")->capture_default_str();
      app.add_option("--lanes", a->lanes, "with a program: lane headers (threads writing at once)")
          ->capture_default_str();
      app.add_flag("--wait", a->wait,
                   "with a program: hold a probe while its lane is full (CSR Write Wait), as kron record --wait");
      app.add_option("--interval", a->interval, "seconds between refreshes")->capture_default_str();
      app.add_flag("--once", a->once, "one plain frame after one interval, then only the recording");
      app.add_flag("--json", a->json, "JSON frames, one a line (docs/tools.md \"kron top\")");
      app.add_option("--frames", a->frames, "plain or JSON frames: stop showing after N (0: no limit)");
      app.add_option("--width", a->width, "plain frames: columns (default the terminal's, or 120)");
      app.add_option("--sort", a->sort, "scopes sorted by count, mean, p50, p99, max or name")->capture_default_str();
      app.add_flag("--sched", a->sched,
                   "on-CPU share per thread; with a program, its context switches go into the file too "
                   "(kron record --sched)");
      add_board_access_options(app);
      app.add_option("program", a->program, "-- PROGRAM ARGS (or --board NAME)");
      return [a] { return run(*a); };
    });

}  // namespace
}  // namespace kron::tools
