// The NUMAchine processor-card monitor's user configuration registers, described once from 004 Table 4.4
// (Master Configuration Controller): address, acronym, name, width and fields. Generic code applies the
// table: decode (by acronym or address), reset (every register 0, ERRATUM E82), the bits a word write
// stores, and the printed form of `regs`. The fields of GPCMx and SCM are the rows of Table 4.4 written
// high bit first, with the meanings of 004 4.3.2, 4.4.4 and 4.4.5.
//
// Sources: 004 Table 4.4 and its notes; 004 4.4.3 (AW/AF: two word writes or one big-endian doubleword
//   write); 004 4.4.6 (GPCE and SRAMCE together with one doubleword write).
// Decisions: ERRATUM E80 (the monitor's address map beyond Table 4.4), E81 (doubleword writes),
//   E82 (reset values, reads of the registers and of unused bits), E83 (the bit order of each
//   enable/invert pair in bits 9..0).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kron::numachine {

// One row of Table 4.4 (its "Address" column, 0-F).
enum class Reg : std::uint8_t {
  PR,
  PW,
  CW,
  CF,
  AWhi,
  AWlo,
  AFhi,
  AFlo,
  GPCM0,
  GPCM1,
  GPCM2,
  GPCM3,
  SCM,
  Reserved,
  GPCE,
  SRAMCE,
};

// A field of a register, as Table 4.4 prints it: bits hi..lo.
struct Field {
  std::uint8_t hi, lo;
  std::string_view name;
  constexpr std::uint32_t mask() const {
    return static_cast<std::uint32_t>(((std::uint64_t{1} << (hi - lo + 1)) - 1) << lo);
  }
  constexpr std::uint32_t get(std::uint32_t v) const { return (v & mask()) >> lo; }
};

// ---- GPCMx, 004 Table 4.4 rows 8-B (section 4.4.4) ----
namespace gpcm {
inline constexpr Field kEnable{23, 23, "en"};    // counter enable
inline constexpr Field kPs{22, 16, "ps"};        // pipeline status configuration PS[6..0] (4.3.2)
inline constexpr Field kIrq{15, 15, "irq"};      // enable interrupt on overflow
inline constexpr Field kEvent{14, 11, "event"};  // one of the 16 events of Table 4.5
inline constexpr Field kEdge{10, 10, "edge"};    // count low-to-high transitions instead of cycles
// ERRATUM E83: each pair "enable X .. invert" is enable in the higher bit, invert in the lower.
inline constexpr Field kMaskEn{9, 9, "mask"};  // enable masks below (SM, RM)
inline constexpr Field kMaskInv{8, 8, "mask_inv"};
inline constexpr Field kPwEn{7, 7, "pw"};  // enable PW compare
inline constexpr Field kPwInv{6, 6, "pw_inv"};
inline constexpr Field kAwEn{5, 5, "aw"};  // enable AW compare
inline constexpr Field kAwInv{4, 4, "aw_inv"};
inline constexpr Field kCwEn{3, 3, "cw"};  // enable CW compare
inline constexpr Field kCwInv{2, 2, "cw_inv"};
inline constexpr Field kSm{1, 1, "sm"};  // enable sending mask
inline constexpr Field kRm{0, 0, "rm"};  // enable receiving mask
inline constexpr std::array<Field, 15> kFields{kEnable, kPs,   kIrq,   kEvent, kEdge,  kMaskEn, kMaskInv, kPwEn,
                                               kPwInv,  kAwEn, kAwInv, kCwEn,  kCwInv, kSm,     kRm};
}  // namespace gpcm

// ---- SCM, 004 Table 4.4 row C (section 4.4.5); bits 10..0 are the same as GPCM0's ----
namespace scm {
inline constexpr Field kIrq{22, 22, "irq"};    // enable interrupt on overflow
inline constexpr Field kMode{21, 20, "mode"};  // counter mode, Table 4.7
inline constexpr Field kMuxMiss{19, 19, "muxMISS"};
inline constexpr Field kMuxRsr{18, 18, "muxRSR"};
inline constexpr Field kMuxPrHi{17, 17, "muxPRhi"};
inline constexpr Field kMuxPrMid{16, 16, "muxPRmid"};
inline constexpr Field kMuxPrLo{15, 15, "muxPRlo"};
inline constexpr Field kEvent{14, 11, "event"};  // one of the events of Table 4.6
}  // namespace scm

inline constexpr Field kBit0{0, 0, "en"};

struct RegisterInfo {
  Reg reg;
  std::uint8_t address;           // Table 4.4 "Address"
  std::string_view acronym;       // Table 4.4 "Acronym"
  std::string_view name;          // Table 4.4 "Name"
  std::uint8_t width;             // Table 4.4 "Bits": bits hi..0 are stored; a word write keeps only these
  std::uint32_t reset;            // power-on value (Table 4.4 gives none: 0, ERRATUM E82)
  std::span<const Field> fields;  // printed by `regs`; empty: the value alone
};

inline constexpr std::array<Field, 19> kScmFields{
    scm::kIrq,    scm::kMode,  scm::kMuxMiss, scm::kMuxRsr,   scm::kMuxPrHi, scm::kMuxPrMid, scm::kMuxPrLo,
    scm::kEvent,  gpcm::kEdge, gpcm::kMaskEn, gpcm::kMaskInv, gpcm::kPwEn,   gpcm::kPwInv,   gpcm::kAwEn,
    gpcm::kAwInv, gpcm::kCwEn, gpcm::kCwInv,  gpcm::kSm,      gpcm::kRm};
inline constexpr std::array<Field, 1> kEnableFields{kBit0};

// ---- 004 Table 4.4 ----------------------------------------------------------------------------------
// clang-format off
inline constexpr std::array<RegisterInfo, 16> kRegisters{{
  // reg            addr acronym   name                                     width reset fields
  {Reg::PR,          0x0, "PR",     "PhaseID Register",                        16, 0, {}},
  {Reg::PW,          0x1, "PW",     "PhaseID Watch",                           16, 0, {}},
  {Reg::CW,          0x2, "CW",     "Command Watch",                           13, 0, {}},
  {Reg::CF,          0x3, "CF",     "Command Filter",                          13, 0, {}},
  {Reg::AWhi,        0x4, "AWhi",   "Address Watch High",                       8, 0, {}},
  {Reg::AWlo,        0x5, "AWlo",   "Address Watch Low",                       32, 0, {}},
  {Reg::AFhi,        0x6, "AFhi",   "Address Filter High",                      8, 0, {}},
  {Reg::AFlo,        0x7, "AFlo",   "Address Filter Low",                      32, 0, {}},
  {Reg::GPCM0,       0x8, "GPCM0",  "General-Purpose Counter 0 Mode",          24, 0, gpcm::kFields},
  {Reg::GPCM1,       0x9, "GPCM1",  "General-Purpose Counter 1 Mode",          24, 0, gpcm::kFields},
  {Reg::GPCM2,       0xA, "GPCM2",  "General-Purpose Counter 2 Mode",          24, 0, gpcm::kFields},
  {Reg::GPCM3,       0xB, "GPCM3",  "General-Purpose Counter 3 Mode",          24, 0, gpcm::kFields},
  {Reg::SCM,         0xC, "SCM",    "SRAM Counter Mode",                       23, 0, kScmFields},
  {Reg::Reserved,    0xD, "D",      "reserved",                                 0, 0, {}},
  {Reg::GPCE,        0xE, "GPCE",   "Master General-Purpose Counter Enable",    1, 0, kEnableFields},
  {Reg::SRAMCE,      0xF, "SRAMCE", "Master SRAM Counter Enable",               1, 0, kEnableFields},
}};
// clang-format on
static_assert(
    [] {
      for (std::size_t i = 0; i < kRegisters.size(); ++i)
        if (kRegisters[i].address != i || static_cast<std::size_t>(kRegisters[i].reg) != i) return false;
      return true;
    }(),
    "Table 4.4 rows are listed in address order");

constexpr std::uint32_t width_mask(unsigned width) {
  return width >= 32 ? 0xffffffffu : (std::uint32_t{1} << width) - 1;
}
constexpr const RegisterInfo& info(Reg r) { return kRegisters[static_cast<std::size_t>(r)]; }

// ---- the monitor's address map (ERRATUM E80): Table 4.4 at 0-F, then what 004 names but does not place ----
inline constexpr std::uint32_t kRegisterCount = 16;
inline constexpr std::uint32_t kGpcBase = 0x10;       // GPC0-GPC3: read, or write (preload)
inline constexpr std::uint32_t kGpcResetBase = 0x14;  // GPC0-GPC3 reset-on-read addresses (004 4.3.3)
inline constexpr unsigned kGpcs = 4;
inline constexpr std::uint32_t kSramBase = 0x10000;   // SRAM[0]-SRAM[0xFFFF] (004 4.3.4, muxAR)
inline constexpr std::uint32_t kSramWords = 0x10000;  // 64K x 32 bits
inline constexpr std::uint32_t kAddressLimit = kSramBase + kSramWords;

// The address a script name denotes: a Table 4.4 acronym (any case), GPC0-GPC3 (and GPC0.clr.. for the
// reset-on-read addresses), or SRAM[ADDR]; nothing if the name is none of them.
std::optional<std::uint32_t> address_named(std::string_view name);
// The canonical name of an address (PR, GPC2, SRAM[0x0012], or the number for an address nothing decodes).
std::string address_name(std::uint32_t addr);
// `ACRONYM = 0xHHHHHHHH field=value ...`, the printed form of one register (Table 4.4's fields).
std::string describe(const RegisterInfo& r, std::uint32_t value);

}  // namespace kron::numachine
