// kron record: create a board, run a program with it, drain its samples into one trace file while it
// runs (no size limit: the toolkit's external collection path, 003 sections 1.3 and 2.6), summarise.
// With --board NAME: drain an existing board live instead, written by programs started with kron run,
// until SIGINT/SIGTERM or --until-idle. The work is recorder::record_program / record_board
// (src/recorder/record_session.hpp); this file parses and prints.
#include <fmt/core.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "kron/board_ops.hpp"
#include "functions/filter.hpp"
#include "kron/core/error.hpp"
#include "kron/format/trace_file.hpp"
#include "recorder/mpi_side.hpp"
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
  bool wait = false, huge_pages = false, sched = false;
  std::vector<std::string> counters;
  unsigned lanes = board::kDefaultLanes;
  unsigned names = board::kDefaultNameSlots;
  std::string block = "auto";
  unsigned node = 0;
  bool quiet = false;
  double hold_ms = double(recorder::Recorder::kDefaultHoldMs);
  double snapshot_interval = 0;  // --snapshot-interval SECONDS
  unsigned hist_slots = board::kDefaultHistSlots, stat_cells = board::kDefaultStatCells;
  std::vector<std::string> program;
  std::string functions_filter;  // --functions-filter FILE: the function hooks' run-time filter
  bool openmp = false;           // --openmp: OMP_TOOL_LIBRARIES=libkron_omp.so
  std::string mpi;               // --mpi[=openmpi|mpich]: one rank of an MPI job (ERRATUM E440)
  CLI::Option* mpi_opt = nullptr;
  CLI::Option* output_opt = nullptr;
  CLI::Option* node_opt = nullptr;
  std::string compress;  // --compress[=LEVEL]
  CLI::Option* compress_opt = nullptr;
  // --compress-threads N
  unsigned compress_threads = tracefile::default_compress_threads();
  std::string board;                     // --board: drain this existing board
  double until_idle = -1;                // --until-idle SECONDS
  std::vector<CLI::Option*> board_made;  // options of the board kron record creates (not with --board)
  CLI::Option* until_idle_opt = nullptr;
  CLI::Option* sched_opt = nullptr;
};

// ERRATUM E303: a recording without the TSC says why, and what a timestamp costs instead (a probe reads
// one; measured here, as the probe reads it).
void say_clock() {
  const board::ClockSource& c = board::clock_source();
  if (c.kind == board::ClockKind::Tsc) return;
  constexpr int kReads = 20000;
  std::uint64_t sink = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kReads; ++i) sink += board::ticks(c.kind);
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / kReads;
  fmt::print(stderr,
             "kron record: timestamps are CLOCK_MONOTONIC ns, not the TSC: {} (a timestamp costs {:.1f} ns "
             "here){}\n",
             c.why, ns, sink ? "" : " ");
}

// Everything kron record says goes to standard error: standard output is the program's (a tracer never
// touches the traced program's output, ERRATUM E141). With -q only errors and losses are said.
void print_summary(const recorder::RecordResult& r, const std::string& output, bool quiet, bool compressed) {
  const auto& t = r.totals;
  const double secs = r.seconds;
  if (!quiet)
    fmt::print(
        stderr,
        "kron record: {} samples in {:.2f} s ({:.0f}/s) to {}; overruns {}, overwritten {}, waits {} ({:.3f} ms); "
        "passed {} {} recorded + overruns + overwritten\n",
        r.records, secs, double(r.records) / (secs > 0 ? secs : 1), output, t.overruns, t.overwritten, t.waits,
        double(t.wait_ticks) * 1e3 / double(r.clock_hz), t.passed, t.exact() ? "=" : "!=");
  if (!quiet && compressed && r.file_bytes)
    fmt::print(stderr, "kron record: compressed {:.1f} MB of records to {:.1f} MB ({:.2f}x, {:.2f} bytes a sample)\n",
               double(r.file_raw_bytes) / 1e6, double(r.file_bytes) / 1e6,
               double(r.file_raw_bytes) / double(r.file_bytes),
               double(r.file_bytes) / double(r.records ? r.records : 1));
  // ERRATUM E141: losses are said even with -q (they are counted in the file, but a user who asked for
  // quiet must still learn that samples are missing); each cause apart, lane shortage included.
  if (const std::uint64_t lost = t.overruns + t.overwritten) {
    std::string why;
    auto part = [&](std::uint64_t n, const char* what) {
      if (n) why += fmt::format("{}{} {}", why.empty() ? "" : ", ", n, what);
    };
    part(t.overruns - std::min(t.overruns, t.no_lane), "overruns (a lane was full)");
    part(t.no_lane, "with no free lane (more threads than --lanes)");
    part(t.overwritten, "overwritten (circular buffer)");
    fmt::print(stderr, "kron record: LOST {} of {} samples: {}\n", lost, t.passed, why);
  }
  if (r.late && !quiet)
    fmt::print(stderr,
               "kron record: {} samples were written late, after a sample with a later timestamp (their probe "
               "was held longer than --hold-back between its timestamp and its publication); counted in the file\n",
               r.late);
  for (const auto& p : r.problems) fmt::print(stderr, "kron record: {}\n", p);
}

recorder::Progress progress_line(bool quiet) {
  if (quiet || !::isatty(STDERR_FILENO)) return nullptr;
  return [](std::uint64_t records, std::uint64_t bytes, double secs) {
    fmt::print(stderr, "\rkron record: {} samples, {:.1f} MB, {:.1f} s   ", records, double(bytes) / 1e6, secs);
  };
}

int run_board(const Args& a) {
  for (const CLI::Option* opt : a.board_made)
    if (opt->count())
      throw InputError::at_offset(opt->get_name(), 0,
                                  "sets up the board kron record creates; with --board the board exists (kron board "
                                  "create sets it, kron filter / csr / counters change it)");
  if (a.mpi_opt->count())
    throw InputError::at_offset("--mpi", 0, "records the rank kron record runs (kron record --mpi -- PROGRAM)");
  if (a.sched_opt->count())
    throw InputError::at_offset("--sched", 0,
                                "records the threads of the program kron record runs (kron record --sched -- PROGRAM); "
                                "with --board the writers are other programs");
  if (!a.program.empty())
    throw InputError::at_offset("--board " + a.board, 0,
                                "drains a board written by other programs (kron run --board); give no program");
  if (a.until_idle_opt->count() && !(a.until_idle >= 0 && a.until_idle <= 86400))
    throw InputError::at_offset("--until-idle " + std::to_string(a.until_idle), 0, "expected seconds from 0 to 86400");
  recorder::BoardRecordOptions o;
  o.board = a.board;
  o.output = a.output;
  o.hold_ms = a.hold_ms;
  o.until_idle_s = a.until_idle_opt->count() ? a.until_idle : -1;
  o.snapshot_interval_s = a.snapshot_interval;
  o.compress_level = a.compress_opt->count() ? recorder::parse_compress_level(a.compress) : 0;
  o.compress_threads = a.compress_threads;
  const recorder::Progress progress = progress_line(a.quiet);
  const recorder::BoardRecordResult r = recorder::record_board(o, progress);
  if (progress) fmt::print(stderr, "\r\033[K");
  print_summary(r, a.output, a.quiet, a.compress_opt->count() > 0);
  if (r.earlier)
    fmt::print(stderr,
               "kron record: {} samples were taken off board {} by an earlier drainer; they are not in this "
               "file (nor in its passed count)\n",
               r.earlier, a.board);
  if (r.left)
    fmt::print(stderr,
               "kron record: {} samples published after the last pass stay on board {} for the next drainer "
               "(not in this file, nor in its passed count)\n",
               r.left, a.board);
  if (!a.quiet)
    fmt::print(
        stderr, "kron record: board {}: {}\n", a.board,
        r.signal ? fmt::format("stopped by signal {}", r.signal) : fmt::format("no writer for {} s", a.until_idle));
  return r.totals.exact() && r.problems.empty() ? kExitOk : kExitFailed;
}

// A library of kron's beside the kron binary: BUILD/lib in a build tree, PREFIX/lib once installed.
std::string beside_kron(const std::string& lib, const std::string& option) {
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string dir = n > 0 ? std::string(self, static_cast<std::size_t>(n)) : std::string();
  dir = dir.substr(0, dir.rfind('/') + 1);
  for (const std::string rel : {"lib/", "../lib/"})
    if (::access((dir + rel + lib).c_str(), R_OK) == 0) return dir + rel + lib;
  throw InputError::at_offset(
      option, 0, lib + " is not beside kron (" + dir + "lib/, " + dir + "../lib/): build or install kron with it");
}

// ---- kron record --mpi: one rank of an MPI job (ERRATUM E440) --------------------------------------------
// The launcher (mpirun, mpiexec, srun) starts `kron record --mpi -o PREFIX -- PROGRAM` once per rank; the
// rank and the world's size are in the environment it sets (ERRATUM E442). None: a singleton, rank 0.
recorder::mpiside::EnvRank mpi_rank_from_env() {
  recorder::mpiside::EnvRank e = recorder::mpiside::rank_from_env();
  if (!e.problem.empty()) throw InputError::at_offset("--mpi", 0, e.problem);
  return e;
}

// The interposer of the program's MPI: Open MPI and MPICH have different ABIs (ERRATUM E442).
std::string mpi_library(const std::string& flavour, const recorder::mpiside::EnvRank& m) {
  std::string f = flavour;
  if (f.empty() || f == "auto") f = m.var == "PMI_RANK" ? "mpich" : "openmpi";
  if (f == "openmpi") return beside_kron("libkron_mpi.so", "--mpi");
  if (f == "mpich") return beside_kron("libkron_mpi_mpich.so", "--mpi=mpich");
  throw InputError::at_offset("--mpi=" + flavour, 0, "expected openmpi or mpich (or nothing: from the launcher)");
}

// After the rank's program ended: its side area's records into the file, the header's rank fields, its node's
// name entry, and how it ended (ERRATUM E441). The side area is removed after.
struct MpiSession {
  std::string side;  // the side area's path
  recorder::mpiside::EnvRank env;
  std::uint32_t node = 0;
  std::string note;  // what kron record says about the rank's end ("" : it reached MPI_Finalize)
  std::string problem;
  ~MpiSession() {
    if (!side.empty()) ::unlink(side.c_str());
  }
  void finish(tracefile::FileHeader& fh, tracefile::Writer& w, std::vector<record::NameRecord>& names,
              int wait_status) {
    recorder::mpiside::Contents c;
    try {
      c = recorder::mpiside::read(side);
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (!c.problem.empty()) problem = c.problem;
    // Read: removed now, before the board is (a kron record killed after this leaves no side area without a
    // board; one killed before leaves both, for kron board rm --stale).
    ::unlink(side.c_str());
    side.clear();
    const bool started = c.state != static_cast<std::uint32_t>(recorder::mpiside::State::Created);
    fh.mpi_rank = started ? c.rank : static_cast<std::uint32_t>(env.rank);
    fh.mpi_world_size = started ? c.world_size : static_cast<std::uint32_t>(std::max(env.size, env.rank + 1));
    w.append_mpi(c.calls);
    w.append_clock(c.offsets);
    if (WIFSIGNALED(wait_status)) fh.end_signal = static_cast<std::uint16_t>(WTERMSIG(wait_status));
    if (c.state != static_cast<std::uint32_t>(recorder::mpiside::State::Finalized)) {
      fh.merge_flags |= tracefile::kRankEndedEarly;
      if (c.state == static_cast<std::uint32_t>(recorder::mpiside::State::Aborted))
        fh.merge_flags |= tracefile::kRankAborted;
      const auto in_flight = std::count_if(c.calls.begin(), c.calls.end(),
                                           [](const auto& m) { return m.h.flags & record::kMpiIncomplete; });
      note =
          fmt::format("rank {} {}{}: its {} completed MPI calls{} and its samples up to then are in the file",
                      fh.mpi_rank, recorder::mpiside::state_text(c.state),
                      WIFSIGNALED(wait_status) ? fmt::format(" (killed by signal {})", WTERMSIG(wait_status))
                      : WIFEXITED(wait_status) ? fmt::format(" (exit status {})", WEXITSTATUS(wait_status))
                                               : std::string(),
                      c.calls.size() - static_cast<std::size_t>(in_flight),
                      in_flight ? fmt::format(" ({} more in flight, flagged incomplete)", in_flight) : std::string());
    }
    record::NameRecord n{};
    n.h.kind = record::RecordKind::Names;
    n.h.size = sizeof n;
    n.name_kind = record::NameKind::Node;
    n.source = board::source_id(node, started ? c.pid : 0);
    n.thread = fh.mpi_rank;
    std::snprintf(n.name, sizeof n.name, "%s", started ? c.host.c_str() : "");
    std::snprintf(n.function, sizeof n.function, "rank %u of %u", fh.mpi_rank, fh.mpi_world_size);
    if (started) names.push_back(n);
  }
};

int run(const Args& a) {
  if (!(a.hold_ms >= 0 && a.hold_ms <= 60000))
    throw InputError::at_offset("--hold-back " + std::to_string(a.hold_ms), 0, "expected milliseconds from 0 to 60000");
  if (!(a.snapshot_interval >= 0 && a.snapshot_interval <= 86400))
    throw InputError::at_offset("--snapshot-interval " + std::to_string(a.snapshot_interval), 0,
                                "expected seconds from 0 to 86400");
  if (!a.board.empty()) return run_board(a);
  if (a.program.empty()) throw InputError::at_offset("kron record", 0, "give -- PROGRAM ARGS, or --board NAME");
  if (a.until_idle_opt->count())
    throw InputError::at_offset("--until-idle", 0, "applies to --board NAME (a program's recording ends with it)");
  if (!a.functions_filter.empty()) {  // checked here, so that a bad file stops before the program runs
    functions::Filter f;
    functions::FilterError e;
    if (!functions::load_filter(a.functions_filter.c_str(), f, e))
      throw InputError::at_line(e.file, static_cast<unsigned>(e.line), 0, e.what);
    char* full = ::realpath(a.functions_filter.c_str(), nullptr);
    ::setenv("KRON_FUNCTIONS_FILTER", full ? full : a.functions_filter.c_str(), 1);  // the program's hooks read it
    std::free(full);
  }
  if (a.openmp)
    ::setenv("OMP_TOOL_LIBRARIES", beside_kron("libkron_omp.so", "--openmp").c_str(), 1);  // LLVM's libomp (OMPT)
  recorder::RecordOptions o;
  // Unique in every PID namespace, created O_EXCL: never another kron record's board (ERRATUM E122).
  o.board.name = board::unique_name("record");
  recorder::apply_board_options(a.buffer, a.lanes, a.block, a.mode, a.filter, o.board);
  o.board.csr = board::kCsrSamplingEnabled | (a.wait ? board::kCsrWriteWait : 0);
  o.board.node = a.node;
  o.board.huge_pages = a.huge_pages;
  o.board.name_slots = a.names;
  o.board.hist_slots = a.hist_slots;
  o.board.stat_cells = a.stat_cells;
  recorder::apply_counters(a.counters, o.board);
  o.output = a.output;
  o.program = a.program;
  o.hold_ms = a.hold_ms;
  o.compress_level = a.compress_opt->count() ? recorder::parse_compress_level(a.compress) : 0;
  o.compress_threads = a.compress_threads;
  o.sched = a.sched;
  o.snapshot_interval_s = a.snapshot_interval;
  std::unique_ptr<MpiSession> mpi;
  if (a.mpi_opt->count()) {
    if (a.node_opt->count())
      throw InputError::at_offset("--node", 0, "with --mpi the node number is the rank's (ERRATUM E201)");
    mpi = std::make_unique<MpiSession>();
    mpi->env = mpi_rank_from_env();
    const std::string lib = mpi_library(a.mpi, mpi->env);
    mpi->node = static_cast<std::uint32_t>(mpi->env.rank) & 1023u;  // ERRATUM E201
    o.board.node = mpi->node;
    o.output = (a.output_opt->count() ? a.output : std::string("kron-mpi")) + ".rank-" + std::to_string(mpi->env.rank) +
               ".kron";
    mpi->side = recorder::mpiside::side_path(o.board.name);
    recorder::mpiside::create(mpi->side);
    const char* preload = std::getenv("LD_PRELOAD");
    o.program_env = {{"LD_PRELOAD", preload && *preload ? lib + ":" + preload : lib}, {"KRON_MPI_SIDE", mpi->side}};
    o.mpi_rank = static_cast<std::uint32_t>(mpi->env.rank);
    o.mpi_world_size = static_cast<std::uint32_t>(std::max(mpi->env.size, mpi->env.rank + 1));
    o.stop_grace_s = 0.5;  // ERRATUM E441: within Open MPI's second between its SIGTERM and its SIGKILL
    o.before_finish = [m = mpi.get()](tracefile::FileHeader& fh, tracefile::Writer& w,
                                      std::vector<record::NameRecord>& names,
                                      int status) { m->finish(fh, w, names, status); };
  }

  const recorder::Progress progress = progress_line(a.quiet);
  const recorder::RecordResult r = recorder::record_program(o, progress);
  if (progress) fmt::print(stderr, "\r\033[K");
  if (!a.quiet && !r.board_note.empty()) fmt::print(stderr, "kron record: {}\n", r.board_note);
  if (!a.quiet) say_clock();
  print_summary(r, o.output, a.quiet, a.compress_opt->count() > 0);
  if (a.sched && !a.quiet)
    fmt::print(stderr, "kron record: {} context switches of the program's threads (--sched)\n", r.sched_switches);
  if (mpi && !mpi->problem.empty()) fmt::print(stderr, "kron record: {}\n", mpi->problem);
  if (mpi && !mpi->note.empty()) fmt::print(stderr, "kron record: {}\n", mpi->note);
  if (r.sched_lost)
    fmt::print(stderr, "kron record: LOST {} context switches: the kernel's perf buffer was full (--sched)\n",
               r.sched_lost);
  const auto& t = r.totals;
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

KRON_COMMAND(
    "record", "run a program on a new board (or drain an existing one live) into a trace file", 30, [](CLI::App& app) {
      auto a = std::make_shared<Args>();
      a->output_opt = app.add_option("-o,--output", a->output, "trace file to write (with --mpi: its prefix)")
                          ->capture_default_str();
      // The board kron record creates: refused with --board.
      auto made = [a](CLI::Option* opt) { a->board_made.push_back(opt); };
      made(app.add_option("--buffer", a->buffer, "board memory (16M default, up to gigabytes)")->capture_default_str());
      made(app.add_flag("--huge-pages", a->huge_pages,
                        "back the board with 2 MiB pages where the kernel allows (else says why not)"));
      made(app.add_option("--mode", a->mode, "simple (keep oldest) or circular (keep newest)")->capture_default_str());
      made(app.add_option("--filter", a->filter, "Filter Register: groups recorded (bit n = group n)")
               ->capture_default_str());
      a->sched_opt =
          app.add_flag("--sched", a->sched,
                       "also record the program's context switches (perf_event: kernel.perf_event_paranoid 2 or below, "
                       "or CAP_PERFMON): kron export shows them as thread state tracks");
      app.add_option("--functions-filter", a->functions_filter,
                     "a program built with the function hooks (kron-functions.pc) leaves out the functions this "
                     "filter file excludes (Score-P syntax; docs/functions.md)");
      app.add_flag("--openmp", a->openmp,
                   "record an OpenMP program's parallel regions, tasks, barriers and locks through OMPT (LLVM's "
                   "libomp: OMP_TOOL_LIBRARIES=libkron_omp.so; docs/functions.md)");
      a->mpi_opt =
          app.add_option("--mpi", a->mpi,
                         "record one rank of an MPI job (mpirun -np N kron record --mpi -o PREFIX -- PROGRAM): "
                         "its probes, MPI calls and clock measurements into PREFIX.rank-R.kron; "
                         "--mpi=openmpi or mpich when the launcher does not tell")
              ->expected(0, 1);
      made(app.add_flag("--wait", a->wait,
                        "hold a probe while its lane is full (CSR Write Wait) instead of discarding"));
      made(app.add_option("--counter", a->counters, "resource counter N=SOURCE (clock, software, page-faults, ...)"));
      made(app.add_option("--lanes", a->lanes, "lane headers: threads writing at once (memory is shared by all)")
               ->capture_default_str());
      made(app.add_option("--names", a->names,
                          "name table entries: named probes' sites and thread names (256 bytes each)")
               ->check(CLI::Range(0u, board::kMaxNameSlots))
               ->capture_default_str());
      made(app.add_option("--block-size", a->block,
                          "bytes a lane takes from the board's pool at a time (auto, or 4K-1M)")
               ->capture_default_str());
      a->node_opt = app.add_option("--node", a->node, "node number of the source identification");
      made(a->node_opt->capture_default_str()->check(field_range(recorder::kMaxNode, recorder::kNodeField)));
      app.add_option(
          "--board", a->board,
          "drain this existing board live (kron board create; writers: kron run --board) until SIGINT/SIGTERM");
      add_board_access_options(app);
      a->until_idle_opt = app.add_option("--until-idle", a->until_idle,
                                         "with --board: end once no writer has been attached for SECONDS");
      app.add_option("--hold-back", a->hold_ms,
                     "ms a sample is held before it is written, so that the file is in time order across threads")
          ->capture_default_str();
      a->compress_opt = app.add_option("--compress", a->compress,
                                       "zstd-compress the file in 1 MiB chunks, --compress=LEVEL 1-19 (1 when omitted)")
                            ->expected(0, 1);
      app.add_option("--compress-threads", a->compress_threads,
                     "threads that compress for --compress, the file written in order (0: the drain compresses); "
                     "default half the CPUs, 1-4")
          ->capture_default_str()
          ->check(CLI::Range(0u, tracefile::kMaxCompressThreads));
      app.add_option("--snapshot-interval", a->snapshot_interval,
                     "seconds between histogram and virtual counter snapshots in the file (0: the final one only)")
          ->capture_default_str();
      made(app.add_option("--histograms", a->hist_slots, "histogram names the board holds (64 bytes each)")
               ->capture_default_str()
               ->check(CLI::Range(0u, board::kMaxHistSlots)));
      made(app.add_option("--stat-cells", a->stat_cells,
                          "statistics cells of 8 KiB (one per thread, histogram or 1024 virtual counters, and phase)")
               ->capture_default_str()
               ->check(CLI::Range(0u, board::kMaxStatCells)));
      app.add_flag("-q,--quiet", a->quiet,
                   "nothing on standard error but errors and losses (no summary, no progress line)");
      app.add_option("program", a->program, "-- PROGRAM ARGS (or --board NAME)");
      return [a] { return run(*a); };
    });

}  // namespace
}  // namespace kron::tools
