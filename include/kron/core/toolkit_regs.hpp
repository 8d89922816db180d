// The PCI toolkit board's registers (003 = the MultiKron Toolkit board manual), described once: the
// address map of Table 1 and the Configuration Register of Table 2 (bits, names, reset value, read-only
// mask). Used by the PCI board model (src/models/pcib) and by the live board (include/kron/board.hpp:
// its Configuration Register keeps WRAPB, bit 14). No dependency beyond the standard library (the probe
// side includes it).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kron::regs::toolkit {

// ---- 003 Table 1: offset byte address map ----
namespace offset {
inline constexpr std::uint32_t kChip = 0x0001000;  // MultiKron_II, 0x1000-0x11FC (128 words)
inline constexpr std::uint32_t kChipEnd = 0x0001200;
inline constexpr std::uint32_t kSoftwareReset = 0x0001200;
inline constexpr std::uint32_t kConfig = 0x0001204;
inline constexpr std::uint32_t kPointer = 0x0001208;  // Memory Address Pointer
inline constexpr std::uint32_t kTestOp = 0x000120C;   // TEST Operation
inline constexpr std::uint32_t kVc = 0x0004000;       // MultiKron_vc (if installed), 0x4000-0x7FFC
inline constexpr std::uint32_t kVcEnd = 0x0008000;
inline constexpr std::uint32_t kMemory = 0x1000000;  // Local Memory, 0x1000000-0x1FFFFFC
inline constexpr std::uint32_t kMemoryEnd = 0x2000000;
}  // namespace offset
inline constexpr std::uint32_t kAddressLimit = offset::kMemoryEnd;

// ---- local memory (003 2.7) ----
inline constexpr std::uint32_t kMemoryWords = 1u << 22;  // 16 MB as 4M x 32 bits
inline constexpr std::uint32_t kMemoryWordMask = kMemoryWords - 1;
inline constexpr std::uint32_t kPointerMask = 0xffffff;  // 24-bit counter
inline constexpr std::size_t kFifoEntries = 1024;        // 003 2.4: "16 bits wide by 1024 ranks deep"

// ---- 003 Table 2: Configuration Register ----
struct ConfigField {
  std::string_view name;
  unsigned lsb, width;
  std::string_view meaning;  // of the value 1 (or of the field)
};
namespace cfg {
// Every field of Table 2, in bit order (names as printed in 003).
inline constexpr std::array<ConfigField, 14> kFields{{
    {"CPU_ID", 0, 8, "CPU ID lines to the MultiKron_II (used when EXT_CPU = 0)"},
    {"TEST", 8, 1, "manually control the output of the board FIFO"},
    {"LOCAL", 9, 1, "samples to local board memory (0: to the external cable)"},
    {"EXT_CPU", 10, 1, "CPU ID from the external XCPU[7..0] inputs"},
    {"WAIT_CPU", 11, 1, "one MultiKron CPU wait state (read at reset)"},
    {"TESTB", 12, 1, "MultiKron operational (0 places it in TEST mode)"},
    {"MK_OE", 13, 1, "MultiKron outputs enabled"},
    {"WRAPB", 14, 1, "memory is a simple buffer (0: circular)"},
    {"EN_EXT", 15, 1, "external clock and reset (0: local 40 MHz oscillator)"},
    {"DIS_STATE", 16, 1, "board FIFO state machine disabled"},
    {"TS_RATIO", 18, 1, "timestamp = NODECLK / 3 (0: / 4)"},
    {"DIV2", 19, 1, "NODECLK = oscillator / 2"},
    {"WAIT_MEM", 20, 1, "MultiKron_vc SRAM wait state"},
    {"V_NUM", 24, 8, "board version number (read only, 0x90)"},
}};

inline constexpr std::uint32_t kCpuIdMask = 0xff;     // 0-7 CPU_ID[0..7]
inline constexpr std::uint32_t kTest = 1u << 8;       // 1 = manual control of the board FIFO output
inline constexpr std::uint32_t kLocal = 1u << 9;      // 1 = samples to local memory, 0 = cable
inline constexpr std::uint32_t kExtCpu = 1u << 10;    // 1 = CPU ID from XCPU[7..0]
inline constexpr std::uint32_t kWaitCpu = 1u << 11;   // 1 = one MultiKron CPU wait state
inline constexpr std::uint32_t kTestB = 1u << 12;     // 0 = MultiKron in TEST mode
inline constexpr std::uint32_t kMkOe = 1u << 13;      // 1 = MultiKron outputs enabled
inline constexpr std::uint32_t kWrapB = 1u << 14;     // 1 = simple buffer, 0 = circular
inline constexpr std::uint32_t kEnExt = 1u << 15;     // 1 = external clock and reset
inline constexpr std::uint32_t kDisState = 1u << 16;  // 1 = FIFO state machine disabled
inline constexpr std::uint32_t kTsRatio = 1u << 18;   // 1 = NODECLK/3, 0 = NODECLK/4
inline constexpr std::uint32_t kDiv2 = 1u << 19;      // 1 = oscillator / 2
inline constexpr std::uint32_t kWaitMem = 1u << 20;   // MultiKron_vc SRAM wait state
inline constexpr unsigned kVersionShift = 24;         // 24-31 V_NUM
inline constexpr std::uint32_t kVersion = 0x90;       // "Toolkit Board Version number = 0x90"
// Bits 0-23 reset to 0; 24-31 are V_NUM (003 1.2). Bits 17 and 21-23 are N/A: ignored, read 0.
inline constexpr std::uint32_t kReset = kVersion << kVersionShift;
inline constexpr std::uint32_t kReadOnly = 0xff000000u | (1u << 17) | 0x00e00000u;
inline constexpr std::uint32_t kDefault = 0x003201;  // "recommended default value is 003201 (Hex)"
}  // namespace cfg

// The named bits above are the table's rows.
namespace detail {
constexpr bool table_bit(std::string_view name, std::uint32_t bit) {
  for (const ConfigField& f : cfg::kFields)
    if (f.name == name) return f.width == 1 && (1u << f.lsb) == bit;
  return false;
}
}  // namespace detail
static_assert(detail::table_bit("TEST", cfg::kTest) && detail::table_bit("LOCAL", cfg::kLocal) &&
              detail::table_bit("EXT_CPU", cfg::kExtCpu) && detail::table_bit("WAIT_CPU", cfg::kWaitCpu) &&
              detail::table_bit("TESTB", cfg::kTestB) && detail::table_bit("MK_OE", cfg::kMkOe) &&
              detail::table_bit("WRAPB", cfg::kWrapB) && detail::table_bit("EN_EXT", cfg::kEnExt) &&
              detail::table_bit("DIS_STATE", cfg::kDisState) && detail::table_bit("TS_RATIO", cfg::kTsRatio) &&
              detail::table_bit("DIV2", cfg::kDiv2) && detail::table_bit("WAIT_MEM", cfg::kWaitMem));

}  // namespace kron::regs::toolkit
