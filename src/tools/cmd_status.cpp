// kron status --board NAME: 003's mk_status. The board's registers (CSR decoded per 000 Table B1,
// Filter Register, Wait and Overrun Error Counters, counter control per Tables B5-B7), fill level,
// lanes and accounting. Inspection never changes the board.
#include <fmt/core.h>
#include <signal.h>

#include <cerrno>
#include <map>
#include <set>

#include "analysis/hist.hpp"
#include "recorder/stats_reader.hpp"
#include "kron/core/text.hpp"
#include "kron/core/control_regs.hpp"
#include "recorder/board_reader.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {
using namespace kron::board;

constexpr const char* kStateNames[] = {"free", "claiming", "active", "retired"};

struct Args {
  std::string board;
};
int run(const Args& a) {
  auto r = recorder::BoardReader::open(a.board);
  const BoardHeader& h = r.header();
  const Geometry& g = r.geo();  // the fixed fields as validated at open (ERRATUM E120)
  // ERRATUM E143: "live" are the processes that hold a lane now and still run.
  const auto lanes = r.lanes();
  std::set<std::uint32_t> live;
  for (const auto& v : lanes)
    if (v.state == LaneState::Active && !v.owner_dead && v.pid &&
        (::kill(static_cast<pid_t>(v.pid), 0) == 0 || errno == EPERM))
      live.insert(v.pid);
  // ERRATUM E322: from board 2.3 `attached` counts the processes attached now (a process killed stays in it:
  // the live processes with lanes are the figure checked against the running processes), `arrivals` the
  // attaches since creation; a 2.2 board has only the attaches.
  const std::string attached =
      g.minor >= 3 ? fmt::format("{} attached now, {} since creation", h.attached.load(), h.arrivals.load())
                   : fmt::format("{} attached since creation", h.attached.load());
  fmt::print("board {} (format {}.{}), {} bytes, created by pid {}, {} live process{} with lanes ({})\n", a.board,
             g.major, g.minor, g.segment_size, g.creator_pid, live.size(), live.size() == 1 ? "" : "es", attached);
  if (const std::string prog = r.program(); !prog.empty()) fmt::print("program: {}\n", text::terminal_safe(prog));
  fmt::print("Configuration Register 0x{:06x}: WRAPB={} ({} buffer)\n", g.config, (g.config & kCfgWrapB) ? 1 : 0,
             r.circular() ? "circular" : "simple");
  fmt::print("timestamp clock: {} Hz ({}), node {}\n", g.clock_hz,
             g.clock_kind == ClockKind::Tsc ? "TSC" : "CLOCK_MONOTONIC", g.node);
  const std::uint16_t csr = r.csr_read();
  fmt::print("CSR 0x{:04x}\n", csr);
  // 000 Table B1, status column, for every bit a board's read can show.
  for (unsigned b = 0; b < regs::csr::kBits.size(); ++b)
    if (kCsrReadMask >> b & 1) fmt::print("  bit {:>2} {:<34} {}\n", b, regs::csr::kBits[b].status, csr >> b & 1);
  fmt::print("Filter Register 0x{:04x}\n", filter_of(h));
  const auto t = r.totals();
  fmt::print("Wait Error Counter {} ticks ({} probes held)\nOverrun Error Counter {} (no free lane: {})\n",
             t.wait_ticks, t.waits, t.overruns, t.no_lane);
  const std::uint64_t en = h.enable_reg.load(), mode = h.mode_reg.load(), clk = h.clock_reg.load();
  fmt::print("Enable Register 0x{:016x}  Mode Register 0x{:016x}  Clock Select Register 0x{:016x}\n", en, mode, clk);
  for (unsigned n = 0; n < kCounters; ++n) {
    const Mode m = mode_of(field(mode, n));
    if (m == Mode::Nop || (m == Mode::ExternalSignal && h.sources[n].signal == Signal::None && !h.sources[n].name[0]))
      continue;
    fmt::print(
        "  counter {:>2}: {:<15} {:<11} {:<15} {}\n", n, regs::name(m), regs::name(clock_of(field(clk, n))),
        regs::name(enable_of(field(en, n))),
        text::terminal_safe(std::string(h.sources[n].name, strnlen(h.sources[n].name, sizeof h.sources[n].name))));
  }
  std::uint64_t held = 0, cap = 0, used = 0;
  for (const auto& v : lanes) held += v.held, cap += v.capacity_slots, used += v.used_slots;
  const auto pool = r.pool();
  cap = std::uint64_t{pool.blocks} * (pool.block_bytes / kSlot);
  fmt::print("memory: {} samples held, {} of {} slots used ({:.1f}%)\n", held, used, cap,
             cap ? 100.0 * double(used) / double(cap) : 0.0);
  // Blocks by state (a block of a writer killed while taking it counts as being written, E30).
  fmt::print(
      "pool: {} blocks of {} bytes: {} free, {} being written, {} sealed, {} recycled so far, {} probes waited "
      "for a block\n",
      pool.blocks, pool.block_bytes, pool.free, pool.writing, pool.sealed, pool.recycled, pool.waits);
  fmt::print("{:>4} {:<8} {:>14} {:>8} {:>10} {:>10} {:>10} {:>10} {:>8} {:>5}\n", "lane", "state", "node.process",
             "tid", "held", "passed", "overruns", "overwrit.", "waits", "torn");
  for (const auto& v : lanes) {
    if (v.state == LaneState::Free && !v.written) continue;
    fmt::print("{:>4} {:<8} {:>14} {:>8} {:>10} {:>10} {:>10} {:>10} {:>8} {:>5}{}\n", v.index,
               v.owner_dead ? "dead" : kStateNames[static_cast<unsigned>(v.state) & 3],
               fmt::format("{}.{}", source_node(v.source), source_pid(v.source)), v.tid, v.held, v.passed, v.overruns,
               v.overwritten, v.waits, v.torn, v.problem.empty() ? "" : "  " + v.problem);
  }
  fmt::print("accounting: passed {} {} recorded {} + overruns {} + overwritten {}\n", t.passed,
             t.exact() ? "=" : "!=", t.recorded, t.overruns, t.overwritten);
  // The statistics area, and the virtual counters summed over threads and phases (live).
  if (g.stat_cells) {
    const recorder::BoardStats st = recorder::read_board_stats(r.mapping(), 0);
    analysis::SnapshotSum mg;
    mg.add(st.records);
    const analysis::SnapshotTotals m = mg.result();
    fmt::print("statistics: {} of {} cells, {} histogram{} ({} name slots), {} values lost, {} threshold crossings\n",
               std::min<std::uint64_t>(h.cells_used.load(), g.stat_cells), g.stat_cells, m.hists.size(),
               m.hists.size() == 1 ? "" : "s", g.hist_slots, st.stat_lost, st.thresholds_crossed);
    std::map<std::uint32_t, std::uint64_t> vc;
    for (const auto& [p, cs] : m.counters)
      for (const auto& [i, v] : cs) vc[i] += v;
    for (const auto& [i, v] : vc) fmt::print("  virtual counter {:>4}: {}\n", i, v);
    for (const auto& p : st.problems) fmt::print(stderr, "kron status: {}\n", p);
  }
  for (const auto& p : r.problems()) fmt::print(stderr, "kron status: {}\n", p);
  return r.problems().empty() ? kExitOk : kExitFailed;
}
KRON_COMMAND("status", "show a board's registers, fill level, lanes and counts (003's mk_status)", 34,
             [](CLI::App& app) {
               auto a = std::make_shared<Args>();
               app.add_option("--board", a->board, "board name")->required();
               add_board_access_options(app);
               return [a] { return run(*a); };
             });
}  // namespace
}  // namespace kron::tools
