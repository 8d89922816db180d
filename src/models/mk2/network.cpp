// MultiKron II collection-network output.
// Sources: 000 NETWORK OUTPUT (ten-bit elements, NETCLK at half the Node clock, NETRDY, FIFODAB),
//   "Resource Counters and their Shadow Registers" (84 network clocks per Resource sample, "only one byte
//   is transferred on each network clock cycle"), Table B2 (byte order), Table B3b rows 4 and 8.
// Decisions: ERRATUM E16 (when the shadow registers and FIFO levels free up, NETRDY sampling).
//
// Time: network clock cycles start at even node clocks (NETCLK is the node clock halved from RESETB).
// A byte occupies one cycle [s, s+2) and "goes out" at s+2, when its FIFO level (after the 20th byte)
// or the shadow registers (after the last byte) free up. Whole runs of bytes are accounted at once.
#include "models/mk2/mk2.hpp"

#include <algorithm>

namespace kron::mk2 {
namespace {
constexpr std::uint64_t even_ceil(std::uint64_t t) { return (t + 1) & ~std::uint64_t{1}; }
// Cycles that start in [s, until): those a change of NETRDY at `until` no longer affects.
constexpr std::uint64_t cycles_before(std::uint64_t s, std::uint64_t until) { return (until - s + 1) / 2; }
}  // namespace

bool Mk2::net_ready_at(std::uint64_t cycle_start) const {
  return cycle_start >= netrdy_since_ ? netrdy_ : netrdy_prev_;
}

// The output level's 160 bits, then, when its 161st bit marks a Resource sample, the sixteen shadow
// registers: 000 Table B2, most significant byte first.
void Mk2::start_output() {
  const FifoEntry& e = fifo_head();
  for (unsigned g = 0; g < kFifoGroups; ++g)
    for (unsigned b = 0; b < 4; ++b) out_bytes_[4 * g + b] = static_cast<std::uint8_t>(e.group[g] >> (24 - 8 * b));
  out_size_ = e.resource ? kResourceBytes : kTraceBytes;
  if (e.resource)
    for (unsigned j = 0; j < kResourceCounters; ++j)
      for (unsigned b = 0; b < 4; ++b)
        out_bytes_[kTraceBytes + 4 * j + b] = static_cast<std::uint8_t>(shadow_[j] >> (24 - 8 * b));
  out_active_ = true;
  out_pos_ = 0;
  out_popped_ = false;
}

// n bytes go out, the first at node clock first_end, one per network clock.
void Mk2::finish_bytes(unsigned n, std::uint64_t first_end) {
  if (on_element)
    for (unsigned i = 0; i < n; ++i) {
      const unsigned pos = out_pos_ + i;
      on_element(first_end + 2 * i, classic::NetElement::make(out_bytes_[pos], pos + 1 == out_size_));
      if (!netrdy_) n = i + 1;  // the observer (the PCI board's FIFO full flag) lowered NETRDY: stop here
    }
  out_pos_ += n;
  next_cycle_ = first_end + 2 * (n - 1);
  if (!out_popped_ && out_pos_ == kTraceBytes) {  // the trace part has left the FIFO's output level
    pop_fifo();
    out_popped_ = true;
  }
  if (out_pos_ == out_size_) {
    out_active_ = false;
    if (out_size_ == kResourceBytes) shadow_busy_ = false;
    if (on_sample) on_sample(sim::SampleOut{next_cycle_, std::span<const std::uint8_t>(out_bytes_.data(), out_size_)});
  }
}

void Mk2::run_network(std::uint64_t t) {
  while (net_enabled_ && output_pending()) {
    const std::uint64_t s = next_cycle_;
    if (!net_ready_at(s)) {
      if (!netrdy_) return;                    // FIFODAB stays high until NETRDY rises
      next_cycle_ = even_ceil(netrdy_since_);  // it rose: the first cycle after
      continue;
    }
    if (s + 2 > t) return;
    if (!out_active_) start_output();
    const unsigned milestone = out_popped_ ? out_size_ : kTraceBytes;
    std::uint64_t n = std::min<std::uint64_t>(milestone - out_pos_, (t - s) / 2);
    if (!netrdy_ && s < netrdy_since_) n = std::min(n, cycles_before(s, netrdy_since_));  // NETRDY fell meanwhile
    finish_bytes(static_cast<unsigned>(n), s + 2);
  }
}

// The node clock at which the next FIFO level or the shadow registers free up if the pins stay as they
// are; kNever when the output is stalled (NETRDY low, network disabled) or idle.
std::uint64_t Mk2::next_release() const {
  if (!net_enabled_ || !output_pending()) return kNever;
  std::uint64_t s = next_cycle_;
  if (!net_ready_at(s)) {
    if (!netrdy_) return kNever;
    s = even_ceil(netrdy_since_);
  }
  const unsigned pos = out_active_ ? out_pos_ : 0;
  const unsigned size = out_active_ ? out_size_ : (fifo_head().resource ? kResourceBytes : kTraceBytes);
  const unsigned milestone = out_active_ && out_popped_ ? size : kTraceBytes;
  const std::uint64_t need = milestone - pos;
  if (!netrdy_ && s < netrdy_since_ && cycles_before(s, netrdy_since_) < need) return kNever;
  return s + 2 * need;
}

}  // namespace kron::mk2
