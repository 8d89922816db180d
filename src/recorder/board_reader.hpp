// Reading a board from outside the program: the drain of `kron record` (takes records off the lanes,
// exact accounting), the non-destructive snapshot of `kron rdsample` / `kron status` (also after the
// program crashed), and the register view. Never trusts the segment: every position is bounded by the
// ring, every record's kind and size is checked before it is used.
// Format: include/kron/board.hpp, docs/board-format.md.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kron/board_ops.hpp"
#include "kron/format/trace_file.hpp"

namespace kron::recorder {

// An allocator whose elements are left uninitialised when a container grows (resize): the drain's buffers
// are always filled by a copy before they are read, and zeroing them first would cost as much as the copy.
template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
// Records copied off a board: a lane's buffer in the reader, then (adopted) held memory of the merge.
using Bytes = std::vector<std::uint8_t, NoInitAllocator<std::uint8_t>>;

// One lane as a reader sees it.
struct LaneView {
  std::uint32_t index = 0, pid = 0, tid = 0, source = 0, occupancy = 0;
  board::LaneState state = board::LaneState::Free;
  bool owner_dead = false;    // Active, but its process is gone (killed)
  std::uint64_t passed = 0;   // probes that passed filter and enable
  std::uint64_t written = 0;  // records ever written (drained + overwritten + held)
  std::uint64_t drained = 0;  // records taken off by a drain
  std::uint64_t held = 0;     // records on the board now
  std::uint64_t overruns = 0, overwritten = 0, waits = 0, wait_ticks = 0;
  std::uint64_t torn = 0;            // a record cut by the owner's death: counted, never decoded
  std::uint64_t capacity_slots = 0;  // the board's whole pool: a lane may fill all of it
  std::uint64_t used_slots = 0;      // slots of this lane on the board now
  std::string problem;               // corrupt lane memory: what and where (segment offset)
};

// Accounting over the whole board (or a drain): passed == recorded + overruns + overwritten.
struct Totals {
  std::uint64_t passed = 0, recorded = 0, overruns = 0, overwritten = 0, waits = 0, wait_ticks = 0, no_lane = 0;
  std::uint64_t torn = 0;
  bool exact() const { return passed == recorded + overruns + overwritten; }
};

// The accounting fields of a trace file header from a board's totals (kron record's finish and rdsample):
// overruns, overwritten, passed_filter, waits, wait_ticks. `samples` is the writer's, `late` the recorder's.
void fill_totals(tracefile::FileHeader& h, const Totals& t);

class BoardReader {
 public:
  // Opens board `name` and validates it; throws InputError("board NAME", offset, what) when refused.
  static BoardReader open(const std::string& name);
  // Reads an image in memory (tests, fuzzing); validates it; throws InputError on a bad header.
  static BoardReader view(void* base, std::uint64_t size, const std::string& label);

  const board::BoardHeader& header() const { return *map_.header(); }
  board::BoardHeader& header() { return *map_.header(); }
  const board::Mapping& mapping() const { return map_; }
  const std::string& label() const { return label_; }
  // The header's fixed fields as validated at open (ERRATUM E120); the reader uses only these.
  const board::Geometry& geo() const { return map_.geometry(); }
  bool circular() const { return geo().circular(); }

  // Receives runs of whole, validated records of one lane (trace-file record layout) and their count; a
  // lane may come in several runs, one after the other, in its order. The span is this reader's private
  // copy: a drain's stays valid until the next drain, a snapshot's only until the sink returns.
  using Sink = std::function<void(const LaneView&, std::span<const std::uint8_t>, std::uint64_t)>;

  // Takes every record published so far off the board (this process is the board's one drainer):
  // advances the lanes' read positions, counts overwritten records, frees lanes whose owner retired or
  // died (their final figures go to `finished`). Returns the lanes drained.
  void drain(const Sink& sink, std::vector<tracefile::LaneEntry>* finished);
  // Only inside a drain's sink call, for the lane it is receiving: hands over the buffer that holds the
  // span the sink received (the span lies inside it, unchanged), so that a consumer that keeps the records
  // (the recorder's merge) keeps them where they are instead of copying them again; `spare` becomes the
  // lane's buffer for its next pass. Throws std::logic_error elsewhere. ERRATUM E324.
  Bytes adopt(std::uint32_t lane, Bytes spare);
  // Announces this process as the drainer (heartbeat for waiting probes) or withdraws it.
  void set_drainer(bool on);
  void heartbeat();

  // The records on the board now, lane by lane, without changing anything. piece_bytes 0: each lane in
  // one call (its copy valid until the next pass). Else each lane in pieces of at most piece_bytes (or one
  // block, when larger), a piece valid only during its call, the copy given back after the lane: the
  // reader's memory is one piece, however large the lane (ERRATUM E348). Returns every lane's figures as
  // this pass saw them (as lanes()): held is what the sink received, overwritten includes what was
  // recycled under the pass (a circular board), so that a file of these records and these figures adds up.
  std::vector<LaneView> snapshot(const Sink& sink, std::uint64_t piece_bytes = 0);
  // From now on, the pages of the board's records that a pass has read (copied or counted) are given back
  // to the kernel (a board this process mapped: Mapping::shared): a pass over the whole board keeps no
  // more of it resident than the piece it is reading. The records stay on the board (ERRATUM E348).
  void drop_pages_behind(bool on) { drop_behind_ = on; }
  // Every lane's figures now (no change to the board).
  std::vector<LaneView> lanes();
  // The block pool now: blocks by state (a count taken while writers run is a moment's picture).
  struct PoolView {
    std::uint32_t blocks = 0, free = 0, writing = 0, sealed = 0, recycling = 0;
    std::uint64_t block_bytes = 0, recycled = 0, waits = 0;
  };
  PoolView pool() const;
  Totals totals();
  // The totals of lanes' figures taken already (lanes(), snapshot()), with the lanes freed and no_lane.
  Totals totals(const std::vector<LaneView>& lanes) const;
  // Lane table entries for a trace file: every lane that ever saw a probe.
  std::vector<tracefile::LaneEntry> lane_entries();
  static std::vector<tracefile::LaneEntry> lane_entries(const std::vector<LaneView>& lanes);
  // The name table (board 2.1): every published entry, each validated as untrusted memory (an entry that
  // fails is left out and counted in *bad); *lost: the names the table had no room for.
  std::vector<record::NameRecord> names(std::uint64_t* lost = nullptr, std::uint64_t* bad = nullptr) const;
  // CSR as a read returns it (000 Table B1): stored bits plus the computed status bits 6-9.
  std::uint16_t csr_read();
  // A trace file header describing this board (clock, node, counters, mode) and its time base (1.6:
  // the kernel's conversion, or the start anchor; kron/format/time_base.hpp).
  tracefile::FileHeader file_header();
  // The time base's end: the end anchor and the rate from the two (anchors; nothing for another source or
  // a header closed already). Recorder::finish calls it; a caller that converts first calls it earlier.
  void close_time_base(tracefile::FileHeader& h) const;
  // Board 2.1's program field (BoardHeader::program): the command of the program that last ran on the
  // board, as kron record / kron run wrote it ("" when none did, or a 2.0 board). Bounded: the board is
  // untrusted memory, the text is read up to its first NUL or the field's end.
  std::string program() const;
  void set_program(const std::string& command);

 private:
  BoardReader(board::Mapping m, std::string label) : map_(std::move(m)), label_(std::move(label)) {}
  LaneView view_lane(std::uint32_t i);
  // The drain/snapshot of one lane from position (r, rr). Returns the new (r, rr) and counts.
  struct Pass {
    std::uint64_t r = 0, rr = 0, emitted = 0, overwritten = 0;
    bool corrupt = false;
    bool deferred = false;  // the lane's writer is inside its seqlock: nothing taken, retry later
    bool moved = false;     // a circular lane's chain moved under the walk (recycled): it stopped there
    std::string problem;
  };
  // `defer`: a lane whose live writer is inside its tail seqlock is left for a later pass (the drain);
  // without it the fields are taken as they are (snapshot and figures, which change nothing).
  Pass pass(std::uint32_t i, std::uint64_t r, std::uint64_t rr, const LaneView& v, const Sink& sink,
            bool defer = false);
  // Hands the segments [keep, end) copied to lane i's buffer to the sink (or, for figures, their counts),
  // each record checked; the buffer is empty again after it.
  // Lane i's records (to the sink, or counted) and its figures into v, as lanes() and snapshot() take them.
  void take(std::uint32_t i, LaneView& v, const Sink& sink);
  void emit_kept(std::uint32_t i, const LaneView& v, const Sink& sink, std::size_t keep, Pass& p);
  // A circular lane after its walk: the tail now says what was recycled under it. Sets p.overwritten and
  // *keep (the first segment copied above the tail); false when the pass ends here (deferred, or corrupt).
  bool settle_tail(std::uint32_t i, std::uint64_t r, std::uint64_t rr, std::size_t flushed, bool may_defer, Pass& p,
                   std::size_t* keep);
  // n more bytes of records read: every kDropEvery bytes, the record area's pages are given back
  // (drop_pages_behind), and at the end of a pass (drop_now).
  void let_go(std::uint64_t n);
  void drop_now();
  static constexpr std::uint64_t kDropEvery = 4u << 20;
  void set_corrupt(Pass& p, std::uint32_t lane, std::uint64_t off, const std::string& what) const;

  // Gives back to the free stack the blocks of lane i that the drain has read whole and its writer has
  // left (simple boards); all of them (`all`) when the lane is being freed, where a circular board's
  // sealed blocks stay in its recycling queue, detached from the lane.
  void give_back(std::uint32_t i, std::uint64_t read, bool all);
  // Takes block x, lane i's first (followed by nx), out of the lane; to the free stack when `to_pool`.
  // The lane's `returned` moves to the block's end.
  void unlink_first(std::uint32_t i, std::uint32_t x, std::uint32_t nx, std::uint64_t end, bool to_pool);
  bool lock_pool();  // the circular board's pool lock (include/kron/board_pool.hpp), with this pid
  // Lanes claimed above the validated lane count: refused (InputError) or a problem (ERRATUM E125).
  void check_claims(bool refuse);
  // Blocks holding records of a lane beyond the lane count: a problem (ERRATUM E125).
  void check_blocks();
  void add_problem(const std::string& p);

  board::Mapping map_;
  std::string label_;
  std::vector<Bytes> bufs_;       // per lane: records copied out of its blocks
  bool draining_ = false;         // drain() runs
  std::uint32_t emitting_ = ~0u;  // the lane whose records a drain's sink is receiving (adopt)
  struct Seg {
    std::uint64_t from, to, at;  // lane positions [from, to) copied to the lane's buffer at byte `at`
    std::uint32_t block;
    std::uint64_t counted = 0;  // the records of [from, to): counted in place (no sink) or as emitted
  };
  // A pass without a sink (figures: kron status, totals) counts the records of [a, e) of block x where
  // they are, never copying them (ERRATUM E348). Returns the count; on a bad record, *bad says what and
  // *bad_at its segment offset.
  std::uint64_t count_in_place(std::uint32_t x, std::uint64_t a, std::uint64_t e, std::string* bad,
                               std::uint64_t* bad_at) const;
  std::vector<Seg> segs_;
  // DECISION D27: per lane, records were lost (overwritten under the reader) since the last record it
  // handed out: the next record it hands out carries kFlagOverwritten. A drain keeps it from pass to pass;
  // a snapshot starts each lane afresh.
  std::vector<std::uint8_t> gap_;
  void note_gap(std::uint32_t lane) {
    if (gap_.size() <= lane) gap_.resize(std::size_t{lane} + 1, 0);
    gap_[lane] = 1;
  }
  std::uint64_t used_ = 0;         // bytes of the lane's buffer holding segments not yet emitted
  std::uint64_t piece_bytes_ = 0;  // snapshot(sink, piece_bytes) while it runs
  bool drop_behind_ = false;
  std::uint64_t read_since_drop_ = 0;
  std::vector<std::string> problems_;
  Totals freed_;                // lanes finished and freed by drain()
  std::uint64_t deferred_ = 0;  // lane passes left for later: a writer was inside its seqlock

 public:
  // Corrupt lane memory met so far (each names the segment offset).
  const std::vector<std::string>& problems() const { return problems_; }
  // Tests only: called in every pass over a lane just before the records of one of its blocks are copied or
  // counted, with the lane and the block, so that a test can recycle the block under the reader the way a
  // writer on another core may (tests/recorder/pool_test.cpp). Empty otherwise (one branch per block).
  std::function<void(std::uint32_t lane, std::uint32_t block)> before_copy_for_test;
  // A problem met elsewhere on the board (its statistics area), reported with the lanes'.
  void note_problem(std::string what) { problems_.push_back(std::move(what)); }
  // Lane passes the drain left for a later pass because the lane's writer was stopped or preempted in
  // the middle of its (tail, evicted) update (statistics; nothing is lost or counted twice).
  std::uint64_t deferred() const { return deferred_; }
};

}  // namespace kron::recorder
