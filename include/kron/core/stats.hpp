// Phases, latency histograms and virtual counters: the bucket format, the layout of a statistics
// cell on a board (2.2) and the snapshot records of a trace file (1.4). Shared by the probe side (kron.hpp's
// record_latency/vcount, src/probe), the board reader and the tools. No third-party dependency.
//
// Sources:
//   004 (NUMAchine thesis) 4.4.1 PhaseID Register (PR, 16 bits) and PhaseID Watch (PW); 4.3.6 the latency
//     timer's 7-bit compact floating-point format (3-bit exponent, 4-bit mantissa, denormal exponent 0);
//     4.4.5 SRAM counters with a negative preload and an interrupt on overflow (thresholds).
//   003 (NISTIR 5993) names the MultiKron_vc with 8,192 virtual counters (no datasheet: ERRATUM E183).
//
// The bucket format (ERRATUM E181) generalises 004's 7-bit compact float to 64-bit ticks: a value v below 32
// is its own bucket (exact); above, with t = floor(log2 v) >= 5 and e = t - 4, the bucket is the 4-bit
// mantissa (v >> e) & 15 of exponent e, 2^e ticks wide: at most 1/16 = 6.25% of its lower bound. Index:
//   e = max(0, floor(log2(v | 16)) - 4),  index = 16 * e + (v >> e)
// 976 buckets cover 0 to 2^64 - 1. Restricted to 0-4095 it is 004's format with the denormal range split in
// two: for v >= 32 index = compact(v) + 16 and the bucket is the same; below 32, 004's bucket m (2m, 2m+1)
// is kron's buckets 2m and 2m + 1 (tests/core/stats_test.cpp checks every value against the NUMAchine model).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kron/core/record.hpp"

namespace kron::stats {

inline constexpr unsigned kHistBuckets = 976;
inline constexpr unsigned kExactBelow = 32;

// The bucket of `ticks` (branch-free: an or, a count of leading zeros, two shifts and an add). The builtin
// (never given 0) is std::countl_zero's own code, and keeps this header usable at C++17 (kron.hpp includes it).
constexpr unsigned bucket_of(std::uint64_t ticks) {
  const unsigned e = 59u - static_cast<unsigned>(__builtin_clzll(ticks | 16u));
  return 16u * e + static_cast<unsigned>(ticks >> e);
}
struct Range {
  std::uint64_t lo, hi;  // the values of the bucket, both included
};
// `index` is validated by whoever read it (ERRATUM E347); one past the last bucket reads as the last, so
// that no index can make the shift below undefined.
constexpr Range bucket_range(unsigned index) {
  if (index >= kHistBuckets) index = kHistBuckets - 1;
  if (index < kExactBelow) return {index, index};
  const unsigned e = index / 16 - 1, m = index % 16;
  const std::uint64_t lo = std::uint64_t{16u + m} << e;
  return {lo, lo + ((std::uint64_t{1} << e) - 1)};
}
static_assert(bucket_of(0) == 0 && bucket_of(31) == 31 && bucket_of(32) == 32 && bucket_of(33) == 32 &&
              bucket_of(34) == 33 && bucket_of(~std::uint64_t{0}) == kHistBuckets - 1);
static_assert(bucket_range(kHistBuckets - 1).hi == ~std::uint64_t{0} && bucket_range(32).lo == 32 &&
              bucket_range(32).hi == 33);

// ---- A statistics cell of a board (2.2): 8 KiB, one (thread, object, phase) ------------------------------
inline constexpr std::uint32_t kCellWords = 1024;
inline constexpr std::uint32_t kCellBytes = kCellWords * 8;
// A histogram cell: bucket counts in words 0-975, then the exact sum, minimum and maximum of the values.
// ERRATUM E185: a threshold crossing is a Trace sample with kFlagThreshold whose data word is
// threshold_data(): bit 63 set for a histogram (its id in bits 32-47, the bucket in bits 0-15), clear for
// a virtual counter (its index in bits 0-15).
constexpr std::uint64_t threshold_data(bool histogram, std::uint32_t object, std::uint32_t index) {
  return (histogram ? std::uint64_t{1} << 63 | std::uint64_t{object & 0xffffu} << 32 : 0) | (index & 0xffffu);
}
inline constexpr std::uint32_t kHistSum = 1008, kHistMin = 1009, kHistMax = 1010;
inline constexpr std::uint32_t kHistOver = 1011;  // armed threshold: values counted at or above its bucket
// A counter cell: 1024 virtual counters, page p holding counters 1024p .. 1024p + 1023.
inline constexpr std::uint32_t kVirtualCounters = 8192;  // 003's MultiKron_vc
inline constexpr std::uint32_t kCountersPerCell = kCellWords;
inline constexpr std::uint32_t kCounterPages = kVirtualCounters / kCountersPerCell;
static_assert(kHistMax < kCellWords && kHistBuckets <= kHistSum);

enum class CellKind : std::uint16_t { Histogram = 1, Counters = 2 };
// A cell's key (its descriptor's first word, published with release; 0 while unwritten):
// bit 63 set | kind << 40 | object << 16 | phase. Object: the histogram's id (1-based), or the counter page.
constexpr std::uint64_t cell_key(CellKind kind, std::uint32_t object, std::uint16_t phase) {
  return std::uint64_t{1} << 63 | std::uint64_t{static_cast<std::uint16_t>(kind)} << 40 |
         std::uint64_t{object & 0xffffffu} << 16 | phase;
}
constexpr CellKind key_kind(std::uint64_t key) { return static_cast<CellKind>(key >> 40 & 0x7fffff); }
constexpr std::uint32_t key_object(std::uint64_t key) { return static_cast<std::uint32_t>(key >> 16 & 0xffffff); }
constexpr std::uint16_t key_phase(std::uint64_t key) { return static_cast<std::uint16_t>(key); }

// Phase watch (004 4.4.1 PW): when a histogram (or the virtual counters) count.
enum class Watch : std::uint32_t { Off = 0, Only = 1, Except = 2 };
constexpr bool watch_passes(std::uint32_t mode, std::uint32_t watch_phase, std::uint16_t phase) {
  if (mode == static_cast<std::uint32_t>(Watch::Only)) return phase == watch_phase;
  if (mode == static_cast<std::uint32_t>(Watch::Except)) return phase != watch_phase;
  return true;
}

inline constexpr std::size_t kHistNameBytes = 40;

// ---- Trace file records (1.4) ----------------------------------------------------------------------------
// A histogram snapshot (kind 5): one thread's histogram `hist` in phase `phase` at `timestamp`, cumulative
// since the thread first recorded into it (the last snapshot of a (source, thread, hist, phase) is its
// total). Followed by `entries` HistEntry (the buckets that are not 0, ascending). size = 96 + 16 * entries.
struct HistSnapshotRecord {
  record::RecordHeader h;  // kind 5, size; flags 0, group 0xff, phase
  std::uint32_t source;    // "node.process"
  std::uint32_t thread;
  std::uint64_t timestamp;  // ticks, the file's clock
  std::uint16_t hist;       // the histogram's id on its board (1-based)
  std::uint16_t entries;
  std::uint32_t reserved;
  std::uint64_t sum, min, max;  // of the values recorded (min ~0 when none)
  char name[kHistNameBytes];    // NUL-padded; a reader never trusts it to be terminated
};
struct HistEntry {
  std::uint64_t bucket;  // index 0-975
  std::uint64_t count;
};
// A counter snapshot (kind 6): one thread's virtual counters of phase `phase`, those not 0, ascending.
// size = 32 + 16 * entries.
struct CounterSnapshotRecord {
  record::RecordHeader h;  // kind 6, size; flags 0, group 0xff, phase
  std::uint32_t source;
  std::uint32_t thread;
  std::uint64_t timestamp;
  std::uint32_t entries;
  std::uint32_t reserved;
};
struct CounterEntry {
  std::uint64_t index;  // 0-8191
  std::uint64_t value;
};
static_assert(sizeof(HistSnapshotRecord) == 96 && sizeof(HistEntry) == 16 && sizeof(CounterSnapshotRecord) == 32 &&
              sizeof(CounterEntry) == 16);
static_assert(offsetof(HistSnapshotRecord, timestamp) == offsetof(record::TraceRecord, timestamp) &&
              offsetof(CounterSnapshotRecord, timestamp) == 16);
// What both snapshot records begin with: whose values, and when.
struct SnapshotHeader {
  record::RecordHeader h;  // kind 5 or 6, size
  std::uint32_t source, thread;
  std::uint64_t timestamp;
};
static_assert(sizeof(SnapshotHeader) == 24 &&
              offsetof(HistSnapshotRecord, source) == offsetof(SnapshotHeader, source) &&
              offsetof(CounterSnapshotRecord, source) == offsetof(SnapshotHeader, source) &&
              offsetof(HistSnapshotRecord, thread) == offsetof(SnapshotHeader, thread) &&
              offsetof(CounterSnapshotRecord, thread) == offsetof(SnapshotHeader, thread) &&
              offsetof(HistSnapshotRecord, timestamp) == offsetof(SnapshotHeader, timestamp) &&
              offsetof(CounterSnapshotRecord, timestamp) == offsetof(SnapshotHeader, timestamp));
static_assert(offsetof(HistSnapshotRecord, hist) == 24 && offsetof(HistSnapshotRecord, sum) == 32 &&
              offsetof(HistSnapshotRecord, name) == 56 && offsetof(CounterSnapshotRecord, entries) == 24);
inline constexpr std::size_t kMaxHistSnapshotBytes = sizeof(HistSnapshotRecord) + kHistBuckets * sizeof(HistEntry);
inline constexpr std::size_t kMaxCounterEntriesPerRecord =
    (0xfff8 - sizeof(CounterSnapshotRecord)) / sizeof(CounterEntry);
static_assert(kMaxHistSnapshotBytes <= 0xfff8);

// What is wrong with a snapshot record of `size` bytes read from an untrusted file, or nullptr: its kind,
// size, entry count and entries (indices in range and ascending).
inline const char* snapshot_problem(const std::uint8_t* rec, std::size_t size) {
  record::RecordHeader h;
  if (size < sizeof h) return "snapshot record cut short";
  std::memcpy(&h, rec, sizeof h);
  if (h.size != size) return "snapshot record size does not match";
  std::size_t head = 0, count = 0, limit = 0;
  if (h.kind == record::RecordKind::HistSnapshot) {
    if (size < sizeof(HistSnapshotRecord)) return "histogram snapshot shorter than 96 bytes";
    HistSnapshotRecord r;
    std::memcpy(&r, rec, sizeof r);
    head = sizeof r, count = r.entries, limit = kHistBuckets;
    if (r.hist == 0) return "histogram snapshot of histogram id 0";
  } else if (h.kind == record::RecordKind::CounterSnapshot) {
    if (size < sizeof(CounterSnapshotRecord)) return "counter snapshot shorter than 32 bytes";
    CounterSnapshotRecord r;
    std::memcpy(&r, rec, sizeof r);
    head = sizeof r, count = r.entries, limit = kVirtualCounters;
  } else {
    return "not a snapshot record (kind 5 or 6)";
  }
  if (count > limit || size != head + count * 16) return "snapshot entry count does not match its size";
  std::uint64_t prev = 0;
  for (std::size_t k = 0; k < count; ++k) {
    std::uint64_t index;
    std::memcpy(&index, rec + head + 16 * k, sizeof index);
    if (index >= limit || (k && index <= prev)) return "snapshot entry index out of range or not ascending";
    prev = index;
  }
  return nullptr;
}

}  // namespace kron::stats
