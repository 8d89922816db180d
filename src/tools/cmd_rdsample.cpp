// kron rdsample --board NAME [-f FILE] [-s START] [-e END] [-v]: 003's mk_rdsample. Takes the samples
// on a board (also after the program crashed) into a kron trace file, default mk.dat, without changing
// the board. START/END select samples by index in time order (ERRATUM E27: the board has lanes, not
// one word-addressed memory); END defaults to the memory address pointer (every sample held).
#include <fmt/core.h>

#include <algorithm>
#include <cstring>

#include "recorder/board_reader.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {
struct Args {
  std::string board, file = "mk.dat";
  std::uint64_t start = 0, end = ~std::uint64_t{0};
  bool verbose = false;
};
int run(const Args& a) {
  auto r = recorder::BoardReader::open(a.board);
  std::vector<std::uint8_t> all;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> index;  // (timestamp, offset) per record
  r.snapshot([&](const recorder::LaneView& v, std::span<const std::uint8_t> recs, std::uint64_t n) {
    if (a.verbose) fmt::print(stderr, "kron rdsample: lane {} (pid {} tid {}): {} samples\n", v.index, v.pid, v.tid, n);
    const std::size_t base = all.size();
    all.insert(all.end(), recs.begin(), recs.end());
    for (std::size_t off = base; off < all.size();) {
      tracefile::TraceRecord t;
      std::memcpy(&t, all.data() + off, sizeof t);
      index.emplace_back(t.timestamp, static_cast<std::uint32_t>(off));
      off += t.h.size;
    }
  });
  std::stable_sort(index.begin(), index.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  const std::uint64_t end = std::min<std::uint64_t>(a.end, index.size());
  tracefile::FileHeader fh = r.file_header();
  tracefile::set_program(fh, "kron rdsample --board " + a.board);
  tracefile::Writer w(a.file, fh);
  std::uint64_t n = 0;
  for (std::uint64_t i = a.start; i < end; ++i) {
    const std::uint8_t* rec = all.data() + index[i].second;
    std::uint16_t size;
    std::memcpy(&size, rec + 2, sizeof size);
    w.append_records(std::span<const std::uint8_t>(rec, size), 1);
    ++n;
  }
  const auto t = r.totals();
  fh.overruns = t.overruns;
  fh.overwritten = t.overwritten;
  fh.passed_filter = t.passed;
  fh.waits = t.waits;
  fh.wait_ticks = t.wait_ticks;
  w.finish(fh, r.lane_entries());
  for (const auto& p : r.problems()) fmt::print(stderr, "kron rdsample: {}\n", p);
  if (a.verbose || true)
    fmt::print("kron rdsample: {} of {} samples to {}; overruns {}, overwritten {}, torn {}\n", n, index.size(), a.file,
               t.overruns, t.overwritten, t.torn);
  return r.problems().empty() ? kExitOk : kExitFailed;
}
KRON_COMMAND("rdsample", "take the samples on a board into a trace file (003's mk_rdsample)", 33, [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--board", a->board, "board name")->required();
  app.add_option("-f", a->file, "output file")->capture_default_str();
  app.add_option("-s", a->start, "first sample (index in time order)");
  app.add_option("-e", a->end, "stop before this sample (default: all held)");
  app.add_flag("-v", a->verbose, "progress messages");
  return [a] { return run(*a); };
});
}  // namespace
}  // namespace kron::tools
