// kron board create|ls|rm: boards (named shared-memory segments) that outlive the programs using them,
// as the toolkit board of 003 keeps its local memory until it is read.
#include <dirent.h>
#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "kron/core/error.hpp"
#include "kron/core/text.hpp"
#include "recorder/board_reader.hpp"
#include "recorder/mpi_side.hpp"
#include "recorder/options.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {

struct CreateArgs {
  std::string name, buffer = "16M", mode = "simple", filter = "0xffff", perms = "0600";
  bool wait = false, replace = false, disabled = false, huge_pages = false;
  std::vector<std::string> counters;
  unsigned lanes = board::kDefaultLanes, node = 0;
  unsigned hist_slots = board::kDefaultHistSlots, stat_cells = board::kDefaultStatCells;
  std::string block = "auto";
};

int create(const CreateArgs& a) {
  board::CreateOptions o;
  o.name = a.name;
  recorder::apply_board_options(a.buffer, a.lanes, a.block, a.mode, a.filter, o);
  const auto perms = kron::text::parse_uint(a.perms.size() > 1 && a.perms[0] == '0' ? a.perms.substr(1) : a.perms, 777);
  if (!perms) throw InputError::at_offset("--perms " + a.perms, 0, "expected octal digits such as 0600");
  unsigned oct = 0;  // the digits were read as decimal: reinterpret as octal
  for (char c : std::to_string(*perms)) {
    if (c > '7') throw InputError::at_offset("--perms " + a.perms, 0, "expected octal digits such as 0600");
    oct = oct * 8 + static_cast<unsigned>(c - '0');
  }
  // Mode 0000 is what a board has while its creator fills it (ERRATUM E400): the owner keeps read and write.
  if ((oct & 0600) != 0600)
    throw InputError::at_offset("--perms " + a.perms, 0, "the owner must read and write its board (0600 at least)");
  o.perms = oct;
  o.csr = (a.disabled ? 0 : board::kCsrSamplingEnabled) | (a.wait ? board::kCsrWriteWait : 0);
  o.node = a.node;
  o.replace = a.replace;
  o.huge_pages = a.huge_pages;
  o.hist_slots = a.hist_slots;
  o.stat_cells = a.stat_cells;
  recorder::apply_counters(a.counters, o);
  std::string err, note;
  board::Mapping m = board::Mapping::create(o, &err, &note);
  if (!m) throw std::runtime_error(err);
  if (!note.empty()) fmt::print(stderr, "kron board create: {}\n", note);
  const auto& h = *m.header();
  fmt::print("board {}: {} bytes, {} lanes sharing {} blocks of {} bytes, {} buffer, {} Hz {}\n", a.name,
             h.segment_size, h.lane_count, h.block_count, h.block_bytes,
             (h.config & board::kCfgWrapB) ? "simple" : "circular", h.clock_hz,
             h.clock_kind == board::ClockKind::Tsc ? "TSC" : "CLOCK_MONOTONIC");
  return kExitOk;
}

// The names of the boards in the board directory.
std::vector<std::string> board_names() {
  const std::string dir = board::shm_dir();
  DIR* d = ::opendir(dir.c_str());
  if (!d) throw std::runtime_error("cannot list " + dir);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    const std::string f = e->d_name;
    if (f.rfind("kron.", 0) == 0) names.push_back(f.substr(5));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// ERRATUM E345: a board of a recording session (kron record's record-PID-RANDOM, libkron_mpi's
// kron-mpi-PID-RANDOM) whose creator is dead is stale: nobody drains it or removes it any more. A board of
// `kron board create` outlives its creator on purpose and is never stale.
bool stale(const std::string& name, std::uint32_t creator_pid) {
  if (name.rfind("record-", 0) != 0 && name.rfind("kron-mpi-", 0) != 0) return false;
  return creator_pid && ::kill(static_cast<pid_t>(creator_pid), 0) != 0 && errno == ESRCH;
}

int list() {
  int n = 0;
  fmt::print("{:<24} {:>12} {:>6} {:>9} {:>12} {:>8}\n", "board", "bytes", "lanes", "mode", "samples", "creator");
  for (const auto& name : board_names()) {
    const std::string shown = text::terminal_safe(name);
    try {
      auto r = recorder::BoardReader::open(name);
      const auto t = r.totals();
      fmt::print("{:<24} {:>12} {:>6} {:>9} {:>12} {:>8}{}\n", shown, r.geo().segment_size, r.geo().lane_count,
                 r.circular() ? "circular" : "simple", t.recorded, r.geo().creator_pid,
                 stale(name, r.geo().creator_pid) ? "  stale (creator dead: kron board rm --stale)" : "");
    } catch (const std::exception& ex) {
      fmt::print("{:<24} refused: {}\n", shown, text::terminal_safe(ex.what()));
    }
    ++n;
  }
  if (!n) fmt::print("(no boards)\n");
  return kExitOk;
}

// kron board rm --stale: every stale board (see stale()) that this user may open.
int remove_stale() {
  int rc = kExitOk;
  for (const auto& name : board_names()) {
    std::uint32_t creator = 0;
    try {
      creator = recorder::BoardReader::open(name).geo().creator_pid;
    } catch (const std::exception&) {
      continue;  // not ours, or not a board we can read: left alone
    }
    if (!stale(name, creator)) continue;
    std::string err;
    if (board::unlink(name, &err)) {
      fmt::print("removed {} (creator pid {} is gone)\n", text::terminal_safe(name), creator);
      // ERRATUM E441: a kron record --mpi killed by its launcher leaves its rank's MPI side area beside it.
      const std::string side = recorder::mpiside::side_path(name);
      if (::access(side.c_str(), F_OK) == 0 && ::unlink(side.c_str()) == 0)
        fmt::print("removed its MPI side area {}\n", text::terminal_safe(side));
    } else {
      fmt::print(stderr, "kron board rm: {}\n", err);
      rc = kExitFailed;
    }
  }
  return rc;
}

KRON_COMMAND("board", "create, list or remove boards (shared memory that outlives the program)", 31, [](CLI::App& app) {
  app.require_subcommand(1);
  auto c = std::make_shared<CreateArgs>();
  auto* cr = app.add_subcommand("create", "create a board");
  cr->add_option("name", c->name, "board name")->required();
  cr->add_option("--buffer", c->buffer, "board memory (16M default)")->capture_default_str();
  cr->add_option("--lanes", c->lanes, "lane headers: threads writing at once (memory is shared by all)")
      ->capture_default_str();
  cr->add_option("--block-size", c->block, "bytes a lane takes from the pool at a time (auto, or 4K-1M)")
      ->capture_default_str();
  cr->add_option("--mode", c->mode, "simple or circular")->capture_default_str();
  cr->add_option("--filter", c->filter, "Filter Register")->capture_default_str();
  cr->add_flag("--wait", c->wait, "CSR Write Wait on Overrun");
  cr->add_flag("--disabled", c->disabled, "create with sampling disabled (000 Table B1 reset state)");
  cr->add_option("--counter", c->counters, "resource counter N=SOURCE");
  cr->add_option("--node", c->node, "node number")
      ->capture_default_str()
      ->check(field_range(recorder::kMaxNode, recorder::kNodeField));
  cr->add_option("--perms", c->perms, "permissions (octal)")->capture_default_str();
  cr->add_flag("--replace", c->replace, "replace a board of that name");
  cr->add_flag("--huge-pages", c->huge_pages,
               "back the board with 2 MiB pages where the kernel allows (else says why not)");
  cr->add_option("--histograms", c->hist_slots, "histogram names the board holds (64 bytes each)")
      ->capture_default_str()
      ->check(CLI::Range(0u, board::kMaxHistSlots));
  cr->add_option("--stat-cells", c->stat_cells,
                 "statistics cells of 8 KiB (one per thread, histogram or 1024 virtual counters, and phase)")
      ->capture_default_str()
      ->check(CLI::Range(0u, board::kMaxStatCells));
  add_board_access_options(*cr);
  auto* ls = app.add_subcommand("ls", "list boards");
  add_board_access_options(*ls);
  auto rm_name = std::make_shared<std::vector<std::string>>();
  auto rm_stale = std::make_shared<bool>(false);
  auto* rm = app.add_subcommand("rm", "remove boards");
  auto* rm_names = rm->add_option("name", *rm_name, "board names");
  rm->add_flag("--stale", *rm_stale,
               "remove every stale board: a kron record or libkron_mpi board whose creator is dead (kron board ls "
               "marks them)")
      ->excludes(rm_names);
  add_board_access_options(*rm);
  return [=] {
    if (cr->parsed()) return create(*c);
    if (ls->parsed()) return list();
    if (*rm_stale) return remove_stale();
    if (rm_name->empty()) {
      fmt::print(stderr, "kron board rm: give board names, or --stale\n");
      return kExitBadInput;
    }
    int rc = kExitOk;
    for (const auto& n : *rm_name) {
      std::string err;
      if (!board::unlink(n, &err)) {
        fmt::print(stderr, "kron board rm: {}\n", err);
        rc = kExitBadInput;
      }
    }
    return rc;
  };
});

}  // namespace
}  // namespace kron::tools
