// MultiKron II sampling: Table B3a row by row, the filter, sample contents and error flags.
// Sources: 000 SAMPLING, Filter Register, Source Address Registers, High Order 32 Bit Register,
// "Overruns and Waits on Resource Counter Use", Tables B2, B3a, B4.
#include "mk2_fixture.hpp"

namespace kron::mk2::test {
namespace {

using Sampling = Mk2Test;

// ---- 000 Table B3a, one vector per row ("T or R" rows once for each type) --------------------------
enum class Res : std::uint8_t { Avail, Full };
struct B3aRow {
  int row;          // 1-12, top to bottom
  bool wait;        // CSR "Wait on Overrun" control bit
  bool resource;    // the sample under test: T or R
  Res fifo, shadow; // state when it is triggered
  bool fifo_flag, shadow_flag;  // "Overrun Error Bit set in next Sample Header"
  bool incr;        // Overrun counter: Incr / NOP
  bool cnt;         // Wait counter: CNT / NOP
};
constexpr Res A = Res::Avail, F = Res::Full;
const B3aRow kTableB3a[] = {
    {1, true, false, A, A, false, false, false, false},  {1, true, true, A, A, false, false, false, false},
    {2, true, false, A, F, false, false, false, false},  {3, true, true, A, F, false, false, false, true},
    {4, true, false, F, A, false, false, false, true},   {4, true, true, F, A, false, false, false, true},
    {5, true, false, F, F, false, false, false, true},   {6, true, true, F, F, false, false, false, true},
    {7, false, false, A, A, false, false, false, false}, {7, false, true, A, A, false, false, false, false},
    {8, false, false, A, F, false, false, false, false}, {9, false, true, A, F, false, true, true, false},
    {10, false, false, F, A, true, false, true, false},  {10, false, true, F, A, true, false, true, false},
    {11, false, false, F, F, true, false, true, false},  {12, false, true, F, F, true, true, true, false},
};

class TableB3a : public Mk2Test, public ::testing::WithParamInterface<B3aRow> {
 protected:
  // Brings the FIFO and shadow registers into the row's state with NETRDY high: a Resource sample makes
  // the shadow registers busy for its 84 bytes; its FIFO level frees after 20 bytes; four samples in a
  // row fill the FIFO (kFifoDepth, ERRATUM E5) while the first is still going out.
  void set_state(Res fifo, Res shadow) {
    if (shadow == Res::Full) {
      chip.write(kResource, 0xa);
      if (fifo == Res::Avail) chip.tick(2 * kTraceBytes + 4);  // its trace part has left the FIFO
    }
    if (fifo == Res::Full)
      while (!csr_bit(csr::kFifoFull)) chip.write(kTrace, 0xb);
    ASSERT_EQ(csr_bit(csr::kFifoFull), fifo == Res::Full);
    ASSERT_EQ(csr_bit(csr::kShadowFull), shadow == Res::Full);
  }
};

TEST_P(TableB3a, Row) {
  const B3aRow& r = GetParam();
  SCOPED_TRACE("000 Table B3a, row " + std::to_string(r.row) + (r.resource ? " (R)" : " (T)"));
  sampling_on(r.wait ? 1u << csr::kWaitOnOverrun : 1u << 3);
  set_state(r.fifo, r.shadow);
  const std::size_t sent_before = out.size();
  const std::uint64_t t0 = chip.now();
  chip.write(r.resource ? kResource + 1 : kTrace + 1, 0x5a5a);  // the sample under test, user data 0x5a5a
  const std::uint64_t held = chip.now() - t0 - chip.access_clocks();

  // Wait counter: CNT counts exactly the node clocks the processor was held; NOP none.
  EXPECT_EQ(low32(kWait), held);
  EXPECT_EQ(held > 0, r.cnt);
  // Overrun counter: Incr / NOP.
  EXPECT_EQ(low32(kOverrun), r.incr ? 1u : 0u);
  // Error flags wait in the CSR (ERRATUM E11) for the next successful sample.
  EXPECT_EQ(csr_bit(csr::kFifoOverrun), r.fifo_flag);
  EXPECT_EQ(csr_bit(csr::kShadowOverrun), r.shadow_flag);

  chip.drain();
  chip.write(kTrace + 2, 0xc0de);  // the next successful sample
  chip.drain();
  const bool discarded = r.incr;
  std::vector<Out> after(out.begin() + static_cast<std::ptrdiff_t>(sent_before), out.end());
  // "Data taken" (immediately or after the wait) or "Data Discarded".
  const auto taken = std::count_if(after.begin(), after.end(), [](const Out& o) { return o.sample.data == 0x5a5a; });
  EXPECT_EQ(taken, discarded ? 0 : 1);
  ASSERT_FALSE(after.empty());
  const Sample& next = after.back().sample;
  ASSERT_EQ(next.data, 0xc0deu);
  EXPECT_EQ(bool(next.flags & kFlagFifoOverrun), r.fifo_flag);
  EXPECT_EQ(bool(next.flags & kFlagShadowOverrun), r.shadow_flag);
  // "reset by next successful sample"
  EXPECT_FALSE(csr_bit(csr::kFifoOverrun));
  EXPECT_FALSE(csr_bit(csr::kShadowOverrun));
  for (const Out& o : after)
    if (o.sample.data == 0x5a5a) {
      EXPECT_EQ(o.sample.flags, 0) << "the sample under test carries no earlier loss";
      EXPECT_EQ(o.sample.type, r.resource ? SampleType::Resource : SampleType::Trace);
      // Taken when the wait ends: its timestamp is the timestamp clock at that node clock (ERRATUM E7).
      EXPECT_EQ(o.sample.timestamp, (t0 + 1 + held) / 5);
    }
}
INSTANTIATE_TEST_SUITE_P(Rows, TableB3a, ::testing::ValuesIn(kTableB3a), [](const auto& p) {
  return "Row" + std::to_string(p.param.row) + (p.param.resource ? "R" : "T");
});

// 000 Table B3a rows 3-6 and Wait Error Counter: with NETRDY low the wait would never end; the model says
// so instead of hanging (ERRATUM E17).
TEST_F(Sampling, EndlessWaitReportedE17) {
  sampling_on(1u << csr::kWaitOnOverrun);
  chip.set_net_ready(false);
  for (unsigned i = 0; i < kFifoDepth; ++i) chip.write(kTrace, i);
  EXPECT_THROW(chip.write(kTrace, 9), sim::HangError);
}

// Two lost samples in a row: the flags stay set and the Overrun counter counts each (000 Overrun Error
// Counter "tallies the number of times a sample has failed to be taken").
TEST_F(Sampling, OverrunCountsEveryLostSample) {
  sampling_on();
  chip.set_net_ready(false);
  for (unsigned i = 0; i < kFifoDepth + 3; ++i) chip.write(kTrace, i);
  EXPECT_EQ(low32(kOverrun), 3u);
  chip.set_net_ready(true);
  chip.drain();
  chip.write(kTrace, 99);
  chip.drain();
  ASSERT_EQ(out.size(), kFifoDepth + 1);
  for (unsigned i = 0; i < kFifoDepth; ++i) EXPECT_EQ(out[i].sample.flags, 0);
  EXPECT_EQ(out.back().sample.flags, kFlagFifoOverrun);
}

// 000 Filter Register / SAMPLING: the low four address bits choose the filter level; a disabled level
// takes no sample but the write is acknowledged normally (same access time).
TEST_F(Sampling, FilterLevelFromLowAddressBits) {
  chip.write(kCsr, 1);
  chip.write(kFilter, 1u << 5 | 1u << 12);
  for (unsigned level = 0; level < 16; ++level) {
    const std::uint64_t t = chip.now();
    chip.write(kTrace + level, level);
    EXPECT_EQ(chip.now() - t, chip.access_clocks());
    chip.write(kResource + level, 100 + level);
    chip.drain();
  }
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].sample.data, 5u);
  EXPECT_EQ(out[1].sample.data, 105u);
  EXPECT_EQ(out[2].sample.data, 12u);
  EXPECT_EQ(out[3].sample.data, 112u);
  EXPECT_EQ(low32(kOverrun), 0u) << "a filtered trigger is not an overrun";
}

// 000 Table B1 bit 1: "Disable Sampling (default on reset)".
TEST_F(Sampling, NoSampleWhileSamplingDisabled) {
  chip.write(kFilter, 0xffff);
  chip.write(kTrace, 1);
  chip.drain();
  EXPECT_TRUE(out.empty());
  chip.write(kCsr, 1);
  chip.write(kTrace, 2);
  chip.write(kCsr, 2);
  chip.write(kTrace, 3);
  chip.drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].sample.data, 2u);
}

// 000 Table B2 and SAMPLING: header (CPU ID encoded, type 10 = Trace / 11 = Resource, ERRATUM E1),
// timestamp, the Source Address Register of the active CPU ID line, 64 bits of user data, and for a
// Resource sample the sixteen counters at the instant of the sample.
TEST_F(Sampling, SampleContentsTableB2) {
  sampling_on();
  for (unsigned i = 0; i < 8; ++i) chip.write(kSource + i, 0x0100'0000u * i + 0x2a);
  chip.write(kCounter + 3, 333);
  chip.set_cpu(6);
  chip.write(kTrace + 7, 0x0123'4567'89ab'cdef);
  chip.set_cpu(2);
  chip.write(kResource, 0xfedc'ba98'7654'3210);
  chip.drain();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].bytes.size(), 20u);
  EXPECT_EQ(out[0].bytes[0], 0b110'10'0'0'0);  // CPU 6, Trace, no flags, N/A 0 (ERRATUM E9)
  EXPECT_EQ(out[0].sample.source, 0x0600'002au);
  EXPECT_EQ(out[0].sample.data, 0x0123'4567'89ab'cdefu);
  EXPECT_EQ(out[1].bytes.size(), 84u);
  EXPECT_EQ(out[1].bytes[0], 0b010'11'0'0'0);  // CPU 2, Resource
  EXPECT_EQ(out[1].sample.source, 0x0200'002au);
  EXPECT_EQ(out[1].sample.data, 0xfedc'ba98'7654'3210u);
  EXPECT_EQ(out[1].sample.counters[3], 333u);
  EXPECT_EQ(out[1].sample.counters[4], 0u);
}

// 000 High Order 32 Bit Register: in 32 bit mode a sample's user data bits 32-63 come from the register.
TEST_F(Sampling, UserDataIn32BitMode) {
  sampling_on(1u << csr::kMode32);
  chip.write(kHighOrder, 0xcafe'f00d);
  chip.write(kTrace, 0xffff'ffff'1234'5678);
  chip.drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].sample.data, 0xcafe'f00d'1234'5678u);
}

// 000 TEST MODE: FIFO groups A-E readable "at any time", most significant first; test-mode writes at
// 25-29 duplicate 32 bits in each group; "FIFO shifting is a separate processor command in test mode"
// (address 21). ERRATUM E6: the data's least significant bit becomes the 161st bit (CSR bit 10).
TEST_F(Sampling, FifoGroupsAndTestWrites) {
  sampling_on();
  chip.set_net_ready(false);
  chip.write(kSource, 0x0a0b'0c0d);
  chip.write(kTrace, 0x1111'2222'3333'4444);
  EXPECT_EQ(low32(kFifoA) >> 24, 0b000'10'0'0'0u) << "group A starts with the header";
  EXPECT_EQ(low32(kFifoA + 2), 0x0a0b'0c0du) << "group C: source";
  EXPECT_EQ(low32(kFifoA + 3), 0x1111'2222u) << "group D: data high";
  EXPECT_EQ(low32(kFifoA + 4), 0x3333'4444u) << "group E: data low";
  EXPECT_FALSE(csr_bit(csr::kFifoBit161));
  chip.write(kFifoA, 0x55aa'55aa);  // outside test mode: nothing
  chip.set_test_mode(true);
  chip.write(kAdvance, 0);  // the trace sample leaves without being sent
  EXPECT_EQ(low32(kFifoA), 0u) << "empty FIFO reads 0 (ERRATUM E6)";
  chip.write(kFifoA + 3, 0x5a5a'a5a5);
  for (unsigned g = 0; g < kFifoGroups; ++g) EXPECT_EQ(low32(kFifoA + g), 0x5a5a'a5a5u);
  EXPECT_TRUE(csr_bit(csr::kFifoBit161));
  chip.write(kAdvance, 0);
  EXPECT_FALSE(csr_bit(csr::kFifoBit161));
  chip.set_net_ready(true);
  chip.drain();
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace kron::mk2::test
