// The MultiKron II chip (NIST, 1994), bit-exact and clock-accurate as seen from its pins: the processor
// bus, the collection-network output and the clock, CPU ID, external, wait-state, NETRDY and TESTB inputs.
//
// Sources: 000 (NISTIR 5571) whole: PROCESSOR INTERFACE, MEASUREMENT SUPPORT, RESOURCE COUNTERS, SAMPLING,
//   NETWORK OUTPUT, TEST MODE, Appendix A, Tables B1-B7, C3. 001 (NISTIR 4737) Table C-1 for the meaning
//   of the FIFO's extra output bit.
//
// Files (one concern each):
//   registers.hpp/.cpp  the register table of Tables B4/B1 and its generic application
//   mk2.cpp             pins, resets, time (tick, drain), the timestamp
//   bus.cpp             processor reads and writes: wait states, 32-bit mode, Table B3b, test operations
//   counters.cpp        resource counters and shadow registers, Tables B5-B7
//   fifo.cpp            sample assembly, the FIFO and Table B3a (wait or discard, error flags)
//   network.cpp         the network output: one byte per network clock while NETRDY is high
//
// Not modelled: HOLDB and STARTB (a script access is one complete READB/WRITEB cycle, so HOLDB only
//   stretches ACKB, which nothing observes); OUTDISB; the electrical timing of Figures 2 and 3; a CPU ID
//   with more than one line active (the model takes an encoded CPU number); RESETB held for five clocks
//   (a reset is instantaneous).
// Decisions: docs/errata.md E3, E5-E8, E11-E19; grep ERRATUM.
#pragma once
#include <array>
#include <cstdint>

#include "kron/sim/device.hpp"
#include "models/mk2/registers.hpp"

namespace kron::mk2 {

// ERRATUM E5: the depth of the Trace FIFO ("a small internal FIFO") is not given; kron uses 4 entries.
inline constexpr unsigned kFifoDepth = 4;
inline constexpr unsigned kFifoGroups = 5;             // 160 bits = five 32-bit groups A-E (000 TEST MODE)
inline constexpr unsigned kTraceBytes = 20;            // 000 Table B2
inline constexpr unsigned kResourceBytes = 84;         // 000 Table B2
inline constexpr unsigned kNodeClocksPerNetClock = 2;  // NETCLK is half the Node clock (000 NETWORK OUTPUT)
inline constexpr std::uint64_t kTimestampMask = (std::uint64_t{1} << 56) - 1;  // 56-bit counter
inline constexpr std::uint64_t kNever = ~std::uint64_t{0};

// One FIFO level: 160 bits as five 32-bit groups (A = most significant, carrying the header byte) and
// the 161st bit, which marks a Resource sample whose counters follow from the shadow registers
// (ERRATUM E6, after 001 Table C-1's "129th bit ... whether or not the Resource Counters are included").
struct FifoEntry {
  std::array<std::uint32_t, kFifoGroups> group{};
  bool resource = false;
};

class Mk2 final : public sim::Device {
 public:
  Mk2();

  classic::Chip chip() const override { return classic::Chip::Mk2; }
  std::uint32_t address_limit() const override { return kAddresses; }

  // ---- pins (mk2.cpp) ----
  void set_clocks(std::uint64_t node_hz, std::uint64_t ts_hz) override;
  void hardware_reset() override;
  void set_cpu(unsigned cpu) override;
  void set_test_mode(bool on) override;
  void set_wait_states(unsigned n) override;
  void set_net_ready(bool ready) override;
  void set_external(unsigned counter, bool level) override;

  // ---- processor bus (bus.cpp) ----
  void write(std::uint32_t addr, std::uint64_t data) override;
  std::uint64_t read(std::uint32_t addr) override;
  std::uint64_t peek(std::uint32_t addr) const override;

  // ---- time (mk2.cpp) ----
  void tick(std::uint64_t node_clocks) override;
  void drain() override;
  std::uint64_t now() const override { return now_; }

  // Node clocks of one processor access that is not held: strobe, latched wait states, ACKB (ERRATUM E7).
  unsigned access_clocks() const { return 2 + wait_states_latched_; }

 private:
  // A stored register by name (Table B4); for Source Address Registers the first of the eight.
  std::uint64_t& reg(Reg r) { return stored_[address_of(r)]; }
  std::uint64_t reg(Reg r) const { return stored_[address_of(r)]; }
  bool csr_control(unsigned bit) const { return reg(Reg::Csr) >> bit & 1; }
  unsigned control_field(Reg r, unsigned counter) const { return field(reg(r), counter); }

  // ---- mk2.cpp: resets, time, timestamp ----
  void reset_state(std::uint64_t t);              // what both resets do, at node clock t (000 Software Reset)
  void advance(std::uint64_t t);                  // run the network up to node clock t, then now_ = t
  std::uint64_t ts_edges(std::uint64_t t) const;  // timestamp-clock rising edges in (0, t]
  std::uint64_t timestamp(std::uint64_t t) const;
  void set_timestamp(std::uint64_t t, std::uint64_t value);
  void rebase_clocks();                          // before the clock ratio or the counting state changes
  bool counting() const { return !test_mode_; }  // ERRATUM E15: TESTB stops the timestamp and the counters

  // ---- bus.cpp ----
  std::uint64_t begin_access();          // the clock at which an access that is not held acts
  void end_access(std::uint64_t t_act);  // ACKB at t_act; the access ends one clock later
  void hold_until(std::uint64_t& t, bool (Mk2::*ready)() const, const char* what);
  void write_hook(const RegisterInfo& r, std::uint32_t addr, std::uint64_t data, std::uint64_t& t);
  std::uint64_t read_hook(const RegisterInfo& r, std::uint32_t addr, std::uint64_t t) const;
  std::uint64_t csr_value() const;

  // ---- counters.cpp ----
  std::array<std::uint32_t, 16> counters_at(std::uint64_t t) const;  // the counters at node clock t
  void settle_counters(std::uint64_t t);                             // bring every counter up to node clock t
  std::uint64_t clock_edges(ClockSel c, std::uint64_t from, std::uint64_t to) const;
  unsigned lead(unsigned j) const;  // the even counter of a double-precision pair, else j
  bool is_pair(unsigned j) const;
  void add_counts(unsigned j, std::uint64_t n);  // saturating (000 "will not count beyond their maximum")
  void write_control(const RegisterInfo& r, std::uint64_t data, std::uint64_t t);
  void write_counter(unsigned j, std::uint32_t value, std::uint64_t t);
  void increment_counter(unsigned j, std::uint64_t t);
  void copy_to_shadow(std::uint64_t t);

  // ---- fifo.cpp ----
  void trigger(bool resource, unsigned level, std::uint64_t data, std::uint64_t& t);
  bool fifo_ready() const { return fifo_count_ < kFifoDepth; }
  bool shadow_ready() const { return !shadow_busy_; }
  bool resource_ready() const { return fifo_ready() && shadow_ready(); }
  void push_fifo(const FifoEntry& e, std::uint64_t t);
  void pop_fifo();
  const FifoEntry& fifo_head() const { return fifo_[fifo_head_]; }

  // ---- network.cpp ----
  void run_network(std::uint64_t t);   // send every byte whose network clock ends by t
  std::uint64_t next_release() const;  // when the next FIFO level or the shadow registers free up
  bool output_pending() const { return out_active_ || fifo_count_ > 0; }
  bool net_ready_at(std::uint64_t cycle_start) const;
  void start_output();
  void finish_bytes(unsigned n, std::uint64_t first_end);

  // ---- state ----
  // Clocks and time.
  std::uint64_t node_hz_ = sim::kDefaultNodeHz, ts_hz_ = sim::kDefaultTsHz;
  std::uint64_t now_ = 0;                                  // node clocks since the last hardware reset
  std::uint64_t ts_epoch_clock_ = 0, ts_epoch_edges_ = 0;  // ts_edges() across clock changes
  // $02 Timestamp: value_ at ts edge count base_edges_ (frozen in test mode).
  std::uint64_t ts_value_ = 0, ts_base_edges_ = 0;

  // Pins.
  unsigned cpu_ = 0;
  bool test_mode_ = false;
  unsigned wait_states_pin_ = 0, wait_states_latched_ = 0;
  bool netrdy_ = true, netrdy_prev_ = true;  // NETRDY now, and before netrdy_since_
  std::uint64_t netrdy_since_ = 0;
  std::array<bool, 16> ext_{};

  // Registers kept as stored values (Table B4 rows with ReadKind::Stored, and the CSR's control bits).
  std::array<std::uint64_t, kAddresses> stored_{};
  std::uint32_t wait_counter_ = 0;     // $05, wraps (000 Wait Error Counter)
  std::uint32_t overrun_counter_ = 0;  // $06, wraps (000 Overrun Error Counter)

  // $40-$5F Resource Counters and their shadow registers. A double-precision pair keeps its low half in
  // the even counter and its high half in the odd one (ERRATUM E8).
  std::array<std::uint32_t, 16> counter_{};
  std::array<std::uint32_t, 16> shadow_{};
  std::uint64_t counters_synced_ = 0;  // node clock the counters are settled to
  bool shadow_busy_ = false;           // loaded by a Resource sample, until its last byte goes out

  // Samples: error flags carried into the next successful sample (000 SAMPLING).
  bool pending_fifo_overrun_ = false, pending_shadow_overrun_ = false;

  // The FIFO: a ring of kFifoDepth levels; the head is the output level.
  std::array<FifoEntry, kFifoDepth> fifo_{};
  unsigned fifo_head_ = 0, fifo_count_ = 0;

  // The network output: the sample being sent (snapshotted when its first byte starts).
  bool net_enabled_ = true;  // test mode: Disable / Enable Output Network
  bool out_active_ = false;
  unsigned out_pos_ = 0, out_size_ = 0;
  bool out_popped_ = false;  // its FIFO level has been advanced
  std::array<std::uint8_t, kResourceBytes> out_bytes_{};
  std::uint64_t next_cycle_ = 0;  // start (node clock, even) of the next network clock cycle
};

}  // namespace kron::mk2
