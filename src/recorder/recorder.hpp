// The recorder's drain loop body: takes records off a board (BoardReader::drain) and appends them to a
// kron trace file, merging the lanes of one pass by timestamp so that a file is in time order within a
// lane and nearly so across lanes (a record can follow one at most one drain pass younger).
#pragma once
#include <cstdint>
#include <vector>

#include "kron/format/trace_file.hpp"
#include "recorder/board_reader.hpp"

namespace kron::recorder {

class Recorder {
 public:
  Recorder(BoardReader& board, tracefile::Writer& out) : board_(board), out_(out) {}
  // One pass over every lane; returns the records written.
  std::uint64_t drain_once();
  // Final figures for the file header: the board's totals and every lane's entry. Call after the
  // program ended and a last drain_once().
  void finish(tracefile::FileHeader header);
  std::uint64_t records() const { return records_; }
  std::uint64_t bytes() const { return bytes_; }
  const Totals& totals() const { return totals_; }

 private:
  struct Run {
    std::span<const std::uint8_t> data;  // the reader's private copy (valid until the next drain)
    std::uint64_t count = 0;
    std::size_t pos = 0;
  };
  BoardReader& board_;
  tracefile::Writer& out_;
  std::vector<Run> runs_;
  std::size_t used_ = 0;
  std::vector<std::uint8_t> merged_;
  std::vector<tracefile::LaneEntry> finished_;
  std::uint64_t records_ = 0, bytes_ = 0;
  Totals totals_;
};

}  // namespace kron::recorder
