// What the NUMAchine monitor counts, from 004's tables: the general-purpose counter events (Table 4.5),
// the SRAM counter events and modes (Tables 4.6, 4.7), the latency timer and its 7-bit compact format
// (4.3.6), the Miss Type and Response State Registers (Tables 4.8, 4.9), the pipeline-status selection
// (Tables 4.2, 4.3) and the packet commands kron gives the External Agent's traffic (ERRATUM E84).
// Everything here is constexpr and side-effect free; the model (numachine.hpp) applies it.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kron::numachine {

// ---- 004 Table 4.5: GPCMx[14..11] ----
enum class GpcEvent : std::uint8_t {
  Nothing = 0x0,          // count nothing (disable)
  Always = 0x1,           // count always (high-resolution cycle counter)
  Pipeline = 0x2,         // pipeline status events (4.3.2)
  Interrupt = 0x3,        // interrupt request latency {interrupt requests}
  Read = 0x4,             // cache line read latency {cache line reads}
  ReadEx = 0x5,           // cache line read-exclusive latency {read-exclusives}
  ReadOrReadEx = 0x6,     // read latency + read-exclusive latency {reads + read-exclusives}
  Ownership = 0x7,        // successful ownership miss latency {successful ownership misses}
  OwnershipCancel = 0x8,  // cancelled ownership miss latency {cancelled ownership misses}
  NackRetries = 0x9,      // negative acknowledgement retries (may be >1 per request)
  NackCycles = 0xA,       // NACK cycles {transactions with one or more NACKs}
  LastRequest = 0xB,      // latency of most recent request (the counter resets when a request is issued)
  BusActivity = 0xC,      // external agent bus activity (utilization) {transactions}
  BusRequest = 0xD,       // bus request latency {bus requests}
  InvalHit = 0xE,         // external invalidations that hit in the cache (estimate)
  InvalMiss = 0xF,        // invalidation miss latency (estimate) {invalidation misses}
};
inline constexpr std::array<std::string_view, 16> kGpcEventNames{"nothing",
                                                                 "always",
                                                                 "pipeline",
                                                                 "interrupt",
                                                                 "read",
                                                                 "read-exclusive",
                                                                 "read+read-exclusive",
                                                                 "ownership",
                                                                 "ownership-cancelled",
                                                                 "nack-retries",
                                                                 "nack-cycles",
                                                                 "last-request",
                                                                 "bus-activity",
                                                                 "bus-request",
                                                                 "inval-hit",
                                                                 "inval-miss"};
constexpr std::uint16_t bit(GpcEvent e) { return static_cast<std::uint16_t>(1u << static_cast<unsigned>(e)); }

// ---- 004 Table 4.6: SCM[14..11] ("Appropriate Mode" is advice, not enforced: ERRATUM E89) ----
enum class SramEvent : std::uint8_t {
  Nothing = 0,
  Always = 1,
  L2Access = 2,
  L2Read = 3,
  L2Write = 4,
  L2Miss = 5,
  ReadReadExUpgrade = 6,
};
constexpr std::uint16_t bit(SramEvent e) { return static_cast<std::uint16_t>(1u << static_cast<unsigned>(e)); }

// ---- 004 Table 4.7: SCM[21..20] ----
enum class SramMode : std::uint8_t { SecondaryCache = 0, LatencyTimer = 1, Mcc = 2, LatencyCompact = 3 };
inline constexpr std::array<std::string_view, 4> kSramModeNames{"secondary-cache", "latency-timer", "mcc",
                                                                "latency-compact"};

// ---- 004 4.3.6: the latency timer ----
inline constexpr unsigned kLtBits = 12;
inline constexpr std::uint32_t kBusErrorCycles =
    1u << kLtBits;  // "BUS_ERROR occurs after a time-out of 2^12 (4096) cycles"

// The 7-bit compact form of a 12-bit time: 3-bit exponent (high), 4-bit mantissa (low); exponent 0 is
// denormal: time = 0.mantissa * 2^5, else time = 1.mantissa * 2^5 * 2^(exponent-1) (004 4.3.6).
constexpr std::uint8_t compact(std::uint32_t time) {
  time &= (1u << kLtBits) - 1;
  if (time < 32) return static_cast<std::uint8_t>(time >> 1);  // denormal: mantissa = time / 2
  unsigned top = 5;
  while (time >> (top + 1)) ++top;  // top = floor(log2 time), 5..11
  const unsigned e = top - 4;       // 1..7
  return static_cast<std::uint8_t>(e << 4 | ((time >> e) & 0xf));
}
// The bucket a compact value stands for: [lo, hi] cycles (the bucket list of 004 4.4.5, ERRATUM E85).
struct Bucket {
  std::uint32_t lo, hi;
};
constexpr Bucket bucket(std::uint8_t code) {
  const unsigned e = code >> 4 & 7, m = code & 0xf;
  if (e == 0) return {m * 2u, m * 2u + 1};  // 0.m * 2^5 = 2m, two cycles wide
  const std::uint32_t lo = (16u + m) << e;  // 1.m * 2^5 * 2^(e-1)
  return {lo, lo + (1u << e) - 1};
}

// ---- 004 Table 4.8: the Miss Type Register ----
enum class MissType : std::uint8_t { Ownership = 0, OwnershipCancelled = 1, Invalidation = 2, Other = 3 };

// ---- 004 Table 4.9: the Response State Register (5 bits) ----
namespace rsr {
inline constexpr std::uint8_t kNetworkCacheHit = 1u << 4;  // 0 network cache miss, 1 hit
inline constexpr std::uint8_t kGlobal = 1u << 3;           // 0 local state, 1 global state
inline constexpr std::uint8_t kValid = 1u << 2;            // 0 invalid, 1 valid
inline constexpr std::uint8_t kRemote = 1u << 1;           // 0 local address, 1 remote address
inline constexpr std::uint8_t kExclusive = 1u << 0;        // 0 read, 1 read exclusive or upgrade
inline constexpr std::uint8_t kMask = 0x1f;
}  // namespace rsr

// ---- packet commands (13 bits, 004 4.4.2); 004 does not give NUMAchine's codes: ERRATUM E84 ----
namespace cmd {
inline constexpr std::uint16_t kMask = 0x1fff;
inline constexpr std::uint16_t kResponse = 0x1000;  // bit 12: a response (else a request)
inline constexpr std::uint16_t kRead = 0x001;       // cache line read
inline constexpr std::uint16_t kReadEx = 0x003;     // cache line read-exclusive (differs from kRead in bit 1 only)
inline constexpr std::uint16_t kUpgrade = 0x005;    // ownership (upgrade)
inline constexpr std::uint16_t kWriteBack = 0x008;
inline constexpr std::uint16_t kInvalidate = 0x009;
// Table 4.6 event 6: "cache line reads + read exclusives + upgrades", request or response.
constexpr bool is_read_readex_upgrade(std::uint16_t c) {
  const std::uint16_t t = c & ~kResponse & kMask;
  return t == kRead || t == kReadEx || t == kUpgrade;
}
}  // namespace cmd

// ---- pipeline status, 004 4.3.2, Tables 4.2 and 4.3 ----
// 004 Table 2.3 (the R4400's pipeline states) is not in the seed document: kron numbers the fifteen
// states 1-15 in the order of Table 4.3's merged groups, 0 = no event (ERRATUM E86).
inline constexpr std::array<std::string_view, 16> kPipelineStates{
    "none",  // 0
    "load",
    "store",  // 1, 2   running PS[0]
    "branch-taken",
    "branch-not-taken",  // 3, 4   running PS[1]
    "integer",
    "fp",  // 5, 6   running PS[2]: other integer / floating-point
    "icache-stall",
    "dcache-stall",  // 7, 8   idle PS[0]: primary instruction / data cache
    "scache-stall",  // 9      idle PS[1]: secondary cache
    "mp-stall",
    "other-stall",  // 10, 11 idle PS[2]: multiprocessing / other stalls
    "killed-exception",
    "killed-branch",  // 12, 13 idle PS[3]: killed by exception / branch
    "integer-slip",
    "fp-slip",  // 14, 15 idle PS[4]
};
// The Table 4.3 bit that selects state s in running (PS[6..5] = 10) and idle (11) mode, or -1.
constexpr int running_bit(unsigned s) { return s >= 1 && s <= 6 ? static_cast<int>((s - 1) / 2) : -1; }
constexpr int idle_bit(unsigned s) {
  constexpr std::array<int, 16> k{-1, -1, -1, -1, -1, -1, -1, 0, 0, 1, 2, 2, 3, 3, 4, 4};
  return s < 16 ? k[s] : -1;
}
// Whether PS[6..0] selects pipeline state s (Tables 4.2, 4.3).
constexpr bool ps_selects(std::uint8_t ps, unsigned s) {
  if (s == 0 || s > 15) return false;
  if (!(ps >> 6 & 1)) return (ps & 0xf) == s;                  // single event: PS[3..0], PS[5] either
  const int b = (ps >> 5 & 1) ? idle_bit(s) : running_bit(s);  // 11 idle: PS[4..0]; 10 running: PS[2..0]
  return b >= 0 && (ps >> b & 1);
}
std::optional<unsigned> pipeline_state(std::string_view name);  // a name above or a number 0-15

}  // namespace kron::numachine
