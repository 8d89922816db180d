// 004 Table 4.4: the Master Configuration Controller registers, one vector per row: address, acronym,
// width (a write keeps only the row's bits), reset value, and the doubleword writes of 4.4.3 and 4.4.6.
#include <fmt/format.h>

#include "numachine_fixture.hpp"

namespace kron::numachine::test {
namespace {

struct Row {
  std::uint32_t address;
  const char* acronym;
  std::uint32_t bits;  // Table 4.4 "Bits": the stored mask
};
// 004 Table 4.4, row by row.
constexpr Row kTable44[] = {
    {0x0, "PR", 0xffff},       {0x1, "PW", 0xffff},       {0x2, "CW", 0x1fff},       {0x3, "CF", 0x1fff},
    {0x4, "AWhi", 0xff},       {0x5, "AWlo", 0xffffffff}, {0x6, "AFhi", 0xff},       {0x7, "AFlo", 0xffffffff},
    {0x8, "GPCM0", 0xffffff},  {0x9, "GPCM1", 0xffffff},  {0xA, "GPCM2", 0xffffff},  {0xB, "GPCM3", 0xffffff},
    {0xC, "SCM", 0x7fffff},    {0xD, "D", 0},             {0xE, "GPCE", 1},          {0xF, "SRAMCE", 1},
};

class Table44 : public NumachineTest, public ::testing::WithParamInterface<Row> {};

TEST_P(Table44, RowNameWidthAndReset) {  // 004 Table 4.4; reset values ERRATUM E82
  const Row r = GetParam();
  EXPECT_EQ(address_named(r.acronym), r.address);
  EXPECT_EQ(address_name(r.address), r.acronym);
  EXPECT_EQ(kRegisters[r.address].acronym, r.acronym);
  EXPECT_EQ(m.peek(r.address), 0u) << "power-on value";
  m.write(r.address, 0xffffffff);
  EXPECT_EQ(m.read(r.address), r.bits) << "a word write keeps the row's bits only";
  m.write(r.address, 0x12345678);
  EXPECT_EQ(m.peek(r.address), 0x12345678u & r.bits);
  m.hardware_reset();
  EXPECT_EQ(m.peek(r.address), 0u);
}
INSTANTIATE_TEST_SUITE_P(Rows, Table44, ::testing::ValuesIn(kTable44),
                         [](const auto& row) { return std::string(row.param.acronym == std::string("D") ? "Reserved" : row.param.acronym); });

TEST_F(NumachineTest, AddressWatchDoublewordIsBigEndian) {  // 004 4.4.3
  m.write(static_cast<std::uint32_t>(Reg::AWhi), 0x000000ab'cdef0123);
  EXPECT_EQ(m.reg(Reg::AWhi), 0xabu);
  EXPECT_EQ(m.reg(Reg::AWlo), 0xcdef0123u);
  m.write_doubleword(static_cast<std::uint32_t>(Reg::AFlo), 0x00000012'00000034);  // odd address: aligned down (E81)
  EXPECT_EQ(m.reg(Reg::AFhi), 0x12u);
  EXPECT_EQ(m.reg(Reg::AFlo), 0x34u);
}

TEST_F(NumachineTest, OneDoublewordSetsBothMasterEnables) {  // 004 4.4.6
  m.write(static_cast<std::uint32_t>(Reg::GPCE), 0x00000001'00000001);
  EXPECT_EQ(m.reg(Reg::GPCE), 1u);
  EXPECT_EQ(m.reg(Reg::SRAMCE), 1u);
  m.write_doubleword(static_cast<std::uint32_t>(Reg::GPCE), 0);
  EXPECT_EQ(m.reg(Reg::GPCE), 0u);
  EXPECT_EQ(m.reg(Reg::SRAMCE), 0u);
}

TEST_F(NumachineTest, ScriptNamesOfCountersAndSram) {  // ERRATUM E80
  EXPECT_EQ(address_named("GPC2"), kGpcBase + 2);
  EXPECT_EQ(address_named("gpc3.clr"), kGpcResetBase + 3);
  EXPECT_EQ(address_named("SRAM[0x10]"), kSramBase + 0x10);
  EXPECT_EQ(address_named("SRAM[65535]"), kSramBase + 0xffff);
  EXPECT_FALSE(address_named("SRAM[65536]"));
  EXPECT_FALSE(address_named("GPC4"));
  EXPECT_FALSE(address_named("PRX"));
  EXPECT_EQ(address_name(kSramBase + 0x12), "SRAM[0x0012]");
}

TEST_F(NumachineTest, DescribePrintsTheTableFields) {  // 004 Table 4.4 GPCM0 row drives the printing
  const std::string s = describe(kRegisters[8], kEn | ps(0x45) | kIrq | ev(0xC) | kEdge | kPwEn | kRm);
  EXPECT_EQ(s, "GPCM0 = 0x00c5e481 en=1 ps=0x45 irq=1 event=0xc edge=1 mask=0 mask_inv=0 pw=1 pw_inv=0 aw=0 "
               "aw_inv=0 cw=0 cw_inv=0 sm=0 rm=1");
}

TEST_F(NumachineTest, MonitorAccessTakesTwoCycles) {  // ERRATUM E87
  const std::uint64_t t = m.now();
  w(Reg::PR, 1);
  EXPECT_EQ(m.now(), t + kAccessCycles);
  (void)m.read(0);
  EXPECT_EQ(m.now(), t + 2 * kAccessCycles);
}

TEST_F(NumachineTest, NothingActsPastTheClockLimit) {  // ERRATUM E134: refused before it acts
  m.write(kGpcBase, 7);
  m.tick(sim::kMaxClock - m.now());
  EXPECT_THROW((void)m.read(kGpcResetBase), sim::ConfigError);
  EXPECT_EQ(m.peek(kGpcBase), 7u) << "the refused read did not clear the counter";
  EXPECT_THROW(w(Reg::PR, 1), sim::ConfigError);
  EXPECT_EQ(m.reg(Reg::PR), 0u);
  EXPECT_THROW(miss(0x40, 10), sim::ConfigError);
  EXPECT_EQ(m.ar(), 0u) << "the refused miss sent no request";
  EXPECT_THROW(m.l2_access(false, 1, false, false), sim::ConfigError);
  EXPECT_EQ(m.now(), sim::kMaxClock);
}

}  // namespace
}  // namespace kron::numachine::test
