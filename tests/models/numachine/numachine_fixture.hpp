// Shared fixture of the NUMAchine monitor tests: a monitor with its printed lines collected.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/numachine/numachine.hpp"

namespace kron::numachine::test {

// GPCMx / SCM bits (004 Table 4.4), named for the tests.
inline constexpr std::uint32_t kEn = 1u << 23, kIrq = 1u << 15, kEdge = 1u << 10, kMaskEn = 1u << 9,
                               kMaskInv = 1u << 8, kPwEn = 1u << 7, kPwInv = 1u << 6, kAwEn = 1u << 5,
                               kAwInv = 1u << 4, kCwEn = 1u << 3, kCwInv = 1u << 2, kSm = 1u << 1, kRm = 1u << 0;
constexpr std::uint32_t ev(unsigned e) { return e << 11; }
constexpr std::uint32_t ps(unsigned p) { return p << 16; }
constexpr std::uint32_t mode(unsigned m) { return m << 20; }
inline constexpr std::uint32_t kScmIrq = 1u << 22, kMuxMiss = 1u << 19, kMuxRsr = 1u << 18, kMuxPrHi = 1u << 17,
                               kMuxPrMid = 1u << 16, kMuxPrLo = 1u << 15;

class NumachineTest : public ::testing::Test {
 protected:
  NumachineTest() {
    m.on_line = [this](std::string_view s) { lines.emplace_back(s); };
  }
  void w(Reg r, std::uint32_t v) { m.write(static_cast<std::uint32_t>(r), v); }
  void gpcm(unsigned k, std::uint32_t v) { m.write(static_cast<std::uint32_t>(Reg::GPCM0) + k, v); }
  void enable_gpcs() { w(Reg::GPCE, 1); }
  void miss(std::uint64_t addr, std::uint64_t latency, bool exclusive = false) {
    Numachine::Miss x;
    x.addr = addr;
    x.latency = latency;
    x.exclusive = exclusive;
    m.read_miss(x);
  }
  Numachine m;
  std::vector<std::string> lines;
};

}  // namespace kron::numachine::test
