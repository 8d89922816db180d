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
//
// The merge itself (LaneMerge) knows nothing of boards: lanes' records go in, each lane's in its own
// order, and come out merged by timestamp up to a watermark. docs/architecture.md "The drain" says why
// it is a heap of per-lane cursors over chunked held memory, staged into large writes.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "kron/format/trace_file.hpp"
#include "recorder/board_reader.hpp"

namespace kron::recorder {

class LaneMerge {
 public:
  // Receives the merged records, whole ones, in pieces of about kStageBytes (or a longer run of one lane
  // as it is): the bytes and their record count. Valid only during the call.
  using Out = std::function<void(std::span<const std::uint8_t> records, std::uint64_t count)>;
  static constexpr std::size_t kStageBytes = std::size_t{1} << 20;

  explicit LaneMerge(Out out);
  LaneMerge(const LaneMerge&) = delete;
  LaneMerge& operator=(const LaneMerge&) = delete;

  // `n` whole, validated records of lane `lane` (trace-file layout), to go after every record of that
  // lane added before (one lane's records are in the order its thread took them). `recs` may be the
  // caller's buffer, reused after the next merge(): what merge() does not write is copied before it returns.
  void add(std::uint32_t lane, std::span<const std::uint8_t> recs, std::uint64_t n);
  // ERRATUM E324. The same records, `recs`, lying in `buf`, which the merge takes: held where they are, not copied
  // again (the drain's buffer, BoardReader::adopt). A buffer more than 4 times larger than its records is not kept
  // (held memory stays within 4 times the records): they are copied, the buffer goes to the spares.
  void add(std::uint32_t lane, Bytes&& buf, std::span<const std::uint8_t> recs, std::uint64_t n);
  // A buffer for the drain to copy a lane's next records into in place of one adopted: an emptied one of
  // `bytes` rounded up to a power of two (or up to 4 times that), else a new one of that capacity.
  Bytes spare(std::size_t bytes);
  // A piece of one lane at least this long is adopted rather than copied (the flood of a busy thread); below,
  // the copy costs little and a buffer per piece would cost more memory than the records.
  static constexpr std::size_t kAdoptBytes = std::size_t{256} << 10;
  // Writes every record added so far with timestamp <= w, merged by timestamp across lanes (equal
  // timestamps of different lanes in no particular order), and holds the rest. Returns the records written.
  // A record older than one already written is written all the same and counted in late() (ERRATUM E33).
  std::uint64_t merge(std::uint64_t w);
  // Hands what is staged to `out` (merge() stages up to kStageBytes between calls).
  void flush();

  std::uint64_t held() const { return held_; }  // records added but not written
  std::uint64_t late() const { return late_; }
  std::uint64_t records() const { return records_; }  // records written (staged included)
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t taken() const { return taken_; }  // records added in buffers the merge took (not copied)

 private:
  // Held records of one lane: chunks of whole records, oldest first; the front one is read from `off`.
  // What merge() knows of a chunk without walking it (LaneMerge::note, when its records came in).
  struct Chunk {
    Bytes buf;
    std::size_t off = 0;
    std::uint64_t count = 0;    // records from off on
    std::uint64_t last_ts = 0;  // the timestamp of its last record
    bool ordered = true;        // timestamps never go down (a thread's own records: always, unless its clock did)
    bool uniform = true;        // every record a 32-byte Trace record
  };
  struct Lane {
    std::deque<Chunk> chunks;
    std::span<const std::uint8_t> fresh;  // the caller's buffer, this pass only (then no chunks)
    std::uint64_t count = 0;              // records held or fresh
    std::size_t next_cap = 0;             // capacity of the lane's next chunk (grows to kMaxChunk)
  };
  // A lane being merged: its next record at p (timestamp ts), its current piece of memory ending at end.
  struct Cursor {
    std::uint64_t ts;
    const std::uint8_t* p;
    const std::uint8_t* end;
    std::uint32_t lane;
  };
  // Lane i, made active; a fresh span it had is held first (its records go before what comes now).
  Lane& lane(std::uint32_t i);
  void hold(Lane& l, std::span<const std::uint8_t> recs, std::uint64_t n);
  static void note(Chunk& c, std::span<const std::uint8_t> recs, std::uint64_t n);
  bool next_piece(Cursor& c);  // moves c to its lane's next chunk; false when the lane has no more
  void sift_down(std::size_t i);
  void emit(const std::uint8_t* p, std::size_t bytes, std::uint64_t count);

  Out out_;
  std::vector<Lane> lanes_;
  std::vector<std::uint32_t> active_;  // lanes with records, in no order
  std::vector<Cursor> heap_;           // min-heap by ts
  void keep_spare(Bytes&& b);
  std::array<std::vector<Bytes>, 64> spare_;  // emptied buffers, kept for reuse: [k] holds 2^k bytes or more
  std::size_t spare_bytes_ = 0;
  std::unique_ptr<std::uint8_t[]> stage_;  // kStageBytes; staged_ of them in use
  std::size_t staged_ = 0;
  std::uint64_t staged_count_ = 0;
  std::uint64_t held_ = 0, late_ = 0, records_ = 0, bytes_ = 0, max_written_ = 0, taken_ = 0;
};

class Recorder {
 public:
  // ERRATUM E32: 10 ms by default, several scheduler time slices: a probe preempted in its publication
  // window for less than that is still written in order; the held records cost hold x rate in memory.
  static constexpr std::uint64_t kDefaultHoldMs = 10;
  // What one lane may write between two passes at the paced rate, at most: the drain then copies records
  // that are still in the cache (docs/architecture.md "The drain").
  static constexpr std::uint64_t kPaceBytes = std::uint64_t{1} << 20;
  // How often run() hands what it wrote to the kernel (Writer::sync) when there was something new: a drain
  // killed by SIGKILL loses at most that much and the hold-back (ERRATUM E441).
  static constexpr std::chrono::milliseconds kSyncInterval{50};

  // `hold_ticks`: the hold-back in board clock ticks (default kDefaultHoldMs).
  Recorder(BoardReader& board, tracefile::Writer& out);
  Recorder(BoardReader& board, tracefile::Writer& out, std::uint64_t hold_ticks);
  ~Recorder();  // hands what is staged to the writer (a recording cut short keeps it)
  // One pass over every lane; writes what is older than the watermark (everything when `final`: the
  // program ended). Returns the records written.
  std::uint64_t drain_once(bool final = false);
  // The drain loop of `kron record` (and of any live drain): passes until `done()`, asked after each
  // pass, says the writers are gone, then the final passes. Between passes it sleeps only as long as the
  // fullest lane it found can wait (see next_pass_delay); `tick` (may be empty) is called about every
  // 250 ms.
  void run(const std::function<bool()>& done, const std::function<void()>& tick = {});
  // Final figures for the file header: the board's totals, every lane's entry and `late`; writes what is
  // still held first. Call after the program ended and a last drain_once(true).
  // `extra_names` join the board's in the name section (libkron_mpi's node entry; kron record --sched's
  // kernel names of threads, ahead of the board's and only for threads the board does not name).
  void finish(tracefile::FileHeader header, std::span<const record::NameRecord> extra_names = {});
  // Histogram and virtual counter snapshots (trace format 1.4 kinds 5 and 6) every `interval`
  // (0: only the final one, which finish() always writes).
  void set_snapshot_interval(std::chrono::milliseconds interval) { snapshot_every_ = interval; }
  std::uint64_t snapshots() const { return snapshots_; }
  std::uint64_t records() const { return merge_.records(); }
  std::uint64_t bytes() const { return merge_.bytes(); }
  std::uint64_t file_bytes() const { return out_.stored_bytes(); }  // the record area on disk (compressed)
  std::uint64_t file_raw_bytes() const { return out_.bytes(); }     // the record area's records, uncompressed
  std::uint64_t late() const { return merge_.late(); }
  // Records the merge held in the reader's own buffers, copied once off the board (LaneMerge::taken).
  std::uint64_t taken_in_place() const { return merge_.taken(); }
  std::uint64_t held() const { return merge_.held(); }  // records held for a later pass now
  std::uint64_t hold_ticks() const { return hold_; }
  // Test-only (libkron_mpi's injected clock fault, KRON_MPI_TEST_CLOCK_FAULT): `f` rewrites every record's
  // timestamp on its way to the file. It must be strictly increasing in its argument, so that the order the
  // merge established holds. Empty: none (every real recording).
  void set_timestamp_map(std::function<std::uint64_t(std::uint64_t)> f) { map_ = std::move(f); }
  // A live watcher (kron top): each lane's records as a pass takes them off the board, in the lane's
  // order, before the merge (never changed, never held). Empty: none.
  void set_tap(BoardReader::Sink tap) { tap_ = std::move(tap); }
  const Totals& totals() const { return totals_; }
  // The last pass: records taken off the board, and the fill that paces the next (the larger of the part
  // of the pool they filled and the part of kPaceBytes the busiest lane wrote).
  std::uint64_t last_taken() const { return taken_; }
  double last_fill() const { return fill_; }
  // How long the loop may sleep after a pass that found the fullest lane `fill` full (0-1) when `since`
  // had passed since the pass before: a quarter of the time that lane takes to fill at that rate, less
  // than 2 ms; 0 (go on at once) under 50 us; 2 ms when nothing came.
  static std::chrono::microseconds next_pass_delay(double fill, std::chrono::microseconds since);

 private:
  BoardReader& board_;
  tracefile::Writer& out_;
  std::uint64_t hold_;
  std::function<std::uint64_t(std::uint64_t)> map_;  // set_timestamp_map (before merge_: its callback uses it)
  std::vector<std::uint8_t> mapped_;                 // the records it rewrote
  BoardReader::Sink tap_;                            // set_tap
  LaneMerge merge_;
  std::vector<tracefile::LaneEntry> finished_;
  std::uint64_t taken_ = 0;
  double fill_ = 0;
  Totals totals_;
  std::chrono::milliseconds snapshot_every_{0};
  std::uint64_t snapshots_ = 0;
};

// The board's histograms and virtual counters now, as snapshot records into `w`; the board's
// statistics losses into `fh` when given, damaged cells into `problems`. Returns the records written.
std::uint64_t append_board_stats(tracefile::Writer& w, const BoardReader& board, tracefile::FileHeader* fh,
                                 std::vector<std::string>* problems);

}  // namespace kron::recorder
