// The first MultiKron model's test mode against 001 Appendix C: the TEST register (Table C-1) and FIFO
// Output; each test names its source. Fixture: mk1_fixture.hpp.
#include "mk1_fixture.hpp"

namespace kron::mk1::test {
namespace {

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

// Appendix C "Increment Counters Field": "The normal incrementing of all counters is disabled in test
// mode": a sample lost to a full FIFO is flagged for the next one (Table 5) but the Overrun Counter stays;
// out of test mode the same loss counts (Table 3B row 2).
TEST_F(Mk1TestMode, TableC1OverrunsAreNotCountedInTestMode) {
  m.write(addr::kCsr, csr::kEnableSampling);  // no write-wait: a full FIFO discards
  m.write(addr::kFilter, 0xffff);
  m.set_net_ready(false);
  for (unsigned i = 0; i < Mk1::kFifoDepth + 2; ++i) m.write(addr::kTraceTrigger, i);
  EXPECT_EQ(m.fifo_level(), Mk1::kFifoDepth);
  EXPECT_EQ(m.peek(addr::kOverrunCounter), 0u);
  m.set_test_mode(false);
  m.write(addr::kTraceTrigger, 99);
  EXPECT_EQ(m.peek(addr::kOverrunCounter), 1u);
}

TEST_F(Mk1TestMode, DrainWithNetworkDisabledIsAHangNotAWait) {  // Table C-1 bit 6
  m.write(addr::kTest, test_instr(0x40 | 0x80, 0x10000000));
  EXPECT_THROW(m.drain(), sim::HangError);
  m.set_test_mode(false);  // ERRATUM E66: the disable acts in test mode only
  m.drain();
  EXPECT_EQ(samples.size(), 1u);
}

}  // namespace
}  // namespace kron::mk1::test
