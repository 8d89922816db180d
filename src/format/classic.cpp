// Classic MultiKron / MultiKron II sample encoding. Sources and decisions: include/kron/format/classic.hpp.
#include "kron/format/classic.hpp"

#include <cassert>

namespace kron::classic {
namespace {

void put_be(std::uint8_t* p, std::uint64_t v, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * (bytes - 1 - i)));
}
std::uint64_t get_be(const std::uint8_t* p, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

std::uint8_t encode_header(Chip chip, const Sample& s) {
  unsigned h = (s.cpu & 0x7u) << 5 | (static_cast<unsigned>(s.type) & 0x3u) << 3;
  if (chip == Chip::Mk2) {
    // 000 Table B2: bit 2 Shadow Reg overflow, bit 1 FIFO overflow, bit 0 N/A (sent as 0, ERRATUM E9).
    if (s.flags & kFlagShadowOverrun) h |= 1u << 2;
    if (s.flags & kFlagFifoOverrun) h |= 1u << 1;
  } else {
    // 001 Table 5: bit 2 FIFO overrun, bit 1 RSRC overrun, bit 0 RSRC read error.
    if (s.flags & kFlagFifoOverrun) h |= 1u << 2;
    if (s.flags & kFlagShadowOverrun) h |= 1u << 1;
    if (s.flags & kFlagReadError) h |= 1u << 0;
  }
  return static_cast<std::uint8_t>(h);
}

bool decode_header(Chip chip, std::uint8_t header, Sample& out) {
  const unsigned type = (header >> 3) & 0x3u;
  if (type != static_cast<unsigned>(SampleType::Trace) && type != static_cast<unsigned>(SampleType::Resource))
    return false;
  out.type = static_cast<SampleType>(type);
  out.cpu = static_cast<std::uint16_t>(header >> 5);
  out.flags = 0;
  if (chip == Chip::Mk2) {
    if (header & (1u << 2)) out.flags |= kFlagShadowOverrun;
    if (header & (1u << 1)) out.flags |= kFlagFifoOverrun;
  } else {
    if (header & (1u << 2)) out.flags |= kFlagFifoOverrun;
    if (header & (1u << 1)) out.flags |= kFlagShadowOverrun;
    if (header & (1u << 0)) out.flags |= kFlagReadError;
  }
  return true;
}

std::size_t size_from_header(Chip chip, std::uint8_t header) {
  Sample s;
  return decode_header(chip, header, s) ? sample_size(chip, s.type) : 0;
}

std::size_t encode(Chip chip, const Sample& s, std::span<std::uint8_t> out) {
  const Layout& l = layout(chip);
  const std::size_t n = sample_size(chip, s.type);
  assert(out.size() >= n);
  std::uint8_t* p = out.data();
  *p++ = encode_header(chip, s);
  put_be(p, s.timestamp & ts_mask(chip), l.ts_bytes);
  p += l.ts_bytes;
  put_be(p, s.source, 4);
  p += 4;
  put_be(p, s.data & data_mask(chip), l.data_bytes);
  p += l.data_bytes;
  if (s.is_resource()) {
    for (unsigned i = 0; i < kResourceCounters; ++i, p += 4) put_be(p, saturate32(s.counters[i]), 4);
  }
  return n;
}

std::vector<std::uint8_t> encode(Chip chip, const Sample& s) {
  std::vector<std::uint8_t> v(sample_size(chip, s.type));
  encode(chip, s, v);
  return v;
}

DecodeResult decode(Chip chip, std::span<const std::uint8_t> in, Sample& out) {
  if (in.empty()) return {DecodeStatus::Truncated, 1};
  Sample s;
  if (!decode_header(chip, in[0], s)) return {DecodeStatus::BadHeader, 0};
  const Layout& l = layout(chip);
  const std::size_t n = sample_size(chip, s.type);
  if (in.size() < n) return {DecodeStatus::Truncated, n};
  const std::uint8_t* p = in.data() + 1;
  s.timestamp = get_be(p, l.ts_bytes);
  p += l.ts_bytes;
  s.source = static_cast<std::uint32_t>(get_be(p, 4));
  p += 4;
  s.data = get_be(p, l.data_bytes);
  p += l.data_bytes;
  if (s.is_resource()) {
    for (unsigned i = 0; i < kResourceCounters; ++i, p += 4) s.counters[i] = get_be(p, 4);
  }
  out = s;
  return {DecodeStatus::Ok, n};
}

void to_net_elements(std::span<const std::uint8_t> sample, std::vector<NetElement>& out) {
  for (std::size_t i = 0; i < sample.size(); ++i) out.push_back(NetElement::make(sample[i], i + 1 == sample.size()));
}

}  // namespace kron::classic
