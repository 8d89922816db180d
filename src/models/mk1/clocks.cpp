// The first MultiKron's time: the Timestamp Counter, the slow clock prescaled from the timestamp clock,
// and the inputs of the resource counters (001 Table 4). Time advances by events: a jump of N node
// clocks costs the same as one clock. Sources and what is not modelled: mk1.hpp.
#include <string>

#include "models/mk1/mk1.hpp"

namespace kron::mk1 {

namespace {
__extension__ using u128 = unsigned __int128;

// 001 "Resource Counters": "will not count beyond their maximum value ... but will stick".
void add_saturating(std::uint32_t& c, std::uint64_t n) {
  const std::uint64_t v = std::uint64_t{c} + n;
  c = v > 0xffffffffu ? 0xffffffffu : static_cast<std::uint32_t>(v);
}
}  // namespace

void Mk1::set_clocks(std::uint64_t node_hz, std::uint64_t ts_hz) {
  // 001 Timestamp: "the timestamp clock must not exceed 1/3 (one third) of the node clock".
  if (node_hz == 0 || ts_hz == 0 || ts_hz > node_hz / 3)
    throw sim::ConfigError("MultiKron: timestamp clock " + std::to_string(ts_hz) +
                           " Hz must be non-zero and at most 1/3 of the node clock " + std::to_string(node_hz) + " Hz");
  node_hz_ = node_hz;
  ts_hz_ = ts_hz;
  ts_frac_ = 0;
}

// 001 MUX SEL Register: counter i's two-bit field has its MSB in bit 32+i and its LSB in bit i.
unsigned Mk1::mux(unsigned i) const {
  const std::uint64_t m = regs_[addr::kMuxSel];
  return static_cast<unsigned>((m >> (32 + i) & 1) << 1 | (m >> i & 1));
}

// Normal counting: enabled (Enable Register), this input selected (Table 4), and not in test mode
// (Appendix C: "The normal incrementing of all counters is disabled in test mode").
bool Mk1::counting(unsigned i, unsigned source) const { return !test_pin_ && (enable_ >> i & 1) && mux(i) == source; }

void Mk1::count_to(std::uint64_t t) {
  if (t <= now_) return;
  const std::uint64_t dt = t - now_;
  now_ = t;
  std::uint64_t ticks;
  if (dt < (std::uint64_t{1} << 32) && ts_hz_ < (std::uint64_t{1} << 31)) {  // fits in 64 bits: no 128-bit division
    const std::uint64_t acc = ts_frac_ + dt * ts_hz_;
    ticks = acc / node_hz_;
    ts_frac_ = acc % node_hz_;
  } else {
    const u128 acc = u128{ts_frac_} + u128{dt} * ts_hz_;
    ticks = static_cast<std::uint64_t>(acc / node_hz_);
    ts_frac_ = static_cast<std::uint64_t>(acc % node_hz_);
  }
  // 001 Table 2 bit 14 / "Resource Counters": the slow clock is 1/10 (1 us) or 1/100 (10 us) of the
  // timestamp clock.
  const std::uint64_t div = (regs_[addr::kCsr] & csr::kSlow10us) ? 100 : 10;
  slow_pre_ += ticks;
  const std::uint64_t slow = slow_pre_ / div;
  slow_pre_ %= div;
  if (test_pin_) return;
  timestamp_ = (timestamp_ + ticks) & kTimestampMask;
  // Table 4 decoded for all sixteen at once: LSBs in MUX SEL bits 0-15, MSBs in bits 32-47.
  const auto lo = static_cast<unsigned>(regs_[addr::kMuxSel] & 0xffff);
  const auto hi = static_cast<unsigned>(regs_[addr::kMuxSel] >> 32 & 0xffff);
  for (unsigned m = enable_ & lo & hi; m; m &= m - 1) add_saturating(counters_[__builtin_ctz(m)], dt);  // 11
  if (slow)
    for (unsigned m = enable_ & ~lo & ~hi & 0xffffu; m; m &= m - 1)
      add_saturating(counters_[__builtin_ctz(m)], slow);  // 00
}

void Mk1::advance(std::uint64_t dt) {
  const std::uint64_t end = sim::clock_after(now_, dt, "node clock");  // ERRATUM E134: never wraps
  // The output never depends on the counters (a Resource sample's counters were copied to the shadow
  // registers when it was taken), so the bytes due go out first, each stamped with its own clock, and
  // the counters then move once to `end`.
  while (output_possible() && next_byte_at_ <= end) emit_byte();
  count_to(end);
}

void Mk1::tick(std::uint64_t node_clocks) {
  sim::clock_after(now_, node_clocks, "tick");  // ERRATUM E134: a tick past the limit is refused, not wrapped
  advance(node_clocks);
}

void Mk1::drain() {
  while (!fifo_.empty()) {
    kick();
    if (!output_possible())  // on silicon nothing would ever drain: say why instead
      throw sim::HangError(test_pin_ && net_disabled_ ? "drain: the network output is disabled by the TEST register"
                                                      : "drain: samples wait for External FIFO Free, which is low");
    advance(next_byte_at_ - now_);
  }
}

// 001 "Counter Sources": positive-going transitions on the counter's private pin.
void Mk1::set_external(unsigned counter, bool level) {
  if (counter >= 16)
    throw sim::ConfigError("MultiKron: external input X" + std::to_string(counter) + " does not exist (0-15)");
  if (level && !ext_level_[counter] && counting(counter, static_cast<unsigned>(MuxSource::External)))
    add_saturating(counters_[counter], 1);
  ext_level_[counter] = level;
}

void Mk1::set_test_mode(bool on) {
  test_pin_ = on;
  kick();
}

void Mk1::set_net_ready(bool ready) {
  net_ready_ = ready;
  kick();
}

}  // namespace kron::mk1
