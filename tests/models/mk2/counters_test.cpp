// MultiKron II Resource Counters: sources (Table B5), clocks (Table B6), enables (Table B7), double
// precision, saturation, processor access and Table B3b.
// Sources: 000 RESOURCE COUNTERS and its subsections, Appendix A "Resource Counters", Tables B3b, B5-B7.
#include "mk2_fixture.hpp"

namespace kron::mk2::test {
namespace {

// One 4-bit field value in counter j's position of a control register.
constexpr std::uint64_t fld(unsigned j, unsigned code) { return std::uint64_t{code} << (4 * j); }

class Counters : public Mk2Test {
 protected:
  // A read-without-copy after one read-with-copy: all sixteen counters at one instant (000).
  std::uint32_t counter(unsigned j) {
    chip.read(kCounter + j);
    return static_cast<std::uint32_t>(chip.read(kIncrement + j));
  }
};

// ---- Table B6: the clocks a CLK counter counts -------------------------------------------------------
// With node 50 MHz and ts 10 MHz every clock is the node clock divided: by 1, 10, 100, or 5 (the timestamp
// clock, ERRATUM E19). A counter enabled at node clock a and disabled at b counts the edges in (a, b].
struct ClockRow {
  unsigned code;
  std::uint64_t divisor;
};
class ClockSelect : public Counters, public ::testing::WithParamInterface<ClockRow> {};
TEST_P(ClockSelect, TableB6Row) {
  SCOPED_TRACE("000 Table B6, code " + std::to_string(GetParam().code));
  const std::uint64_t d = GetParam().divisor;
  chip.write(kMode, fld(0, 1));                    // Table B5 x001 CLK
  chip.write(kClock, fld(0, GetParam().code));
  chip.tick(1234);
  chip.write(kEnable, fld(0, 3));                  // Table B7 xx11 Reset & Enable
  const std::uint64_t a = chip.now() - 1;          // acts at its ACKB clock (ERRATUM E7)
  chip.tick(9876);
  chip.write(kEnable, fld(0, 1));                  // xx01 Disable
  const std::uint64_t b = chip.now() - 1;
  EXPECT_EQ(low32(kCounter), b / d - a / d) << "peek shows the live counter";
  chip.tick(1000);
  EXPECT_EQ(counter(0), b / d - a / d) << "disabled: no more counts";
}
INSTANTIATE_TEST_SUITE_P(Codes, ClockSelect,
                         ::testing::Values(ClockRow{1, 1}, ClockRow{2, 10}, ClockRow{3, 100}, ClockRow{4, 5},
                                           ClockRow{5, 1}, ClockRow{6, 10}, ClockRow{7, 100}, ClockRow{0xc, 5}),
                         [](const auto& p) { return "Code" + std::to_string(p.param.code); });

// ---- Table B5: counting sources, one vector per encoding -----------------------------------------------
// The same stimulus for each Mode code of counter 3 (clock: node): three software increments, X3 high
// for 50 node clocks, then one more rising edge with no clock while high; the count tells the source.
struct ModeRow {
  unsigned code;
  const char* row;
  std::uint64_t count;  // kAllClocks: every node clock from the enable to the copy
};
constexpr std::uint64_t kAllClocks = ~std::uint64_t{0};
class ModeEncoding : public Counters, public ::testing::WithParamInterface<ModeRow> {};
TEST_P(ModeEncoding, TableB5Row) {
  SCOPED_TRACE(std::string("000 Table B5 row ") + GetParam().row);
  chip.write(kClock, fld(3, 1));
  chip.write(kMode, fld(3, GetParam().code));
  chip.write(kEnable, fld(3, 3));
  const std::uint64_t enabled_at = chip.now() - 1;  // ACKB clock of the enable (ERRATUM E7)
  for (int i = 0; i < 3; ++i) chip.write(kIncrement + 3, 0);
  chip.set_external(3, true);
  chip.tick(50);
  chip.set_external(3, false);
  chip.set_external(3, true);
  chip.set_external(3, false);
  chip.tick(100);
  const std::uint64_t copied_at = chip.now() + 1;   // ACKB clock of the read-with-copy
  const std::uint64_t want = GetParam().count == kAllClocks ? copied_at - enabled_at : GetParam().count;
  EXPECT_EQ(chip.read(kCounter + 3) & 0xffff'ffff, want);
}
INSTANTIATE_TEST_SUITE_P(
    Codes, ModeEncoding,
    ::testing::Values(ModeRow{0x0, "x000 NOP (the reset setting x100 External stays)", 2},
                      ModeRow{0x8, "x000 NOP, precision bit set (ERRATUM E13)", 2},
                      ModeRow{0x1, "x001 CLK", kAllClocks}, ModeRow{0x2, "x010 Software", 3},
                      ModeRow{0x3, "x011 External Enable", 50}, ModeRow{0x4, "x100 External Signal", 2},
                      ModeRow{0x5, "x101 (same as CLK)", kAllClocks}, ModeRow{0x6, "x110 (same as Software)", 3},
                      ModeRow{0x7, "x111 (same as External Enable)", 50}),
    [](const auto& p) { return "Code" + std::to_string(p.param.code); });

// ---- Table B5: counting sources ----------------------------------------------------------------------
// x010 Software: "Writing to a Resource Counter's increment address (address 80-95) will cause the
// corresponding Resource Counter to be incremented, if the 'software increment' option is selected".
TEST_F(Counters, SoftwareSourceTableB5) {
  chip.write(kMode, fld(2, 2) | fld(3, 6));  // counter 2 x010, counter 3 x110 (same as Software)
  chip.write(kEnable, fld(2, 2) | fld(3, 2));
  for (int i = 0; i < 5; ++i) chip.write(kIncrement + 2, 0);
  chip.write(kIncrement + 3, 0);
  chip.write(kIncrement + 4, 0);  // counter 4: External source, not incremented by software
  chip.tick(1000);
  EXPECT_EQ(counter(2), 5u);
  EXPECT_EQ(counter(3), 1u);
  EXPECT_EQ(counter(4), 0u);
  chip.write(kEnable, fld(2, 1));  // ERRATUM E18: a disabled counter ignores software increments
  chip.write(kIncrement + 2, 0);
  EXPECT_EQ(counter(2), 5u);
}

// x100 External Signal: "Count external signals, low to high" (the reset default source).
TEST_F(Counters, ExternalRisingEdgesTableB5) {
  chip.write(kEnable, fld(7, 2));
  for (int i = 0; i < 3; ++i) {
    chip.set_external(7, true);
    chip.tick(3);
    chip.set_external(7, true);  // still high: no edge
    chip.set_external(7, false);
  }
  EXPECT_EQ(counter(7), 3u);
}

// x011 External Enable: "Count internal Clks only when the External signal is active high".
TEST_F(Counters, ExternalEnableGatesClockTableB5) {
  chip.write(kMode, fld(1, 3));
  chip.write(kClock, fld(1, 1));  // node clock
  chip.write(kEnable, fld(1, 2));
  chip.tick(100);
  chip.set_external(1, true);
  chip.tick(250);
  chip.set_external(1, false);
  chip.tick(100);
  EXPECT_EQ(counter(1), 250u);
}

// ---- Table B7 -------------------------------------------------------------------------------------------
// xx01 Disable, xx10 Enable (previous contents intact), xx11 Reset & Enable (000 Enable Register).
TEST_F(Counters, EnableCodesTableB7) {
  chip.write(kMode, fld(5, 2));
  chip.write(kEnable, fld(5, 2));
  chip.write(kIncrement + 5, 0);
  chip.write(kIncrement + 5, 0);
  chip.write(kEnable, fld(5, 1));
  chip.write(kIncrement + 5, 0);
  EXPECT_EQ(counter(5), 2u);
  chip.write(kEnable, fld(5, 0xa));  // x-bits ignored: Enable
  chip.write(kIncrement + 5, 0);
  EXPECT_EQ(counter(5), 3u) << "enable keeps the previous contents";
  chip.write(kEnable, fld(5, 3));
  chip.write(kIncrement + 5, 0);
  EXPECT_EQ(counter(5), 1u) << "reset & enable";
}

// ---- double precision, saturation, processor writes ------------------------------------------------------
// Table B5 1xxx "Double precision (This setting applies only to EVEN Resource Counters, ODD Counters use
// the value from their EVEN pair)"; 000 "Each even/odd address pair ... a single 64 bit Resource Counter".
// ERRATUM E8: low half in the even counter; the even counter's fields and input drive the pair.
TEST_F(Counters, DoublePrecisionPairTableB5) {
  chip.write(kMode, fld(8, 0xa) | fld(9, 1));  // counter 8: double precision, Software; 9's field ignored
  chip.write(kEnable, fld(8, 2));
  chip.write(kCounter + 8, 0xffff'fffe);
  chip.write(kCounter + 9, 0x0000'0007);
  for (int i = 0; i < 3; ++i) chip.write(kIncrement + 8, 0);
  chip.write(kIncrement + 9, 0);  // the odd increment address increments the pair too
  EXPECT_EQ(counter(8), 0x0000'0002u);
  EXPECT_EQ(counter(9), 0x0000'0008u);
  chip.write(kMode, fld(9, 0x9));  // the precision bit of an odd field does nothing
  chip.write(kMode, fld(8, 0x2));  // single precision again: two 32-bit counters
  chip.write(kCounter + 8, 0xffff'ffff);
  chip.write(kIncrement + 8, 0);
  EXPECT_EQ(counter(8), 0xffff'ffffu);
  EXPECT_EQ(counter(9), 0x0000'0008u) << "no carry into a separate counter";
}

// Table B7 xx11 "Reset & Enable" of a double-precision pair clears both halves (ERRATUM E8: the even field
// drives the pair; the odd field is ignored while paired).
TEST_F(Counters, ResetEnableClearsWholePair) {
  chip.write(kMode, fld(4, 0xa));
  chip.write(kCounter + 4, 5);
  chip.write(kCounter + 5, 6);
  chip.write(kEnable, fld(5, 3));  // odd field: ignored while paired
  EXPECT_EQ(counter(4), 5u);
  EXPECT_EQ(counter(5), 6u);
  chip.write(kEnable, fld(4, 3));
  EXPECT_EQ(counter(4), 0u);
  EXPECT_EQ(counter(5), 0u);
}

// 000: "The Resource Counters will not count beyond their maximum value (i.e, no wrap around), but will
// stick at this maximum value until reset."
TEST_F(Counters, SaturateInsteadOfWrapping) {
  chip.write(kMode, fld(0, 1) | fld(2, 9));  // 0: CLK 32-bit; 2-3: CLK 64-bit
  chip.write(kClock, fld(0, 1) | fld(2, 1));
  chip.write(kCounter, 0xffff'ff00);
  chip.write(kCounter + 2, 0xffff'ff00);
  chip.write(kCounter + 3, 0xffff'ffff);
  chip.write(kEnable, fld(0, 2) | fld(2, 2));
  chip.tick(1'000'000);
  EXPECT_EQ(counter(0), 0xffff'ffffu);
  EXPECT_EQ(counter(2), 0xffff'ffffu);
  EXPECT_EQ(counter(3), 0xffff'ffffu);
}

// 000: "Writing to the address of a Resource Counter (address 64-79) will place the data written into
// that Resource Counter, the shadow registers are not affected."
TEST_F(Counters, WriteLeavesShadowAlone) {
  chip.write(kCounter + 4, 77);
  chip.read(kCounter + 4);
  chip.write(kCounter + 4, 99);
  EXPECT_EQ(chip.read(kIncrement + 4) & 0xffff'ffff, 77u);
  EXPECT_EQ(chip.read(kCounter + 4) & 0xffff'ffff, 99u);
}

// 000: "reading-with-copy all 16 Resource Counters consecutively will yield the Resource Counters' value
// at 16 different instances. Reading-with-copy one ... and then reading-without-copy the other 15 will
// yield the value of all 16 Resource Counters at one instant."
TEST_F(Counters, ReadWithAndWithoutCopy) {
  chip.write(kMode, fld(0, 1) | fld(1, 1));
  chip.write(kClock, fld(0, 1) | fld(1, 1));
  chip.write(kEnable, fld(0, 3) | fld(1, 3));  // both reset & enabled at the same clock
  chip.tick(50);
  const std::uint64_t c0 = chip.read(kCounter + 0) & 0xffff'ffff;
  EXPECT_EQ(chip.read(kIncrement + 1) & 0xffff'ffff, c0) << "same instant";
  EXPECT_EQ(chip.read(kCounter + 1) & 0xffff'ffff, c0 + 2 * chip.access_clocks()) << "a later instant";
}

// In test mode the counters stop (Table C3 TESTB "disables all counters") but are written and incremented
// by the processor whatever their source (000 TEST MODE; ERRATUM E15).
TEST_F(Counters, TestModeStopsCountersE15) {
  chip.write(kMode, fld(0, 1) | fld(1, 4));
  chip.write(kClock, fld(0, 1));
  chip.write(kEnable, fld(0, 3));
  chip.set_test_mode(true);
  const std::uint32_t frozen = counter(0);
  chip.tick(1000);
  EXPECT_EQ(counter(0), frozen);
  chip.write(kIncrement + 1, 0);  // External source, disabled: incremented in test mode anyway
  EXPECT_EQ(counter(1), 1u);
  chip.set_test_mode(false);
  chip.tick(100);
  EXPECT_GT(counter(0), frozen + 99);
}

// ---- Table B3b, one vector per row ----------------------------------------------------------------------
struct B3bRow {
  int row;
  bool wait;       // CSR "Wait on Read" control bit
  bool copy;       // read-with-copy (64-79) or without (80-95)
  bool busy;       // shadow registers full
  bool cnt;        // Wait counter: CNT
  bool copied;     // the value read is the counter now (else the shadow registers' contents)
  bool net_delay;  // the network output is delayed 2 node clocks
};
const B3bRow kTableB3b[] = {
    {1, true, true, false, false, true, false},   {2, true, true, true, true, true, false},
    {3, true, false, false, false, false, false}, {4, true, false, true, false, false, true},
    {5, false, true, false, false, true, false},  {6, false, true, true, false, false, false},
    {7, false, false, false, false, false, false}, {8, false, false, true, false, false, true},
};
class TableB3b : public Counters, public ::testing::WithParamInterface<B3bRow> {};
TEST_P(TableB3b, Row) {
  const B3bRow& r = GetParam();
  SCOPED_TRACE("000 Table B3b, row " + std::to_string(r.row));
  sampling_on(r.wait ? 1u << csr::kReadWait : 1u << 5);
  chip.write(kCounter + 6, 1000);  // counter 6: 1000 in the shadow registers after the Resource sample
  if (r.busy) {
    chip.write(kResource, 0);
    ASSERT_TRUE(csr_bit(csr::kShadowFull));
  } else {
    chip.read(kCounter + 6);
  }
  chip.write(kCounter + 6, 2000);  // the counter moves on; the shadow registers keep 1000
  const std::uint64_t t0 = chip.now();
  const std::uint64_t v = chip.read((r.copy ? kCounter : kIncrement) + 6) & 0xffff'ffff;
  const std::uint64_t held = chip.now() - t0 - chip.access_clocks();
  EXPECT_EQ(held > 0, r.cnt);
  EXPECT_EQ(low32(kWait), held);
  EXPECT_EQ(low32(kOverrun), 0u) << "Overrun: -";
  EXPECT_EQ(v, r.copied ? 2000u : 1000u);
  EXPECT_FALSE(r.cnt && csr_bit(csr::kShadowFull)) << "held until the shadow registers were free";
  EXPECT_FALSE(r.busy && !r.cnt && !csr_bit(csr::kShadowFull)) << "the read did not free them";
  chip.drain();
  if (r.busy) {
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].sample.counters[6], 1000u) << "the sample's counters are the instant of the sample";
    // The Resource sample was taken at ACKB clock 7 (ERRATUM E7: three 2-clock accesses before it), its
    // first byte starts at clock 8 and 84 bytes take 168 node clocks; rows 4 and 8 push the output back 2.
    EXPECT_EQ(out[0].clock, 8u + 168u + (r.net_delay ? 2u : 0u));
  }
}
INSTANTIATE_TEST_SUITE_P(Rows, TableB3b, ::testing::ValuesIn(kTableB3b),
                         [](const auto& p) { return "Row" + std::to_string(p.param.row); });

}  // namespace
}  // namespace kron::mk2::test
