// Generic application of the MultiKron II register table. Sources and decisions: registers.hpp.
#include "models/mk2/registers.hpp"

namespace kron::mk2 {
namespace {

constexpr std::array<std::uint8_t, kAddresses> make_decode_table() {
  std::array<std::uint8_t, kAddresses> t{};
  std::uint8_t unused = 0;
  for (std::size_t i = 0; i < kRegisters.size(); ++i)
    if (kRegisters[i].reg == Reg::Unused) unused = static_cast<std::uint8_t>(i);
  for (auto& e : t) e = unused;
  for (std::size_t i = 0; i < kRegisters.size(); ++i)
    if (kRegisters[i].reg != Reg::Unused)
      for (unsigned a = kRegisters[i].first; a <= kRegisters[i].last; ++a) t[a] = static_cast<std::uint8_t>(i);
  return t;
}
constexpr auto kDecode = make_decode_table();

// Table B4 has no overlapping rows and the map covers the addresses it prints.
static_assert(kRegisters[kDecode[0]].reg == Reg::SoftwareReset);
static_assert(kRegisters[kDecode[9]].reg == Reg::Unused);
static_assert(kRegisters[kDecode[39]].reg == Reg::SourceAddress);
static_assert(kRegisters[kDecode[40]].reg == Reg::Unused);
static_assert(kRegisters[kDecode[127]].reg == Reg::ResourceTrigger);

}  // namespace

const RegisterInfo& decode(std::uint32_t addr) { return kRegisters[kDecode[addr % kAddresses]]; }

std::uint64_t apply_write(const RegisterInfo& r, std::uint64_t old, std::uint64_t data) {
  const std::uint64_t writable = width_mask(r.width) & ~r.read_only;
  switch (r.write) {
    case WriteKind::Store:
      return (old & ~writable) | (data & writable);
    case WriteKind::Fields: {
      // 000 Resource Counter Control Registers: "a zero value written into any field leaves that field
      // unchanged". Tables B5-B7 print the NOP as x000 / xx00: ERRATUM E13, a field whose code bits are
      // 0 is left unchanged whatever its don't-care bits; any other value is stored as written.
      std::uint64_t v = old;
      for (unsigned f = 0; f < 16; ++f) {
        const std::uint64_t nibble = std::uint64_t{0xf} << (4 * f);
        if (data & (std::uint64_t{r.field_code} << (4 * f))) v = (v & ~nibble) | (data & nibble);
      }
      return v;
    }
    case WriteKind::W1Pairs: {
      // 000 Table B1: a "1" in bit 2k commands the action, a "1" in bit 2k+1 its opposite; a "0" has no
      // effect. The state lives in the even bit. ERRATUM E13: both bits written 1 -> the odd
      // (disabling, reset-default) action wins.
      std::uint64_t v = old;
      for (unsigned b = 0; b < 64; b += 2) {
        if (!(r.w1_act >> b & 1)) continue;
        if (data >> (b + 1) & 1) v &= ~(std::uint64_t{1} << b);
        else if (data >> b & 1) v |= std::uint64_t{1} << b;
      }
      return v;
    }
    case WriteKind::Ignored:
    case WriteKind::Hook:
      break;
  }
  return old;
}

}  // namespace kron::mk2
