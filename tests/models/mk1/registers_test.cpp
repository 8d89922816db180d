// The first MultiKron model against 001 Appendix A Table A-1 (the address map), one test per row or
// row group; each names its source. Fixture: mk1_fixture.hpp.
#include "mk1_fixture.hpp"

namespace kron::mk1::test {
namespace {

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

}  // namespace
}  // namespace kron::mk1::test
