// Bounded reorder window: see reorder.hpp.
#include "analysis/reorder.hpp"

#include <stdexcept>
#include <utility>

namespace kron::analysis {

ReorderWindow::ReorderWindow(std::size_t capacity, std::uint64_t ts_mask) : mask_(ts_mask) {
  if (capacity == 0) throw std::invalid_argument("a reorder window holds at least one sample");
  ring_.resize(capacity);
  input_.resize(capacity);
}

void ReorderWindow::insert(std::uint32_t input) {
  const std::size_t at = size_;
  input_[index(at)] = input;
  ++size_;
  if (at == 0) return;
  const std::uint64_t t = ring_[index(at)].timestamp;
  if (!earlier(t, ring_[index(at - 1)].timestamp)) return;  // in order: the common case
  // A straggler: move it back past every held sample later than it (equal timestamps keep arrival order).
  std::size_t k = at - 1;
  while (k > 0 && earlier(t, ring_[index(k - 1)].timestamp)) --k;
  // Older than a sample already released: it cannot go in its place (Merged counts it out of order);
  // it still goes before every sample held.
  if (k > 0 || !released_ || !earlier(t, released_ts_)) ++reordered_;
  Sample s = std::move(ring_[index(at)]);
  for (std::size_t j = at; j > k; --j) {
    ring_[index(j)] = std::move(ring_[index(j - 1)]);
    input_[index(j)] = input_[index(j - 1)];
  }
  ring_[index(k)] = std::move(s);
  input_[index(k)] = input;
}

void ReorderWindow::pop() {
  released_ts_ = ring_[head_].timestamp;
  released_ = true;
  if (++head_ == ring_.size()) head_ = 0;
  --size_;
}

}  // namespace kron::analysis
