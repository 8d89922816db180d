// Histograms and virtual counters on the trace side: the board's statistics area read into
// snapshot records (trace format 1.4 kinds 5 and 6), snapshots merged exactly (bucket sums), and the
// summaries `kron hist` prints (count, min, percentiles, max, mean, a bar chart) or writes as JSON
// (docs/hist-json.md). The bucket format is kron/core/stats.hpp.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kron/core/sample.hpp"
#include "kron/core/stats.hpp"

namespace kron::analysis {

// ---- merging --------------------------------------------------------------------------------------------
struct LatencyHistogram {
  std::array<std::uint64_t, stats::kHistBuckets> buckets{};
  std::uint64_t sum = 0, min = ~std::uint64_t{0}, max = 0;
  bool saturated = false;               // a sum passed 2^64 - 1 (forged or damaged counts: ERRATUM E349)
  std::uint64_t count() const;          // saturating
  void add(const LatencyHistogram& o);  // exact: bucket sums, sum, min of mins, max of maxes
};
// One value into `h` (tests and baselines: what record_latency does in a cell).
void record_value(LatencyHistogram& h, std::uint64_t value);

struct LatencySummary {
  std::uint64_t count = 0, min = 0, max = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0;
  double mean = 0;
};
// The value at quantile q (0 < q <= 1) by nearest rank: the upper bound of the bucket holding the
// ceil(q * count)-th value, clamped to [min, max] (ERRATUM E184). 0 for an empty histogram.
std::uint64_t percentile(const LatencyHistogram& h, double q);
LatencySummary summarize(const LatencyHistogram& h);

// Everything recorded, merged: the last snapshot of each (source, thread, histogram, phase) and of each
// (source, thread, phase, counter) (snapshots are cumulative), then summed across threads and processes
// (histograms by name: ids are a board's).
struct SnapshotTotals {
  std::map<std::string, std::map<std::uint16_t, LatencyHistogram>> hists;    // name -> phase -> histogram
  std::map<std::uint16_t, std::map<std::uint32_t, std::uint64_t>> counters;  // phase -> index -> value
  std::uint64_t snapshots = 0;
  std::vector<std::string> saturated;  // "histogram NAME" / "virtual counter N" whose sums passed 2^64 - 1
  // An MPI recording (ERRATUM E395): the same per rank, beside the sums over every rank above.
  std::map<std::string, std::map<std::uint32_t, std::map<std::uint16_t, LatencyHistogram>>> rank_hists;
  std::map<std::uint32_t, std::map<std::uint16_t, std::map<std::uint32_t, std::uint64_t>>> rank_counters;
};
// The MPI rank of a process (its source), nullopt for one that is none (Timeline::rank).
using RankOf = std::function<std::optional<std::uint32_t>(std::uint32_t)>;
class SnapshotSum {
 public:
  // Records of kinds 5 and 6 back to back (a Reader's snapshots(), or read_board's), validated before.
  void add(std::span<const std::uint8_t> records);
  // `rank_of` (an MPI recording): also each rank's histograms and counters.
  SnapshotTotals result(const RankOf& rank_of = {}) const;

 private:
  struct HistKey {
    std::uint32_t source, thread;
    std::uint16_t hist, phase;
    std::string name;
    auto operator<=>(const HistKey&) const = default;
  };
  std::map<HistKey, LatencyHistogram> hists_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t> counters_;  // (source<<32|thread, phase<<32|index)
  std::uint64_t snapshots_ = 0;
};

// ---- output ---------------------------------------------------------------------------------------------
struct HistRenderOptions {
  double ticks_per_us = 0;  // > 0: values as times (ns, us, ms, s); else ticks alone
  bool ticks = false;       // kron hist --ticks: ticks first, the time beside them
  unsigned bar_width = 40;
};
// A duration in seconds with four significant digits and an adaptive unit: "812 ns", "12.35 us", "1.234 ms",
// "2.5 s" ("0" for 0). kron hist and kron rpt print times with it.
std::string human_seconds(double s);
std::string render_hist_text(const SnapshotTotals& m, const HistRenderOptions& o);
// docs/hist-json.md
std::string render_hist_json(const SnapshotTotals& m, const HistRenderOptions& o, std::uint64_t stat_lost,
                             std::uint64_t cells_lost);

}  // namespace kron::analysis
