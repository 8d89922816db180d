// The first MultiKron model's time against 001/002: the timestamp, the resource counters' inputs of
// Table 4 and the MUX SEL worked example, hardware reset; each test names its source. Fixture:
// mk1_fixture.hpp.
#include "mk1_fixture.hpp"

namespace kron::mk1::test {
namespace {

// ---- Timestamp -------------------------------------------------------------------------------

TEST_F(Mk1Test, TimestampCountsTimestampClockAndSamplesCarry40Bits) {  // 001 Timestamp; Table 6
  m.set_clocks(50'000'000, 10'000'000);
  m.set_test_mode(true);
  m.write(addr::kTest, test_instr(0b10, 0x2aaa));  // 0x0F0F0F0F0F0F0F0F... patterns
  m.set_test_mode(false);
  EXPECT_EQ(m.peek(addr::kTimestamp), 0x00f0f0f0f0f0f0f0ull);
  enable_sampling();
  m.tick(1000);  // 200 more timestamp ticks
  const std::uint64_t ts = m.peek(addr::kTimestamp);
  EXPECT_GE(ts, 0x00f0f0f0f0f0f0f0ull + 200);
  m.write(addr::kTraceTrigger, 0);  // sampled at the start of the access
  m.drain();
  EXPECT_EQ(decode(0).timestamp, ts & 0xffffffffffull);  // the low 40 bits
  EXPECT_THROW(m.set_clocks(50'000'000, 20'000'000), sim::ConfigError);  // > 1/3 of the node clock
  EXPECT_NO_THROW(m.set_clocks(50'000'000, 16'666'666));
}

TEST_F(Mk1Test, TimeAdvancesByEventsNotIdleClocks) {  // device.hpp: a long tick is one event
  m.write(addr::kMuxSel, mux_field(0, 0b11));
  m.write(addr::kEnable, 1);
  m.tick(50'000'000ull * 3600);  // one hour
  EXPECT_EQ(m.peek(addr::kResourceCounter), 0xffffffffu);  // "stick at this maximum value"
  EXPECT_EQ(m.peek(addr::kTimestamp), 36'000'000'000ull + Mk1::kAccessClocks * 2 / 5);
}

// ---- Table 4 and the MUX SEL worked example ------------------------------------------------

TEST_F(Mk1Test, Table4Row11NodeClock) {  // Table 4 "11 Node Clock"
  m.write(addr::kMuxSel, mux_field(3, 0b11));
  m.write(addr::kEnable, 1u << 3);
  m.tick(1000);
  m.write(addr::kDisable, 1u << 3);  // counts until the disable acts
  EXPECT_EQ(m.peek(addr::kResourceCounter + 3), 1000u + Mk1::kAccessClocks);
}

TEST_F(Mk1Test, Table4Row01ExternalRisingEdges) {  // Table 4 "01 External Signal"; Counter Sources
  m.write(addr::kMuxSel, mux_field(2, 0b01));
  m.write(addr::kEnable, 1u << 2);
  for (int i = 0; i < 5; ++i) {
    m.set_external(2, true);
    m.set_external(2, true);  // a level, not an edge
    m.set_external(2, false);
  }
  m.set_external(3, true);  // another counter's pin
  EXPECT_EQ(m.peek(addr::kResourceCounter + 2), 5u);
  EXPECT_EQ(m.peek(addr::kResourceCounter + 3), 0u);
  EXPECT_THROW(m.set_external(16, true), sim::ConfigError);
}

TEST_F(Mk1Test, Table4Row10SoftwareOnlyCountsWrites) {  // Table 4 "10 Software Signal"
  m.write(addr::kMuxSel, mux_field(1, 0b10));
  m.write(addr::kEnable, 2);
  m.tick(10000);
  m.set_external(1, true);
  EXPECT_EQ(m.peek(addr::kResourceCounter + 1), 0u);
  m.write(addr::kResourceCounter + 1, 0);
  EXPECT_EQ(m.peek(addr::kResourceCounter + 1), 1u);
}

TEST_F(Mk1Test, MuxSelWorkedExample) {  // 001/002 MUX SEL Register worked example (printed in 002)
  // "to select all odd counters to count 50 MHz node clocks (11) and all even counters to count external
  // signals (01) requires ... MUX SEL = 0000000000000000 1010101010101010 0000000000000000 1111111111111111"
  m.write(addr::kMuxSel, 0x0000aaaa0000ffffull);
  m.write(addr::kEnable, 0xffff);
  m.tick(100);
  for (unsigned i = 0; i < 16; ++i) m.set_external(i, true);
  for (unsigned i = 0; i < 16; ++i) {
    const std::uint64_t want = i % 2 ? 100u + Mk1::kAccessClocks : 1u;  // enabled from the write's start
    EXPECT_EQ(m.peek(addr::kResourceCounter + i), want) << i;
  }
}

TEST_F(Mk1Test, HardwareResetRestartsTimeAndPinsAreChecked) {  // 001 Timestamp, Appendix B
  m.tick(12345);
  m.hardware_reset();
  EXPECT_EQ(m.now(), 0u);
  EXPECT_EQ(m.peek(addr::kTimestamp), 0u);
  EXPECT_THROW(m.set_cpu(8), sim::ConfigError);  // eight CPU ID lines
  EXPECT_THROW(m.set_clocks(0, 1), sim::ConfigError);
  EXPECT_EQ(m.address_limit(), 128u);  // 001 Table 1: seven address bits
  m.write(128 + addr::kFilter, 0x5);   // higher address bits are decoded outside the chip
  EXPECT_EQ(m.peek(addr::kFilter), 0x5u);
}

}  // namespace
}  // namespace kron::mk1::test
