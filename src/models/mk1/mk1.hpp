// The first MultiKron chip (NISTIR 4737, documents 001/002), bit-exact at its processor bus and its
// collection-network output, with time counted in node clocks and advanced by events.
//
// Sources (001, with 002 where 001's scan is garbled):
//   Table 1 (the seven low address bits), Appendix A Table A-1 (address map and its notes),
//   "Software Reset", "Timestamp", Table 2 (CSR), "Filter Register", "Source Address Registers",
//   "Resource Counters and their Shadow Registers", Tables 3A / 3B, "Processor Reading/Incrementing of a
//   Resource Counter", Table 4 and the MUX SEL worked example (printed in 002 only), Reset / Enable /
//   Disable Registers, Wait Counter, Overrun Counter, NETWORK OUTPUT, Tables 5-7, Appendix C Table C-1
//   and "FIFO Output".
//
// Table of contents (one file per concern):
//   registers.hpp / registers.cpp  the register table of Table A-1, described once (reset value,
//                                  read-only mask, write-1-to-act mask) and the generic code applying it
//   bus.cpp                        processor reads and writes: address decode, Table 3A, peek
//   clocks.cpp                     time: timestamp, slow clock, resource counter inputs (Table 4)
//   sampling.cpp                   triggers, Filter Register, FIFO, shadow registers, Table 3B, network
//   test_mode.cpp                  Appendix C: TEST register (Table C-1) and FIFO Output
//
// Not modelled (docs/models-mk1-pcib.md says why):
//   - pin timing below one node clock: the setup/hold of Figure 2, the 16 ns / 12 ns network set-up of
//     Figure 3, the five-clock minimum reset pulse. The model's unit of time is the node clock.
//   - electrical behaviour: the high-impedance pin, parity errors on the wire, the internal-TEST pin and
//     the eight internal-testing outputs (Table B-1), the 40 MHz vs 50 MHz yield of STATUS.
//   - the 32-bit bus variant mentioned in the abstract (001 describes only the 64-bit bus).
// Decisions: docs/errata.md E60-E69.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kron/sim/device.hpp"
#include "models/mk1/registers.hpp"

namespace kron::mk1 {

class Mk1 final : public sim::Device {
 public:
  Mk1();

  classic::Chip chip() const override { return classic::Chip::Mk1; }
  std::uint32_t address_limit() const override { return 128; }  // 001 Table 1: seven address bits

  void set_clocks(std::uint64_t node_hz, std::uint64_t ts_hz) override;
  void hardware_reset() override;
  void set_cpu(unsigned cpu) override;
  void set_test_mode(bool on) override;
  void set_wait_states(unsigned n) override;
  void set_net_ready(bool ready) override;
  void set_external(unsigned counter, bool level) override;

  void write(std::uint32_t addr, std::uint64_t data) override;
  std::uint64_t read(std::uint32_t addr) override;
  std::uint64_t peek(std::uint32_t addr) const override;

  void tick(std::uint64_t node_clocks) override;
  void drain() override;
  std::uint64_t now() const override { return now_; }

  // ---- inspection for tests and `kron sim` status (never changes state) ----
  std::uint64_t timestamp() const { return timestamp_; }
  std::uint32_t counter(unsigned i) const { return counters_.at(i); }
  bool shadow_full() const { return shadow_full_; }
  std::size_t fifo_level() const { return fifo_.size(); }
  std::uint64_t node_hz() const { return node_hz_; }
  std::uint64_t ts_hz() const { return ts_hz_; }

  // The internal trace FIFO's depth in samples. ERRATUM E62: 001 says only "a small internal FIFO".
  static constexpr std::size_t kFifoDepth = 4;
  // A processor access without waits lasts this many node clocks plus the CSR's wait states.
  // ERRATUM E60: Figure 2 (the processor interface timing) is not legible in the OCR.
  static constexpr std::uint64_t kAccessClocks = 2;

 private:
  // One rank of the 129-bit FIFO (001 Appendix C "FIFO Output"): the 16 bytes of a Trace sample as
  // sent, first byte = FIFO bits 127-120 (ERRATUM E63), and bit 128, "Resource counters follow".
  struct FifoEntry {
    std::array<std::uint8_t, 16> bytes{};
    bool resource = false;
  };

  // The FIFO's ranks: a fixed ring (the depth is a few samples; no allocation per sample).
  class Ring {
   public:
    bool empty() const { return count_ == 0; }
    std::size_t size() const { return count_; }
    const FifoEntry& front() const { return e_[head_]; }
    void push_back(const FifoEntry& x) { e_[(head_ + count_++) % kFifoDepth] = x; }  // caller checks size()
    void pop_front() { head_ = (head_ + 1) % kFifoDepth, --count_; }
    void clear() { head_ = count_ = 0; }

   private:
    std::array<FifoEntry, kFifoDepth> e_{};
    std::size_t head_ = 0, count_ = 0;
  };

  // registers.cpp
  void reset_registers();
  std::uint64_t& stored(unsigned addr) { return regs_[addr]; }
  std::uint64_t csr_read() const;

  // clocks.cpp
  void count_to(std::uint64_t t);  // advance counters and timestamp to node clock t (no output)
  void advance(std::uint64_t dt);  // advance time, emitting network bytes at their clocks
  unsigned mux(unsigned counter) const;
  bool counting(unsigned counter, unsigned source) const;

  // sampling.cpp
  void trigger(unsigned addr, std::uint64_t data);
  bool output_possible() const;
  void kick();  // output may have become possible: schedule its next byte on a network clock edge
  void emit_byte();
  // Runs the network output until the FIFO has room and/or the shadow registers are free; returns the
  // node clocks waited. Throws sim::HangError when the output is stalled and the wait would never end.
  std::uint64_t wait_for(bool need_fifo, bool need_shadow);
  void enqueue(const FifoEntry& e);
  void copy_to_shadow() { shadow_ = counters_; }

  // test_mode.cpp
  void test_write(std::uint64_t value);
  static FifoEntry test_entry(std::uint32_t data);  // TEST data replicated x4, bit 128 = data bit 0
  std::uint32_t fifo_output() const;

  // bus.cpp
  void access_done();
  std::uint64_t read_counter(unsigned i);
  void software_reset();

  // ---- clocks and pins ----
  std::uint64_t node_hz_ = 50'000'000;  // 001 "node clock (50 MHz)"
  std::uint64_t ts_hz_ = 10'000'000;    // 001 "Timestamp clock (10 MHz)"
  std::uint64_t now_ = 0;
  std::uint64_t ts_frac_ = 0;   // node_hz-ths of a timestamp clock since the last timestamp tick
  std::uint64_t slow_pre_ = 0;  // timestamp clocks since the last slow-clock tick
  unsigned cpu_ = 0;
  bool test_pin_ = false;
  unsigned wait_pins_ = 0;  // latched into CSR bits 12-13 at hardware reset
  unsigned wait_states_ = 0;
  bool net_ready_ = true;  // External FIFO Free
  std::array<bool, 16> ext_level_{};

  // ---- registers of Table A-1 (storage for the plainly loaded ones, indexed by address) ----
  std::array<std::uint64_t, 64> regs_{};
  std::uint64_t timestamp_ = 0;  // 56 bits
  std::uint16_t enable_ = 0;     // Enable Register state
  std::uint32_t wait_counter_ = 0;
  std::uint32_t overrun_counter_ = 0;
  std::array<std::uint32_t, 16> counters_{};
  std::array<std::uint32_t, 16> shadow_{};
  bool shadow_full_ = false;

  // ---- sampling ----
  Ring fifo_;
  bool lost_fifo_ = false;    // a sample was lost since the last successful one (CSR bit 8, header flag)
  bool lost_shadow_ = false;  // a Resource sample was lost to busy shadow registers (CSR bit 9)
  std::uint64_t next_byte_at_ = 0;
  std::array<std::uint8_t, 80> tx_{};
  std::size_t tx_len_ = 0, tx_pos_ = 0;

  // ---- test mode state (Table C-1) ----
  unsigned fifo_group_ = 0;
  bool net_disabled_ = false;
  bool test_source_ = false;
};

}  // namespace kron::mk1
