// MultiKron II Resource Counters, their shadow registers and control registers.
// Sources: 000 RESOURCE COUNTERS (all subsections), Appendix A "Resource Counters", Tables B5-B7.
// Decisions: ERRATUM E8 (double-precision pairs), E15 (test mode), E18 (software increment), E19 (clocks).
#include "models/mk2/mk2.hpp"

#include <algorithm>

namespace kron::mk2 {
namespace {
constexpr std::uint32_t kMax32 = 0xffff'ffff;
using Counters = std::array<std::uint32_t, kResourceCounters>;

// 000: "The Resource Counters will not count beyond their maximum value (i.e, no wrap around), but will
// stick at this maximum value until reset." A pair is one 64-bit counter, low half in the even counter
// (ERRATUM E8).
void add_counts(Counters& c, unsigned j, bool pair, std::uint64_t n) {
  if (pair) {
    const std::uint64_t v = std::uint64_t{c[j + 1]} << 32 | c[j];
    const std::uint64_t sum = n > ~v ? ~std::uint64_t{0} : v + n;
    c[j] = static_cast<std::uint32_t>(sum);
    c[j + 1] = static_cast<std::uint32_t>(sum >> 32);
  } else {
    c[j] = static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{c[j]} + n, kMax32));
  }
}

}  // namespace

// Table B5 "Double precision ... applies only to EVEN Resource Counters, ODD Counters use the value from
// their EVEN pair".
bool Mk2::is_pair(unsigned j) const { return double_precision(control_field(Reg::Mode, j & ~1u)); }
unsigned Mk2::lead(unsigned j) const { return is_pair(j) ? (j & ~1u) : j; }

void Mk2::add_counts(unsigned j, std::uint64_t n) { mk2::add_counts(counter_, j, is_pair(j), n); }

// Table B6: rising edges of the selected internal clock in node clocks (from, to]. The dividers run
// from RESETB (ERRATUM E19).
std::uint64_t Mk2::clock_edges(ClockSel c, std::uint64_t from, std::uint64_t to) const {
  switch (c) {
    case ClockSel::NodeClk: return to - from;
    case ClockSel::NodeClk10: return to / 10 - from / 10;
    case ClockSel::NodeClk100: return to / 100 - from / 100;
    case ClockSel::TsClk: return ts_edges(to) - ts_edges(from);
    case ClockSel::Nop: break;
  }
  return 0;
}

// Counting by events: the counters that count a clock are brought up to date only when something
// reads or changes them. Table B5: x001 CLK counts the Clock Select clock; x011 External Enable counts
// it only while the counter's external input is high; x010 Software and x100 External count events
// (increment_counter, set_external).
Counters Mk2::counters_at(std::uint64_t t) const {
  Counters c = counter_;
  if (!counting() || t <= counters_synced_) return c;
  for (unsigned j = 0; j < kResourceCounters; ++j) {
    if (lead(j) != j || !enabled(control_field(Reg::Enable, j))) continue;
    const Mode src = mode_of(control_field(Reg::Mode, j));
    if (src == Mode::Clock || (src == Mode::ExternalEnable && ext_[j]))
      mk2::add_counts(c, j, is_pair(j), clock_edges(clock_of(control_field(Reg::ClockSelect, j)), counters_synced_, t));
  }
  return c;
}

void Mk2::settle_counters(std::uint64_t t) {
  if (t <= counters_synced_) return;
  counter_ = counters_at(t);
  counters_synced_ = t;
}

// $08 Enable, $0A Mode, $0C Clock Select: fields whose code bits are written 0 are left unchanged
// (regs::write_fields, ERRATUM E13). Table B7 xx11 "Reset & Enable counter" clears the counter (both halves of a pair)
// as it enables it.
void Mk2::write_control(const RegisterInfo& r, std::uint64_t data, std::uint64_t t) {
  settle_counters(t);
  reg(r.reg) = apply_write(r, reg(r.reg), data);
  if (r.reg != Reg::Enable) return;
  for (unsigned j = 0; j < kResourceCounters; ++j) {
    if (enable_of(field(data, j)) != Enable::ResetEnable || lead(j) != j) continue;
    counter_[j] = 0;
    if (is_pair(j)) counter_[j + 1] = 0;
  }
}

// $40-$4F: "Writing to the address of a Resource Counter ... will place the data written into that
// Resource Counter, the shadow registers are not affected."
void Mk2::write_counter(unsigned j, std::uint32_t value, std::uint64_t t) {
  settle_counters(t);
  counter_[j] = value;
}

// $50-$5F: "will cause the corresponding Resource Counter to be incremented, if the 'software increment'
// option is selected" (ERRATUM E18: and the counter is enabled). In test mode the processor increments any
// counter (000 Table C3 TESTB, ERRATUM E15).
void Mk2::increment_counter(unsigned j, std::uint64_t t) {
  settle_counters(t);
  const unsigned l = lead(j);
  if (test_mode_ || (mode_of(control_field(Reg::Mode, l)) == Mode::Software && enabled(control_field(Reg::Enable, l))))
    add_counts(l, 1);
}

// "the contents of all Resource Counters are copied into the corresponding shadow registers"
void Mk2::copy_to_shadow(std::uint64_t t) {
  settle_counters(t);
  shadow_ = counter_;
}

}  // namespace kron::mk2
