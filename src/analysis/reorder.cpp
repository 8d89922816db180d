// Bounded reorder window: see reorder.hpp.
#include "analysis/reorder.hpp"

#include <stdexcept>
#include <utility>

namespace kron::analysis {

ReorderWindow::ReorderWindow(std::size_t capacity, std::uint64_t ts_mask) : mask_(ts_mask) {
  if (capacity == 0) throw std::invalid_argument("a reorder window holds at least one sample");
  ring_.resize(capacity);
  counters_.resize(capacity);
}

void ReorderWindow::insert_straggler(const Sample& s, std::uint32_t input) {
  // A straggler: move it back past every held sample later than it (equal timestamps keep arrival
  // order). Older than a sample already released, it cannot go in its place (Merged counts it out of
  // order); it still goes before every sample held.
  std::size_t k = size_ - 1;
  while (k > 0 && earlier(s.timestamp, ring_[index(k - 1)].f.timestamp)) --k;
  if (k > 0 || !released_ || !earlier(s.timestamp, released_ts_)) ++reordered_;
  for (std::size_t j = size_; j > k; --j) {
    const std::size_t to = index(j), from = index(j - 1);
    ring_[to] = ring_[from];
    if (ring_[from].f.is_resource()) counters_[to] = counters_[from];
  }
  put(index(k), s, input);
  ++size_;
}

}  // namespace kron::analysis
