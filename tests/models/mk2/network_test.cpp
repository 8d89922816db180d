// MultiKron II network output: ten-bit elements, one byte per network clock at half the node clock while
// NETRDY is high, shadow registers busy for 84 network clocks, test-mode network control.
// Sources: 000 NETWORK OUTPUT, "Resource Counters and their Shadow Registers", TEST MODE, Tables B2, B4.
// Decisions: ERRATUM E7 (when data is taken), E10 (element bits), E16 (NETRDY sampling), E17.
#include "mk2_fixture.hpp"

namespace kron::mk2::test {
namespace {

using Network = Mk2Test;

// 000 NETWORK OUTPUT: "ten-bit elements: eight data bits, an odd-parity bit, and a sample-end flag bit";
// NETCLK "at one-half the Node clock frequency"; one byte per network clock.
TEST_F(Network, TraceSampleElementsAtHalfNodeClock) {
  sampling_on();
  chip.write(kTrace, 0x0102'0304'0506'0708);  // acts at node clock 5 (ERRATUM E7)
  chip.drain();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(elements.size(), 20u);
  for (std::size_t i = 0; i < elements.size(); ++i) {
    const auto [clock, e] = elements[i];
    EXPECT_EQ(clock, 6u + 2 * (i + 1)) << "byte " << i << ": the network clock cycle from 6 + 2i ends";
    EXPECT_EQ(e.data(), out[0].bytes[i]);
    EXPECT_TRUE(e.parity_ok());
    EXPECT_EQ(e.eom(), i == 19) << "sample-end flag on the last byte only";
  }
  EXPECT_EQ(out[0].clock, elements.back().first) << "reported when its last byte goes out";
}

// 000: "When loaded due to a sample, the shadow registers will remain busy for 84 network clock periods
// (168 Node clock periods ...)"; CSR bit 7 "Resource Shadow Registers Full".
TEST_F(Network, ShadowBusy84NetworkClocks) {
  sampling_on();
  chip.write(kResource, 1);  // acts at clock 5; the output starts with the network cycle at 6
  const std::uint64_t start = 6;
  chip.tick(start + 168 - 1 - chip.now());
  EXPECT_TRUE(csr_bit(csr::kShadowFull));
  EXPECT_TRUE(out.empty());
  chip.tick(1);
  EXPECT_FALSE(csr_bit(csr::kShadowFull));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].clock, start + 168);
  EXPECT_EQ(elements.size(), 84u);
}

// 000 NETWORK OUTPUT: FIFODAB "will not be asserted if the NETRDY signal is not asserted": no byte goes
// out while NETRDY is low; output resumes with the next network clock. ERRATUM E16: NETRDY is sampled at
// the start of each network clock cycle, so a byte under way when it falls still goes out.
TEST_F(Network, NetrdyHoldsOutput) {
  sampling_on();
  chip.set_net_ready(false);
  chip.write(kTrace, 1);
  chip.tick(1000);
  EXPECT_TRUE(elements.empty());
  EXPECT_EQ(chip.peek(kFifoA) >> 24 & 0xff, 0b000'10'0'0'0u) << "still in the FIFO";
  ASSERT_EQ(chip.now(), 1006u);  // four 2-clock accesses, then the tick
  chip.set_net_ready(true);      // the cycle starting at 1006 sees it
  chip.tick(3);                  // 1009: one byte out, at 1008; the cycle 1008-1010 is under way
  ASSERT_EQ(elements.size(), 1u);
  EXPECT_EQ(elements[0].first, 1008u);
  chip.set_net_ready(false);
  chip.tick(100);
  ASSERT_EQ(elements.size(), 2u);
  EXPECT_EQ(elements[1].first, 1010u);
  EXPECT_THROW(chip.drain(), sim::HangError);  // ERRATUM E17
  chip.set_net_ready(true);
  chip.drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(elements.size(), 20u);
}

// Samples queued in the FIFO go out back to back, one byte per network clock.
TEST_F(Network, BackToBackSamples) {
  sampling_on();
  chip.write(kTrace, 1);
  chip.write(kResource, 2);
  chip.write(kTrace, 3);
  chip.drain();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].clock - out[0].clock, 2u * 84);
  EXPECT_EQ(out[2].clock - out[1].clock, 2u * 20);
  for (std::size_t i = 1; i < elements.size(); ++i) EXPECT_EQ(elements[i].first - elements[i - 1].first, 2u);
}

// 000 Table B4 addresses 19 and 20 (test mode): "Disable Output Network" / "Enable Output Network".
TEST_F(Network, TestModeDisablesNetwork) {
  sampling_on();
  chip.set_test_mode(true);
  chip.write(kNetOff, 0);
  chip.write(kTrace, 7);
  chip.tick(500);
  EXPECT_TRUE(elements.empty());
  EXPECT_THROW(chip.drain(), sim::HangError);
  chip.write(kNetOn, 0);
  chip.drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].sample.data, 7u);
}

// 000 Software Reset "initializes most of the machine state" (ERRATUM E12): the FIFO, the shadow
// registers and the output empty; a sample under way is abandoned without its end-of-message byte.
TEST_F(Network, SoftwareResetEmptiesOutput) {
  sampling_on();
  chip.write(kResource, 1);
  chip.tick(20);
  ASSERT_FALSE(elements.empty());
  chip.write(kReset, 0);
  EXPECT_FALSE(csr_bit(csr::kShadowFull));
  chip.tick(1000);
  EXPECT_TRUE(out.empty());
  EXPECT_LT(elements.size(), 84u);
  EXPECT_FALSE(elements.back().second.eom());
  const std::uint64_t t = chip.now();
  chip.drain();  // nothing left: returns at once
  EXPECT_EQ(chip.now(), t);
}

// Time advances by events: a very long tick costs no more than a short one, and the clock count is exact.
TEST_F(Network, LongTickIsExact) {
  chip.write(kMode, 0x1);
  chip.write(kClock, 0x1);
  chip.write(kEnable, 0x3);
  chip.tick(3'000'000'000'000);  // an hour at 50 MHz... times 16
  EXPECT_EQ(chip.now(), 3'000'000'000'000u + 3 * 2);
  EXPECT_EQ(chip.read(kCounter) & 0xffff'ffff, 0xffff'ffffu) << "saturated";
  EXPECT_EQ(chip.peek(kTimestamp) & kTimestampMask, chip.now() / 5);
}

}  // namespace
}  // namespace kron::mk2::test
