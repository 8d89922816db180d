// The PCI Bus MultiKron Interface Board of the Experimenter's Toolkit (NISTIR 5993, document 003),
// modelled around a MultiKron II chip model, at the board's PCI byte offsets.
//
// Sources (003): Table 1 (offset byte address map), Table 2 and section 1.2 (Configuration Register),
//   1.3 (output data collection, simple / circular buffer, the wrap bits of the memory address pointer,
//   "Default Configuration" 003201), 2.1-2.7 (PCI interface, CPU ID signals, the DEVSEL# wirings of 2.3,
//   the 1024-entry board FIFO and its full flag, FIFO testing, the external cable, local memory and the
//   pointer interlock).
//
// Table of contents (one file per concern):
//   registers.hpp / registers.cpp  Table 1 and Table 2 described once: offsets, reset value, read-only
//                                  mask (V_NUM 0x90, N/A bits), field names and their printer
//   bus.cpp                        PCI reads and writes: decode of Table 1, the chip window, board
//                                  registers, local memory, the TEST operation, DEVSEL# during accesses
//   fifo.cpp                       the board FIFO, its state machine (memory / cable / CPU sequences),
//                                  the memory address pointer, simple and circular modes
//   clocks.cpp                     Configuration bits that drive the chip's pins: CPU ID lines, TESTB,
//                                  WAIT_CPU, MK_OE, EN_EXT, DIV2, TS_RATIO; board commands (memdump,
//                                  memimage, cable)
//   image.hpp / image.cpp          the board memory file formats (image with a versioned header; raw dump)
//
// Not modelled (docs/models-mk1-pcib.md): the MultiKron_vc chip and its SRAM (WAIT_MEM is stored, does nothing);
//   PCI bus timing below one node clock (an access costs kPciAccessClocks node clocks); the S16D card
//   (the cable delivers its 16-bit words, high byte first, to a file); the FIFO state machine's own
//   cycle timing (its sequences complete as soon as their bytes are in the FIFO, which at 33 MHz outpaces
//   the MultiKron II's 20 MB/s network); "undetermined results" of switching modes mid-sequence;
//   electrical behaviour (a bus time-out with MK_OE low is reported as an error, not a hang).
// Decisions: docs/errata.md E70-E79.
#pragma once
#include <array>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "kron/sim/device.hpp"
#include "models/pcib/registers.hpp"

namespace kron::pcib {

class PciBoard final : public sim::Device {
 public:
  // The board around `chip` (a MultiKron II model). make_pci_board() builds the usual one.
  explicit PciBoard(std::unique_ptr<sim::Device> chip);
  PciBoard();  // with a MultiKron II model (kron::mk2::Mk2)
  ~PciBoard() override;

  classic::Chip chip() const override { return chip_->chip(); }
  std::uint32_t address_limit() const override { return kAddressLimit; }

  // Pins of the board's connector: set_clocks sets the EXTERNAL clock (used with EN_EXT; the timestamp
  // ratio still comes from TS_RATIO, so ts_hz is ignored); set_cpu drives the XCPU[7..0] lines (one-hot
  // of `cpu`), used with EXT_CPU; set_external drives the counters' external inputs (X0 and X2 are
  // the DEVSEL# wirings of 003 section 2.3: other PCI masters' traffic); hardware_reset is PCI RST#.
  void set_clocks(std::uint64_t node_hz, std::uint64_t ts_hz) override;
  void hardware_reset() override;
  void set_cpu(unsigned cpu) override;
  void set_test_mode(bool on) override;       // no test pin on the connector: ConfigError (use TESTB)
  void set_wait_states(unsigned n) override;  // likewise (use WAIT_CPU)
  void set_net_ready(bool ready) override;    // the S16D's readiness on the cable (non-LOCAL)
  void set_external(unsigned counter, bool level) override;

  // PCI accesses at board byte offsets (Table 1); 32-bit aligned, the low two bits are ignored.
  void write(std::uint32_t offset, std::uint64_t data) override;
  std::uint64_t read(std::uint32_t offset) override;
  std::uint64_t peek(std::uint32_t offset) const override;

  void tick(std::uint64_t node_clocks) override { chip_->tick(node_clocks); }
  void drain() override;
  std::uint64_t now() const override { return chip_->now(); }

  // memdump START COUNT FILE (words); memimage FILE (image.hpp: pointer, Configuration Register and the
  // words that hold samples, for kron rdsample --pci-memory); cable FILE|-|off; extreset (EN_EXT); memfault WORD MASK
  // (bits of one memory word stuck at 0, so that the toolkit's memory tests can be shown to catch a fault).
  bool command(std::string_view cmd, const std::vector<std::string>& args, std::string& error) override;

  // ---- inspection (never changes state) ----
  sim::Device& mk() { return *chip_; }
  std::uint32_t config() const { return config_; }
  std::uint32_t pointer() const { return map_; }
  std::size_t fifo_level() const { return fifo_.size(); }
  std::uint32_t memory_word(std::uint32_t index) const { return memory_.at(index & kMemoryWordMask); }
  std::uint64_t node_hz() const;
  std::uint64_t ts_hz() const;
  // Bytes lost, each counted: discarded because the simple buffer was full, arriving while MK_OE was
  // low, or arriving at a full FIFO.
  std::uint64_t lost_full() const { return lost_full_; }
  std::uint64_t lost_oe() const { return lost_oe_; }
  std::uint64_t lost_fifo() const { return lost_fifo_; }
  std::uint64_t cable_bytes() const { return cable_bytes_; }
  std::uint64_t parity_errors() const { return parity_errors_; }

  // Node clocks one PCI access to the board occupies (DEVSEL# asserted). ERRATUM E76.
  static constexpr std::uint64_t kPciAccessClocks = 4;

 private:
  // bus.cpp
  void begin_access();
  void end_access();
  void board_reset();
  void write_config(std::uint32_t value);
  void write_pointer(std::uint32_t value);
  std::uint64_t chip_access_check() const;

  // fifo.cpp
  void on_chip_element(std::uint64_t clock, classic::NetElement e);
  void run_state_machine();
  void store_word(std::uint32_t word);
  std::uint8_t pop_byte();
  void update_full_flag();
  void cable_put(std::uint8_t hi, std::uint8_t lo);

  // clocks.cpp
  void apply_pins();  // drive the chip's pins from the Configuration Register
  void apply_clocks();
  bool memdump(const std::vector<std::string>& args, std::string& error);
  bool memimage(const std::vector<std::string>& args, std::string& error);

  std::unique_ptr<sim::Device> chip_;
  std::uint32_t config_ = 0;
  std::uint32_t map_ = 0;  // 24-bit memory address pointer (word address; top two bits = wrap count)
  std::vector<std::uint32_t> memory_;
  std::uint32_t fault_word_ = 0, fault_mask_ = 0;  // memfault
  void mem_store(std::uint32_t index, std::uint32_t v) { memory_[index] = index == fault_word_ ? v & ~fault_mask_ : v; }
  std::deque<std::uint8_t> fifo_;
  std::uint64_t ext_hz_ = 0;
  unsigned xcpu_ = 0;          // XCPU[7..0] connector lines
  bool devsel_other_ = false;  // DEVSEL# of other PCI masters (X0 only)
  bool in_access_ = false;
  bool full_flag_ = false;
  // Samples are reported (on_sample) when their last byte leaves the board FIFO for memory, the cable or
  // the CPU, not when the chip sends them: with DIS_STATE or TEST they wait in the FIFO.
  struct Pending {
    std::vector<std::uint8_t> bytes;
    std::uint64_t end;  // in_count_ after its last byte
    bool lost;          // a byte of it was discarded (simple buffer full)
  };
  std::deque<Pending> pending_;
  std::uint64_t in_count_ = 0, out_count_ = 0;  // bytes ever pushed into / popped from the FIFO
  std::uint64_t last_in_clock_ = 0;
  std::uint64_t lost_upto_ = 0;  // out_count_ after the last discarded word
  bool sample_lost_ = false;     // a byte of the sample now arriving never entered the FIFO
  void deliver();
  bool cable_ready_ = true;
  std::FILE* cable_ = nullptr;
  std::string cable_path_;
  std::uint64_t lost_full_ = 0, lost_oe_ = 0, lost_fifo_ = 0, cable_bytes_ = 0, parity_errors_ = 0;
};

}  // namespace kron::pcib
