// Drain a board into a trace file in time order (recorder.hpp; ERRATA E31-E33).
#include "recorder/recorder.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "kron/core/record.hpp"

namespace kron::recorder {

namespace {
using record::size_at;
std::uint64_t ts_at(const std::uint8_t* rec) { return record::timestamp_at(rec); }
constexpr std::uint64_t kForever = std::numeric_limits<std::uint64_t>::max();
}  // namespace

Recorder::Recorder(BoardReader& board, tracefile::Writer& out)
    : Recorder(board, out, board.header().clock_hz / 1000 * kDefaultHoldMs) {}

Recorder::Recorder(BoardReader& board, tracefile::Writer& out, std::uint64_t hold_ticks)
    : board_(board), out_(out), hold_(hold_ticks) {}

std::uint64_t Recorder::held() const {
  std::uint64_t n = 0;
  for (const Held& h : held_) n += h.count;
  return n;
}

std::uint64_t Recorder::drain_once(bool final) {
  // The watermark's clock reading comes before this pass loads any lane's head (the lfence keeps the
  // loads below from running ahead of rdtsc, which does not wait for them).
  const std::uint64_t now = board::ticks(board_.header().clock_kind);
#if defined(__x86_64__) || defined(__i386__)
  _mm_lfence();
#endif
  const std::uint64_t w = final ? kForever : now > hold_ ? now - hold_ : 0;
  used_ = 0;
  board_.drain(
      [&](const LaneView& v, std::span<const std::uint8_t> recs, std::uint64_t n) {
        if (held_.size() <= v.index) held_.resize(v.index + 1);
        Held& h = held_[v.index];
        if (h.count) {  // the lane has older records held: these go after them, in lane order
          h.buf.insert(h.buf.end(), recs.begin(), recs.end());
          h.count += n;
          return;
        }
        if (used_ == runs_.size()) runs_.emplace_back();
        runs_[used_++] = Run{recs.data(), recs.size(), 0, v.index, true, n, 0};
      },
      &finished_);
  collect_held_runs();
  return merge_upto(w);
}

void Recorder::collect_held_runs() {
  for (std::uint32_t i = 0; i < held_.size(); ++i) {
    Held& h = held_[i];
    if (!h.count) continue;
    if (used_ == runs_.size()) runs_.emplace_back();
    runs_[used_++] = Run{h.buf.data() + h.off, h.buf.size() - h.off, 0, i, false, h.count, 0};
  }
}

std::uint64_t Recorder::merge_upto(std::uint64_t w) {
  std::uint64_t n = 0;
  for (;;) {
    // The run whose next record is oldest (each run is in lane order, which is time order).
    Run* best = nullptr;
    std::uint64_t bt = 0;
    for (std::size_t i = 0; i < used_; ++i) {
      Run& r = runs_[i];
      if (r.pos >= r.size) continue;
      const std::uint64_t t = ts_at(r.data + r.pos);
      if (!best || t < bt) best = &r, bt = t;
    }
    if (!best || bt > w) break;  // nothing left at or below the watermark
    // Copy best's records up to the next run's head (and the watermark) in one piece.
    std::uint64_t lim = w;
    for (std::size_t i = 0; i < used_; ++i) {
      const Run& r = runs_[i];
      if (&r != best && r.pos < r.size) lim = std::min(lim, ts_at(r.data + r.pos));
    }
    std::size_t end = best->pos;
    std::uint64_t k = 0;
    while (end < best->size) {
      const std::uint64_t t = ts_at(best->data + end);
      if (t > lim) break;
      // ERRATUM E33: a record older than one already written arrived behind the watermark: written here,
      // counted in `late`.
      if (t < max_written_) ++late_;
      else max_written_ = t;
      end += size_at(best->data + end);  // sizes were validated by the reader (32 or 160)
      ++k;
    }
    end = std::min(end, best->size);
    out_.append_records(std::span<const std::uint8_t>(best->data + best->pos, end - best->pos), k);
    bytes_ += end - best->pos;
    best->pos = end;
    best->taken += k;
    n += k;
  }
  // Keep what is younger than the watermark for a later pass.
  for (std::size_t i = 0; i < used_; ++i) {
    const Run& r = runs_[i];
    if (r.lane >= held_.size()) held_.resize(r.lane + 1);
    Held& h = held_[r.lane];
    if (r.fresh) {  // the reader's buffer is reused by the next drain: copy the rest
      if (r.pos < r.size) h.buf.assign(r.data + r.pos, r.data + r.size), h.off = 0, h.count = r.count - r.taken;
      continue;
    }
    h.off += r.pos;
    h.count -= r.taken;
    if (!h.count) {
      h.buf.clear(), h.off = 0;
    } else if (h.off >= h.buf.size() / 2) {  // compact now and then: the buffer stays about hold x rate
      h.buf.erase(h.buf.begin(), h.buf.begin() + static_cast<std::ptrdiff_t>(h.off));
      h.off = 0;
    }
  }
  used_ = 0;
  records_ += n;
  return n;
}

void Recorder::finish(tracefile::FileHeader h) {
  // Whatever is still held goes out now (a caller that skipped the final pass loses nothing).
  used_ = 0;
  collect_held_runs();
  merge_upto(kForever);
  totals_ = board_.totals();
  std::vector<tracefile::LaneEntry> lanes = finished_;
  for (const auto& e : board_.lane_entries()) lanes.push_back(e);
  fill_totals(h, totals_);
  h.late = late_;
  h.flags |= tracefile::kFlagTimeOrdered;  // the hold-back's promise; exceptions are counted in `late`
  out_.finish(h, lanes);
}

}  // namespace kron::recorder
