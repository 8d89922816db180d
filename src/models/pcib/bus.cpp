// The PCI toolkit board's bus side: decode of 003 Table 1, the MultiKron_II window, the board registers
// (Software Reset, Configuration, Memory Address Pointer, TEST Operation), local memory, and the
// DEVSEL# levels during the board's own accesses (003 2.3). Sources and what is not modelled: pcib.hpp.
#include <string>

#include "models/pcib/pcib.hpp"

#include "models/mk2/mk2.hpp"

namespace kron::pcib {

PciBoard::PciBoard(std::unique_ptr<sim::Device> chip) : chip_(std::move(chip)), memory_(kMemoryWords, 0) {
  ext_hz_ = kOscillatorHz;
  chip_->on_element = [this](std::uint64_t clock, classic::NetElement e) { on_chip_element(clock, e); };
  chip_->on_sample = [this](const sim::SampleOut& s) {
    // Its bytes are [in_count_ - size, in_count_); some may already have been discarded (lost_upto_).
    if (!sample_lost_)
      pending_.push_back({{s.bytes.begin(), s.bytes.end()}, in_count_, lost_upto_ > in_count_ - s.bytes.size()});
    sample_lost_ = false;
    deliver();
  };
  hardware_reset();
}

PciBoard::PciBoard() : PciBoard(std::make_unique<mk2::Mk2>()) {}

PciBoard::~PciBoard() {
  if (cable_ == stdout)
    std::fflush(cable_);
  else if (cable_)
    std::fclose(cable_);
}

// 003 2.3: "two versions of the DEVSEL# signal to the external input pin of the MultiKron Resource
// Counters, numbers 0 and 2. One version is the direct signal. The other version is the signal gated only
// when the toolkit board is active." ERRATUM E77: the inputs see "DEVSEL# asserted" as a high level.
void PciBoard::begin_access() {
  in_access_ = true;
  chip_->set_external(0, true);
  chip_->set_external(2, true);
}
void PciBoard::end_access() {
  in_access_ = false;
  chip_->set_external(0, devsel_other_);
  chip_->set_external(2, false);
}

// 003 1.2 Bit 13: with MK_OE low "All MultiKron output signals are disabled. This will result in a
// program crash due to a bus time-out": the model reports the time-out instead of hanging.
std::uint64_t PciBoard::chip_access_check() const {
  if (!(config_ & cfg::kMkOe))
    throw sim::ConfigError(
        "PCI bus time-out: MK_OE (Configuration Register bit 13) is 0, so the MultiKron_II "
        "never acknowledges; write the Configuration Register (e.g. 0x003201) first");
  return 0;
}

void PciBoard::write(std::uint32_t off_in, std::uint64_t data) {
  const std::uint32_t off = off_in & ~3u;  // 003 2.1: accesses are aligned on 32-bit boundaries
  begin_access();
  try {
    if (off >= offset::kChip && off < offset::kChipEnd) {
      chip_access_check();
      chip_->write((off - offset::kChip) / 4, data);
    } else {
      chip_->tick(kPciAccessClocks);
      const auto v = static_cast<std::uint32_t>(data);
      switch (off) {
        case offset::kSoftwareReset: board_reset(); break;
        case offset::kConfig: write_config(v); break;
        case offset::kPointer: write_pointer(v); break;
        case offset::kTestOp:
          // 003 2.5: "A write to the toolkit board TEST address will remove four entries from the FIFO and
          // send it to the toolkit board local memory ... The memory address pointer will then be
          // incremented." Only with TEST set (ERRATUM E75).
          if (config_ & cfg::kTest) {
            std::uint32_t w = 0;
            for (int i = 0; i < 4; ++i) w = w << 8 | pop_byte();
            store_word(w);
            update_full_flag();
            deliver();
          }
          break;
        default:
          if (off >= offset::kMemory && off < offset::kMemoryEnd)  // 003 2.7: "mainly for testing"
            mem_store((off - offset::kMemory) / 4, v);
          break;  // N/A rows of Table 1: ignored
      }
    }
  } catch (...) {
    end_access();
    throw;
  }
  end_access();
}

std::uint64_t PciBoard::read(std::uint32_t off_in) {
  const std::uint32_t off = off_in & ~3u;
  begin_access();
  std::uint64_t v = 0;
  try {
    if (off >= offset::kChip && off < offset::kChipEnd) {
      chip_access_check();
      v = chip_->read((off - offset::kChip) / 4);
    } else {
      chip_->tick(kPciAccessClocks);
      if (off == offset::kTestOp) {
        // 003 2.5: "A read to the toolkit board TEST address will remove one entry from the FIFO and send
        // it to the processor". ERRATUM E75: only with TEST set; an empty FIFO reads 0.
        if (config_ & cfg::kTest) {
          v = pop_byte();
          update_full_flag();
          deliver();
        }
      } else {
        v = peek(off);
      }
    }
  } catch (...) {
    end_access();
    throw;
  }
  end_access();
  return v;
}

std::uint64_t PciBoard::peek(std::uint32_t off_in) const {
  const std::uint32_t off = off_in & ~3u;
  if (off >= offset::kChip && off < offset::kChipEnd) return chip_->peek((off - offset::kChip) / 4);
  switch (off) {
    case offset::kConfig: return config_;
    case offset::kPointer: return map_;
    case offset::kTestOp: return (config_ & cfg::kTest) && !fifo_.empty() ? fifo_.front() : 0;
    default: break;
  }
  if (off >= offset::kMemory && off < offset::kMemoryEnd) return memory_[(off - offset::kMemory) / 4];
  return 0;  // N/A (and the Software Reset, which is write only): ERRATUM E72
}

// 003 1.2: "On reset, the contents of bits 0-23 this register are initialized to zeros. Bits 24-31 are
// the read only board version number"; "A toolkit board reset command, always resets the MultiKron_II".
// ERRATUM E74: the reset also clears the memory address pointer and the board FIFO; memory keeps its data.
void PciBoard::board_reset() {
  config_ = cfg::kReset;
  map_ = 0;
  fifo_.clear();
  full_flag_ = false;
  sample_lost_ = false;
  pending_.clear();
  in_count_ = out_count_ = lost_upto_ = 0;
  apply_pins();
  chip_->hardware_reset();
}

void PciBoard::hardware_reset() { board_reset(); }

void PciBoard::write_config(std::uint32_t value) {
  config_ = (config_ & cfg::kReadOnly) | (value & ~cfg::kReadOnly);
  apply_pins();
  run_state_machine();
}

// 003 2.7: "a safety interlock ... ignores any write to the memory address pointer while in LOCAL mode";
// 003 1.2 Bit 16: writing the pointer "requires either TEST to be active or LOCAL to be inactive".
void PciBoard::write_pointer(std::uint32_t value) {
  if ((config_ & cfg::kLocal) && !(config_ & cfg::kTest)) return;
  map_ = value & kPointerMask;
}

}  // namespace kron::pcib
