// The PCI toolkit board's Configuration Register fields (003 Table 2). Sources: registers.hpp.
#include "models/pcib/registers.hpp"

#include <array>
#include <cstdio>

namespace kron::pcib {

namespace {
constexpr std::array<ConfigField, 14> kFields{{
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
}  // namespace

std::span<const ConfigField> config_fields() { return kFields; }

std::string describe_config(std::uint32_t value) {
  std::string out;
  for (const ConfigField& f : kFields) {
    const unsigned v = (value >> f.lsb) & ((1u << f.width) - 1);
    char buf[64];
    if (f.width > 1) std::snprintf(buf, sizeof buf, "%s=0x%02x", std::string(f.name).c_str(), v);
    else std::snprintf(buf, sizeof buf, "%s=%u", std::string(f.name).c_str(), v);
    if (!out.empty()) out += ' ';
    out += buf;
  }
  return out;
}

}  // namespace kron::pcib
