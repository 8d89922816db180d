// Drain a board into a trace file in time order (recorder.hpp; ERRATA E31-E33).
#include "recorder/recorder.hpp"

#include "recorder/stats_reader.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <thread>
#include <unordered_set>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "kron/core/record.hpp"

namespace kron::recorder {

namespace {
using record::size_at;
std::uint64_t ts_at(const std::uint8_t* rec) { return record::timestamp_at(rec); }
constexpr std::uint64_t kForever = std::numeric_limits<std::uint64_t>::max();
// Held memory comes in chunks that grow per lane from kMinChunk to kMaxChunk (more when one lane's pass
// is larger): a lane that holds little (thousands of threads) costs little, a busy lane gets large
// chunks; emptied chunks are kept for reuse, up to kSpareBytes of them.
constexpr std::size_t kMinChunk = 16 << 10, kMaxChunk = 1 << 20, kSpareBytes = 64 << 20;
// A piece of one lane at least this long goes to the writer as it is, without staging (the writer writes
// an uncompressed piece of this size from it).
constexpr std::size_t kDirectBytes = std::size_t{64} << 10;
}  // namespace

// ---- LaneMerge ---------------------------------------------------------------------------------------

LaneMerge::LaneMerge(Out out) : out_(std::move(out)), stage_(new std::uint8_t[kStageBytes]) {}

Bytes LaneMerge::spare(std::size_t bytes) {
  // Buffers come in powers of two and are kept by size: one of the size asked is reused (a reused buffer
  // costs no page faults; a new one, one per 4 KiB), or one up to 4 times larger (a reader's buffer that
  // grew), never a much larger one for a small need, which would leave the next large need without one.
  const std::size_t size = std::bit_ceil(std::max<std::size_t>(bytes, 1));
  const auto k = static_cast<std::size_t>(std::bit_width(size) - 1);
  Bytes out;
  for (std::size_t c = k; c < std::min(k + 3, spare_.size()); ++c) {  // that size, else up to 4 times it
    if (spare_[c].empty()) continue;
    out = std::move(spare_[c].back());
    spare_[c].pop_back();
    spare_bytes_ -= out.capacity();
    return out;
  }
  out.reserve(size);
  return out;
}

void LaneMerge::keep_spare(Bytes&& b) {
  // Kept for reuse, by the largest power of two it holds, up to kSpareBytes in all: beyond, the largest go
  // first (a pass grown large once, a lane drained late, should not crowd out the buffers every pass needs).
  if (!b.capacity()) return;
  spare_bytes_ += b.capacity();
  b.clear();
  spare_[std::bit_width(b.capacity()) - 1].push_back(std::move(b));
  for (std::size_t k = spare_.size(); spare_bytes_ > kSpareBytes && k-- > 0;) {
    while (!spare_[k].empty() && spare_bytes_ > kSpareBytes) {
      spare_bytes_ -= spare_[k].back().capacity();
      spare_[k].pop_back();
    }
  }
}

void LaneMerge::note(Chunk& c, std::span<const std::uint8_t> recs, std::uint64_t n) {
  // A walk over records just copied (still in the cache): what lets merge() take a whole chunk, or find
  // where the watermark cuts it, without walking it again when it is written.
  const std::uint8_t* q = recs.data();
  const std::uint8_t* const e = q + recs.size();
  std::uint64_t last = c.count ? c.last_ts : 0;
  bool ordered = c.ordered, uniform = c.uniform;
  while (q < e) {
    const std::uint64_t t = ts_at(q);
    ordered &= t >= last;
    last = t;
    if (const std::uint16_t size = size_at(q); __builtin_expect(size == sizeof(record::TraceRecord), 1)) {
      q += sizeof(record::TraceRecord);
    } else {
      uniform = false;
      q += size;
    }
  }
  c.last_ts = last;
  c.ordered = ordered;
  c.uniform = uniform;
  c.count += n;
}

void LaneMerge::hold(Lane& l, std::span<const std::uint8_t> recs, std::uint64_t n) {
  if (recs.empty()) return;
  if (l.chunks.empty() || l.chunks.back().buf.size() + recs.size() > l.chunks.back().buf.capacity()) {
    // Capacities are powers of two, so that an emptied chunk fits the next lane that grows to its size.
    l.next_cap = std::clamp(l.next_cap * 2, kMinChunk, kMaxChunk);
    l.chunks.push_back(Chunk{spare(std::max(l.next_cap, std::bit_ceil(recs.size())))});
  }
  Chunk& c = l.chunks.back();
  const std::size_t at = c.buf.size();
  c.buf.resize(at + recs.size());  // within capacity: no reallocation, nothing zeroed (NoInitAllocator)
  std::memcpy(c.buf.data() + at, recs.data(), recs.size());
  note(c, std::span<const std::uint8_t>(c.buf.data() + at, recs.size()), n);
}

LaneMerge::Lane& LaneMerge::lane(std::uint32_t i) {
  if (lanes_.size() <= i) lanes_.resize(i + 1);
  Lane& l = lanes_[i];
  if (!l.count) active_.push_back(i);
  if (!l.fresh.empty()) {  // a span added before in this pass (the lane's only piece) is held first
    hold(l, l.fresh, l.count);
    l.fresh = {};
  }
  return l;
}

void LaneMerge::add(std::uint32_t i, std::span<const std::uint8_t> recs, std::uint64_t n) {
  if (!n) return;
  Lane& l = lane(i);
  if (l.chunks.empty())
    l.fresh = recs;  // merged straight from the caller's buffer; the rest copied after the merge
  else
    hold(l, recs, n);
  l.count += n;
  held_ += n;
}

void LaneMerge::add(std::uint32_t i, Bytes&& buf, std::span<const std::uint8_t> recs, std::uint64_t n) {
  if (!n) return;
  const auto off = static_cast<std::size_t>(recs.data() - buf.data());
  if (recs.data() < buf.data() || off + recs.size() > buf.size())
    throw std::logic_error("LaneMerge::add: the records do not lie in the buffer given");
  Lane& l = lane(i);
  if (buf.capacity() / 4 > recs.size()) {  // mostly empty: its records copied, the buffer kept as a spare
    hold(l, recs, n);
    keep_spare(std::move(buf));
  } else {
    buf.resize(off + recs.size());
    l.chunks.push_back(Chunk{std::move(buf), off});
    note(l.chunks.back(), recs, n);
    taken_ += n;
  }
  l.count += n;
  held_ += n;
}

bool LaneMerge::next_piece(Cursor& c) {
  Lane& l = lanes_[c.lane];
  if (!l.fresh.empty()) {  // the fresh span was the lane's only piece
    l.fresh = {};
    return false;
  }
  keep_spare(std::move(l.chunks.front().buf));
  l.chunks.pop_front();
  if (l.chunks.empty()) return false;
  const Chunk& f = l.chunks.front();
  c.p = f.buf.data() + f.off;
  c.end = f.buf.data() + f.buf.size();
  c.ts = ts_at(c.p);
  return true;
}

void LaneMerge::sift_down(std::size_t i) {
  const std::size_t n = heap_.size();
  const Cursor x = heap_[i];
  for (;;) {
    std::size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && heap_[c + 1].ts < heap_[c].ts) ++c;
    if (heap_[c].ts >= x.ts) break;
    heap_[i] = heap_[c];
    i = c;
  }
  heap_[i] = x;
}

void LaneMerge::emit(const std::uint8_t* p, std::size_t bytes, std::uint64_t count) {
  records_ += count;
  bytes_ += bytes;
  if (bytes >= kDirectBytes) {  // a long run of one lane (one busy thread): no copy into the stage
    flush();
    out_(std::span<const std::uint8_t>(p, bytes), count);
    return;
  }
  if (staged_ + bytes > kStageBytes) flush();
  if (bytes == sizeof(record::TraceRecord))
    std::memcpy(stage_.get() + staged_, p, sizeof(record::TraceRecord));
  else
    std::memcpy(stage_.get() + staged_, p, bytes);
  staged_ += bytes;
  staged_count_ += count;
}

void LaneMerge::flush() {
  if (!staged_) return;
  out_(std::span<const std::uint8_t>(stage_.get(), staged_), staged_count_);
  staged_ = 0;
  staged_count_ = 0;
}

std::uint64_t LaneMerge::merge(std::uint64_t w) {
  // Every lane with records is a cursor in a min-heap keyed by the timestamp of its next record.
  heap_.clear();
  for (const std::uint32_t i : active_) {
    const Lane& l = lanes_[i];
    const std::uint8_t* p = l.fresh.empty() ? l.chunks.front().buf.data() + l.chunks.front().off : l.fresh.data();
    const std::uint8_t* e =
        l.fresh.empty() ? l.chunks.front().buf.data() + l.chunks.front().buf.size() : l.fresh.data() + l.fresh.size();
    heap_.push_back(Cursor{ts_at(p), p, e, i});
  }
  for (std::size_t i = heap_.size() / 2; i-- > 0;) sift_down(i);
  std::uint64_t written = 0;
  while (!heap_.empty() && heap_[0].ts <= w) {
    Cursor& c = heap_[0];
    // The top's records go out up to the next lane's head (the smaller child) and the watermark, in one
    // piece: a single busy lane is one copy per chunk, interleaved lanes a record or a few at a time.
    std::uint64_t lim = w;
    if (heap_.size() > 1) lim = std::min(lim, heap_[1].ts);
    if (heap_.size() > 2) lim = std::min(lim, heap_[2].ts);
    Lane& l = lanes_[c.lane];
    Chunk* f = l.fresh.empty() ? &l.chunks.front() : nullptr;
    const std::uint8_t* q = c.p;
    std::uint64_t k = 0, t = c.ts, late = 0, max_written = max_written_;
    if (f && f->ordered && c.ts >= max_written && f->last_ts <= lim) {
      // The rest of a chunk in order and all of it due: out whole, none late, not walked.
      q = c.end;
      k = f->count;
      max_written = f->last_ts;
    } else if (f && f->ordered && f->uniform && c.ts >= max_written) {
      // In order, 32-byte records: where `lim` cuts it, by a galloping search from the cursor (a few records
      // when lanes interleave, a binary search across a busy lane's chunk).
      const std::size_t n = static_cast<std::size_t>(c.end - c.p) / sizeof(record::TraceRecord);
      auto ts = [&](std::size_t j) { return ts_at(c.p + j * sizeof(record::TraceRecord)); };
      std::size_t lo = 0, hi = n;  // ts(lo) <= lim; hi: n or ts(hi) > lim
      for (std::size_t step = 1; lo + step < n; step *= 2) {
        if (ts(lo + step) > lim) {
          hi = lo + step;
          break;
        }
        lo += step;
      }
      while (hi - lo > 1) {
        const std::size_t mid = lo + (hi - lo) / 2;
        (ts(mid) <= lim ? lo : hi) = mid;
      }
      k = hi;
      q = c.p + hi * sizeof(record::TraceRecord);
      max_written = ts(hi - 1);
      if (q < c.end) t = ts(hi);
    } else {
      for (;;) {
        // ERRATUM E33: a record older than one already written arrived behind the watermark: written
        // here, counted in `late`.
        if (t < max_written) [[unlikely]]
          ++late;
        else
          max_written = t;
        // Sizes were validated by the reader (32 or 160). The common one is a predicted branch, so that
        // the next record's address does not wait for this one's size to load.
        if (const std::uint16_t size = size_at(q); __builtin_expect(size == sizeof(record::TraceRecord), 1))
          q += sizeof(record::TraceRecord);
        else
          q += size;
        ++k;
        if (q >= c.end) break;
        t = ts_at(q);
        if (t > lim) break;
      }
    }
    if (f) f->count -= k;
    late_ += late;
    max_written_ = max_written;
    q = std::min(q, c.end);
    emit(c.p, static_cast<std::size_t>(q - c.p), k);
    written += k;
    l.count -= k;
    if (q < c.end) {
      c.p = q;
      c.ts = t;
    } else if (!next_piece(c)) {
      c = heap_.back();
      heap_.pop_back();
      if (heap_.empty()) break;
    }
    sift_down(0);
  }
  held_ -= written;
  // What stays: the cursors left in the heap. Fresh records are copied (the caller reuses its buffer),
  // held chunks keep their place.
  for (const Cursor& c : heap_) {
    Lane& l = lanes_[c.lane];
    if (!l.fresh.empty()) {
      l.fresh = {};
      hold(l, std::span<const std::uint8_t>(c.p, static_cast<std::size_t>(c.end - c.p)), l.count);
    } else {
      Chunk& f = l.chunks.front();
      f.off = static_cast<std::size_t>(c.p - f.buf.data());
    }
  }
  std::erase_if(active_, [&](std::uint32_t i) { return lanes_[i].count == 0; });
  return written;
}

// ---- Recorder ----------------------------------------------------------------------------------------

Recorder::Recorder(BoardReader& board, tracefile::Writer& out)
    : Recorder(board, out, board.geo().clock_hz / 1000 * kDefaultHoldMs) {}

Recorder::Recorder(BoardReader& board, tracefile::Writer& out, std::uint64_t hold_ticks)
    : board_(board), out_(out), hold_(hold_ticks), merge_([this](std::span<const std::uint8_t> recs, std::uint64_t n) {
        if (map_) [[unlikely]] {  // test-only: a clock fault injected into the records (set_timestamp_map)
          mapped_.assign(recs.begin(), recs.end());
          for (std::size_t at = 0; at + sizeof(record::RecordHeader) <= mapped_.size();) {
            const std::uint16_t size = record::size_at(mapped_.data() + at);
            if (size < sizeof(record::TraceRecord) || at + size > mapped_.size()) break;  // validated records: never
            const std::uint64_t t = map_(record::timestamp_at(mapped_.data() + at));
            std::memcpy(mapped_.data() + at + offsetof(record::TraceRecord, timestamp), &t, sizeof t);
            at += size;
          }
          recs = mapped_;
        }
        out_.append_records(recs, n);
        // A pass with much to write (a large board drained late) still tells waiting probes it is alive.
        board_.heartbeat();
      }) {}

Recorder::~Recorder() {
  try {
    merge_.flush();
  } catch (...) {  // the writer's error was reported where it happened first; a destructor never throws
  }
}

std::uint64_t Recorder::drain_once(bool final) {
  // The watermark's clock reading comes before this pass loads any lane's head (the lfence keeps the
  // loads below from running ahead of rdtsc, which does not wait for them).
  const std::uint64_t now = board::ticks(board_.geo().clock_kind);
#if defined(__x86_64__) || defined(__i386__)
  _mm_lfence();
#endif
  const std::uint64_t w = final ? kForever : now > hold_ ? now - hold_ : 0;
  taken_ = 0;
  fill_ = 0;
  double pool_fill = 0;
  board_.drain(
      [&](const LaneView& v, std::span<const std::uint8_t> recs, std::uint64_t n) {
        if (tap_) tap_(v, recs, n);
        // A large piece stays in the buffer the reader copied it into (one copy from the board to the
        // file, or to the stage where lanes interleave); the reader gets a spare of this pass's size for its
        // next pass (a larger pass makes it grow: a reallocation copies).
        if (recs.size() >= LaneMerge::kAdoptBytes)
          merge_.add(v.index, board_.adopt(v.index, merge_.spare(std::bit_ceil(recs.size()))), recs, n);
        else
          merge_.add(v.index, recs, n);
        taken_ += n;
        // The lanes share one pool (board format 2.0). The fill that paces the passes is the larger of
        // the part of the pool all lanes together filled since the last pass and the part of kPaceBytes
        // the busiest lane filled: records are taken while they are still in the cache (a pass every
        // 16 MiB of a 16 MiB pool doubled the drain's CPU a sample: copies from DRAM, measured).
        if (v.capacity_slots) {
          const double slots = double(recs.size() / record::kSlotBytes);
          pool_fill += slots / double(v.capacity_slots);
          fill_ = std::max(fill_,
                           slots / double(std::min<std::uint64_t>(v.capacity_slots, kPaceBytes / record::kSlotBytes)));
        }
      },
      &finished_);
  fill_ = std::max(fill_, pool_fill);
  const std::uint64_t n = merge_.merge(w);
  if (final) merge_.flush();
  return n;
}

std::chrono::microseconds Recorder::next_pass_delay(double fill, std::chrono::microseconds since) {
  using std::chrono::microseconds;
  constexpr microseconds kIdle{2000}, kMin{50};
  if (fill <= 0) return kIdle;
  // The fullest lane filled `fill` of its ring in `since`: it fills whole in since / fill.
  const double us = double(since.count()) / fill / 4;
  if (us < double(kMin.count())) return microseconds{0};
  return us >= double(kIdle.count()) ? kIdle : microseconds{static_cast<std::int64_t>(us)};
}

std::uint64_t append_board_stats(tracefile::Writer& w, const BoardReader& board, tracefile::FileHeader* fh,
                                 std::vector<std::string>* problems) {
  recorder::BoardStats s = recorder::read_board_stats(board.mapping(), board::ticks(board.geo().clock_kind));
  if (s.count) w.append_snapshots(s.records, s.count);
  if (fh) {
    fh->stat_lost = s.stat_lost;
    fh->stat_cells_lost = s.cells_lost;
    fh->thresholds_crossed = s.thresholds_crossed;
  }
  if (problems) problems->insert(problems->end(), s.problems.begin(), s.problems.end());
  return s.count;
}

void Recorder::run(const std::function<bool()>& done, const std::function<void()>& tick) {
  using clock = std::chrono::steady_clock;
  auto last_tick = clock::now(), last_pass = last_tick, last_snapshot = last_tick, last_sync = last_tick;
  std::uint64_t synced = merge_.records();
  for (;;) {
    const auto start = clock::now();
    drain_once();
    // ERRATUM E441: what was written reaches the kernel at least every kSyncInterval, so that a recorder
    // killed by SIGKILL (a launcher ending a job) leaves it in its unclosed file, not in its buffers.
    if (start - last_sync >= kSyncInterval && merge_.records() != synced) {
      merge_.flush();
      out_.sync();
      last_sync = start;
      synced = merge_.records();
    }
    if (done()) break;
    if (tick && start - last_tick > std::chrono::milliseconds(250)) last_tick = start, tick();
    if (snapshot_every_.count() > 0 && start - last_snapshot >= snapshot_every_)
      last_snapshot = start, snapshots_ += append_board_stats(out_, board_, nullptr, nullptr);
    const auto since = std::chrono::duration_cast<std::chrono::microseconds>(start - last_pass);
    last_pass = start;
    // A full lane makes its writer wait (or lose samples): come back before the fullest one fills.
    const auto delay =
        next_pass_delay(fill_, since) - std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - start);
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
  }
  drain_once(true);  // what the writers published before they ended, and everything held
  drain_once(true);  // and lanes freed by the pass before
}

void Recorder::finish(tracefile::FileHeader h, std::span<const record::NameRecord> extra_names) {
  // Whatever is still held goes out now (a caller that skipped the final pass loses nothing).
  merge_.merge(kForever);
  merge_.flush();
  totals_ = board_.totals();
  std::vector<tracefile::LaneEntry> lanes = finished_;
  for (const auto& e : board_.lane_entries()) lanes.push_back(e);
  fill_totals(h, totals_);
  board_.close_time_base(h);  // the end anchor (a caller that converted switches took it already)
  h.late = merge_.late();
  h.flags |= tracefile::kFlagTimeOrdered;  // the hold-back's promise; exceptions are counted in `late`
  std::uint64_t bad = 0;
  auto names = board_.names(&h.names_lost, &bad);
  h.names_lost += bad;  // an entry scribbled on the board: its name is lost, and counted
  std::vector<std::string> problems;
  snapshots_ += append_board_stats(out_, board_, &h, &problems);  // the final totals
  for (const auto& p : problems) board_.note_problem(p);
  // Thread entries among the extra names (the kernel's names of threads that ran without a probe, ERRATUM
  // E410) go ahead of the board's, for threads the board does not name: a reader keeps a thread's last entry.
  std::unordered_set<std::uint64_t> named;
  for (const auto& n : names)
    if (n.name_kind == record::NameKind::Thread) named.insert(std::uint64_t{n.source} << 32 | n.thread);
  std::vector<record::NameRecord> all;
  for (const auto& e : extra_names)
    if (e.name_kind == record::NameKind::Thread && !named.count(std::uint64_t{e.source} << 32 | e.thread))
      all.push_back(e);
  all.insert(all.end(), names.begin(), names.end());
  for (const auto& e : extra_names)
    if (e.name_kind != record::NameKind::Thread) all.push_back(e);
  out_.finish(h, lanes, all);
}

}  // namespace kron::recorder
