// 004 4.3.4-4.3.6, 4.4.5, Tables 4.6-4.9: the SRAM counters, Count & Increment, the latency timer and its
// compact format, the Miss Type and Response State Registers.
#include <set>

#include "numachine_fixture.hpp"

namespace kron::numachine::test {
namespace {

// ---- 004 4.3.6: the compact format and the bucket list of 4.4.5 ----
TEST(Compact, PseudocodeOf436) {  // 004 4.3.6 pseudocode
  for (std::uint32_t code = 0; code < 128; ++code) {
    const unsigned e = code >> 4, m = code & 15;
    const std::uint32_t time = e == 0 ? m * 2 : (16 + m) * 32 * (1u << (e - 1)) / 16;  // 1.m * 2^5 * 2^(e-1)
    EXPECT_EQ(bucket(static_cast<std::uint8_t>(code)).lo, time) << code;
    EXPECT_EQ(compact(time), code) << time;
  }
}

TEST(Compact, BucketListOf445) {  // 004 4.4.5, with its slips decided by ERRATUM E85
  const std::pair<std::uint32_t, std::uint32_t> printed[] = {
      {0, 1},       {2, 3},       {62, 63},     {64, 67},     {68, 71},     {124, 127},  {128, 135},
      {136, 143} /* printed 137-143 */,        {248, 255},   {256, 271},   {272, 287},  {496, 511} /* printed 494-511 */,
      {512, 543},   {544, 575},   {992, 1023},  {1024, 1087}, {1088, 1151}, {1984, 2047}, {2048, 2175},
      {2176, 2303}, {3968, 4095}};
  for (const auto& [lo, hi] : printed) {
    const std::uint8_t c = compact(lo);
    EXPECT_EQ(bucket(c).lo, lo);
    EXPECT_EQ(bucket(c).hi, hi);
    EXPECT_EQ(compact(hi), c) << "the whole bucket shares one code";
  }
  std::set<std::uint8_t> codes;
  for (std::uint32_t t = 0; t < 4096; ++t) codes.insert(compact(t));
  EXPECT_EQ(codes.size(), 128u) << "7 bits, every code used";
}

// ---- Table 4.7 mode 1 and 004 4.3.6: the full-width latency histogram ----
TEST_F(NumachineTest, LatencyTimerModeFullWidthHistogram) {  // 004 Table 4.7 mode 1, 4.4.5
  w(Reg::SCM, mode(1) | kMuxPrLo | ev(6) | kEdge | kMaskEn | kRm);
  w(Reg::SRAMCE, 1);
  w(Reg::PR, 0x3);
  miss(0x100, 37);
  miss(0x200, 37, true);
  miss(0x300, 4095);
  EXPECT_EQ(m.sram(0x3000 | 37), 2u) << "PR[3..0] above the 12-bit latency";
  EXPECT_EQ(m.sram(0x3000 | 4095), 1u);
  EXPECT_EQ(m.latency_timer(), 4095u);
  EXPECT_EQ(m.sram_line(0x3000 | 37), "sram 0x3025 count=2 lat=37-37 pr=0x0003");
}

TEST_F(NumachineTest, BusErrorAt4096BringsNoResponse) {  // 004 4.3.6: "BUS_ERROR ... after 4096 cycles"; ERRATUM E85
  w(Reg::SCM, mode(1) | ev(6) | kEdge | kMaskEn | kRm);
  w(Reg::SRAMCE, 1);
  const std::uint64_t t = m.now();
  miss(0x100, 1'000'000);
  EXPECT_EQ(m.now() - t, kBusErrorCycles);
  for (std::uint32_t a = 0; a < kSramWords; ++a) ASSERT_EQ(m.sram(a), 0u) << a;
}

TEST_F(NumachineTest, LatencyTimerResetsAtTheRequestAndCounts) {  // 004 4.3.6
  miss(0x1, 100);
  EXPECT_EQ(m.latency_timer(), 100u);
  m.tick(1000);
  EXPECT_EQ(m.latency_timer(), 100u) << "stopped at the response";
}

// ---- Table 4.7 mode 3: compact latency with PRlo and PRhi ----
TEST_F(NumachineTest, CompactModeHistogramPerPhase) {  // 004 Table 4.7 mode 3
  w(Reg::SCM, mode(3) | kMuxPrLo | kMuxPrHi | ev(6) | kEdge | kMaskEn | kRm);
  w(Reg::SRAMCE, 1);
  w(Reg::PR, 0xf80a);  // PRhi = 0x1f, PRlo = 0xa
  miss(0x1, 140);
  miss(0x2, 136);
  const std::uint16_t a = static_cast<std::uint16_t>(0x1f << 11 | 0xa << 7 | compact(140));
  EXPECT_EQ(m.sram(a), 2u);
  EXPECT_EQ(m.sram_line(a), "sram 0xfd31 count=2 lat=136-143 pr=0xf80a");
}

// ---- Tables 4.8 and 4.9: MTR and RSR separate the histograms ----
TEST_F(NumachineTest, MissTypeAndResponseStateSeparateHistograms) {  // 004 Tables 4.8, 4.9; 4.4.5
  w(Reg::SCM, mode(3) | kMuxMiss | kMuxRsr | ev(6) | kEdge | kMaskEn | kRm);
  w(Reg::SRAMCE, 1);
  Numachine::Miss x;
  x.addr = 0x40;
  x.latency = 50;
  x.rsr = rsr::kNetworkCacheHit | rsr::kValid;
  m.read_miss(x);
  m.ownership_miss(50, false, 0x40);
  m.ownership_miss(50, true, 0x40);
  const auto at = [](unsigned rsr_v, unsigned mtr_v) {
    return static_cast<std::uint16_t>(rsr_v << 11 | mtr_v << 9 | compact(50));
  };
  EXPECT_EQ(m.sram(at(0x14, 3)), 1u) << "other miss, NC hit, valid";
  EXPECT_EQ(m.sram(at(rsr::kExclusive, 0)), 1u) << "successful ownership miss, upgrade";
  EXPECT_EQ(m.sram(at(rsr::kExclusive, 1)), 1u) << "cancelled ownership miss";
  EXPECT_EQ(m.sram_line(at(0x14, 3)), "sram 0xa619 count=1 lat=50-51 mtr=3 rsr=20");
}

TEST_F(NumachineTest, SendingMaskCountsBeforeTheRsrArrives) {  // 004 4.4.5, the italic warning
  w(Reg::SCM, mode(3) | kMuxRsr | ev(6) | kEdge | kMaskEn | kSm);
  w(Reg::SRAMCE, 1);
  Numachine::Miss x;
  x.addr = 0x40;
  x.latency = 50;
  x.rsr = 0x1f;
  m.read_miss(x);
  EXPECT_EQ(m.sram(0), 1u) << "counted at the request: latency 0, the old RSR (0)";
  EXPECT_EQ(m.rsr(), 0x1fu);
}

// ---- Table 4.7 mode 2: MCC mode and its 'Address Mode' ----
TEST_F(NumachineTest, AddressModeUsesAr39To32And26To19) {  // 004 4.4.5 "Address Mode"
  w(Reg::SCM, mode(2) | ev(6) | kEdge | kMaskEn | kRm);
  w(Reg::SRAMCE, 1);
  miss(0xab'0000'0000 | (0x5dull << 19) | 0x7ffff, 20);
  EXPECT_EQ(m.sram(0xab5d), 1u);
  EXPECT_EQ(m.sram_line(0xab5d), "sram 0xab5d count=1 ar=0xab02e80000");
}

TEST_F(NumachineTest, MccModeMuxesPhaseIdGroups) {  // 004 Table 4.4 SCM bits 19..15, Table 4.7 mode 2 (ERRATUM E92)
  w(Reg::SCM, mode(2) | kMuxPrLo | kMuxPrMid | kMuxPrHi | ev(1) | kEdge);
  w(Reg::PR, 0xbeef);
  w(Reg::SRAMCE, 1);
  EXPECT_EQ(m.sram(0xbeef), 1u) << "the whole 16-bit PhaseID: basic-block counting (Table 4.10 item 22)";
  w(Reg::SRAMCE, 0);
  miss(0x40, 20);  // MTR 3 (other miss), RSR 0, AR 0x40 (AR[26..19] = 0)
  w(Reg::SCM, mode(2) | kMuxRsr | kMuxMiss | kMuxPrMid | ev(1));
  EXPECT_EQ(m.sram_address(), (0xbeef & 0x07f0) | 3u << 2) << "RSR 0 above, PR[10..4], MTR 3, AR bits 1..0 below";
}

// ---- Table 4.7 mode 0 and Table 4.6 events 2-5 ----
TEST_F(NumachineTest, SecondaryCacheModeCountsPerLine) {  // 004 Table 4.6 rows 2-5, Table 4.7 mode 0
  const std::uint32_t events[] = {2, 3, 4, 5};
  std::uint32_t got[4] = {};
  for (unsigned i = 0; i < 4; ++i) {
    m.hardware_reset();
    w(Reg::SCM, mode(0) | ev(events[i]) | kEdge);
    w(Reg::SRAMCE, 1);
    m.l2_access(false, 0x40, true, false);
    m.l2_access(false, 0x40, false, false);
    m.l2_access(true, 0x40, true, false);
    m.l2_access(true, 0x41, false, false);
    got[i] = m.sram(0x40);
  }
  EXPECT_EQ(got[0], 3u) << "accesses";
  EXPECT_EQ(got[1], 2u) << "reads";
  EXPECT_EQ(got[2], 1u) << "writes";
  EXPECT_EQ(got[3], 2u) << "misses";
}

TEST_F(NumachineTest, SplitCachePutsInstructionsInTheUpperHalf) {  // 004 4.4.5: "index bit 17 is set"
  w(Reg::SCM, mode(0) | ev(5) | kEdge);
  w(Reg::SRAMCE, 1);
  m.l2_access(false, 0x40, true, true);
  m.l2_access(false, 0x40, true, false);
  EXPECT_EQ(m.sram(0x8040), 1u);
  EXPECT_EQ(m.sram(0x0040), 1u);
}

// ---- 004 4.3.5: Count & Increment ----
TEST_F(NumachineTest, ExtendedWriteBackCountsCyclesWhileEnabled) {  // 004 4.3.5
  w(Reg::SCM, mode(2) | kMuxPrLo | ev(1));  // cycles: "the counter is incremented on each cycle"
  w(Reg::PR, 2);
  w(Reg::SRAMCE, 1);
  m.tick(1000);
  w(Reg::SRAMCE, 0);
  EXPECT_EQ(m.sram(2), 1002u) << "SRAMCE's own write cycles, then 1000";
}

TEST_F(NumachineTest, SramPreloadInterruptsOnOverflow) {  // 004 Table 4.4 SCM bit 22; Table 4.10 item 11
  w(Reg::SCM, kScmIrq | mode(0) | ev(5) | kEdge);
  m.write(kSramBase + 0x123, 0xfffffffe);
  w(Reg::SRAMCE, 1);
  m.l2_access(false, 0x123, true, false);
  EXPECT_TRUE(m.irqs.empty());
  const std::uint64_t t = m.now();
  m.l2_access(false, 0x123, true, false);
  ASSERT_EQ(m.irqs.size(), 1u);
  EXPECT_EQ(m.irqs[0].gpc, -1);
  EXPECT_EQ(m.irqs[0].sram, 0x123);
  EXPECT_EQ(lines.back(), "irq @" + std::to_string(t) + " SRAM[0x0123]");
}

// ERRATUM E90: the SRAM has one interrupt: a second overflow (of any word) while it is pending raises
// none; a processor access of any SRAM word acknowledges it, and the next overflow raises it again.
TEST_F(NumachineTest, SramInterruptIsRaisedOnceUntilAcknowledged) {  // 004 Table 4.4 SCM bit 22
  w(Reg::SCM, kScmIrq | mode(0) | ev(5) | kEdge);
  m.write(kSramBase + 0x123, 0xffffffff);
  m.write(kSramBase + 0x124, 0xffffffff);
  w(Reg::SRAMCE, 1);
  m.l2_access(false, 0x123, true, false);
  ASSERT_EQ(m.irqs.size(), 1u);
  m.l2_access(false, 0x124, true, false);
  EXPECT_EQ(m.sram(0x124), 0u) << "the word wraps all the same";
  EXPECT_EQ(m.irqs.size(), 1u) << "pending: not raised again";
  (void)m.read(kSramBase + 0x7);  // acknowledges
  m.write(kSramBase + 0x124, 0xffffffff);
  m.l2_access(false, 0x124, true, false);
  ASSERT_EQ(m.irqs.size(), 2u);
  EXPECT_EQ(m.irqs[1].sram, 0x124);
}

TEST_F(NumachineTest, SramMasterEnable) {  // 004 4.4.6
  w(Reg::SCM, mode(0) | ev(2) | kEdge);
  m.l2_access(false, 0x1, false, false);
  EXPECT_EQ(m.sram(0x1), 0u);
  w(Reg::SRAMCE, 1);
  m.l2_access(false, 0x1, false, false);
  EXPECT_EQ(m.sram(0x1), 1u);
}

TEST_F(NumachineTest, ProcessorReadsAndWritesTheSram) {  // 004 4.3.4 "scratch memory", 4.4.5 muxAR
  m.write(kSramBase + 0xffff, 0xdeadbeef);
  EXPECT_EQ(m.read(kSramBase + 0xffff), 0xdeadbeefu);
  EXPECT_EQ(m.sram(0xffff), 0xdeadbeefu);
}

TEST_F(NumachineTest, Table46AlwaysCountsInAnyMode) {  // 004 Table 4.6 row 1 "any"
  for (unsigned md = 0; md < 4; ++md) {
    m.hardware_reset();
    w(Reg::SCM, mode(md) | ev(1) | kEdge);
    w(Reg::SRAMCE, 1);
    EXPECT_EQ(m.sram(m.sram_address()), 1u) << md;
  }
}

TEST_F(NumachineTest, Table46NothingAndReservedEventsCountNothing) {  // 004 Table 4.6 rows 0 and "7 to F"
  for (unsigned e : {0u, 7u, 8u, 0xfu}) {
    m.hardware_reset();
    w(Reg::SCM, mode(2) | ev(e));
    w(Reg::SRAMCE, 1);
    m.l2_access(false, 1, true, false);
    miss(0x40, 30);
    m.tick(100);
    for (std::uint32_t a = 0; a < kSramWords; ++a) ASSERT_EQ(m.sram(a), 0u) << "event " << e << " word " << a;
  }
}

TEST_F(NumachineTest, ResponseStateRegisterArrivesWithTheResponse) {  // 004 Table 4.9, 4.4.5
  miss(0x40, 30, true);
  EXPECT_EQ(m.rsr(), rsr::kExclusive) << "RSR[0] = 1: read exclusive or upgrade (the rest default 0, E91)";
  miss(0x40, 30);
  EXPECT_EQ(m.rsr(), 0u) << "RSR[0] = 0: read";
  Numachine::Miss x;
  x.addr = 0x40;
  x.latency = 30;
  x.rsr = rsr::kNetworkCacheHit | rsr::kGlobal | rsr::kValid | rsr::kRemote;
  m.read_miss(x);
  EXPECT_EQ(m.rsr(), 0x1eu);
  EXPECT_EQ(m.mtr(), static_cast<std::uint8_t>(MissType::Other)) << "Table 4.8 value 3";
}

}  // namespace
}  // namespace kron::numachine::test
