// The recorder's drain loop body: takes records off a board (BoardReader::drain) and appends them to a
// kron trace file in global timestamp order (docs/trace-format.md "Time order").
//
// ERRATUM E31. The order comes from a watermark hold-back. Each pass reads the board's clock *before* it
// reads any lane: T. A probe takes its timestamp before it publishes its record (head store), so a record
// with timestamp <= T - hold that this pass did not see was published more than `hold` ticks after its
// timestamp. The pass therefore writes, merged by timestamp across lanes, only the records with timestamp
// <= W = T - hold and holds the younger ones (copied out of the ring, so lanes never fill because of
// the hold) to a later pass. The guarantee, exactly: a record is written after every record with an
// earlier timestamp unless its probe spent more than `hold` between reading the clock and publishing it
// (its thread preempted or stopped in that window of a few instructions, or a Resource sample whose
// counter read took that long). Such a record still goes to the file, where it arrives, and is counted in
// late() (FileHeader::late): a record written after one with a later timestamp. Never dropped, never
// silently reordered. The final pass (final = true) takes the watermark to infinity.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "kron/format/trace_file.hpp"
#include "recorder/board_reader.hpp"

namespace kron::recorder {

class Recorder {
 public:
  // ERRATUM E32: 10 ms by default, several scheduler time slices: a probe preempted in its publication
  // window for less than that is still written in order; the held records cost hold x rate in memory.
  static constexpr std::uint64_t kDefaultHoldMs = 10;

  // `hold_ticks`: the hold-back in board clock ticks (default kDefaultHoldMs).
  Recorder(BoardReader& board, tracefile::Writer& out);
  Recorder(BoardReader& board, tracefile::Writer& out, std::uint64_t hold_ticks);
  // One pass over every lane; writes what is older than the watermark (everything when `final`: the
  // program ended). Returns the records written.
  std::uint64_t drain_once(bool final = false);
  // Final figures for the file header: the board's totals, every lane's entry and `late`; writes what is
  // still held first. Call after the program ended and a last drain_once(true).
  void finish(tracefile::FileHeader header);
  std::uint64_t records() const { return records_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t late() const { return late_; }
  std::uint64_t held() const;  // records held for a later pass now
  std::uint64_t hold_ticks() const { return hold_; }
  const Totals& totals() const { return totals_; }

 private:
  // Records of one lane taken off the board but not yet written (younger than the watermark).
  struct Held {
    std::vector<std::uint8_t> buf;
    std::size_t off = 0;  // bytes before it are written
    std::uint64_t count = 0;
  };
  // A run of one lane being merged: its held records (with this pass's appended), or this pass's
  // records straight from the reader's buffer when nothing of the lane was held.
  struct Run {
    const std::uint8_t* data = nullptr;
    std::size_t size = 0, pos = 0;
    std::uint32_t lane = 0;
    bool fresh = false;  // the reader's buffer (valid until the next drain), not held_[lane]
    std::uint64_t count = 0, taken = 0;  // records in the run, records written from it
  };
  // Writes every record with timestamp <= w from runs_[0, used_), merged by timestamp; keeps the rest.
  std::uint64_t merge_upto(std::uint64_t w);
  void collect_held_runs();

  BoardReader& board_;
  tracefile::Writer& out_;
  std::uint64_t hold_;
  std::vector<Run> runs_;
  std::size_t used_ = 0;
  std::vector<Held> held_;  // by lane index
  std::vector<tracefile::LaneEntry> finished_;
  std::uint64_t records_ = 0, bytes_ = 0, late_ = 0, max_written_ = 0;
  Totals totals_;
};

}  // namespace kron::recorder
