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
      // unchanged. Only a non-zero value will change a field."
      std::uint64_t v = old;
      for (unsigned f = 0; f < 16; ++f) {
        const std::uint64_t nibble = std::uint64_t{0xf} << (4 * f);
        if (data & nibble) v = (v & ~nibble) | (data & nibble);
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

std::string_view name(Source s) {
  switch (s) {
    case Source::Nop: return "nop";
    case Source::Clock: return "clk";
    case Source::Software: return "software";
    case Source::ExternalEnable: return "external-enable";
    case Source::External: return "external";
  }
  return "?";
}
std::string_view name(Clock c) {
  switch (c) {
    case Clock::Nop: return "nop";
    case Clock::Node: return "node";
    case Clock::NodeDiv10: return "node/10";
    case Clock::NodeDiv100: return "node/100";
    case Clock::Timestamp: return "ts";
  }
  return "?";
}
std::string_view name(EnableCode e) {
  switch (e) {
    case EnableCode::Nop: return "nop";
    case EnableCode::Disable: return "disable";
    case EnableCode::Enable: return "enable";
    case EnableCode::ResetEnable: return "reset-enable";
  }
  return "?";
}

}  // namespace kron::mk2
