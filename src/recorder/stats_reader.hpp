// A board's statistics area (board format 2.2) read from outside into snapshot records (trace format 1.4
// kinds 5 and 6): what kron record writes at the end and every --snapshot-interval, and what kron hist
// --board, kron status and kron counters read. Beside BoardReader (board_reader.hpp), which reads the lanes.
// The records' layout and the bucket format are kron/core/stats.hpp; merging and summaries are the trace
// side's (analysis/hist.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kron/board_ops.hpp"
#include "kron/core/stats.hpp"

namespace kron::recorder {

// ------------------------------------------------------------------------------
struct BoardStats {
  std::vector<std::uint8_t> records;  // kinds 5 and 6, back to back (each validated by stats::snapshot_problem)
  std::uint64_t count = 0;            // records
  std::uint64_t stat_lost = 0, cells_lost = 0, thresholds_crossed = 0;
  std::vector<std::string> problems;  // cells whose descriptor is damaged (each names its offset): skipped
};
// The board's cells now, one record per (thread, histogram, phase) and per (thread, phase) for the counters
// (more than one when over 4093 counters are not 0), stamped `timestamp`. Reads never change the board; a
// cell is read only once its descriptor's key is published (acquire), every field checked (ERRATUM E120).
BoardStats read_board_stats(const board::Mapping& m, std::uint64_t timestamp);

}  // namespace kron::recorder
