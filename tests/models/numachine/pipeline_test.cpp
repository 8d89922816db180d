// 004 4.3.2 and Tables 4.2, 4.3: pipeline-status counting through the hidden 2-bit accumulator, in the
// single-event, running-cycles and idle-cycles modes (pipeline state numbers: ERRATUM E86).
#include "numachine_fixture.hpp"

namespace kron::numachine::test {
namespace {

constexpr unsigned kLoad = 1, kStore = 2, kTaken = 3, kNotTaken = 4, kInt = 5, kFp = 6, kICache = 7, kDCache = 8,
                   kSCache = 9, kMp = 10, kOther = 11, kKillEx = 12, kKillBr = 13, kIntSlip = 14, kFpSlip = 15;

// ---- Table 4.2 (PS[6..5]) and Table 4.3 (PS[4..0]) as a truth table ----
TEST(PipelineSelect, SingleEventModeUsesPs3To0) {  // 004 Table 4.2 row 1, Table 4.3 "Single Events"
  for (unsigned s = 1; s < 16; ++s) {
    EXPECT_TRUE(ps_selects(static_cast<std::uint8_t>(s), s));
    EXPECT_TRUE(ps_selects(static_cast<std::uint8_t>(0x20 | s), s)) << "PS[5] 0 or 1";
    EXPECT_FALSE(ps_selects(static_cast<std::uint8_t>(s), s == 15 ? 1 : s + 1));
  }
  EXPECT_FALSE(ps_selects(0, 0)) << "state 0 is no event";
}

TEST(PipelineSelect, RunningCyclesMergeTable43Column2) {  // 004 Table 4.2 row 2, Table 4.3 "Running Cycles"
  const std::uint8_t running = 0x40;
  EXPECT_TRUE(ps_selects(running | 1, kLoad));
  EXPECT_TRUE(ps_selects(running | 1, kStore));        // PS[0]: load + store
  EXPECT_TRUE(ps_selects(running | 2, kTaken));
  EXPECT_TRUE(ps_selects(running | 2, kNotTaken));     // PS[1]: taken + not-taken branches
  EXPECT_TRUE(ps_selects(running | 4, kInt));
  EXPECT_TRUE(ps_selects(running | 4, kFp));           // PS[2]: other integer + floating point
  EXPECT_FALSE(ps_selects(running | 0x1f, kICache)) << "no idle state while counting running cycles";
  EXPECT_FALSE(ps_selects(running | 1, kTaken));
}

TEST(PipelineSelect, IdleCyclesMergeTable43Column3) {  // 004 Table 4.2 row 3, Table 4.3 "Idle Cycles"
  const std::uint8_t idle = 0x60;
  EXPECT_TRUE(ps_selects(idle | 1, kICache) && ps_selects(idle | 1, kDCache));     // PS[0]
  EXPECT_TRUE(ps_selects(idle | 2, kSCache));                                       // PS[1]
  EXPECT_TRUE(ps_selects(idle | 4, kMp) && ps_selects(idle | 4, kOther));           // PS[2]
  EXPECT_TRUE(ps_selects(idle | 8, kKillEx) && ps_selects(idle | 8, kKillBr));      // PS[3]
  EXPECT_TRUE(ps_selects(idle | 16, kIntSlip) && ps_selects(idle | 16, kFpSlip));   // PS[4]
  for (unsigned s = kLoad; s <= kFp; ++s) EXPECT_FALSE(ps_selects(idle | 0x1f, s));
}

TEST(PipelineSelect, FifteenNamedStates) {  // ERRATUM E86: Table 2.3 is not in 004
  EXPECT_EQ(pipeline_state("load"), kLoad);
  EXPECT_EQ(pipeline_state("fp-slip"), kFpSlip);
  EXPECT_EQ(pipeline_state("12"), kKillEx);
  EXPECT_FALSE(pipeline_state("16"));
  EXPECT_FALSE(pipeline_state("nap"));
}

// ---- 004 4.3.2: "the general-purpose counters are only incremented after every fourth event" ----
TEST_F(NumachineTest, CounterAdvancesOnEveryFourthEvent) {
  gpcm(0, kEn | ps(kLoad) | ev(2));
  enable_gpcs();
  m.pipeline(kLoad, kLoad);
  EXPECT_EQ(m.gpc(0), 0u);
  m.pipeline(kLoad, 0);
  EXPECT_EQ(m.gpc(0), 0u) << "three events";
  m.pipeline(0, kLoad);
  EXPECT_EQ(m.gpc(0), 1u) << "the fourth";
  for (int i = 0; i < 10; ++i) m.pipeline(kLoad, kLoad);  // 20 more: 24 in all
  EXPECT_EQ(m.gpc(0), 6u);
  m.pipeline(kLoad, kStore);
  EXPECT_EQ(m.gpc(0), 6u) << "25: the accumulator holds the remainder";
}

TEST_F(NumachineTest, EachCounterHasItsOwnSelection) {  // 004 4.3.2: PS[6..0] "for each general-purpose counter"
  gpcm(0, kEn | ps(0x40 | 1) | ev(2));  // running: loads + stores
  gpcm(1, kEn | ps(0x60 | 3) | ev(2));  // idle: primary + secondary cache stalls
  gpcm(2, kEn | ps(kFp) | ev(2));       // single: floating point
  enable_gpcs();
  for (int i = 0; i < 8; ++i) m.pipeline(kLoad, kStore);     // 16 running
  for (int i = 0; i < 4; ++i) m.pipeline(kSCache, kDCache);  // 8 idle
  for (int i = 0; i < 2; ++i) m.pipeline(kFp, kFp);          // 4 fp
  EXPECT_EQ(m.gpc(0), 4u);
  EXPECT_EQ(m.gpc(1), 2u);
  EXPECT_EQ(m.gpc(2), 1u);
}

TEST_F(NumachineTest, ThreePipelineCyclesAreTwoCardCycles) {  // 004 4.2: 75 MHz against the 50 MHz card
  const std::uint64_t t = m.now();
  for (int i = 0; i < 300; ++i) m.pipeline(0, 0);
  EXPECT_EQ(m.now() - t, 200u);
}

TEST_F(NumachineTest, PipelineCountsNeedTheCountEnable) {  // 004 4.4.4: the count-enable gates every event
  w(Reg::PW, 5);
  gpcm(0, kEn | ps(kLoad) | ev(2) | kPwEn);
  enable_gpcs();
  for (int i = 0; i < 4; ++i) m.pipeline(kLoad, kLoad);
  EXPECT_EQ(m.gpc(0), 0u);
  w(Reg::PR, 5);
  for (int i = 0; i < 4; ++i) m.pipeline(kLoad, kLoad);
  EXPECT_EQ(m.gpc(0), 2u);
}

}  // namespace
}  // namespace kron::numachine::test
