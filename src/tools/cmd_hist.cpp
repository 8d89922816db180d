// kron hist FILE | --board NAME: the latency histograms and virtual counters of a recording (its snapshot
// records, trace format 1.4) or of a live board (read, never changed), per phase and in total: count, min,
// p50/p90/p99/p99.9, max, mean and a bar chart of the buckets; --json (docs/hist-json.md).
#include <fmt/core.h>

#include <vector>

#include "analysis/hist.hpp"
#include "analysis/summary.hpp"
#include "recorder/stats_reader.hpp"
#include "kron/format/trace_file.hpp"
#include "recorder/board_reader.hpp"
#include "kron/core/text.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {

struct Args {
  std::string file;
  std::string board;
  bool json = false;
  bool ticks = false;
};

int run(const Args& a) {
  if (a.file.empty() == a.board.empty())
    throw InputError::at_offset("kron hist", 0, "give a trace FILE or --board NAME");
  analysis::SnapshotTotals totals;
  std::uint64_t lost = 0, cells_lost = 0, clock_hz = 0, crossed = 0;
  std::vector<std::string> problems;
  if (!a.board.empty()) {
    auto r = recorder::BoardReader::open(a.board);
    clock_hz = r.geo().clock_hz;
    if (r.geo().minor < 2 || !r.geo().stat_cells)
      fmt::print(stderr, "kron hist: board {} (format {}.{}) has no statistics area\n", a.board, r.geo().major,
                 r.geo().minor);
    const recorder::BoardStats s = recorder::read_board_stats(r.mapping(), board::ticks(r.geo().clock_kind));
    analysis::SnapshotSum merger;
    merger.add(s.records);
    totals = merger.result();
    lost = s.stat_lost, cells_lost = s.cells_lost, crossed = s.thresholds_crossed;
    problems = s.problems;
  } else {
    analysis::InputOptions io;
    io.format = analysis::InputFormat::Kron;
    analysis::Merged in = analysis::open_inputs({a.file}, io);
    analysis::Timeline tl(in);
    totals = analysis::merged_snapshots(tl);
    const tracefile::Reader& r = *in.inputs()[0]->trace_file();
    clock_hz = r.header().clock_hz;
    lost = r.header().stat_lost, cells_lost = r.header().stat_cells_lost, crossed = r.header().thresholds_crossed;
    if (r.header().minor < 4)
      fmt::print(stderr, "kron hist: {} is trace format 1.{}: histograms came with 1.4\n", a.file, r.header().minor);
    for (const auto& w : r.warnings()) fmt::print(stderr, "kron: warning: {}\n", w);
  }
  const analysis::SnapshotTotals& m = totals;
  analysis::HistRenderOptions o;
  o.ticks_per_us = static_cast<double>(clock_hz) / 1e6;
  o.ticks = a.ticks;
  fmt::print("{}", a.json ? analysis::render_hist_json(m, o, lost, cells_lost) : analysis::render_hist_text(m, o));
  if (!a.json && (lost || cells_lost))
    fmt::print("lost: {} values found no cell or histogram slot ({} cell requests found the statistics area full)\n",
               lost, cells_lost);
  if (!a.json && crossed) fmt::print("thresholds crossed: {}\n", crossed);
  for (const auto& p : problems) fmt::print(stderr, "kron hist: board {}: {}\n", a.board, p);
  for (const auto& w : m.saturated)  // ERRATUM E349: never a wrapped total
    fmt::print(stderr, "kron hist: {}: its counts pass 2^64 - 1 (damaged or forged records): shown saturated\n",
               text::terminal_safe(w));
  return problems.empty() && m.saturated.empty() ? kExitOk : kExitFailed;
}

KRON_COMMAND("hist", "latency histograms and virtual counters per phase, of a trace file or a live board", 36,
             [](CLI::App& app) {
               auto a = std::make_shared<Args>();
               app.add_option("file", a->file, "trace file (kron record)");
               app.add_option("--board", a->board, "a live board instead (read, never changed)");
               app.add_flag("--json", a->json, "JSON (docs/hist-json.md; values in ticks)");
               app.add_flag("--ticks", a->ticks,
                            "values in the clock's ticks, the time beside them (the default: times in ns, us, ms "
                            "or s)");
               add_board_access_options(app);
               return [a] { return run(*a); };
             });

}  // namespace
}  // namespace kron::tools
