// The first MultiKron model against 001 Table 2 (the Control/Status Register), one test per bit or bit
// group; each names its source. Fixture: mk1_fixture.hpp.
#include "mk1_fixture.hpp"

namespace kron::mk1::test {
namespace {

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

}  // namespace
}  // namespace kron::mk1::test
