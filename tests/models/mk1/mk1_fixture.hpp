// Shared fixture of the first MultiKron model's tests (001/002, NISTIR 4737): a chip with its samples
// and network elements collected, and the helpers the datasheet's tables need. One test file per table
// or concern, mirroring src/models/mk1/: registers (Table A-1), csr (Table 2), clocks (timestamp, Table 4),
// sampling (Tables 3A/3B, 5-7, wait and overrun counters, network output), test mode (Table C-1).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kron/format/classic.hpp"
#include "models/mk1/mk1.hpp"

namespace kron::mk1::test {

inline constexpr std::uint64_t kBit63 = std::uint64_t{1} << 63;
// MUX SEL value selecting `src` (Table 4 encoding) for counter i: MSB in bit 32+i, LSB in bit i.
inline std::uint64_t mux_field(unsigned i, unsigned src) {
  return (std::uint64_t{src >> 1 & 1} << (32 + i)) | (std::uint64_t{src & 1} << i);
}
inline std::uint64_t test_instr(unsigned instr, std::uint32_t data = 0) { return std::uint64_t{instr} << 32 | data; }

class Mk1Test : public ::testing::Test {
 protected:
  Mk1Test() {
    m.on_sample = [this](const sim::SampleOut& s) {
      samples.emplace_back(s.bytes.begin(), s.bytes.end());
      sample_clocks.push_back(s.clock);
    };
    m.on_element = [this](std::uint64_t clock, classic::NetElement e) {
      elements.push_back(e);
      element_clocks.push_back(clock);
    };
  }
  void enable_sampling(std::uint16_t filter = 0xffff) {
    m.write(addr::kCsr, csr::kEnableSampling);
    m.write(addr::kFilter, filter);
  }
  Sample decode(std::size_t i) const {
    Sample s;
    auto r = classic::decode(classic::Chip::Mk1, samples.at(i), s);
    EXPECT_EQ(r.status, classic::DecodeStatus::Ok);
    return s;
  }
  Mk1 m;
  std::vector<std::vector<std::uint8_t>> samples;
  std::vector<std::uint64_t> sample_clocks;
  std::vector<classic::NetElement> elements;
  std::vector<std::uint64_t> element_clocks;
};

}  // namespace kron::mk1::test
