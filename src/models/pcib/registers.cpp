// The PCI toolkit board's Configuration Register fields (003 Table 2). Sources: registers.hpp.
#include "models/pcib/registers.hpp"

#include <array>
#include <cstdio>

namespace kron::pcib {

namespace {
using cfg::kFields;
}  // namespace

std::span<const ConfigField> config_fields() { return kFields; }

std::string describe_config(std::uint32_t value) {
  std::string out;
  for (const ConfigField& f : kFields) {
    const unsigned v = (value >> f.lsb) & ((1u << f.width) - 1);
    char buf[64];
    if (f.width > 1)
      std::snprintf(buf, sizeof buf, "%s=0x%02x", std::string(f.name).c_str(), v);
    else
      std::snprintf(buf, sizeof buf, "%s=%u", std::string(f.name).c_str(), v);
    if (!out.empty()) out += ' ';
    out += buf;
  }
  return out;
}

}  // namespace kron::pcib
