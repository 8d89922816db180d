// The PCI toolkit board's address map (003 Table 1) and Configuration Register (003 Table 2) as the model
// uses them. The tables themselves are described once, in include/kron/core/toolkit_regs.hpp, which the
// live board shares (its WRAPB bit).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "kron/core/toolkit_regs.hpp"

namespace kron::pcib {

namespace offset = regs::toolkit::offset;
namespace cfg = regs::toolkit::cfg;
using regs::toolkit::ConfigField;
using regs::toolkit::kAddressLimit;
using regs::toolkit::kFifoEntries;
using regs::toolkit::kMemoryWordMask;
using regs::toolkit::kMemoryWords;
using regs::toolkit::kPointerMask;

std::span<const ConfigField> config_fields();
// "CPU_ID=01 LOCAL=1 ... V_NUM=0x90": every field of a Configuration Register value.
std::string describe_config(std::uint32_t value);

inline constexpr std::uint64_t kOscillatorHz = 40'000'000;  // 003 1.2 Bit 15: "a local 40 MHz oscillator"

}  // namespace kron::pcib
