// 004 4.3.3, 4.4.1-4.4.4 and Table 4.5: the general-purpose counters, their count-enable circuits and
// their sixteen events, one test per row or stated behaviour (source in each test's comment).
#include "numachine_fixture.hpp"

namespace kron::numachine::test {
namespace {

// ---- Table 4.5, row by row: the cycles (bit 10 clear) and occurrences (bit 10 set) each event gives ----
TEST_F(NumachineTest, Event0CountsNothing) {  // 004 Table 4.5 row 0
  gpcm(0, kEn | ev(0));
  enable_gpcs();
  m.tick(1000);
  miss(0x40, 30);
  EXPECT_EQ(m.gpc(0), 0u);
}

TEST_F(NumachineTest, Event1CountsEveryCycle) {  // 004 Table 4.5 row 1: high-resolution cycle counter
  gpcm(0, kEn | ev(1));
  enable_gpcs();
  const std::uint32_t before = m.gpc(0);
  m.tick(1'000'000);
  EXPECT_EQ(m.gpc(0) - before, 1'000'000u);
}

TEST_F(NumachineTest, Event3InterruptLatencyAndRequests) {  // 004 Table 4.5 row 3
  gpcm(0, kEn | ev(3));
  gpcm(1, kEn | ev(3) | kEdge);
  enable_gpcs();
  m.interrupt_request(37);
  m.tick(1);  // two requests, not one held on
  m.interrupt_request(5);
  EXPECT_EQ(m.gpc(0), 42u);
  EXPECT_EQ(m.gpc(1), 2u);
}

TEST_F(NumachineTest, Events4To6ReadAndReadExclusiveLatency) {  // 004 Table 4.5 rows 4, 5, 6
  gpcm(0, kEn | ev(4));
  gpcm(1, kEn | ev(5));
  gpcm(2, kEn | ev(6));
  gpcm(3, kEn | ev(6) | kEdge);
  enable_gpcs();
  miss(0x100, 30);
  miss(0x200, 50, true);
  miss(0x300, 20);
  EXPECT_EQ(m.gpc(0), 50u) << "read latency: 30 + 20";
  EXPECT_EQ(m.gpc(1), 50u) << "read-exclusive latency";
  EXPECT_EQ(m.gpc(2), 100u) << "read + read-exclusive latency";
  EXPECT_EQ(m.gpc(3), 3u) << "{cache line reads + read-exclusives}";
}

TEST_F(NumachineTest, Events7And8OwnershipMisses) {  // 004 Table 4.5 rows 7, 8; 4.4.4 "Event Details"
  gpcm(0, kEn | ev(7));
  gpcm(1, kEn | ev(8) | kEdge);
  gpcm(2, kEn | ev(7) | kEdge);
  enable_gpcs();
  m.ownership_miss(40, false, 0x80);
  m.ownership_miss(25, true, std::nullopt);
  m.ownership_miss(5000, false, std::nullopt);  // unsuccessful: a time-out, counted up to the BUS_ERROR
  EXPECT_EQ(m.gpc(0), 40u + kBusErrorCycles);
  EXPECT_EQ(m.gpc(1), 1u);
  EXPECT_EQ(m.gpc(2), 2u);
}

TEST_F(NumachineTest, Events9AndANegativeAcknowledgements) {  // 004 Table 4.5 rows 9, A
  gpcm(0, kEn | ev(9));
  gpcm(1, kEn | ev(0xA));
  gpcm(2, kEn | ev(0xA) | kEdge);
  enable_gpcs();
  m.nack(3, 90);
  m.tick(1);
  m.nack(1, 10);
  EXPECT_EQ(m.gpc(0), 4u) << "retries (may be >1 per request)";
  EXPECT_EQ(m.gpc(1), 100u) << "cycles from the first retry to the final response";
  EXPECT_EQ(m.gpc(2), 2u) << "{transactions with one or more NACKs}";
}

TEST_F(NumachineTest, EventBIsTheLatencyOfTheMostRecentRequest) {  // 004 Table 4.5 row B, 4.4.4 "Third"
  gpcm(0, kEn | ev(0xB));
  enable_gpcs();
  miss(0x100, 300);
  EXPECT_EQ(m.gpc(0), 300u);
  m.tick(50);
  miss(0x100, 77, true);
  EXPECT_EQ(m.gpc(0), 77u) << "reset every time a request is issued, stopped at the response";
  m.ownership_miss(12, false, std::nullopt);
  EXPECT_EQ(m.gpc(0), 12u);
}

TEST_F(NumachineTest, EventCBusActivityAndTransactions) {  // 004 Table 4.5 row C, 4.4.4 "Fourth"
  gpcm(0, kEn | ev(0xC));
  gpcm(1, kEn | ev(0xC) | kEdge);
  enable_gpcs();
  m.packet(true, cmd::kWriteBack, 0x10);
  m.packet(true, cmd::kWriteBack, 0x20);  // contiguous: one transaction of two packets
  m.tick(5);
  miss(0x30, 20);
  EXPECT_EQ(m.gpc(0), 8u) << "every cycle the bus is used";
  EXPECT_EQ(m.gpc(1), 3u) << "transitions: one per transaction (contiguous packets, then request, response)";
}

TEST_F(NumachineTest, EventDBusRequestLatency) {  // 004 Table 4.5 row D
  gpcm(0, kEn | ev(0xD));
  gpcm(1, kEn | ev(0xD) | kEdge);
  enable_gpcs();
  m.bus_request(12);
  m.tick(1);
  m.bus_request(3);
  EXPECT_EQ(m.gpc(0), 15u);
  EXPECT_EQ(m.gpc(1), 2u);
}

TEST_F(NumachineTest, EventsEAndFInvalidations) {  // 004 Table 4.5 rows E, F; Figure 4.8 (ERRATUM E91)
  gpcm(0, kEn | ev(0xE));
  gpcm(1, kEn | ev(0xF) | kEdge);
  gpcm(2, kEn | ev(0xF));
  enable_gpcs();
  m.inval_hit(0x40);
  m.inval_hit(std::nullopt);
  miss(0x80, 30);  // not an invalidation miss
  m.inval_miss();
  miss(0x80, 44);
  EXPECT_EQ(m.gpc(0), 2u);
  EXPECT_EQ(m.gpc(1), 1u);
  EXPECT_EQ(m.gpc(2), 44u);
  EXPECT_EQ(m.mtr(), static_cast<std::uint8_t>(MissType::Invalidation)) << "Table 4.8 value 2";
}

// ---- 004 4.3.3: counters ----
TEST_F(NumachineTest, NegativePreloadInterruptsAfterExactlyNEvents) {  // 004 4.3.3
  gpcm(0, kEn | kIrq | ev(4) | kEdge);
  m.write(kGpcBase, static_cast<std::uint32_t>(-3));
  enable_gpcs();
  miss(0x1, 20);
  miss(0x2, 20);
  EXPECT_TRUE(m.irqs.empty());
  const std::uint64_t t = m.now();
  miss(0x3, 20);
  ASSERT_EQ(m.irqs.size(), 1u);
  EXPECT_EQ(m.irqs[0].cycle, t) << "at the third miss's request";
  EXPECT_EQ(m.irqs[0].gpc, 0);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "irq @" + std::to_string(t) + " GPC0");
  EXPECT_EQ(m.gpc(0), 0u);
}

TEST_F(NumachineTest, OverflowCycleIsExactInsideALongSegment) {  // 004 4.3.3 "interrupt on overflow"
  gpcm(1, kEn | kIrq | ev(1));
  m.write(kGpcBase + 1, 0xffffff00);
  const std::uint64_t t = m.now();
  enable_gpcs();  // acts at cycle t, then 2 cycles
  m.tick(1000);
  ASSERT_EQ(m.irqs.size(), 1u);
  EXPECT_EQ(m.irqs[0].cycle, t + 0xff) << "the 256th counted cycle wraps the counter";
  EXPECT_EQ(m.gpc(1), 1002u - 256u);
}

TEST_F(NumachineTest, CycleCounterOverflowsEveryOnePointFourMinutes) {  // 004 4.3.3 footnote 1
  gpcm(0, kEn | kIrq | ev(1));
  const std::uint64_t t = m.now();
  enable_gpcs();
  m.tick(std::uint64_t{1} << 33);
  ASSERT_EQ(m.irqs.size(), 1u);
  const double seconds = static_cast<double>(m.irqs[0].cycle - t + 1) / static_cast<double>(kCardHz);
  EXPECT_NEAR(seconds / 60.0, 1.4, 0.05) << "2^32 cycles at 50 MHz: 85.9 s";
}

TEST_F(NumachineTest, NoInterruptWithoutBit15) {  // 004 Table 4.4 GPCM bit 15
  gpcm(0, kEn | ev(1));
  m.write(kGpcBase, 0xfffffff0);
  enable_gpcs();
  m.tick(100);
  EXPECT_TRUE(m.irqs.empty());
  EXPECT_EQ(m.gpc(0), 102u - 16u);
}

TEST_F(NumachineTest, PendingInterruptIsRaisedOnceUntilAcknowledged) {  // ERRATUM E90
  gpcm(0, kEn | kIrq | ev(1));
  m.write(kGpcBase, 0xffffff00);
  enable_gpcs();
  m.tick(std::uint64_t{3} << 32);  // three more wraps
  EXPECT_EQ(m.irqs.size(), 1u);
  (void)m.read(kGpcBase);  // acknowledges
  m.tick(std::uint64_t{1} << 32);
  EXPECT_EQ(m.irqs.size(), 2u);
}

TEST_F(NumachineTest, ReadFromTheResetAddressClears) {  // 004 4.3.3: "automatically reset if read from a specific address"
  gpcm(2, kEn | ev(1));
  enable_gpcs();
  m.tick(98);
  EXPECT_EQ(m.read(kGpcBase + 2), 100u) << "a normal read does not clear";
  EXPECT_EQ(m.read(kGpcResetBase + 2), 102u);
  EXPECT_EQ(m.gpc(2), 2u) << "cleared, then the access's own two cycles";
}

TEST_F(NumachineTest, CounterEnableBit23AndMasterEnableGpce) {  // 004 4.4.4 bit 23; 4.4.6
  gpcm(0, ev(1));
  gpcm(1, kEn | ev(1));
  m.tick(10);
  EXPECT_EQ(m.gpc(1), 0u) << "GPCE off";
  enable_gpcs();
  m.tick(10);
  EXPECT_EQ(m.gpc(0), 0u) << "bit 23 off";
  EXPECT_EQ(m.gpc(1), 12u);
  w(Reg::GPCE, 0);
  m.tick(10);
  EXPECT_EQ(m.gpc(1), 12u) << "stopped without changing the configuration";
}

// ---- 004 4.4.1-4.4.4, Figure 4.7: the count-enable circuit ----
TEST_F(NumachineTest, PhaseIdWatchEnablesOnePhase) {  // 004 4.4.1
  w(Reg::PW, 7);
  gpcm(0, kEn | ev(4) | kEdge | kPwEn);
  gpcm(1, kEn | ev(4) | kEdge | kPwEn | kPwInv);
  enable_gpcs();
  miss(0x1, 20);
  w(Reg::PR, 7);
  miss(0x2, 20);
  miss(0x3, 20);
  w(Reg::PR, 8);
  miss(0x4, 20);
  EXPECT_EQ(m.gpc(0), 2u);
  EXPECT_EQ(m.gpc(1), 2u);
}

TEST_F(NumachineTest, CommandWatchAndFilterMergeReadAndReadExclusiveResponses) {  // 004 4.4.2
  // Responses to reads and read-exclusives differ in command bit 1 only (ERRATUM E84): filter it out.
  w(Reg::CF, cmd::kMask & ~2u);
  w(Reg::CW, cmd::kResponse | cmd::kRead);
  gpcm(0, kEn | ev(0xC) | kEdge | kCwEn);
  enable_gpcs();
  miss(0x1, 20);
  miss(0x2, 20, true);
  m.ownership_miss(20, false, std::nullopt);
  m.packet(false, cmd::kResponse | cmd::kRead, 0x5);
  EXPECT_EQ(m.gpc(0), 3u);
  EXPECT_EQ(m.cr(), cmd::kResponse | cmd::kRead) << "CR holds the last packet's command";
}

TEST_F(NumachineTest, AddressWatchOnAnAlignedRegion) {  // 004 4.4.3
  m.write_doubleword(static_cast<std::uint32_t>(Reg::AFhi), 0xff'fff00000);
  m.write_doubleword(static_cast<std::uint32_t>(Reg::AWhi), 0x00'40000000);
  gpcm(0, kEn | ev(6) | kEdge | kAwEn);
  gpcm(1, kEn | ev(6) | kEdge | kAwEn | kAwInv);
  enable_gpcs();
  miss(0x0040000000, 20);
  miss(0x00400fffff, 20);
  miss(0x0040100000, 20);
  miss(0x1040000000, 20);
  EXPECT_EQ(m.gpc(0), 2u);
  EXPECT_EQ(m.gpc(1), 2u);
  EXPECT_EQ(m.ar(), 0x1040000000u) << "AR: the most recent physical address";
}

TEST_F(NumachineTest, ComparatorsAreAndedAndInvertsGiveOr) {  // 004 4.4.4: compound conditions
  w(Reg::PW, 1);
  w(Reg::CF, cmd::kMask);
  w(Reg::CW, cmd::kWriteBack);
  // AND: phase 1 and a write-back.
  gpcm(0, kEn | ev(0xC) | kEdge | kPwEn | kCwEn);
  // Both terms inverted: neither phase 1 nor a write-back, the complement of their OR (De Morgan).
  gpcm(1, kEn | ev(0xC) | kEdge | kPwEn | kPwInv | kCwEn | kCwInv);
  enable_gpcs();
  m.packet(true, cmd::kWriteBack, 1);  // phase 0, a write-back: neither
  m.tick(2);
  m.packet(true, cmd::kRead, 1);       // phase 0, not a write-back: counter 1
  m.tick(2);
  w(Reg::PR, 1);
  m.packet(true, cmd::kWriteBack, 1);  // both: counter 0
  m.tick(2);
  m.packet(true, cmd::kRead, 1);       // phase 1 only: neither
  EXPECT_EQ(m.gpc(0), 1u);
  EXPECT_EQ(m.gpc(1), 1u);
}

TEST_F(NumachineTest, SendingAndReceivingMasks) {  // 004 4.4.4: "enabled while transactions are sent or received (or both)"
  gpcm(0, kEn | ev(0xC) | kMaskEn | kSm);
  gpcm(1, kEn | ev(0xC) | kMaskEn | kRm);
  gpcm(2, kEn | ev(0xC) | kMaskEn | kSm | kRm);
  gpcm(3, kEn | ev(1) | kMaskEn | kMaskInv | kSm | kRm);  // inverted: cycles with no packet
  enable_gpcs();
  const std::uint64_t t0 = m.now();
  miss(0x1, 30);
  m.packet(true, cmd::kWriteBack, 2);
  EXPECT_EQ(m.gpc(0), 4u);
  EXPECT_EQ(m.gpc(1), 2u);
  EXPECT_EQ(m.gpc(2), 6u);
  EXPECT_EQ(m.gpc(3), (m.now() - t0) - 6 + 2) << "plus the GPCE write's own two cycles";
}

TEST_F(NumachineTest, EdgeBitCountsLowToHighTransitions) {  // 004 4.4.4 bit 10
  gpcm(0, kEn | ev(1) | kEdge);
  enable_gpcs();
  m.tick(1000);
  EXPECT_EQ(m.gpc(0), 1u) << "'always' rises once";
}

}  // namespace
}  // namespace kron::numachine::test
