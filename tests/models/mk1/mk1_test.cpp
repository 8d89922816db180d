// The first MultiKron model against 001/002 (NISTIR 4737), one test per table row or stated behaviour;
// each names its source.
#include <gtest/gtest.h>

#include <vector>

#include "kron/format/classic.hpp"
#include "models/mk1/mk1.hpp"

namespace kron::mk1 {
namespace {

constexpr std::uint64_t kBit63 = std::uint64_t{1} << 63;
// MUX SEL value selecting `src` (Table 4 encoding) for counter i: MSB in bit 32+i, LSB in bit i.
std::uint64_t mux_field(unsigned i, unsigned src) {
  return (std::uint64_t{src >> 1 & 1} << (32 + i)) | (std::uint64_t{src & 1} << i);
}
std::uint64_t test_instr(unsigned instr, std::uint32_t data = 0) { return std::uint64_t{instr} << 32 | data; }

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

// ---- Table A-1: address map -------------------------------------------------------------------

TEST_F(Mk1Test, TableA1Row0SoftwareResetKeepsTimestamp) {  // 001 Software Reset; Table A-1 row 0
  m.tick(1000);
  m.write(addr::kFilter, 0x1234);
  m.write(addr::kCsr, csr::kEnableSampling | csr::kWriteWait);
  m.write(addr::kSourceAddress + 3, 77);
  m.write(addr::kEnable, 0xffff);
  const std::uint64_t ts = m.peek(addr::kTimestamp);
  ASSERT_GT(ts, 0u);
  m.write(addr::kSoftwareReset, 0xdeadbeef);  // data ignored
  EXPECT_EQ(m.peek(addr::kFilter), 0u);
  EXPECT_EQ(m.peek(addr::kCsr), 0u);
  EXPECT_EQ(m.peek(addr::kEnable), 0u);
  EXPECT_EQ(m.peek(addr::kSourceAddress + 3), 0u);
  EXPECT_GE(m.peek(addr::kTimestamp), ts);  // not cleared
  EXPECT_EQ(m.read(addr::kSoftwareReset), 0u);  // N/A on read
  m.hardware_reset();
  EXPECT_EQ(m.peek(addr::kTimestamp), 0u);  // the hardware reset does clear it (001 Timestamp)
}

TEST_F(Mk1Test, TableA1Row1CsrLoadAndRead) {  // Table A-1 row 1
  m.write(addr::kCsr, csr::kEnableSampling | csr::kReadWait | csr::kSlow10us);
  EXPECT_EQ(m.read(addr::kCsr), csr::kEnableSampling | csr::kReadWait | csr::kSlow10us);
}

TEST_F(Mk1Test, TableA1Row2TimestampReadOnly56Bits) {  // 001 Timestamp; Table A-1 row 2
  m.tick(500);  // 50 MHz node, 10 MHz timestamp: one tick per five node clocks
  EXPECT_EQ(m.peek(addr::kTimestamp), 100u);
  m.write(addr::kTimestamp, 0);  // N/A: not writable
  EXPECT_EQ(m.peek(addr::kTimestamp), 100u + 2 * Mk1::kAccessClocks / 5);
  m.set_test_mode(true);
  m.write(addr::kTest, test_instr(0b10, 0x3fff));  // Table C-1: set timestamp from 14 data bits
  EXPECT_EQ(m.peek(addr::kTimestamp), (std::uint64_t{1} << 56) - 1);
  m.write(addr::kTest, test_instr(0b10 << 2));  // increment: wraps at 56 bits
  EXPECT_EQ(m.peek(addr::kTimestamp), 0u);
}

TEST_F(Mk1Test, TableA1UnassignedAddressesReadZeroAndIgnoreWrites) {  // Table A-1 rows 3, 7, 9, 15, 24-31, 48-95
  for (unsigned a : {3u, 7u, 9u, 15u, 24u, 31u, 48u, 63u, 64u, 95u}) {
    m.write(a, ~std::uint64_t{0});
    EXPECT_EQ(m.read(a), 0u) << a;  // 001 PROCESSOR INTERFACE: unused bits read 0
  }
  EXPECT_EQ(m.peek(addr::kCsr), 0u);
}

TEST_F(Mk1Test, TableA1Row4Filter16Bits) {  // Table A-1 row 4 "Filter Register (16 bits)"
  m.write(addr::kFilter, 0xffffabcd);
  EXPECT_EQ(m.read(addr::kFilter), 0xabcdu);
}

TEST_F(Mk1Test, TableA1Rows5And6WriteResetsErrorCounters) {  // Table A-1 rows 5, 6
  m.set_test_mode(true);
  m.write(addr::kTest, test_instr(0b01, 0x5a));  // Table C-1 set error counters
  EXPECT_EQ(m.read(addr::kWaitCounter), 0x0f0ff0f0u);
  EXPECT_EQ(m.read(addr::kOverrunCounter), 0x0f0ff0f0u);
  m.write(addr::kWaitCounter, 123);
  EXPECT_EQ(m.read(addr::kWaitCounter), 0u);
  EXPECT_EQ(m.read(addr::kOverrunCounter), 0x0f0ff0f0u);
  m.write(addr::kOverrunCounter, 0);
  EXPECT_EQ(m.read(addr::kOverrunCounter), 0u);
}

TEST_F(Mk1Test, TableA1Row8MuxSel64BitsReservedHalvesReadZero) {  // 001 MUX SEL Register; Table A-1 row 8
  m.write(addr::kMuxSel, ~std::uint64_t{0});
  EXPECT_EQ(m.read(addr::kMuxSel), 0x0000ffff0000ffffull);  // bits 16-31, 48-63 reserved
}

TEST_F(Mk1Test, TableA1Row10ResetRegisterClearsSelectedCountersAndIsWriteOnly) {  // 001 Reset Register
  m.set_test_mode(true);
  m.write(addr::kTest, test_instr(0b11, 0x1234));  // all counters = 0x1234
  m.set_test_mode(false);
  m.write(addr::kReset, 0x00010005);  // counters 0 and 2; bit 16 is reserved
  EXPECT_EQ(m.peek(addr::kResourceCounter + 0), 0u);
  EXPECT_EQ(m.peek(addr::kResourceCounter + 1), 0x1234u);
  EXPECT_EQ(m.peek(addr::kResourceCounter + 2), 0u);
  EXPECT_EQ(m.read(addr::kReset), 0u);  // N/A: self-clearing, not readable
}

TEST_F(Mk1Test, TableA1Rows11And12EnableAndDisableActOnOnes) {  // 001 Enable / Disable Register
  m.write(addr::kEnable, 0x00000003);
  m.write(addr::kEnable, 0x00000100);  // "0" inputs are ignored
  EXPECT_EQ(m.read(addr::kEnable), 0x0103u);
  m.write(addr::kDisable, 0x00000001);
  EXPECT_EQ(m.read(addr::kEnable), 0x0102u);
  EXPECT_EQ(m.read(addr::kDisable), 0u);  // N/A on read
  m.write(addr::kEnable, 0xffff0000);     // bits 16-31 reserved
  EXPECT_EQ(m.read(addr::kEnable), 0x0102u);
}

TEST_F(Mk1Test, TableA1Rows13And14OnlyInTestMode) {  // Table A-1 rows 13, 14; Appendix C
  m.write(addr::kTest, test_instr(0x80, 0x11223344));
  EXPECT_EQ(m.read(addr::kTest), 0u);
  EXPECT_EQ(m.read(addr::kFifoOutput), 0u);
  EXPECT_EQ(m.fifo_level(), 0u);
  m.set_test_mode(true);
  m.write(addr::kTest, test_instr(0xc0 | (3 << 4), 0x11223344));  // source=TEST data, net disabled, group 3
  EXPECT_EQ(m.read(addr::kTest), test_instr(0xf0, 0x11223344));
  EXPECT_EQ(m.read(addr::kFifoOutput), 0x11223344u);
}

TEST_F(Mk1Test, TableA1Rows16To23SourceAddressRegisters) {  // 001 Source Address Registers
  for (unsigned i = 0; i < 8; ++i) m.write(addr::kSourceAddress + i, 0x100000000ull | (0xa0 + i));
  for (unsigned i = 0; i < 8; ++i) EXPECT_EQ(m.read(addr::kSourceAddress + i), 0xa0u + i);  // 32 bits
  enable_sampling();
  m.set_cpu(5);
  m.write(addr::kTraceTrigger, 1);
  m.drain();
  EXPECT_EQ(decode(0).source, 0xa5u);  // index = encoded CPU ID line
  EXPECT_EQ(decode(0).cpu, 5u);
}

TEST_F(Mk1Test, TableA1Rows32To47WriteIncrementsSoftwareCounter) {  // 001 Processor Incrementing
  m.write(addr::kMuxSel, mux_field(7, 0b10));
  m.write(addr::kResourceCounter + 7, 0);
  EXPECT_EQ(m.peek(addr::kResourceCounter + 7), 0u);  // not yet enabled
  m.write(addr::kEnable, 1u << 7);
  m.write(addr::kResourceCounter + 7, 0);
  m.write(addr::kResourceCounter + 7, 0);
  m.write(addr::kResourceCounter + 6, 0);  // counter 6 selects the slow clock: no increment
  EXPECT_EQ(m.read(addr::kResourceCounter + 7), 2u);
  EXPECT_EQ(m.peek(addr::kResourceCounter + 6), 0u);
}

TEST_F(Mk1Test, TableA1Rows96To111TraceTriggerFilterLevelFromAddress) {  // Table A-1 notes; Filter Register
  m.write(addr::kCsr, csr::kEnableSampling);
  m.write(addr::kFilter, 1u << 9);
  m.write(addr::kTraceTrigger + 8, 1);  // level 8 disabled: discarded
  m.write(addr::kTraceTrigger + 9, 2);
  m.drain();
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].size(), 16u);
  EXPECT_EQ(decode(0).data, 2u);
  EXPECT_EQ(m.peek(addr::kOverrunCounter), 0u);  // a filtered sample is not an overrun
}

TEST_F(Mk1Test, TableA1Rows112To127ResourceTrigger) {  // Table A-1 rows 112-127; Table 7
  enable_sampling();
  m.write(addr::kResourceTrigger + 15, 3);
  m.drain();
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].size(), 80u);
  EXPECT_EQ(decode(0).type, SampleType::Resource);
}

TEST_F(Mk1Test, RegisterTableCoversTableA1InOrder) {  // registers described once
  EXPECT_EQ(find_register(0)->name, "Software Reset");
  EXPECT_EQ(find_register(23)->name, "Source Address Register");
  EXPECT_EQ(find_register(47)->name, "Resource Counter");
  EXPECT_EQ(find_register(3), nullptr);
  EXPECT_EQ(find_register(64), nullptr);
  for (const RegisterInfo& r : register_table()) EXPECT_FALSE(r.source.empty()) << r.name;
}

TEST_F(Mk1Test, SamplingDisabledByDefaultAndByCsrBit1) {  // Table 2 bits 0, 1
  m.write(addr::kFilter, 0xffff);
  m.write(addr::kTraceTrigger, 1);  // "Disable Sampling (default on reset)"
  m.write(addr::kCsr, csr::kEnableSampling);
  m.write(addr::kTraceTrigger, 2);
  m.write(addr::kCsr, csr::kDisableSampling);
  m.write(addr::kTraceTrigger, 3);
  m.drain();
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(decode(0).data, 2u);
  EXPECT_EQ(m.peek(addr::kCsr) & csr::kEnableSampling, 0u);
}

// ---- Table 2: CSR ----------------------------------------------------------------------------

TEST_F(Mk1Test, Table2SetAndClearPairs) {  // Table 2 bits 0-5, 14-15
  const std::pair<std::uint64_t, std::uint64_t> pairs[] = {{csr::kEnableSampling, csr::kDisableSampling},
                                                           {csr::kWriteWait, csr::kWriteDiscard},
                                                           {csr::kReadWait, csr::kReadCancel},
                                                           {csr::kSlow10us, csr::kSlow1us}};
  for (auto [set, clear] : pairs) {
    m.write(addr::kCsr, set);
    EXPECT_EQ(m.read(addr::kCsr) & set, set);
    m.write(addr::kCsr, 0);  // a "0" causes no effect
    EXPECT_EQ(m.read(addr::kCsr) & set, set);
    m.write(addr::kCsr, clear);
    EXPECT_EQ(m.read(addr::kCsr) & (set | clear), 0u);  // odd bits read "Logical 0"
    m.write(addr::kCsr, set | clear);  // ERRATUM E61: clearing wins
    EXPECT_EQ(m.read(addr::kCsr) & set, 0u);
  }
}

TEST_F(Mk1Test, Table2ReadOnlyBitsIgnoreWritesAndHighBitsReadZero) {  // Table 2 bits 6-13, 16-31
  m.write(addr::kCsr, 0xffff3fc0ull);
  EXPECT_EQ(m.read(addr::kCsr), 0u);
}

TEST_F(Mk1Test, Table2Bits6And8FifoFullAndOverrun) {  // Table 2 bits 6, 8
  enable_sampling();
  m.set_net_ready(false);
  for (unsigned i = 0; i < Mk1::kFifoDepth; ++i) m.write(addr::kTraceTrigger, i);
  EXPECT_EQ(m.read(addr::kCsr) & (csr::kFifoFull | csr::kFifoOverrun), csr::kFifoFull);
  m.write(addr::kTraceTrigger, 99);  // discarded (default: bit 3)
  EXPECT_EQ(m.read(addr::kCsr) & csr::kFifoOverrun, csr::kFifoOverrun);
  EXPECT_EQ(m.read(addr::kOverrunCounter), 1u);
}

TEST_F(Mk1Test, Table2Bits7And9ShadowFullAndOverrun) {  // Table 2 bits 7, 9
  enable_sampling();
  m.set_net_ready(false);
  m.write(addr::kResourceTrigger, 1);
  EXPECT_EQ(m.read(addr::kCsr) & csr::kShadowFull, csr::kShadowFull);
  m.write(addr::kResourceTrigger, 2);
  EXPECT_EQ(m.read(addr::kCsr) & (csr::kShadowOverrun | csr::kFifoOverrun), csr::kShadowOverrun);
}

TEST_F(Mk1Test, Table2Bit10Is129thFifoBit) {  // Table 2 bit 10; Appendix C FIFO Output
  enable_sampling();
  m.set_net_ready(false);
  m.write(addr::kTraceTrigger, 1);
  EXPECT_EQ(m.read(addr::kCsr) & csr::kFifoBit128, 0u);
  m.write(addr::kSoftwareReset, 0);
  enable_sampling();
  m.write(addr::kResourceTrigger, 1);
  EXPECT_EQ(m.read(addr::kCsr) & csr::kFifoBit128, csr::kFifoBit128);
}

TEST_F(Mk1Test, Table2Bits12And13WaitStatesLatchedAtReset) {  // Table 2 bits 12-13
  m.set_wait_states(3);
  EXPECT_EQ(m.read(addr::kCsr) >> 12 & 3, 0u);  // only at reset
  m.hardware_reset();
  EXPECT_EQ(m.read(addr::kCsr) >> 12 & 3, 3u);
  const std::uint64_t t = m.now();
  m.read(addr::kCsr);
  EXPECT_EQ(m.now() - t, Mk1::kAccessClocks + 3);  // each access takes the extra clocks
  m.write(addr::kCsr, 0x3000);
  EXPECT_EQ(m.read(addr::kCsr) >> 12 & 3, 3u);
  EXPECT_THROW(m.set_wait_states(4), sim::ConfigError);
}

TEST_F(Mk1Test, Table2Bits14And15SlowClock1usOr10us) {  // Table 2 bits 14-15; Resource Counters; Table 4 "00"
  // 50 MHz node, 10 MHz timestamp: the 1 us slow clock ticks every 50 node clocks, the 10 us every 500.
  m.write(addr::kMuxSel, 0);  // 00 = slow clock for all
  m.write(addr::kEnable, 1);  // acts at clock 2
  m.tick(50'002 - m.now());
  EXPECT_EQ(m.peek(addr::kResourceCounter), 1000u);  // ticks at 50, 100, ..., 50000 (default 1 us)
  m.write(addr::kCsr, csr::kSlow10us);               // acts at clock 50002
  m.write(addr::kReset, 1);                          // acts at clock 50004
  m.tick(550'006 - m.now());
  EXPECT_EQ(m.peek(addr::kResourceCounter), 1000u);  // ticks at 50500, 51000, ..., 550000
}

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

// ---- Appendix C, Table C-1 --------------------------------------------------------------------

class Mk1TestMode : public Mk1Test {
 protected:
  void SetUp() override { m.set_test_mode(true); }
};

TEST_F(Mk1TestMode, TableC1SetCountersRow01ErrorCountersFrom8Bits) {  // Table C-1 bits 1-0 = 01
  m.write(addr::kTest, test_instr(0b01, 0xffffff81));  // only the low 8 data bits
  EXPECT_EQ(m.peek(addr::kWaitCounter), 0xf000000fu);
  EXPECT_EQ(m.peek(addr::kOverrunCounter), 0xf000000fu);
}

TEST_F(Mk1TestMode, TableC1SetCountersRow10TimestampFrom14Bits) {  // Table C-1 bits 1-0 = 10
  m.write(addr::kTest, test_instr(0b10, 0xffff2001));
  EXPECT_EQ(m.peek(addr::kTimestamp), 0x00f000000000000full);
}

TEST_F(Mk1TestMode, TableC1SetCountersRow11AllResourceCounters32Bits) {  // Table C-1 bits 1-0 = 11
  m.write(addr::kTest, test_instr(0b11, 0x89abcdef));
  for (unsigned i = 0; i < 16; ++i) EXPECT_EQ(m.peek(addr::kResourceCounter + i), 0x89abcdefu);
}

TEST_F(Mk1TestMode, TableC1SetCountersRow00Nop) {  // Table C-1 bits 1-0 = 00
  m.write(addr::kTest, test_instr(0b00, 0xffffffff));
  EXPECT_EQ(m.peek(addr::kWaitCounter), 0u);
  EXPECT_EQ(m.peek(addr::kTimestamp), 0u);
  EXPECT_EQ(m.peek(addr::kResourceCounter), 0u);
}

TEST_F(Mk1TestMode, TableC1IncrementRows) {  // Table C-1 bits 3-2 = 00, 01, 10, 11
  m.write(addr::kTest, test_instr(0b00 << 2));
  EXPECT_EQ(m.peek(addr::kWaitCounter) + m.peek(addr::kTimestamp) + m.peek(addr::kResourceCounter + 5), 0u);
  m.write(addr::kTest, test_instr(0b01 << 2));
  EXPECT_EQ(m.peek(addr::kWaitCounter), 1u);
  EXPECT_EQ(m.peek(addr::kOverrunCounter), 1u);
  m.write(addr::kTest, test_instr(0b10 << 2));
  EXPECT_EQ(m.peek(addr::kTimestamp), 1u);
  m.write(addr::kTest, test_instr(0b11 << 2));
  for (unsigned i = 0; i < 16; ++i) EXPECT_EQ(m.peek(addr::kResourceCounter + i), 1u);
  m.write(addr::kTest, test_instr(0b11, 0xffffffff));
  m.write(addr::kTest, test_instr(0b11 << 2));  // resource counters stick at their maximum
  EXPECT_EQ(m.peek(addr::kResourceCounter), 0xffffffffu);
}

TEST_F(Mk1TestMode, TableC1NormalCountingDisabledInTestMode) {  // Appendix C "Increment Counters Field"
  m.write(addr::kMuxSel, 0xffff0000ffffull);  // all node clock
  m.write(addr::kEnable, 0xffff);
  m.tick(1000);
  EXPECT_EQ(m.peek(addr::kTimestamp), 0u);
  EXPECT_EQ(m.peek(addr::kResourceCounter), 0u);
  m.set_test_mode(false);
  m.tick(10);
  EXPECT_EQ(m.peek(addr::kResourceCounter), 10u);
}

TEST_F(Mk1TestMode, TableC1FifoReadGroupRows) {  // Table C-1 bits 5-4; FIFO Output (address 13)
  m.write(addr::kCsr, csr::kEnableSampling);
  m.write(addr::kFilter, 0xffff);
  m.write(addr::kSourceAddress, 0x11223344);
  m.write(addr::kTest, test_instr(0x40));  // network disabled so the FIFO holds the sample
  m.write(addr::kTraceTrigger, 0x0000aabbccddeeffull);
  const unsigned groups[4] = {0, 1, 2, 3};
  std::uint32_t got[4];
  for (unsigned g : groups) {
    m.write(addr::kTest, test_instr(0x40 | g << 4));
    got[g] = static_cast<std::uint32_t>(m.read(addr::kFifoOutput));
  }
  EXPECT_EQ(got[0], 0xccddeeffu);  // FIFO bits 0-31: low user data (ERRATUM E63)
  EXPECT_EQ(got[1], 0x3344aabbu);  // bits 32-63
  EXPECT_EQ(got[2], 0x00001122u);  // bits 64-95: timestamp low 16 bits (0) + source high
  EXPECT_EQ(got[3] >> 24, 0x10u);  // bits 96-127: header first (CPU 0, type 10)
  EXPECT_EQ(samples.size(), 0u);
}

TEST_F(Mk1TestMode, TableC1DisableNetworkOutputRows) {  // Table C-1 bit 6 = 0, 1
  m.write(addr::kTest, test_instr(0x40 | 0x80, 0x12345678));  // disabled; load TEST data
  m.tick(1000);
  EXPECT_EQ(elements.size(), 0u);
  EXPECT_EQ(m.fifo_level(), 1u);
  m.write(addr::kTest, test_instr(0x00));  // enabled: "transferred from the FIFO to the network"
  m.drain();
  ASSERT_EQ(samples.size(), 1u);
  const std::vector<std::uint8_t> want = {0x12, 0x34, 0x56, 0x78, 0x12, 0x34, 0x56, 0x78,
                                          0x12, 0x34, 0x56, 0x78, 0x12, 0x34, 0x56, 0x78};
  EXPECT_EQ(samples[0], want);
}

TEST_F(Mk1TestMode, TableC1FifoDataSourceRow1LoadsReplicatedDataAndBit128) {  // Table C-1 bit 7 = 1
  m.write(addr::kTest, test_instr(0x40 | 0x80, 0x00000001));
  m.write(addr::kTest, test_instr(0x40 | 0x80, 0x00000002));
  EXPECT_EQ(m.fifo_level(), 2u);
  EXPECT_EQ(m.read(addr::kCsr) & csr::kFifoBit128, csr::kFifoBit128);  // LSB of the first entry's data
  for (unsigned g = 0; g < 4; ++g) {
    m.write(addr::kTest, test_instr(0x40 | g << 4));
    EXPECT_EQ(m.read(addr::kFifoOutput), 1u);
  }
  // A trigger in test mode with source "1" loads the TEST data, not the trace data.
  m.write(addr::kCsr, csr::kEnableSampling);
  m.write(addr::kFilter, 0xffff);
  m.write(addr::kTest, test_instr(0x40 | 0x80, 0xa5a5a5a4));  // loads one more
  m.write(addr::kTraceTrigger, 0x1111);                      // and so does this
  EXPECT_EQ(m.fifo_level(), 4u);
}

TEST_F(Mk1TestMode, TableC1FifoDataSourceRow0NoWrite) {  // Table C-1 bit 7 = 0
  m.write(addr::kTest, test_instr(0x40, 0x12345678));
  EXPECT_EQ(m.fifo_level(), 0u);
  m.write(addr::kCsr, csr::kEnableSampling);
  m.write(addr::kFilter, 0xffff);
  m.write(addr::kTraceTrigger, 0x77);  // normal trace data
  m.write(addr::kTest, test_instr(0x40));
  EXPECT_EQ(m.read(addr::kFifoOutput), 0x77u);
}

TEST_F(Mk1TestMode, TableC1ShiftoutAdvancesFifoAndFreesShadow) {  // Table C-1 bit 8
  m.write(addr::kCsr, csr::kEnableSampling);
  m.write(addr::kFilter, 0xffff);
  m.write(addr::kTest, test_instr(0x40));
  m.write(addr::kResourceTrigger, 0x1);
  m.write(addr::kTraceTrigger, 0x2);
  EXPECT_TRUE(m.shadow_full());
  m.write(addr::kTest, test_instr(0x40 | 0x100));
  EXPECT_FALSE(m.shadow_full());
  EXPECT_EQ(m.fifo_level(), 1u);
  EXPECT_EQ(m.read(addr::kFifoOutput), 0x2u);
  m.write(addr::kTest, test_instr(0x40 | 0x100));  // each write is one more pulse
  EXPECT_EQ(m.fifo_level(), 0u);
  EXPECT_EQ(m.read(addr::kFifoOutput), 0u);
}

}  // namespace
}  // namespace kron::mk1

namespace kron::mk1 {
namespace {

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

TEST_F(Mk1TestMode, DrainWithNetworkDisabledIsAHangNotAWait) {  // Table C-1 bit 6
  m.write(addr::kTest, test_instr(0x40 | 0x80, 0x10000000));
  EXPECT_THROW(m.drain(), sim::HangError);
  m.set_test_mode(false);  // ERRATUM E66: the disable acts in test mode only
  m.drain();
  EXPECT_EQ(samples.size(), 1u);
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
}  // namespace kron::mk1
