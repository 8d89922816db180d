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
    case WriteKind::Store: return (old & ~writable) | (data & writable);
    case WriteKind::Fields:  // 000 Tables B5-B7; ERRATUM E13 is decided in regs::write_fields
      return regs::write_fields(old, data, r.field_code);
    case WriteKind::W1Pairs:  // 000 Table B1; ERRATUM E13 is decided in regs::w1_pairs
      return regs::w1_pairs(old, data, r.w1_act);
    case WriteKind::Ignored:
    case WriteKind::Hook: break;
  }
  return old;
}

}  // namespace kron::mk2
