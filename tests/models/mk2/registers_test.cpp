// MultiKron II registers: reset values, widths, the CSR, control fields, test-only addresses, resets,
// wait states, 32-bit mode and the timestamp.
// Sources: 000 Tables B1, B4-B7; sections PROCESSOR INTERFACE, Software Reset, Timestamp, CSR Register,
// High Order 32 Bit Register, Wait / Overrun Error Counter, TEST MODE; Appendix A.
#include "mk2_fixture.hpp"

namespace kron::mk2::test {
namespace {

constexpr std::uint64_t kOnes = ~std::uint64_t{0};
constexpr std::uint64_t hi_ones(unsigned width) { return ~width_mask(width); }

using Registers = Mk2Test;

// Every readable register's value after reset, typed here from the datasheet (not from the model's table):
// 000 Table B5 "** x100 External Signal" and "** 0xxx Single precision" in each of the sixteen 4-bit fields,
// Table B6 "** x100 TSclk", Table B7 "** xx01 Disable counter"; Table B4 "** Wait Counter to zero",
// "** Overrun Counter to zero"; Table B1 (CSR: 64-bit mode, all else off). 000 gives no reset value for the
// Filter, High Order and Source Address registers or the Resource Counters: 0 (ERRATUM E12). Bits above a
// register's width read 1 (ERRATUM E3).
struct ResetRow {
  std::uint32_t first, last;
  std::uint64_t bus;  // what a read shows after reset
  const char* source;
};
constexpr ResetRow kResetRows[] = {
    {1, 1, 0xffff'ffff'ffff'8000, "CSR, Table B1 (bit 15: 64-bit mode)"},
    {4, 4, 0xffff'ffff'ffff'0000, "Filter Register (16 bits), ERRATUM E12"},
    {5, 5, 0xffff'ffff'0000'0000, "Wait Counter (32 bits), Table B4 **"},
    {6, 6, 0xffff'ffff'0000'0000, "Overrun Counter (32 bits), Table B4 **"},
    {7, 7, 0xffff'ffff'0000'0000, "High Order 32 bit Reg, ERRATUM E12"},
    {8, 8, 0x1111'1111'1111'1111, "Enable Register, Table B7 ** xx01 Disable"},
    {10, 10, 0x4444'4444'4444'4444, "Mode Register, Table B5 ** x100 External Signal, single precision"},
    {12, 12, 0x4444'4444'4444'4444, "Clock Select Register, Table B6 ** x100 TSclk"},
    {32, 39, 0xffff'ffff'0000'0000, "Source Addr Reg 0-7 (32 bits), ERRATUM E12"},
    {80, 95, 0xffff'ffff'0000'0000, "Resource Counter 0-15 read without copy (32 bits), ERRATUM E12"},
};

TEST_F(Registers, ResetValuesFromTableB4) {
  for (const ResetRow& row : kResetRows)
    for (std::uint32_t a = row.first; a <= row.last; ++a) EXPECT_EQ(chip.peek(a), row.bus) << row.source << " @" << a;
  // Every address whose value the model stores is in the typed list: a register added to the model without
  // its datasheet reset value fails here.
  for (std::uint32_t a = 0; a < kAddresses; ++a) {
    if (decode(a).read != ReadKind::Stored) continue;
    bool typed = false;
    for (const ResetRow& row : kResetRows) typed = typed || (a >= row.first && a <= row.last);
    EXPECT_TRUE(typed) << "address " << a << " (" << decode(a).name << ") has no reset value typed in this test";
  }
  // The same values after a software reset, from non-reset contents ("initializes most of the machine state").
  chip.write(kFilter, 0x5a5a);
  chip.write(kHighOrder, 0x1234);
  chip.write(kEnable, 0x2222'2222'2222'2222);
  chip.write(kMode, 0x1111'1111'1111'1111);
  chip.write(kClock, 0x1111'1111'1111'1111);
  for (std::uint32_t i = 0; i < 8; ++i) chip.write(kSource + i, 100 + i);
  chip.write(kReset, 0);
  for (const ResetRow& row : kResetRows)
    for (std::uint32_t a = row.first; a <= row.last; ++a)
      EXPECT_EQ(chip.peek(a), row.bus) << "after a software reset: " << row.source << " @" << a;
}

// 000 Software Reset: the pseudoregister "initializes most of the machine state of the MultiKron II" and
// keeps only the Timestamp; Table B4 address 6 "** Overrun Counter to zero" and the Wait Counter are part of
// that state (ERRATUM E12). Overruns counted by real overflow of the FIFO, then a software reset.
TEST_F(Registers, SoftwareResetClearsOverrunAndWaitCounters) {
  sampling_on();
  chip.set_net_ready(false);                            // the Collection Network takes nothing: the FIFO fills
  for (int k = 0; k < 200; ++k) chip.write(kTrace, k);  // far more than any FIFO holds: overruns
  ASSERT_GT(low32(kOverrun), 0u) << "the FIFO never overflowed";
  chip.set_test_mode(true);
  chip.write(kIncrWait, 0);
  chip.write(kIncrWait, 0);
  chip.set_test_mode(false);
  ASSERT_GT(low32(kWait), 0u);
  chip.write(kReset, 0);
  EXPECT_EQ(low32(kOverrun), 0u) << "000 Software Reset: the Overrun Counter is machine state";
  EXPECT_EQ(low32(kWait), 0u) << "000 Software Reset: the Wait Counter is machine state";
}

// 000 Table B1: after reset sampling, wait on overrun and read wait are disabled ("default on reset");
// bit 15 reads "32 bit mode disabled (64 bit mode)"; 000 CSR Register: unused CSR bits read 0;
// ERRATUM E3: bits 16-63 read 1.
TEST_F(Registers, CsrAfterResetTableB1) { EXPECT_EQ(chip.peek(kCsr), hi_ones(16) | 0x8000); }

// 000 PROCESSOR INTERFACE: "On a read by a processor, any unused bit positions return a logical 1"
// (ERRATUM E3): every address with nothing to read, and every bit above a register's width.
TEST_F(Registers, UnusedBitsReadOneE3) {
  for (std::uint32_t a : {0u, 3u, 9u, 11u, 13u, 14u, 15u, 16u, 17u, 18u, 19u, 20u, 21u, 22u, 23u, 24u, 30u, 31u, 40u,
                          63u, 96u, 111u, 112u, 127u})
    EXPECT_EQ(chip.read(a), kOnes) << "address " << a;
  chip.write(kFilter, 0x1'2345);
  EXPECT_EQ(chip.read(kFilter), hi_ones(16) | 0x2345);  // 000 Filter Register: 16 bits
  chip.write(kSource + 3, 0xaaaa'bbbb'cccc'dddd);
  EXPECT_EQ(chip.read(kSource + 3), hi_ones(32) | 0xcccc'dddd);  // 000 Source Address Registers: 32 bits
  EXPECT_EQ(chip.read(kTimestamp) & hi_ones(56), hi_ones(56));   // 000 Timestamp: 56 bits
  EXPECT_EQ(chip.read(kWait) & hi_ones(32), hi_ones(32));        // 000 Wait Error Counter: 32 bits
}

// 000 Table B1 write-1-to-act pairs and Tables B5-B7 field writes (ERRATUM E13): one vector set for the
// model and the live board, tests/core/control_regs_test.cpp. What follows reads the whole CSR.

// 000 Table B1 bits 6-13: "Read Only, write data ignored".
TEST_F(Registers, CsrReadOnlyBitsTableB1) {
  chip.write(kCsr, 0x3fc0);
  EXPECT_EQ(chip.peek(kCsr), hi_ones(16) | 0x8000);
}

// 000 Table B1 bit 15 status "32 bit mode disabled (64 bit mode)", bit 14 "32 bit mode enabled".
TEST_F(Registers, CsrModeBitsTableB1) {
  chip.write(kCsr, 1u << 14);
  EXPECT_EQ(chip.peek(kCsr) & 0xc000, 0x4000u);
  chip.write(kCsr, 1u << 15);
  EXPECT_EQ(chip.peek(kCsr) & 0xc000, 0x8000u);
}

// 000 Table B4 "*": test-mode addresses "do nothing when written to in non-Test mode" (Appendix A Testing).
TEST_F(Registers, TestOnlyAddressesIgnoredOutsideTestModeTableB4) {
  chip.tick(100);
  chip.write(kTimestamp, 0x1234);
  chip.write(kIncrTs, 0);
  chip.write(kIncrWait, 0);
  chip.write(kIncrOverrun, 0);
  chip.write(kFifoA, 0x1234'5678);
  EXPECT_EQ(chip.peek(kTimestamp) & kTimestampMask, chip.now() / 5) << "still counting 10 MHz at 50 MHz, never written";
  EXPECT_EQ(low32(kWait), 0u);
  EXPECT_EQ(low32(kOverrun), 0u);
  EXPECT_EQ(low32(kFifoA), 0u);
}

// 000 TEST MODE: "the Timestamp, the Wait Error Counter, and the OverRun Error Counter become writable
// and incrementable by the processor"; Table B4 "**": written outside test mode they reset to zero.
TEST_F(Registers, ErrorCountersTableB4) {
  chip.set_test_mode(true);
  chip.write(kWait, 0xffff'fffe);
  chip.write(kOverrun, 41);
  chip.write(kIncrWait, 0);
  chip.write(kIncrOverrun, 0);
  EXPECT_EQ(low32(kWait), 0xffff'ffffu);
  EXPECT_EQ(low32(kOverrun), 42u);
  chip.write(kIncrWait, 0);  // 000 Wait Error Counter: "wraps around to zero and continues counting"
  EXPECT_EQ(low32(kWait), 0u);
  chip.write(kOverrun, 7);
  chip.set_test_mode(false);
  chip.write(kOverrun, 1234);  // "** Reset to zero ONLY when NOT in TEST mode"
  EXPECT_EQ(low32(kOverrun), 0u);
}

// 000 Timestamp: "tallies the Timestamp clock"; 10 MHz under a 50 MHz node clock is one edge every five
// node clocks (ERRATUM E19: edges at floor(k * node / ts)).
TEST_F(Registers, TimestampCountsTimestampClock) {
  chip.tick(1000);
  EXPECT_EQ(chip.peek(kTimestamp) & kTimestampMask, 200u);
  chip.set_clocks(40'000'000, 13'300'000);  // 000: "40 MHz and ... 13.3 MHz ... acceptable"
  chip.tick(400'000);
  EXPECT_EQ(chip.peek(kTimestamp) & kTimestampMask, 200u + 133'000u);
  chip.set_clocks(20'000'000, 6'660'000);   // 000: "20 MHz and ... 6.66 MHz are acceptable"
}

// 000 Timestamp / Table C3: the timestamp clock "MUST NOT Exceed 1/3 the Node clock frequency".
TEST_F(Registers, TimestampClockAboveThirdRefused) {
  EXPECT_NO_THROW(chip.set_clocks(48'000'000, 16'000'000));
  EXPECT_THROW(chip.set_clocks(48'000'000, 16'000'001), sim::ConfigError);
  EXPECT_THROW(chip.set_clocks(50'000'000, 16'700'000), sim::ConfigError);  // 000: "should not exceed 16.6 MHz"
  EXPECT_THROW(chip.set_clocks(0, 0), sim::ConfigError);
}

// 000 Software Reset: "initializes most of the machine state ... it does not affect the contents of the
// Timestamp Counter"; 000 Timestamp: RESETB resets it to zero. ERRATUM E12: registers back to reset values.
TEST_F(Registers, SoftwareResetKeepsTimestampHardwareResetClears) {
  sampling_on();
  chip.write(kSource, 77);
  chip.write(kMode, 0x1);
  chip.tick(5000);
  const std::uint64_t before = chip.peek(kTimestamp) & kTimestampMask;
  chip.write(kReset, 0);
  EXPECT_GE(chip.peek(kTimestamp) & kTimestampMask, before);
  EXPECT_EQ(chip.peek(kCsr), hi_ones(16) | 0x8000);
  EXPECT_EQ(chip.peek(kFilter), hi_ones(16));
  EXPECT_EQ(low32(kSource), 0u);
  EXPECT_EQ(chip.peek(kMode), kModeReset);
  chip.hardware_reset();
  EXPECT_EQ(chip.now(), 0u);
  EXPECT_EQ(chip.peek(kTimestamp) & kTimestampMask, 0u);
}

// 000 TEST MODE: the Timestamp is writable and incrementable in test mode (Table B4 addresses 2, 16);
// ERRATUM E15: it stands still in test mode (Table C3 TESTB "disables all counters"). It is 56 bits wide
// and wraps (000 Timestamp "wrap-around epoch").
TEST_F(Registers, TimestampWritableInTestMode) {
  chip.set_test_mode(true);
  chip.write(kTimestamp, kTimestampMask - 1);
  chip.tick(1000);
  EXPECT_EQ(chip.peek(kTimestamp) & kTimestampMask, kTimestampMask - 1);
  chip.write(kIncrTs, 0);
  EXPECT_EQ(chip.peek(kTimestamp) & kTimestampMask, kTimestampMask);
  chip.set_test_mode(false);
  chip.tick(5);
  EXPECT_EQ(chip.peek(kTimestamp) & kTimestampMask, 0u);
}

// 000 CSR Register: "The number of (Node clock) Wait States (bit 12) is set by the logic level at the
// package pin during hardware reset"; ERRATUM E7: an access lasts 2 + W node clocks.
TEST_F(Registers, WaitStatesLatchedAtResetCsrBit12) {
  EXPECT_FALSE(csr_bit(csr::kWaitStates));
  std::uint64_t t = chip.now();
  chip.read(kCsr);
  EXPECT_EQ(chip.now() - t, 2u);
  chip.set_wait_states(1);
  EXPECT_FALSE(csr_bit(csr::kWaitStates)) << "latched only at reset";
  chip.write(kReset, 0);
  EXPECT_FALSE(csr_bit(csr::kWaitStates)) << "software reset does not latch the pin";
  chip.hardware_reset();
  EXPECT_TRUE(csr_bit(csr::kWaitStates));
  t = chip.now();
  chip.write(kFilter, 1);
  EXPECT_EQ(chip.now() - t, 3u);
  EXPECT_THROW(chip.set_wait_states(2), sim::ConfigError);  // 000 Appendix A: 0 or 1 wait states
}

// 000 High Order 32 Bit Register: in 32 bit mode "input data bits 32-63 will be taken from this High
// Order 32 bit register on processor writes"; "Output data bits 32-63 are always ... placed in that
// register" on reads. ERRATUM E14: not on a read of the register itself.
TEST_F(Registers, HighOrderRegister32BitMode) {
  chip.write(kHighOrder, 0x1122'3344);
  chip.write(kMode, 0x5555'5555'0000'0001);  // 64-bit mode: pins 32-63 used
  EXPECT_EQ(chip.peek(kMode), 0x5555'5555'4444'4441u);
  chip.write(kCsr, 1u << 14);                // 32 bit mode
  chip.write(kHighOrder, 0x2222'0000);
  chip.write(kMode, 0xdead'beef'0000'0010);  // bits 32-63 from the High Order register
  EXPECT_EQ(chip.peek(kMode), 0x2222'5555'4444'4411u);
  EXPECT_EQ(chip.read(kMode), 0x2222'5555'4444'4411u);
  EXPECT_EQ(chip.read(kHighOrder), hi_ones(32) | 0x2222'5555) << "the read of Mode loaded bits 32-63";
  EXPECT_EQ(chip.read(kHighOrder), hi_ones(32) | 0x2222'5555) << "reading it again leaves it";
  chip.read(kFilter);  // a 16-bit register: bits 32-63 read 1 (E3), and so load 0xffffffff
  EXPECT_EQ(low32(kHighOrder), 0xffff'ffffu);
}

}  // namespace
}  // namespace kron::mk2::test
