// The registers of the first MultiKron, described once from 001 Table A-1 (addresses, read/write
// kinds), Table 2 (CSR bits) and the register sections of 001. Addresses are 32-bit word offsets
// (001 Table 1). Generic code (registers.cpp) applies the table: reset values, which written bits are
// stored, which are ignored (read-only), and which act when written as 1 (write-1-to-act); the model
// keeps only small hooks for what each action does.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "kron/core/register_table.hpp"

namespace kron::mk1 {

inline constexpr std::uint64_t kTimestampMask = (std::uint64_t{1} << 56) - 1;  // the 56-bit Timestamp (001)

// ---- addresses (001 Table A-1) ----
namespace addr {
inline constexpr unsigned kSoftwareReset = 0;      // write: reset chip, Timestamp unchanged
inline constexpr unsigned kCsr = 1;                // Table 2
inline constexpr unsigned kTimestamp = 2;          // read only, 56 bits
inline constexpr unsigned kFilter = 4;             // 16 bits
inline constexpr unsigned kWaitCounter = 5;        // read; write resets to zero
inline constexpr unsigned kOverrunCounter = 6;     // read; write resets to zero
inline constexpr unsigned kMuxSel = 8;             // 64 bits
inline constexpr unsigned kReset = 10;             // write only, pulse
inline constexpr unsigned kEnable = 11;            // write 1 enables; read = enable state
inline constexpr unsigned kDisable = 12;           // write only
inline constexpr unsigned kFifoOutput = 13;        // read only, test mode only
inline constexpr unsigned kTest = 14;              // test mode only, 48 bits
inline constexpr unsigned kSourceAddress = 16;     // 16-23
inline constexpr unsigned kResourceCounter = 32;   // 32-47; 48-63 reserved
inline constexpr unsigned kTraceTrigger = 96;      // 96-111
inline constexpr unsigned kResourceTrigger = 112;  // 112-127
}  // namespace addr

// ---- CSR bits (001 Table 2): status on read, control on a write of "1" ----
namespace csr {
inline constexpr std::uint64_t kEnableSampling = 1u << 0;   // read: Sampling Enabled
inline constexpr std::uint64_t kDisableSampling = 1u << 1;  // default on reset
inline constexpr std::uint64_t kWriteWait = 1u << 2;        // read: Write Wait on Overrun
inline constexpr std::uint64_t kWriteDiscard = 1u << 3;     // default
inline constexpr std::uint64_t kReadWait = 1u << 4;         // read: Read Wait for shadow regs.
inline constexpr std::uint64_t kReadCancel = 1u << 5;       // default
inline constexpr std::uint64_t kFifoFull = 1u << 6;         // read only
inline constexpr std::uint64_t kShadowFull = 1u << 7;       // read only
inline constexpr std::uint64_t kFifoOverrun = 1u << 8;      // read only
inline constexpr std::uint64_t kShadowOverrun = 1u << 9;    // read only
inline constexpr std::uint64_t kFifoBit128 = 1u << 10;      // read only
inline constexpr unsigned kWaitStatesShift = 12;            // bits 12-13, read only
inline constexpr std::uint64_t kSlow10us = 1u << 14;        // read: 10 us slow clock enabled
inline constexpr std::uint64_t kSlow1us = 1u << 15;         // default on reset
// The write-1-to-act pairs (set, clear): 0/1, 2/3, 4/5, 14/15, the same shape as 000 Table B1.
inline constexpr std::uint64_t kPairs =
    kEnableSampling | kDisableSampling | kWriteWait | kWriteDiscard | kReadWait | kReadCancel | kSlow10us | kSlow1us;
// Bits 6-13, read only: the status bits above and the wait states.
inline constexpr std::uint64_t kReadOnly = kFifoFull | kShadowFull | kFifoOverrun | kShadowOverrun | kFifoBit128 |
                                           std::uint64_t{1} << 11 | std::uint64_t{3} << kWaitStatesShift;
static_assert(kPairs == 0xc03f && kReadOnly == 0x3fc0);  // 001 Table 2
}  // namespace csr

// ---- MUX SEL encodings (001 Table 4) ----
enum class MuxSource : std::uint8_t { SlowClock = 0b00, External = 0b01, Software = 0b10, NodeClock = 0b11 };
std::string_view name(MuxSource s);

// How a processor read of the address is answered.
enum class ReadKind : std::uint8_t {
  None,    // N/A in Table A-1: the data path returns 0 (001 PROCESSOR INTERFACE, ERRATUM E64)
  Stored,  // the stored register value
  Hook,    // computed by the model (CSR status, timestamp, counters, FIFO output)
};
// What a processor write does.
enum class WriteKind : std::uint8_t {
  None,    // "-" or N/A: ignored
  Load,    // writable bits (neither read-only nor write-1-to-act) are stored
  Strobe,  // any write acts; the data is ignored (Software Reset, counter resets, increments)
};

struct RegisterInfo {
  unsigned addr;          // first address
  unsigned count;         // consecutive addresses sharing the description
  std::string_view name;  // 001's name
  unsigned width;         // bits that exist; the rest read 0 and are ignored on write
  ReadKind read;
  WriteKind write;
  bool test_only;           // "Operational Only in Test Mode" (Appendix C)
  std::uint64_t reset;      // value after hardware or software reset
  std::uint64_t read_only;  // bits a write leaves alone
  std::uint64_t write1;     // bits that act when written as 1 and are not stored (write-1-to-act)
  std::string_view source;  // where the row comes from
};

// The whole table, in address order.
std::span<const RegisterInfo> register_table();
// The row describing `addr` (0-127), or nullptr for an unassigned address.
const RegisterInfo* find_register(unsigned addr);

// Generic bit rules shared with the MultiKron II (include/kron/core/register_table.hpp). The rows stay
// this chip's own: unused bits read 0 here (ERRATUM E64), strobe writes, runs of addresses.
using regs::width_mask;
// Generic write: the stored value after writing `data`, per the row's masks.
constexpr std::uint64_t apply_load(const RegisterInfo& r, std::uint64_t old, std::uint64_t data) {
  const std::uint64_t keep = r.read_only | r.write1 | ~width_mask(r.width);
  return (old & keep) | (data & ~keep);
}
// Generic write: the bits that act (write-1-to-act).
constexpr std::uint64_t apply_write1(const RegisterInfo& r, std::uint64_t data) {
  return data & r.write1 & width_mask(r.width);
}

}  // namespace kron::mk1
