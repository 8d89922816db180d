// The MultiKron II control registers, described once from the datasheet's tables: the Control and
// Status Register (000 Table B1) and the three Resource Counter control registers, Mode (Table B5),
// Clock Select (Table B6) and Enable (Table B7). The live board (include/kron/board.hpp and its writers
// in src/board/board.cpp), the MultiKron II model (src/models/mk2), `kron status` and `kron csr` all take
// bits, names, reset values and write semantics from here. The probe side includes it: no dependency
// beyond the standard library.
//
// Sources: 000 (NISTIR 5571) "CSR Register" and Table B1 (status read / control write of "1");
//   "Resource Counter Control Registers" ("a zero value written into any field leaves that field
//   unchanged") and Tables B5, B6, B7 with their "** default setting" rows.
// Decisions: ERRATUM E13, decided once: a CSR pair written with both bits 1 -> the odd (disabling) bit
//   wins (regs::w1_pairs, register_table.hpp); a control field whose code bits are written 0 is a NOP
//   whatever its other bits (write_fields below). ERRATUM E12: 64-bit mode after reset.
// Not here: what an address does (000 Table B4, src/models/mk2/registers.hpp), the CSR status bits a
//   read computes (the chip's FIFO and shadow registers, the board's lanes).
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

#include "kron/core/register_table.hpp"

namespace kron::regs {

// ---- 000 Table B1: the Control and Status Register (16 bits) -------------------------------------------
namespace csr {
// Bit positions ("Bit Position" column). The even bit of each pair is where the control state reads.
inline constexpr unsigned kSamplingEnable = 0, kSamplingDisable = 1;
inline constexpr unsigned kWaitOnOverrun = 2, kNoWaitOnOverrun = 3;
inline constexpr unsigned kReadWait = 4, kNoReadWait = 5;
inline constexpr unsigned kFifoFull = 6;       // read only
inline constexpr unsigned kShadowFull = 7;     // read only
inline constexpr unsigned kFifoOverrun = 8;    // read only
inline constexpr unsigned kShadowOverrun = 9;  // read only
inline constexpr unsigned kFifoBit161 = 10;    // read only: "161st FIFO output bit"
inline constexpr unsigned kWaitStates = 12;    // read only: latched at RESETB
inline constexpr unsigned kMode32 = 14, kMode64 = 15;

constexpr std::uint16_t bit(unsigned b) { return static_cast<std::uint16_t>(1u << b); }

inline constexpr std::uint16_t kReadOnly = 0x3fc0;  // bits 6-13: "Read Only, write data ignored"
inline constexpr std::uint16_t kW1Act = 0xc03f;     // bits 0-5, 14, 15: a written 1 acts, pairs (2k, 2k+1)
inline constexpr std::uint16_t kControl = 0x4015;   // the control state: the even bit of each pair
// After reset: sampling disabled, discard on overrun, no read wait ("default on reset"), 64-bit mode
// (ERRATUM E12).
inline constexpr std::uint16_t kReset = 0;

// One row of Table B1: what a read shows in the bit, what a write of 1 to it does.
struct BitInfo {
  std::string_view status;   // "Status (CSR read)"
  std::string_view control;  // "Control (CSR write of "1" in this bit position)"
};
inline constexpr std::array<BitInfo, 16> kBits{{
    {"Sampling Enabled", "Enable Sampling"},
    {"Logical \"0\"", "Disable Sampling (default on reset)"},
    {"Write Wait on Overrun", "Enable Wait on sample for avail FIFO/Shadow Reg to avoid overrun"},
    {"Logical \"0\"", "Disable Wait on sample due to overrun, discard data (default)"},
    {"Read Wait for shadow regs.", "Enable wait on processor read-with-copy if Shadow Regs busy"},
    {"Logical \"0\"", "Disable read wait if Shadow Reg busy (bad data returned) (default)"},
    {"FIFO Full", "Read Only, write data ignored."},
    {"Resource Shadow Registers Full", "Read Only, write data ignored."},
    {"FIFO Overrun", "Read Only, write data ignored."},
    {"Resource Shadow Register Overrun", "Read Only, write data ignored."},
    {"161st FIFO output bit", "Read Only, write data ignored."},
    {"Logical \"0\"", "Read Only, write data ignored."},
    {"Number of Wait States", "Read Only, write data ignored."},
    {"Logical \"0\"", "Read Only, write data ignored."},
    {"32 bit mode enabled", "High Order Reg is used for upper 32 bits of input data"},
    {"32 bit mode disabled (64 bit mode)", "pins 32-63 are used for upper 32 bits of input data (64 bit mode)"},
}};

// The control state after writing `written` to a CSR whose control state is `state` (bits outside
// kControl are dropped: the read-only bits are computed when read). ERRATUM E13 via w1_pairs.
constexpr std::uint16_t write(std::uint16_t state, std::uint16_t written) {
  return static_cast<std::uint16_t>(w1_pairs(state, written, kW1Act) & kControl);
}
}  // namespace csr

// ---- 000 Tables B5-B7: sixteen 4-bit fields, field n controls Resource Counter n -----------------------
inline constexpr unsigned kFields = 16;

constexpr std::uint8_t field(std::uint64_t reg, unsigned n) {
  return static_cast<std::uint8_t>((reg >> (4 * n)) & 0xf);
}
// A register with every field set to `f`.
constexpr std::uint64_t all_fields(std::uint8_t f) {
  std::uint64_t r = 0;
  for (unsigned n = 0; n < kFields; ++n) r |= std::uint64_t{f & 0xfu} << (4 * n);
  return r;
}

// Table B5 (Mode): the low three bits select the counting source (x101-x111 are the same as x001-x011);
// bit 3 is the precision (1xxx double: even counters only, the odd one uses its even pair's setting).
enum class Mode : std::uint8_t { Nop = 0, Clock = 1, Software = 2, ExternalEnable = 3, ExternalSignal = 4 };
inline constexpr std::array<std::string_view, 5> kModeNames{"NOP", "CLK", "Software", "External Enable",
                                                            "External Signal"};
// Table B6 (Clock Select): x101-x111 are the same as x001-x011.
enum class ClockSel : std::uint8_t { Nop = 0, NodeClk = 1, NodeClk10 = 2, NodeClk100 = 3, TsClk = 4 };
inline constexpr std::array<std::string_view, 5> kClockNames{"NOP", "NodeClk", "NodeClk/10", "NodeClk/100", "TSclk"};
// Table B7 (Enable): only the low two bits count. Names are the state a field leaves ("Disable counter",
// "Enable counter", "Reset & Enable counter").
enum class Enable : std::uint8_t { Nop = 0, Disable = 1, Enable = 2, ResetEnable = 3 };
inline constexpr std::array<std::string_view, 4> kEnableNames{"NOP", "disabled", "enabled", "reset & enabled"};

constexpr std::string_view name(Mode m) { return kModeNames[static_cast<unsigned>(m)]; }
constexpr std::string_view name(ClockSel c) { return kClockNames[static_cast<unsigned>(c)]; }
constexpr std::string_view name(Enable e) { return kEnableNames[static_cast<unsigned>(e)]; }

// The code bits of a field (the rest are "x", don't care) and the "** default setting".
inline constexpr std::uint8_t kModeCode = 0x7, kClockCode = 0x7, kEnableCode = 0x3;
inline constexpr std::uint8_t kModeDouble = 0x8;        // Table B5 1xxx: double precision
inline constexpr std::uint8_t kModeResetField = 0x4;    // Table B5 ** x100 External Signal, ** 0xxx single
inline constexpr std::uint8_t kClockResetField = 0x4;   // Table B6 ** x100 TSclk
inline constexpr std::uint8_t kEnableResetField = 0x1;  // Table B7 ** xx01 Disable counter
inline constexpr std::uint64_t kModeReset = all_fields(kModeResetField);
inline constexpr std::uint64_t kClockReset = all_fields(kClockResetField);
inline constexpr std::uint64_t kEnableReset = all_fields(kEnableResetField);

// Decode one field (the value of field(reg, n)).
constexpr Mode mode_of(unsigned f) {
  const unsigned s = f & kModeCode;
  return static_cast<Mode>(s > 4 ? s - 4 : s);
}
constexpr bool double_precision(unsigned f) { return f & kModeDouble; }
constexpr ClockSel clock_of(unsigned f) {
  const unsigned s = f & kClockCode;
  return static_cast<ClockSel>(s > 4 ? s - 4 : s);
}
constexpr Enable enable_of(unsigned f) { return static_cast<Enable>(f & kEnableCode); }
constexpr bool enabled(unsigned f) { return enable_of(f) >= Enable::Enable; }

// A write to a register of 4-bit fields whose code bits are `code`. 000: "a zero value written into any
// field leaves that field unchanged"; Tables B5-B7 print that NOP as x000 / xx00. ERRATUM E13: a field
// whose code bits are written 0 is left unchanged whatever its don't-care bits; any other value is
// stored as written (and reads back so).
constexpr std::uint64_t write_fields(std::uint64_t reg, std::uint64_t written, std::uint8_t code) {
  for (unsigned n = 0; n < kFields; ++n) {
    const std::uint64_t nibble = std::uint64_t{0xf} << (4 * n);
    if (written & (std::uint64_t{code} << (4 * n))) reg = (reg & ~nibble) | (written & nibble);
  }
  return reg;
}
constexpr std::uint64_t write_mode(std::uint64_t reg, std::uint64_t written) {
  return write_fields(reg, written, kModeCode);
}
constexpr std::uint64_t write_clock(std::uint64_t reg, std::uint64_t written) {
  return write_fields(reg, written, kClockCode);
}
constexpr std::uint64_t write_enable(std::uint64_t reg, std::uint64_t written) {
  return write_fields(reg, written, kEnableCode);
}

}  // namespace kron::regs
