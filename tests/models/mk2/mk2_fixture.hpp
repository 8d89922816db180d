// Shared fixture of the MultiKron II model tests: a chip with its output collected and decoded.
#pragma once
#include <gtest/gtest.h>

#include <vector>

#include "models/mk2/mk2.hpp"

namespace kron::mk2::test {

// Word addresses of 000 Table B4 used by the tests.
enum Addr : std::uint32_t {
  kReset = 0, kCsr = 1, kTimestamp = 2, kFilter = 4, kWait = 5, kOverrun = 6, kHighOrder = 7, kEnable = 8,
  kMode = 10, kClock = 12, kIncrTs = 16, kIncrWait = 17, kIncrOverrun = 18, kNetOff = 19, kNetOn = 20,
  kAdvance = 21, kFifoA = 25, kSource = 32, kCounter = 64, kIncrement = 80, kTrace = 96, kResource = 112,
};

struct Out {
  std::uint64_t clock;
  Sample sample;
  std::vector<std::uint8_t> bytes;
};

class Mk2Test : public ::testing::Test {
 protected:
  Mk2Test() {
    chip.on_sample = [this](const sim::SampleOut& s) {
      Out o{s.clock, {}, {s.bytes.begin(), s.bytes.end()}};
      const auto r = classic::decode(classic::Chip::Mk2, s.bytes, o.sample);
      EXPECT_EQ(r.status, classic::DecodeStatus::Ok);
      out.push_back(o);
    };
    chip.on_element = [this](std::uint64_t clock, classic::NetElement e) { elements.push_back({clock, e}); };
  }
  // CSR "Enable Sampling" and every filter level.
  void sampling_on(std::uint64_t csr_more = 0) {
    chip.write(kCsr, 1 | csr_more);
    chip.write(kFilter, 0xffff);
  }
  // Reads through peek so that a check never changes state.
  std::uint64_t low32(std::uint32_t addr) const { return chip.peek(addr) & 0xffff'ffff; }
  bool csr_bit(unsigned b) const { return chip.peek(kCsr) >> b & 1; }

  Mk2 chip;
  std::vector<Out> out;
  std::vector<std::pair<std::uint64_t, classic::NetElement>> elements;
};

}  // namespace kron::mk2::test
