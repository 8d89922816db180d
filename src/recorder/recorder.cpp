// Drain a board into a trace file (recorder.hpp).
#include "recorder/recorder.hpp"

#include <algorithm>
#include <cstring>

namespace kron::recorder {

namespace {
std::uint64_t ts_at(const std::uint8_t* rec) {
  std::uint64_t t;
  std::memcpy(&t, rec + offsetof(tracefile::TraceRecord, timestamp), sizeof t);
  return t;
}
std::uint64_t size_at(const std::uint8_t* rec) {
  std::uint16_t s;
  std::memcpy(&s, rec + offsetof(tracefile::RecordHeader, size), sizeof s);
  return s;
}
}  // namespace

std::uint64_t Recorder::drain_once() {
  used_ = 0;
  board_.drain(
      [&](const LaneView&, std::span<const std::uint8_t> recs, std::uint64_t n) {
        if (used_ == runs_.size()) runs_.emplace_back();
        Run& r = runs_[used_++];
        r.data = recs;
        r.count = n;
        r.pos = 0;
      },
      &finished_);
  std::uint64_t n = 0;
  if (used_ == 1) {  // one lane had records: copy them as they are
    out_.append_records(runs_[0].data, runs_[0].count);
    n = runs_[0].count;
    bytes_ += runs_[0].data.size();
  } else if (used_ > 1) {  // several: merge by timestamp (each run is already in order)
    std::size_t total = 0;
    for (std::size_t i = 0; i < used_; ++i) total += runs_[i].data.size(), n += runs_[i].count;
    merged_.resize(total);
    std::size_t out = 0;
    for (;;) {
      Run* best = nullptr;
      std::uint64_t bt = 0;
      for (std::size_t i = 0; i < used_; ++i) {
        Run& r = runs_[i];
        if (r.pos >= r.data.size()) continue;
        const std::uint64_t t = ts_at(r.data.data() + r.pos);
        if (!best || t < bt) best = &r, bt = t;
      }
      if (!best) break;
      // Copy the run of records of `best` no younger than the next run's head.
      std::uint64_t next = ~std::uint64_t{0};
      for (std::size_t i = 0; i < used_; ++i) {
        Run& r = runs_[i];
        if (&r != best && r.pos < r.data.size()) next = std::min(next, ts_at(r.data.data() + r.pos));
      }
      std::size_t end = best->pos;
      while (end < best->data.size() && ts_at(best->data.data() + end) <= next) end += size_at(best->data.data() + end);
      end = std::min(end, best->data.size());  // sizes were validated by the reader; never run past anyway
      std::memcpy(merged_.data() + out, best->data.data() + best->pos, end - best->pos);
      out += end - best->pos;
      best->pos = end;
    }
    out_.append_records(merged_, n);
    bytes_ += total;
  }
  records_ += n;
  return n;
}

void Recorder::finish(tracefile::FileHeader h) {
  totals_ = board_.totals();
  std::vector<tracefile::LaneEntry> lanes = finished_;
  for (const auto& e : board_.lane_entries()) lanes.push_back(e);
  h.overruns = totals_.overruns;
  h.overwritten = totals_.overwritten;
  h.passed_filter = totals_.passed;
  h.waits = totals_.waits;
  h.wait_ticks = totals_.wait_ticks;
  out_.finish(h, lanes);
}

}  // namespace kron::recorder
