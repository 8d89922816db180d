// A bounded reorder window for the analysis tools' merge (ERRATUM E50): samples go in in the order the
// inputs deliver them and come out in timestamp order, as long as a straggler arrives within `capacity`
// samples of its place. The window holds at most `capacity` samples (memory flat, whatever the input's
// length); a sample in order costs one timestamp comparison, a straggler one move per sample it overtakes.
//
// A straggler older than a sample the window has already released (it arrived more than `capacity`
// samples late) cannot be put in its place: it comes out next, and Merged counts it as out of time order
// as before. Timestamps are compared modulo the inputs' timestamp width (E43), so a stream whose counter
// wrapped is not taken for a straggler.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kron/core/sample.hpp"

namespace kron::analysis {

class ReorderWindow {
 public:
  // capacity >= 1 samples; ts_mask: the timestamps' width (all ones for 64 bits).
  ReorderWindow(std::size_t capacity, std::uint64_t ts_mask);

  std::size_t capacity() const { return ring_.size(); }
  std::size_t size() const { return size_; }
  bool full() const { return size_ == ring_.size(); }
  bool empty() const { return size_ == 0; }

  // Puts a sample that came from `input` in its place. Only while !full(). Inline: every tool's inner loop.
  void insert(const Sample& s, std::uint32_t input) {
    const std::size_t k = size_;
    if (k != 0 && earlier(s.timestamp, ring_[index(k - 1)].f.timestamp)) return insert_straggler(s, input);
    put(index(k), s, input);
    ++size_;
  }
  // The oldest sample held (and the input it came from); pop() releases it. Only while !empty().
  void front(Sample& out) const {
    static_cast<SampleFields&>(out) = ring_[head_].f;
    if (out.is_resource())
      out.counters = counters_[head_];
    else
      out.counters.fill(0);
  }
  std::uint32_t front_input() const { return ring_[head_].input; }
  std::uint64_t front_timestamp() const { return ring_[head_].f.timestamp; }
  void pop() {
    released_ts_ = ring_[head_].f.timestamp;
    released_ = true;
    if (++head_ == ring_.size()) head_ = 0;
    --size_;
  }

  // Stragglers put in their place (arrived after a later sample, within the window).
  std::uint64_t reordered() const { return reordered_; }

  // a is earlier than b, modulo the timestamp width (half the range either way).
  bool earlier(std::uint64_t a, std::uint64_t b) const {
    const std::uint64_t d = (b - a) & mask_;
    return d != 0 && d <= (mask_ >> 1);
  }

 private:
  // A sample without its counters (every field of SampleFields, 40 bytes): what moves through the window.
  // The sixteen counters of a Resource sample wait in counters_ at the same index (copying whole Samples
  // cost 10 ns each).
  struct Entry {
    SampleFields f;
    std::uint32_t input;
  };
  void put(std::size_t at, const Sample& s, std::uint32_t input) {
    ring_[at] = Entry{s, input};
    if (s.is_resource()) counters_[at] = s.counters;
  }
  void insert_straggler(const Sample& s, std::uint32_t input);
  std::size_t index(std::size_t k) const {  // ring index of the k-th sample held
    const std::size_t i = head_ + k;
    return i >= ring_.size() ? i - ring_.size() : i;
  }
  std::vector<Entry> ring_;
  std::vector<std::array<std::uint64_t, kResourceCounters>> counters_;
  std::size_t head_ = 0, size_ = 0;
  std::uint64_t mask_;
  std::uint64_t released_ts_ = 0;  // timestamp of the last sample released
  bool released_ = false;
  std::uint64_t reordered_ = 0;
};

}  // namespace kron::analysis
