// The first MultiKron's register table and the generic code that applies it. Sources: registers.hpp.
#include "models/mk1/registers.hpp"

#include <algorithm>

#include "models/mk1/mk1.hpp"

namespace kron::mk1 {

std::string_view name(MuxSource s) {
  switch (s) {
    case MuxSource::SlowClock: return "slow clock";
    case MuxSource::External: return "external";
    case MuxSource::Software: return "software";
    case MuxSource::NodeClock: return "node clock";
  }
  return "?";
}

namespace {

using R = ReadKind;
using W = WriteKind;
constexpr std::uint64_t k16 = 0xffff;

// 001 Table A-1, one row per register (or run of registers). ERRATUM E65: the documents give no
// reset values beyond the CSR defaults; every register resets to 0.
constexpr std::array<RegisterInfo, 17> kTable{{
    // addr count name                      width read     write       test  reset read_only        write1
    {addr::kSoftwareReset, 1, "Software Reset", 0, R::None, W::Strobe, false, 0, 0, 0,
     "001 Software Reset; Table A-1 row 0"},
    // Table 2: bits 6-13 read only; bits 0-5 and 14-15 act on a written 1; 16-31 read 0.
    {addr::kCsr, 1, "CSR", 16, R::Hook, W::Load, false, 0, csr::kReadOnly, csr::kPairs, "001 Table 2; Table A-1 row 1"},
    {addr::kTimestamp, 1, "Timestamp", 56, R::Hook, W::None, false, 0, 0, 0, "001 Timestamp; Table A-1 row 2"},
    {addr::kFilter, 1, "Filter Register", 16, R::Stored, W::Load, false, 0, 0, 0,
     "001 Filter Register; Table A-1 row 4 (16 bits)"},
    {addr::kWaitCounter, 1, "Wait Counter", 32, R::Hook, W::Strobe, false, 0, 0, 0,
     "001 Wait Counter; Table A-1 row 5"},
    {addr::kOverrunCounter, 1, "Overrun Counter", 32, R::Hook, W::Strobe, false, 0, 0, 0,
     "001 Overrun Counter; Table A-1 row 6"},
    // Bits 16-31 and 48-63 are "reserved for future expansion": not stored, read 0.
    {addr::kMuxSel, 1, "MUX SEL Register", 64, R::Stored, W::Load, false, 0, 0xffff0000ffff0000ull, 0,
     "001 MUX SEL Register, Table 4; Table A-1 row 8"},
    {addr::kReset, 1, "Reset Register", 32, R::None, W::Load, false, 0, ~k16, k16,
     "001 Reset Register; Table A-1 row 10"},
    {addr::kEnable, 1, "Enable Register", 32, R::Hook, W::Load, false, 0, ~k16, k16,
     "001 Enable Register; Table A-1 row 11"},
    {addr::kDisable, 1, "Disable Register", 32, R::None, W::Load, false, 0, ~k16, k16,
     "001 Disable Register; Table A-1 row 12"},
    {addr::kFifoOutput, 1, "FIFO Output", 32, R::Hook, W::None, true, 0, 0, 0,
     "001 Appendix C FIFO Output; Table A-1 row 13"},
    // Bits 32-47 instruction, 0-31 data; stored and readable, and the instruction acts on each write.
    {addr::kTest, 1, "TEST Register", 48, R::Stored, W::Load, true, 0, 0, 0,
     "001 Appendix C TEST Register, Table C-1; Table A-1 row 14"},
    {addr::kSourceAddress, 8, "Source Address Register", 32, R::Stored, W::Load, false, 0, 0, 0,
     "001 Source Address Registers; Table A-1 rows 16-23"},
    {addr::kResourceCounter, 16, "Resource Counter", 32, R::Hook, W::Strobe, false, 0, 0, 0,
     "001 Resource Counters, Tables 3A; Table A-1 rows 32-47"},
    {48, 16, "Reserved Resource Counter", 0, R::None, W::None, false, 0, 0, 0, "001 Table A-1 rows 48-63 (reserved)"},
    {addr::kTraceTrigger, 16, "Trace sample trigger", 64, R::None, W::Strobe, false, 0, 0, 0,
     "001 Table 1, Table A-1 rows 96-111"},
    {addr::kResourceTrigger, 16, "Resource sample trigger", 64, R::None, W::Strobe, false, 0, 0, 0,
     "001 Table 1, Table 3B, Table A-1 rows 112-127"},
}};

static_assert(std::is_sorted(kTable.begin(), kTable.end(),
                             [](const RegisterInfo& a, const RegisterInfo& b) { return a.addr < b.addr; }));

}  // namespace

std::span<const RegisterInfo> register_table() { return kTable; }

namespace {
// Address -> row, built once from the table (the decode a chip does in gates).
const std::array<const RegisterInfo*, 128> kDecode = [] {
  std::array<const RegisterInfo*, 128> d{};
  for (const RegisterInfo& r : kTable)
    for (unsigned a = r.addr; a < r.addr + r.count && a < d.size(); ++a) d[a] = &r;
  return d;
}();
}  // namespace

const RegisterInfo* find_register(unsigned a) { return a < kDecode.size() ? kDecode[a] : nullptr; }

// Every stored register takes its reset value from the table.
void Mk1::reset_registers() {
  regs_.fill(0);
  for (const RegisterInfo& r : kTable)
    if (r.read == ReadKind::Stored || r.write == WriteKind::Load)
      for (unsigned a = r.addr; a < r.addr + r.count && a < regs_.size(); ++a) regs_[a] = r.reset & width_mask(r.width);
}

// 001 Table 2: the CSR read shows the control state in bits 0, 2, 4, 14 and the live status in 6-13.
std::uint64_t Mk1::csr_read() const {
  std::uint64_t v = regs_[addr::kCsr] & (csr::kEnableSampling | csr::kWriteWait | csr::kReadWait | csr::kSlow10us);
  if (fifo_.size() >= kFifoDepth) v |= csr::kFifoFull;
  if (shadow_full_) v |= csr::kShadowFull;
  if (lost_fifo_) v |= csr::kFifoOverrun;
  if (lost_shadow_) v |= csr::kShadowOverrun;
  if (!fifo_.empty() && fifo_.front().resource) v |= csr::kFifoBit128;
  v |= std::uint64_t{wait_states_ & 3u} << csr::kWaitStatesShift;
  return v;
}

}  // namespace kron::mk1
