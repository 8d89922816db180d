// The first MultiKron model's sampling against 001: Tables 3A and 3B (shadow registers), the Wait and
// Overrun counters, Tables 5-7 (the samples, bit-exact) and the network output, software reset of the
// queue; each test names its source. Fixture: mk1_fixture.hpp.
#include "mk1_fixture.hpp"

namespace kron::mk1::test {
namespace {

// ---- Tables 3A and 3B ------------------------------------------------------------------------

class Mk1ShadowTest : public Mk1Test {
 protected:
  // Counter 0 counts software writes, set to 7; a Resource sample held in the shadow registers.
  void SetUp() override {
    enable_sampling();
    m.write(addr::kMuxSel, mux_field(0, 0b10));
    m.write(addr::kEnable, 1);
    for (int i = 0; i < 7; ++i) m.write(addr::kResourceCounter, 0);
    m.set_net_ready(false);
    m.write(addr::kResourceTrigger, 0x11);
    m.write(addr::kResourceCounter, 0);  // counter now 8, shadow holds 7
    ASSERT_TRUE(m.shadow_full());
  }
};

TEST_F(Mk1Test, Table3ARow1ShadowEmptyReadImmediateBit63Clear) {  // Table 3A row 1
  m.write(addr::kMuxSel, mux_field(4, 0b10));
  m.write(addr::kEnable, 1u << 4);
  m.write(addr::kResourceCounter + 4, 0);
  const std::uint64_t t = m.now();
  EXPECT_EQ(m.read(addr::kResourceCounter + 4), 1u);
  EXPECT_EQ(m.now() - t, Mk1::kAccessClocks);  // no wait
  EXPECT_FALSE(m.shadow_full());  // the read is indivisible
}

TEST_F(Mk1ShadowTest, Table3ARow2ShadowFullNoWaitReturnsWrongDataBit63Set) {  // Table 3A row 2
  const std::uint64_t v = m.read(addr::kResourceCounter);
  EXPECT_EQ(v & kBit63, kBit63);
  EXPECT_EQ(v & 0xffffffffu, 7u);  // ERRATUM E69: the stale shadow register
  EXPECT_TRUE(m.shadow_full());    // "The shadow register will not be modified"
  EXPECT_EQ(m.peek(addr::kWaitCounter), 0u);
}

TEST_F(Mk1ShadowTest, Table3ARow3ShadowFullWaitReturnsCorrectDataAfterWait) {  // Table 3A row 3; Wait Counter
  m.write(addr::kCsr, csr::kReadWait);
  m.set_net_ready(true);
  const std::uint64_t v = m.read(addr::kResourceCounter);
  EXPECT_EQ(v, 8u);  // bit 63 = 0
  ASSERT_EQ(samples.size(), 1u);  // the shadow registers emptied to the network first
  EXPECT_GT(m.peek(addr::kWaitCounter), 150u);  // ~160 node clocks: 80 bytes at one per 2 clocks
  EXPECT_LE(m.peek(addr::kWaitCounter), 164u);
}

TEST_F(Mk1ShadowTest, Table3BRow2ShadowFullNoWaitDiscardsAndFlags) {  // Table 3B row 2; Table 5
  m.write(addr::kResourceTrigger, 0x22);  // discarded, no wait
  EXPECT_EQ(m.peek(addr::kOverrunCounter), 1u);
  m.set_net_ready(true);
  m.drain();
  m.write(addr::kResourceTrigger, 0x33);
  m.write(addr::kTraceTrigger, 0x44);
  m.drain();
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(decode(0).data, 0x11u);
  EXPECT_EQ(decode(1).data, 0x33u);
  EXPECT_EQ(decode(1).flags, kFlagShadowOverrun);  // "previous sample(s) lost"
  EXPECT_EQ(samples[1][0] & 0x07, 0x02);           // header bit 1 = RSRC overrun
  EXPECT_EQ(decode(2).flags, 0u);                  // "reset by next successful sample"
  EXPECT_EQ(decode(0).counters[0], 7u);
  EXPECT_EQ(decode(1).counters[0], 8u);
}

TEST_F(Mk1ShadowTest, Table3BRow3ShadowFullWaitTakesSampleAfterWait) {  // Table 3B row 3
  m.write(addr::kCsr, csr::kWriteWait);
  m.set_net_ready(true);
  m.write(addr::kResourceTrigger, 0x22);
  m.drain();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(decode(1).flags, 0u);
  EXPECT_EQ(m.peek(addr::kOverrunCounter), 0u);
  EXPECT_GT(m.peek(addr::kWaitCounter), 0u);
}

TEST_F(Mk1Test, Table3BRow1ShadowEmptyTakesSampleImmediately) {  // Table 3B row 1
  enable_sampling();
  const std::uint64_t t = m.now();
  m.write(addr::kResourceTrigger, 1);
  EXPECT_EQ(m.now() - t, Mk1::kAccessClocks);
  EXPECT_TRUE(m.shadow_full());
  m.drain();
  EXPECT_EQ(decode(0).flags, 0u);
}

TEST_F(Mk1Test, WriteWaitWithStalledNetworkIsReportedNotHung) {  // Table 2 bit 2 with External FIFO Free low
  enable_sampling();
  m.write(addr::kCsr, csr::kWriteWait);
  m.set_net_ready(false);
  for (unsigned i = 0; i < Mk1::kFifoDepth; ++i) m.write(addr::kTraceTrigger, i);
  EXPECT_THROW(m.write(addr::kTraceTrigger, 9), sim::HangError);
}

// ---- Wait and Overrun counters ---------------------------------------------------------------

TEST_F(Mk1Test, WaitAndOverrunCountersWrapAt32Bits) {  // 001 Wait Counter, Overrun Counter
  m.set_test_mode(true);
  m.write(addr::kTest, test_instr(0b01, 0xff));
  EXPECT_EQ(m.read(addr::kWaitCounter), 0xffffffffu);
  m.write(addr::kTest, test_instr(0b01 << 2));
  EXPECT_EQ(m.read(addr::kWaitCounter), 0u);
  EXPECT_EQ(m.read(addr::kOverrunCounter), 0u);
}

TEST_F(Mk1Test, OverrunCounterOnlyWhenWriteWaitDisabled) {  // 001 Overrun Counter
  enable_sampling();
  m.write(addr::kCsr, csr::kWriteWait);
  for (unsigned i = 0; i < 3 * Mk1::kFifoDepth; ++i) m.write(addr::kTraceTrigger, i);
  m.drain();
  EXPECT_EQ(samples.size(), 3 * Mk1::kFifoDepth);
  EXPECT_EQ(m.peek(addr::kOverrunCounter), 0u);
  EXPECT_GT(m.peek(addr::kWaitCounter), 0u);
}

// ---- Tables 5, 6, 7 and the network output ---------------------------------------------------

TEST_F(Mk1Test, Table5And6TraceSampleBitExact) {  // Tables 5, 6
  enable_sampling();
  m.write(addr::kSourceAddress + 6, 0xcafef00d);
  m.set_cpu(6);
  m.tick(3);  // make the timestamp non-zero: now = 3 + 2 accesses
  m.set_test_mode(true);
  m.write(addr::kTest, test_instr(0b10, 0x0003));  // timestamp = 0xff
  m.set_test_mode(false);
  m.write(addr::kTraceTrigger + 2, 0xffff123456789abcull);
  m.drain();
  ASSERT_EQ(samples.size(), 1u);
  const std::vector<std::uint8_t> want = {
      0xd0,                                // CPU 6 (110), type 10, flags 000
      0x00, 0x00, 0x00, 0x00, 0xff,        // 40-bit timestamp (0xff + 0 ticks)
      0xca, 0xfe, 0xf0, 0x0d,              // source
      0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc,  // 48 bits of user data
  };
  EXPECT_EQ(samples[0], want);
}

TEST_F(Mk1Test, Table7ResourceSampleCarriesSixteenCounters) {  // Table 7; ERRATUM E4 (sixteen)
  enable_sampling();
  m.set_test_mode(true);
  m.write(addr::kTest, test_instr(0b11, 0x01020304));
  m.set_test_mode(false);
  m.write(addr::kResourceTrigger, 0);
  m.drain();
  ASSERT_EQ(samples.size(), 1u);
  ASSERT_EQ(samples[0].size(), 80u);
  EXPECT_EQ(samples[0][0] & 0x18, 0x18);  // type 11
  for (unsigned i = 0; i < 16; ++i) EXPECT_EQ(decode(0).counters[i], 0x01020304u);
}

TEST_F(Mk1Test, Table5ReadErrorFlagAlwaysZero) {  // Table 5; "Error & Class Field" flag 3
  enable_sampling();
  m.set_net_ready(false);
  m.write(addr::kResourceTrigger, 0);
  EXPECT_EQ(m.read(addr::kResourceCounter) & kBit63, kBit63);  // a failed read
  m.write(addr::kTraceTrigger, 0);
  m.set_net_ready(true);
  m.drain();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[1][0] & 1, 0);
}

TEST_F(Mk1Test, NetworkOneByteEachNetworkClockWithOddParityAndEom) {  // NETWORK OUTPUT
  enable_sampling();
  m.write(addr::kTraceTrigger, 0x55);
  m.drain();
  ASSERT_EQ(elements.size(), 16u);
  for (std::size_t i = 0; i < elements.size(); ++i) {
    EXPECT_TRUE(elements[i].parity_ok());
    EXPECT_EQ(elements[i].eom(), i == 15);
    EXPECT_EQ(elements[i].data(), samples[0][i]);
    if (i) {
      EXPECT_EQ(element_clocks[i] - element_clocks[i - 1], 2u);  // half the processor clock
    }
    EXPECT_EQ(element_clocks[i] % 2, 0u);
  }
  EXPECT_EQ(sample_clocks[0], element_clocks[15]);
}

TEST_F(Mk1Test, NetworkStallsWhileExternalFifoNotFree) {  // NETWORK OUTPUT "(1) External FIFO Free"
  enable_sampling();
  m.write(addr::kTraceTrigger, 0x55);
  m.tick(7);  // a few bytes
  const std::size_t sent = elements.size();
  ASSERT_GT(sent, 0u);
  ASSERT_LT(sent, 16u);
  m.set_net_ready(false);
  m.tick(1000);
  EXPECT_EQ(elements.size(), sent);
  EXPECT_THROW(m.drain(), sim::HangError);  // would never end
  EXPECT_EQ(elements.size(), sent);
  m.set_net_ready(true);
  m.drain();
  EXPECT_EQ(elements.size(), 16u);
}

TEST_F(Mk1Test, SoftwareResetDropsQueuedAndPartlySentSamples) {  // 001 Software Reset; ERRATUM E65
  enable_sampling();
  m.write(addr::kTraceTrigger, 1);
  m.write(addr::kTraceTrigger, 2);
  m.tick(5);  // the first sample is part way out
  ASSERT_GT(elements.size(), 0u);
  ASSERT_LT(elements.size(), 16u);
  m.write(addr::kSoftwareReset, 0);
  EXPECT_EQ(m.fifo_level(), 0u);
  m.tick(1000);
  EXPECT_EQ(samples.size(), 0u);
  enable_sampling();
  m.write(addr::kTraceTrigger, 3);  // the output starts cleanly with a new sample
  m.drain();
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(decode(0).data, 3u);
}

TEST_F(Mk1Test, ResourceSampleCountersAreThoseOfTheTriggerInstant) {  // 001 "Resource Counters and their Shadow Registers"
  enable_sampling();
  m.write(addr::kMuxSel, mux_field(9, 0b11));
  m.write(addr::kEnable, 1u << 9);
  const std::uint64_t enabled_at = m.now() - Mk1::kAccessClocks;  // a write acts at its start
  m.tick(96);
  const std::uint64_t taken_at = m.now();
  m.write(addr::kResourceTrigger, 0);
  m.drain();  // counting goes on while the sample is sent
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(decode(0).counters[9], taken_at - enabled_at);
  EXPECT_GT(m.peek(addr::kResourceCounter + 9), taken_at - enabled_at + 150u);
}

}  // namespace
}  // namespace kron::mk1::test
