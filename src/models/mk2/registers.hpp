// MultiKron II registers, described once from the datasheet's tables: the address map of 000 Table B4
// and the Control and Status Register of 000 Table B1. Generic code (registers.cpp) applies the table:
// reset values, widths (unused read bits), read-only masks and write-1-to-act pairs; the chip
// (mk2.hpp) keeps only hooks for what is special (samples, counters, the FIFO).
//
// The CSR bits and the control fields (Tables B1, B5-B7) are described in include/kron/core/control_regs.hpp,
// which the live board shares; this file holds the address map and the row shape.
// Sources: 000 Table B1, Table B4 and its notes, sections CSR Register, Filter Register, Source Address
//   Registers, High Order 32 Bit Register, Wait / Overrun Error Counter, Resource Counter Control
//   Registers, TEST MODE; Tables B5-B7 (reset settings marked **).
// Decisions: ERRATUM E3 (unused read bits), E12 (register reset values the tables do not give),
//   E13 (a CSR write with both bits of a pair set; control fields whose code bits are 0).
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

#include "kron/core/control_regs.hpp"

namespace kron::mk2 {

inline constexpr unsigned kAddresses = 128;  // the 7-bit MultiKron field of the address (000 PROCESSOR INTERFACE)

// What an address does; one entry per row of 000 Table B4.
enum class Reg : std::uint8_t {
  Unused,           // "-": writes ignored, reads all ones (ERRATUM E3)
  SoftwareReset,    // 0: "Reset chip, Timestamp unchanged"
  Csr,              // 1: Table B1
  Timestamp,        // 2: "* Timestamp Register (56 bits)"
  Filter,           // 4
  WaitCounter,      // 5: "** Wait Counter to zero"
  OverrunCounter,   // 6: "** Overrun Counter to zero"
  HighOrder,        // 7: High Order 32 bit Reg
  Enable,           // 8: Table B7
  Mode,             // 10: Table B5
  ClockSelect,      // 12: Table B6
  IncrTimestamp,    // 16: "* Incr Timestamp Register"
  IncrWait,         // 17: "* Incr Wait Error Cntr"
  IncrOverrun,      // 18: "* Incr OverRun Error Cntr"
  DisableNetwork,   // 19: "* Disable Output Network"
  EnableNetwork,    // 20: "* Enable Output Network"
  AdvanceFifo,      // 21: "* Advance FIFO and free Resource Cntr Shadow Reg"
  FifoGroup,        // 25-29: write "* FIFO", read FIFO group A-E
  SourceAddress,    // 32-39: Source Addr Reg i
  CounterCopy,      // 64-79: write Resource Counter j, read with copy
  CounterNoCopy,    // 80-95: write Increment Resource Counter j, read without copy
  TraceTrigger,     // 96-111: trigger a Trace sample, filter level = low 4 bits
  ResourceTrigger,  // 112-127: trigger a Resource sample, filter level = low 4 bits
};

// How generic code treats a processor write.
enum class WriteKind : std::uint8_t {
  Ignored,  // nothing happens ("-" in Table B4, or a "*" address outside test mode)
  Store,    // the data, within `width` and outside `read_only`, is stored
  Fields,   // sixteen 4-bit fields; a field whose `field_code` bits are written 0 is left unchanged (Tables B5-B7)
  W1Pairs,  // write-1-to-act: bit 2k sets control bit 2k, bit 2k+1 clears it (Table B1)
  Hook,     // the chip's own action (reset, counters, samples, test operations)
};
enum class ReadKind : std::uint8_t {
  AllOnes,  // no readable register: every bit reads 1 (ERRATUM E3)
  Stored,   // the stored value
  Hook,     // computed by the chip (CSR status, timestamp, counters, FIFO)
};

struct RegisterInfo {
  Reg reg;
  std::uint8_t first, last;  // word addresses, inclusive
  std::string_view name;     // the datasheet's name
  unsigned width;            // bits that read back; bits above read 1 (ERRATUM E3)
  std::uint64_t reset;       // value after a hardware or software reset (ERRATUM E12 where not printed)
  std::uint64_t read_only;   // bits a write never changes (Table B1 "Read Only, write data ignored")
  std::uint64_t w1_act;      // bits where writing 1 commands an action (Table B1 "Control")
  WriteKind write;
  ReadKind read;
  bool test_only_write;     // Table B4 "*": "Available ONLY in TEST mode"
  std::uint8_t field_code;  // Fields: the bits of a 4-bit field that say what to do; 0 there = NOP (Tables B5-B7)
};

// ---- CSR bits (000 Table B1) and the control fields (Tables B5-B7): include/kron/core/control_regs.hpp,
// shared with the live board. The model reads them under its own names.
namespace csr = regs::csr;
using regs::kClockReset;
using regs::kEnableReset;
using regs::kModeReset;

// ---- 000 Table B4: the address map ---------------------------------------------------------------
// clang-format off
inline constexpr std::array<RegisterInfo, 23> kRegisters{{
  // reg                  first last name                                             width reset        read_only       w1_act     write                ReadKind          test   field_code
  {Reg::SoftwareReset,      0,   0, "Reset chip, Timestamp unchanged",                  0, 0,            0,              0,         WriteKind::Hook,     ReadKind::AllOnes, false, 0},
  {Reg::Csr,                1,   1, "CSR Register",                                    16, csr::kReset,  csr::kReadOnly, csr::kW1Act, WriteKind::W1Pairs, ReadKind::Hook,   false, 0},
  {Reg::Timestamp,          2,   2, "Timestamp Register",                              56, 0,            0,              0,         WriteKind::Hook,     ReadKind::Hook,    true, 0},
  {Reg::Filter,             4,   4, "Filter Register",                                 16, 0,            0,              0,         WriteKind::Store,    ReadKind::Stored,  false, 0},
  {Reg::WaitCounter,        5,   5, "Wait Counter",                                    32, 0,            0,              0,         WriteKind::Hook,     ReadKind::Hook,    false, 0},
  {Reg::OverrunCounter,     6,   6, "Overrun Counter",                                 32, 0,            0,              0,         WriteKind::Hook,     ReadKind::Hook,    false, 0},
  {Reg::HighOrder,          7,   7, "High Order 32 bit Reg",                           32, 0,            0,              0,         WriteKind::Store,    ReadKind::Stored,  false, 0},
  {Reg::Enable,             8,   8, "Enable Register",                                 64, kEnableReset, 0,              0,         WriteKind::Fields,   ReadKind::Stored,  false, regs::kEnableCode},
  {Reg::Mode,              10,  10, "Mode Register",                                   64, kModeReset,   0,              0,         WriteKind::Fields,   ReadKind::Stored,  false, regs::kModeCode},
  {Reg::ClockSelect,       12,  12, "Clock Select Register",                           64, kClockReset,  0,              0,         WriteKind::Fields,   ReadKind::Stored,  false, regs::kClockCode},
  {Reg::IncrTimestamp,     16,  16, "Incr Timestamp Register",                          0, 0,            0,              0,         WriteKind::Hook,     ReadKind::AllOnes, true, 0},
  {Reg::IncrWait,          17,  17, "Incr Wait Error Cntr",                             0, 0,            0,              0,         WriteKind::Hook,     ReadKind::AllOnes, true, 0},
  {Reg::IncrOverrun,       18,  18, "Incr OverRun Error Cntr",                          0, 0,            0,              0,         WriteKind::Hook,     ReadKind::AllOnes, true, 0},
  {Reg::DisableNetwork,    19,  19, "Disable Output Network",                           0, 0,            0,              0,         WriteKind::Hook,     ReadKind::AllOnes, true, 0},
  {Reg::EnableNetwork,     20,  20, "Enable Output Network",                            0, 0,            0,              0,         WriteKind::Hook,     ReadKind::AllOnes, true, 0},
  {Reg::AdvanceFifo,       21,  21, "Advance FIFO and free Resource Cntr Shadow Reg",   0, 0,            0,              0,         WriteKind::Hook,     ReadKind::AllOnes, true, 0},
  {Reg::FifoGroup,         25,  29, "FIFO group",                                      32, 0,            0,              0,         WriteKind::Hook,     ReadKind::Hook,    true, 0},
  {Reg::SourceAddress,     32,  39, "Source Addr Reg",                                 32, 0,            0,              0,         WriteKind::Store,    ReadKind::Stored,  false, 0},
  {Reg::CounterCopy,       64,  79, "Resource Counter (read with copy)",               32, 0,            0,              0,         WriteKind::Hook,     ReadKind::Hook,    false, 0},
  {Reg::CounterNoCopy,     80,  95, "Increment Resource Counter / read without copy",  32, 0,            0,              0,         WriteKind::Hook,     ReadKind::Hook,    false, 0},
  {Reg::TraceTrigger,      96, 111, "Trigger a Trace Sample",                           0, 0,            0,              0,         WriteKind::Hook,     ReadKind::AllOnes, false, 0},
  {Reg::ResourceTrigger,  112, 127, "Trigger a Resource Sample",                        0, 0,            0,              0,         WriteKind::Hook,     ReadKind::AllOnes, false, 0},
  {Reg::Unused,             3,   3, "-",                                                0, 0,            0,              0,         WriteKind::Ignored,  ReadKind::AllOnes, false, 0},
}};
// clang-format on

// The (first) word address of a register, from the table.
constexpr std::uint32_t address_of(Reg reg) {
  for (const RegisterInfo& r : kRegisters)
    if (r.reg == reg) return r.first;
  return 0;
}

// The table row that decodes `addr` (0-127); addresses no row names decode to the Unused row.
const RegisterInfo& decode(std::uint32_t addr);

// ---- generic register access -----------------------------------------------------------------------
using regs::width_mask;
// A register's value as the 64-bit data bus shows it: bits above its width read 1 (ERRATUM E3).
inline constexpr std::uint64_t bus_value(const RegisterInfo& r, std::uint64_t value) {
  return (value & width_mask(r.width)) | ~width_mask(r.width);
}
// The stored value after a processor write of `data` (Store, Fields and W1Pairs rows).
std::uint64_t apply_write(const RegisterInfo& r, std::uint64_t old, std::uint64_t data);

// ---- 4-bit control fields, 000 Tables B5-B7 (control_regs.hpp) ----------------------------------------
using regs::clock_of;
using regs::ClockSel;
using regs::double_precision;
using regs::Enable;
using regs::enable_of;
using regs::enabled;
using regs::field;
using regs::Mode;
using regs::mode_of;

}  // namespace kron::mk2
