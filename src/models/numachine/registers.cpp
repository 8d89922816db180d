// Table 4.4 applied: names, the printed form. The table itself: registers.hpp.
#include "models/numachine/registers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "sim/script.hpp"

namespace kron::numachine {
namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::optional<std::uint32_t> address_named(std::string_view name) {
  for (const RegisterInfo& r : kRegisters)
    if (same_name(name, r.acronym)) return r.address;
  if (same_name(name, "reserved")) return info(Reg::Reserved).address;
  // GPC0-GPC3, and GPC0.clr-GPC3.clr: the reset-on-read addresses (ERRATUM E80).
  if (name.size() >= 4 && same_name(name.substr(0, 3), "GPC") && name[3] >= '0' &&
      name[3] < '0' + static_cast<int>(kGpcs)) {
    const unsigned k = static_cast<unsigned>(name[3] - '0');
    if (name.size() == 4) return kGpcBase + k;
    if (same_name(name.substr(4), ".clr")) return kGpcResetBase + k;
    return std::nullopt;
  }
  if (name.size() > 6 && same_name(name.substr(0, 5), "SRAM[") && name.back() == ']') {
    const auto a = sim::parse_number(name.substr(5, name.size() - 6));
    if (a && *a < kSramWords) return kSramBase + static_cast<std::uint32_t>(*a);
  }
  return std::nullopt;
}

std::string address_name(std::uint32_t addr) {
  if (addr < kRegisterCount) return std::string(kRegisters[addr].acronym);
  if (addr >= kGpcBase && addr < kGpcBase + kGpcs) return fmt::format("GPC{}", addr - kGpcBase);
  if (addr >= kGpcResetBase && addr < kGpcResetBase + kGpcs) return fmt::format("GPC{}.clr", addr - kGpcResetBase);
  if (addr >= kSramBase && addr < kSramBase + kSramWords) return fmt::format("SRAM[0x{:04x}]", addr - kSramBase);
  return std::to_string(addr);
}

std::string describe(const RegisterInfo& r, std::uint32_t value) {
  std::string s = fmt::format("{} = 0x{:08x}", r.acronym, value);
  for (const Field& f : r.fields) {
    if (f.hi == f.lo)
      s += fmt::format(" {}={}", f.name, f.get(value));
    else
      s += fmt::format(" {}=0x{:x}", f.name, f.get(value));
  }
  return s;
}

}  // namespace kron::numachine
