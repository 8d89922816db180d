// MultiKron II: pins, resets, time and the timestamp. Sources and what is not modelled: mk2.hpp.
#include "models/mk2/mk2.hpp"

#include <string>

namespace kron::mk2 {
namespace {
__extension__ using u128 = unsigned __int128;
}  // namespace

Mk2::Mk2() { hardware_reset(); }

// ---- resets -------------------------------------------------------------------------------------------

// 000 Software Reset: "initializes most of the machine state ... it does not affect the contents of the
// Timestamp Counter". ERRATUM E12: everything Table B4 holds returns to its reset value, the FIFO, the
// shadow registers and the network output empty; the Timestamp, the wait-state latch and the node-clock
// count are kept.
void Mk2::reset_state(std::uint64_t t) {
  stored_.fill(0);
  for (const RegisterInfo& r : kRegisters)
    if (r.read == ReadKind::Stored || r.write == WriteKind::W1Pairs)
      for (unsigned a = r.first; a <= r.last; ++a) stored_[a] = r.reset;
  wait_counter_ = overrun_counter_ = 0;
  counter_.fill(0);
  shadow_.fill(0);
  counters_synced_ = t;
  shadow_busy_ = false;
  pending_fifo_overrun_ = pending_shadow_overrun_ = false;
  fifo_.fill(FifoEntry{});
  fifo_head_ = fifo_count_ = 0;
  net_enabled_ = true;
  out_active_ = false;
  out_pos_ = 0;
}

// 000 Timestamp: RESETB resets the Timestamp counter to zero; 000 Table C3 WAITSTATE: "only active during
// a MultiKron II chip RESET".
void Mk2::hardware_reset() {
  now_ = 0;
  ts_epoch_clock_ = ts_epoch_edges_ = 0;
  ts_value_ = ts_base_edges_ = 0;
  wait_states_latched_ = wait_states_pin_;
  netrdy_prev_ = netrdy_;
  netrdy_since_ = 0;
  next_cycle_ = 0;
  reset_state(0);
}

// ---- pins ---------------------------------------------------------------------------------------------

void Mk2::set_clocks(std::uint64_t node_hz, std::uint64_t ts_hz) {
  if (node_hz == 0 || ts_hz == 0) throw sim::ConfigError("clock frequencies must be greater than 0 Hz");
  // 000 Timestamp: "The Timestamp clock should not exceed 1/3 (one third) of the MultiKron II Node clock
  // frequency"; Table C3 Timestamp_clk: "It MUST NOT Exceed 1/3 the Node clock frequency".
  if (static_cast<u128>(ts_hz) * 3 > node_hz)
    throw sim::ConfigError("timestamp clock " + std::to_string(ts_hz) + " Hz exceeds a third of the node clock " +
                           std::to_string(node_hz) + " Hz (000 Timestamp: ts <= node/3)");
  rebase_clocks();
  node_hz_ = node_hz;
  ts_hz_ = ts_hz;
}

void Mk2::set_cpu(unsigned cpu) {
  if (cpu >= kCpuLines) throw sim::ConfigError("CPU ID " + std::to_string(cpu) + " out of range 0-7");
  cpu_ = cpu;
}

void Mk2::set_test_mode(bool on) {
  if (on == test_mode_) return;
  rebase_clocks();  // the counts up to now belong to the old mode
  test_mode_ = on;
}

void Mk2::set_wait_states(unsigned n) {
  // 000 Appendix A: "a single pad specifying 0 or 1 wait states".
  if (n > 1) throw sim::ConfigError("wait states " + std::to_string(n) + " out of range 0-1");
  wait_states_pin_ = n;
}

// NETRDY is sampled at the start of each network clock cycle (000 NETWORK OUTPUT: "at least 16
// nanoseconds before the positive-going transition of NETCLK"): a cycle already under way finishes.
void Mk2::set_net_ready(bool ready) {
  run_network(now_);
  netrdy_prev_ = net_ready_at(next_cycle_);
  netrdy_since_ = now_;
  netrdy_ = ready;
}

void Mk2::set_external(unsigned counter, bool level) {
  if (counter >= kResourceCounters)
    throw sim::ConfigError("external input X" + std::to_string(counter) + " out of range X0-X15");
  settle_counters(now_);  // an External Enable counter counted under the old level up to now
  const bool rising = level && !ext_[counter];
  ext_[counter] = level;
  // Table B5 x100: "Count external signals, low to high". ERRATUM E8: a pair counts its even input.
  if (rising && counting() && lead(counter) == counter &&
      mode_of(control_field(Reg::Mode, counter)) == Mode::ExternalSignal &&
      enabled(control_field(Reg::Enable, counter)))
    add_counts(counter, 1);
}

// ---- time ---------------------------------------------------------------------------------------------

void Mk2::advance(std::uint64_t t) {
  sim::clock_after(now_, t - now_, "node clock");  // t >= now_; ERRATUM E134: never past kMaxClock
  run_network(t);
  now_ = t;
}

void Mk2::tick(std::uint64_t node_clocks) {
  advance(sim::clock_after(now_, node_clocks, "tick"));  // ERRATUM E134
}

void Mk2::drain() {
  while (output_pending() || shadow_busy_) {
    const std::uint64_t t = next_release();
    if (t == kNever)
      throw sim::HangError(net_enabled_ ? "drain: samples wait for NETRDY, which is low"
                                        : "drain: samples wait while the output network is disabled (test mode)");
    advance(std::max(t, now_));
  }
}

// ERRATUM E19: the timestamp clock's rising edges fall at node clocks floor(k * node_hz / ts_hz) after
// RESETB (the two clocks start in phase); a frequency change keeps the edges counted so far.
std::uint64_t Mk2::ts_edges(std::uint64_t t) const {
  return ts_epoch_edges_ + static_cast<std::uint64_t>(static_cast<u128>(t - ts_epoch_clock_) * ts_hz_ / node_hz_);
}

// $02 Timestamp: "This 56-bit counter ... tallies the Timestamp clock" (000 Timestamp); frozen in test
// mode (ERRATUM E15).
std::uint64_t Mk2::timestamp(std::uint64_t t) const {
  if (!counting()) return ts_value_;
  return (ts_value_ + ts_edges(t) - ts_base_edges_) & kTimestampMask;
}

void Mk2::set_timestamp(std::uint64_t t, std::uint64_t value) {
  ts_value_ = value & kTimestampMask;
  ts_base_edges_ = ts_edges(t);
}

// Settles everything that counts clocks up to now_, so that a change of clock ratio or of the counting
// state applies from now on.
void Mk2::rebase_clocks() {
  settle_counters(now_);
  set_timestamp(now_, timestamp(now_));
  ts_epoch_edges_ = ts_edges(now_);
  ts_epoch_clock_ = now_;
  ts_base_edges_ = ts_epoch_edges_;
}

}  // namespace kron::mk2
