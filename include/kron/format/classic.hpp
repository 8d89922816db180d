// The classic sample formats of the two MultiKron chips, as they leave the chip on the collection
// network and as the PCI toolkit board stores them: header byte, timestamp, source identification,
// user data, and for a Resource sample sixteen 32-bit counters; every field most significant byte first.
//
// Sources:
//   000 (NISTIR 5571) Table B2 "Sample Formats"; sections SAMPLING, NETWORK OUTPUT; Appendix A "Sample Size".
//   001 (NISTIR 4737) Tables 5, 6, 7; section "Data Sample Formats".
// Decisions: docs/errata.md E1 (type encoding), E4 (20 counters drawn in 001 Table 7), E9 (N/A header bit),
//   E10 (bit positions inside a 10-bit network element).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kron/core/sample.hpp"

namespace kron::classic {

enum class Chip : std::uint8_t { Mk1, Mk2 };

constexpr std::string_view name(Chip c) { return c == Chip::Mk1 ? "mk1" : "mk2"; }

// Field widths of one chip's samples.
struct Layout {
  std::size_t trace_bytes;     // header + timestamp + source + user data
  std::size_t resource_bytes;  // trace_bytes + 16 x 4 bytes of counters
  unsigned ts_bytes;           // timestamp field width
  unsigned data_bytes;         // user-data field width
};
// 001 Table 6/7: 8 + 40 + 32 + 48 = 128 bits; + 16 x 32 = 640 bits.
inline constexpr Layout kMk1Layout{16, 80, 5, 6};
// 000 Table B2: 8 + 56 + 32 + 64 = 160 bits; + 16 x 32 = 672 bits.
inline constexpr Layout kMk2Layout{20, 84, 7, 8};

constexpr const Layout& layout(Chip c) { return c == Chip::Mk1 ? kMk1Layout : kMk2Layout; }
constexpr std::size_t sample_size(Chip c, SampleType t) {
  return t == SampleType::Trace ? layout(c).trace_bytes : layout(c).resource_bytes;
}
inline constexpr std::size_t kMaxSampleBytes = kMk2Layout.resource_bytes;

constexpr std::uint64_t ts_mask(Chip c) { return (std::uint64_t{1} << (8 * layout(c).ts_bytes)) - 1; }
constexpr std::uint64_t data_mask(Chip c) {
  return layout(c).data_bytes >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * layout(c).data_bytes)) - 1;
}

// The classic 32-bit view of a counter: counters stick at their maximum rather than wrap
// (000 "Resource Counters and their Shadow Registers"), so a wider value shows as 0xFFFFFFFF.
constexpr std::uint32_t saturate32(std::uint64_t v) {
  return v > 0xffffffffu ? 0xffffffffu : static_cast<std::uint32_t>(v);
}

// ---- Header byte, most significant bit first as drawn -------------------------------------------
// MultiKron II, 000 Table B2:   bits 7-5 CPU ID | 4-3 type | 2 Shadow Reg overflow | 1 FIFO overflow | 0 N/A
// MultiKron,    001 Table 5:    bits 7-5 CPU ID | 4-3 type | 2 FIFO overrun | 1 RSRC overrun | 0 RSRC read error
std::uint8_t encode_header(Chip chip, const Sample& s);
// Fills type, cpu and flags of `out`. Returns false when the type bits are neither 10 nor 11.
bool decode_header(Chip chip, std::uint8_t header, Sample& out);
// The size of the sample a header byte starts, or 0 when its type bits are invalid.
std::size_t size_from_header(Chip chip, std::uint8_t header);

// ---- Whole samples -----------------------------------------------------------------------------
// Writes one sample (sample_size(chip, s.type) bytes) into out, which must be large enough.
// Timestamp and user data are truncated to the chip's field width; counters use saturate32.
std::size_t encode(Chip chip, const Sample& s, std::span<std::uint8_t> out);
std::vector<std::uint8_t> encode(Chip chip, const Sample& s);

enum class DecodeStatus : std::uint8_t { Ok, Truncated, BadHeader };
struct DecodeResult {
  DecodeStatus status;
  std::size_t size;  // bytes consumed (Ok) or bytes the sample needs (Truncated)
};
// Decodes the sample at the start of `in`. Classic samples carry no thread or filter level:
// out.thread = 0, out.group = Sample::kGroupUnknown.
DecodeResult decode(Chip chip, std::span<const std::uint8_t> in, Sample& out);

// ---- The collection network's 10-bit element ---------------------------------------------------
// 000 NETWORK OUTPUT / 001 NETWORK OUTPUT: "ten-bit elements: eight data bits, an odd-parity bit, and a
// sample-end flag bit"; pins N0-N7, ODD_PARITY, EOM (000 Table C3).
// ERRATUM E10: the documents name the wires, not a packing; kron packs data in bits 0-7, odd parity
// in bit 8 and EOM in bit 9.
struct NetElement {
  std::uint16_t bits = 0;

  static constexpr NetElement make(std::uint8_t data, bool eom) {
    const bool parity = (__builtin_popcount(data) % 2) == 0;  // odd parity over data + parity bit
    return NetElement{static_cast<std::uint16_t>(data | (parity ? 0x100 : 0) | (eom ? 0x200 : 0))};
  }
  constexpr std::uint8_t data() const { return static_cast<std::uint8_t>(bits & 0xff); }
  constexpr bool parity() const { return bits & 0x100; }
  constexpr bool eom() const { return bits & 0x200; }
  // True when the nine data+parity bits hold an odd number of ones.
  constexpr bool parity_ok() const { return __builtin_popcount(bits & 0x1ff) % 2 == 1; }
};

// The elements that carry one sample's bytes: EOM set on the last byte only.
void to_net_elements(std::span<const std::uint8_t> sample, std::vector<NetElement>& out);

}  // namespace kron::classic
