// The MultiKron II control registers (include/kron/core/control_regs.hpp): one vector set, run against
// both the live board (board::write_csr / write_counter_control on a created board) and the MultiKron II
// model (writes and reads of addresses 1, 8, 10, 12 on its bus), so that the two cannot decide the
// datasheet differently again.
// Sources: 000 (NISTIR 5571) "CSR Register", Table B1; "Resource Counter Control Registers", Tables B5
//   (Mode), B6 (Clock Select), B7 (Enable) and their "** default setting" rows; Table B4 (addresses).
// Decisions tested: ERRATUM E13 (pairs with both bits written; fields whose code bits are written 0).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include "kron/board_ops.hpp"
#include "kron/core/control_regs.hpp"
#include "models/mk2/mk2.hpp"

namespace kron::regs {
namespace {

enum class Target : std::uint8_t { Csr, Enable, Mode, ClockSelect };
const char* name(Target t) {
  switch (t) {
    case Target::Csr: return "CSR";
    case Target::Enable: return "Enable Register";
    case Target::Mode: return "Mode Register";
    case Target::ClockSelect: return "Clock Select Register";
  }
  return "?";
}

// One write: the register's value before (reached by writes from reset), the data written, the value
// after. For the CSR, values are the control state (bits 0, 2, 4, 14: kControl).
struct Vector {
  Target reg;
  std::uint64_t initial, written, expected;
  const char* source;
};

constexpr std::uint64_t kE = 0x1111'1111'1111'1111;  // Enable reset: Table B7 ** xx01 in every field
constexpr std::uint64_t kM = 0x4444'4444'4444'4444;  // Mode reset: Table B5 ** x100, ** 0xxx
constexpr std::uint64_t kC = 0x4444'4444'4444'4444;  // Clock Select reset: Table B6 ** x100

// clang-format off
constexpr Vector kVectors[] = {
  // ---- 000 Table B1: a 1 in a control bit acts, a 0 has no effect ----
  {Target::Csr, 0x0000, 0x0001, 0x0001, "000 Table B1 bit 0, Enable Sampling"},
  {Target::Csr, 0x0001, 0x0002, 0x0000, "000 Table B1 bit 1, Disable Sampling"},
  {Target::Csr, 0x0000, 0x0004, 0x0004, "000 Table B1 bit 2, Enable Wait on sample"},
  {Target::Csr, 0x0004, 0x0008, 0x0000, "000 Table B1 bit 3, Disable Wait on sample, discard data"},
  {Target::Csr, 0x0000, 0x0010, 0x0010, "000 Table B1 bit 4, Enable wait on read-with-copy"},
  {Target::Csr, 0x0010, 0x0020, 0x0000, "000 Table B1 bit 5, Disable read wait"},
  {Target::Csr, 0x0000, 0x4000, 0x4000, "000 Table B1 bit 14, 32 bit mode enabled"},
  {Target::Csr, 0x4000, 0x8000, 0x0000, "000 Table B1 bit 15, 64 bit mode"},
  {Target::Csr, 0x0005, 0x0000, 0x0005, "000 CSR Register: a logical 0 causes no effect"},
  {Target::Csr, 0x4015, 0x0000, 0x4015, "000 CSR Register: a logical 0 causes no effect (all set)"},
  {Target::Csr, 0x0001, 0x0004, 0x0005, "000 CSR Register: modify the field of interest only"},
  {Target::Csr, 0x4015, 0x802a, 0x0000, "000 Table B1: the odd bits disable"},
  {Target::Csr, 0x0000, 0x3fc0, 0x0000, "000 Table B1 bits 6-13, Read Only, write data ignored"},
  {Target::Csr, 0x0015, 0x3fc0, 0x0015, "000 Table B1 bits 6-13, Read Only, write data ignored (set)"},
  {Target::Csr, 0x0001, 0x0003, 0x0000, "000 Table B1 bits 0+1 both 1: Disable wins (ERRATUM E13)"},
  {Target::Csr, 0x0000, 0xc03f, 0x0000, "000 Table B1 every pair both 1: the odd bits win (ERRATUM E13)"},
  {Target::Csr, 0x4015, 0xc03f, 0x0000, "000 Table B1 every pair both 1 from set: the odd bits win (ERRATUM E13)"},

  // ---- 000 Table B7, Enable Register (code bits xx11) ----
  {Target::Enable, kE, 0x0, kE, "000 Resource Counter Control Registers: a zero field leaves it unchanged"},
  {Target::Enable, kE, 0x2, (kE & ~0xfull) | 0x2, "000 Table B7 xx10, Enable counter"},
  {Target::Enable, kE, 0x3, (kE & ~0xfull) | 0x3, "000 Table B7 xx11, Reset & Enable counter"},
  {Target::Enable, (kE & ~0xfull) | 0x2, 0x1, kE, "000 Table B7 xx01, Disable counter"},
  {Target::Enable, kE, 0x3000'0000'0000'0020, (kE & 0x0fff'ffff'ffff'ff0f) | 0x3000'0000'0000'0020,
   "000 Resource Counter Control Registers: only the non-zero fields change"},
  {Target::Enable, (kE & ~0xfull) | 0x2, 0x4, (kE & ~0xfull) | 0x2, "000 Table B7 xx00 NOP, x bit set: 0100 (ERRATUM E13)"},
  {Target::Enable, (kE & ~0xfull) | 0x2, 0x8, (kE & ~0xfull) | 0x2, "000 Table B7 xx00 NOP, x bit set: 1000 (ERRATUM E13)"},
  {Target::Enable, kE, 0xcccc'cccc'cccc'cccc, kE, "000 Table B7 xx00 NOP in every field: 1100 (ERRATUM E13)"},
  {Target::Enable, kE, 0x6, (kE & ~0xfull) | 0x6, "000 Table B7 xx10 with x bits: stored as written (ERRATUM E13)"},
  {Target::Enable, kE, 0xf0, (kE & ~0xf0ull) | 0xf0, "000 Table B7 xx11 with x bits: stored as written (ERRATUM E13)"},

  // ---- 000 Table B5, Mode Register (code bits x111; bit 3 precision) ----
  {Target::Mode, kM, 0x0, kM, "000 Resource Counter Control Registers: a zero field leaves it unchanged"},
  {Target::Mode, kM, 0x1, (kM & ~0xfull) | 0x1, "000 Table B5 x001, CLK"},
  {Target::Mode, kM, 0x0f00, (kM & ~0x0f00ull) | 0x0f00, "000 Table B5 x111 (same as External Enable), double"},
  {Target::Mode, kM, 0x7000'0000'0000'0002, (kM & 0x0fff'ffff'ffff'fff0) | 0x7000'0000'0000'0002,
   "000 Resource Counter Control Registers: only the non-zero fields change"},
  {Target::Mode, kM, 0x9, (kM & ~0xfull) | 0x9, "000 Table B5 1001: CLK, double precision"},
  {Target::Mode, (kM & ~0xfull) | 0x1, 0x8, (kM & ~0xfull) | 0x1, "000 Table B5 x000 NOP, precision bit set (ERRATUM E13)"},
  {Target::Mode, kM, 0x8888'8888'8888'8888, kM, "000 Table B5 x000 NOP in every field (ERRATUM E13)"},

  // ---- 000 Table B6, Clock Select Register (code bits x111) ----
  {Target::ClockSelect, kC, 0x0, kC, "000 Resource Counter Control Registers: a zero field leaves it unchanged"},
  {Target::ClockSelect, kC, 0x1, (kC & ~0xfull) | 0x1, "000 Table B6 x001, NodeClk"},
  {Target::ClockSelect, kC, 0x3000'0000'0000'0020, (kC & 0x0fff'ffff'ffff'ff0f) | 0x3000'0000'0000'0020,
   "000 Resource Counter Control Registers: only the non-zero fields change"},
  {Target::ClockSelect, kC, 0xd, (kC & ~0xfull) | 0xd, "000 Table B6 x101 (same as NodeClk): stored as written (ERRATUM E13)"},
  {Target::ClockSelect, (kC & ~0xfull) | 0x2, 0x8, (kC & ~0xfull) | 0x2, "000 Table B6 x000 NOP, x bit set (ERRATUM E13)"},
  {Target::ClockSelect, kC, 0x8888'8888'8888'8888, kC, "000 Table B6 x000 NOP in every field (ERRATUM E13)"},
};
// clang-format on

// ---- the two implementations, behind the same two operations ----------------------------------------
class Registers {
 public:
  virtual ~Registers() = default;
  virtual void write(Target t, std::uint64_t data) = 0;
  virtual std::uint64_t read(Target t) = 0;
  virtual const char* what() const = 0;
};

// The live board: a created board, written as `kron csr` and `kron::counter_control` write it.
class Board : public Registers {
 public:
  Board() {
    static std::atomic<int> seq{0};
    board::CreateOptions o;
    o.name = name_ = "test-ctl-" + std::to_string(::getpid()) + "-" + std::to_string(seq++);
    o.replace = true;
    o.size = 64 << 10;
    o.lanes = 4;
    o.csr = csr::kReset;  // the chip's reset state (a board is usually created with sampling enabled)
    std::string err;
    map_ = board::Mapping::create(o, &err);
    if (!map_) ADD_FAILURE() << err;
  }
  ~Board() override {
    std::string err;
    board::unlink(name_, &err);
  }
  explicit operator bool() const { return static_cast<bool>(map_); }
  void write(Target t, std::uint64_t data) override {
    board::BoardHeader& h = *map_.header();
    switch (t) {
      case Target::Csr: board::write_csr(h, static_cast<std::uint16_t>(data)); break;
      case Target::Enable: board::write_counter_control(h, data, 0, 0); break;
      case Target::Mode: board::write_counter_control(h, 0, data, 0); break;
      case Target::ClockSelect: board::write_counter_control(h, 0, 0, data); break;
    }
  }
  std::uint64_t read(Target t) override {
    const board::BoardHeader& h = *map_.header();
    switch (t) {
      case Target::Csr: return board::csr_stored(h) & csr::kControl;
      case Target::Enable: return h.enable_reg.load();
      case Target::Mode: return h.mode_reg.load();
      case Target::ClockSelect: return h.clock_reg.load();
    }
    return 0;
  }
  const char* what() const override { return "board"; }

 private:
  std::string name_;
  board::Mapping map_;
};

// The MultiKron II model, through its processor bus at the addresses of 000 Table B4.
class Model : public Registers {
 public:
  void write(Target t, std::uint64_t data) override { chip_.write(address(t), data); }
  std::uint64_t read(Target t) override {
    const std::uint64_t v = chip_.read(address(t));
    return t == Target::Csr ? v & csr::kControl : v;
  }
  const char* what() const override { return "mk2 model"; }

 private:
  static std::uint32_t address(Target t) {
    switch (t) {
      case Target::Csr: return mk2::address_of(mk2::Reg::Csr);               // 1
      case Target::Enable: return mk2::address_of(mk2::Reg::Enable);         // 8
      case Target::Mode: return mk2::address_of(mk2::Reg::Mode);             // 10
      case Target::ClockSelect: return mk2::address_of(mk2::Reg::ClockSelect);  // 12
    }
    return 0;
  }
  mk2::Mk2 chip_;
};

std::unique_ptr<Registers> make(bool board) {
  if (board) return std::make_unique<Board>();
  return std::make_unique<Model>();
}

// Brings a fresh register set to `initial` by writes: for the CSR, every pair cleared (odd bits) and
// then the wanted control bits; for a field register, the value itself (every vector's initial value
// has non-zero code bits in the fields that differ from reset).
void reach(Registers& r, Target t, std::uint64_t initial) {
  if (t == Target::Csr) r.write(t, csr::kW1Act & ~csr::kControl);
  r.write(t, initial);
}

class ControlRegsVectors : public ::testing::TestWithParam<bool> {};

TEST_P(ControlRegsVectors, OneVectorSetTablesB1B5B6B7) {
  for (const Vector& v : kVectors) {
    const auto r = make(GetParam());
    reach(*r, v.reg, v.initial);
    ASSERT_EQ(r->read(v.reg), v.initial) << r->what() << " " << name(v.reg) << ": cannot reach the initial value of " << v.source;
    r->write(v.reg, v.written);
    EXPECT_EQ(r->read(v.reg), v.expected) << r->what() << " " << name(v.reg) << std::hex << " 0x" << v.initial << " <- 0x"
                                          << v.written << ": " << v.source;
  }
}

// The "** default setting" of Tables B5-B7, the same in all sixteen fields, on a new board and a chip
// after reset. (The board's CSR at creation is an option, so only the chip's is a reset value here.)
TEST_P(ControlRegsVectors, ResetValuesTablesB5B6B7) {
  const auto r = make(GetParam());
  EXPECT_EQ(r->read(Target::Enable), 0x1111'1111'1111'1111u) << r->what() << ": Table B7 ** xx01 Disable counter";
  EXPECT_EQ(r->read(Target::Mode), 0x4444'4444'4444'4444u) << r->what() << ": Table B5 ** x100 External Signal, ** 0xxx";
  EXPECT_EQ(r->read(Target::ClockSelect), 0x4444'4444'4444'4444u) << r->what() << ": Table B6 ** x100 TSclk";
  EXPECT_EQ(kEnableReset, 0x1111'1111'1111'1111u);
  EXPECT_EQ(kModeReset, 0x4444'4444'4444'4444u);
  EXPECT_EQ(kClockReset, 0x4444'4444'4444'4444u);
}

// Every 4-bit value written into field 5 of each register, from reset: board, model and the table's
// rule give the same register. Table B5-B7: the code bits decide (x000 / xx00 NOP, ERRATUM E13).
TEST(ControlRegsAgree, EveryFieldValueBoardEqualsModel) {
  for (const Target t : {Target::Enable, Target::Mode, Target::ClockSelect}) {
    for (std::uint64_t f = 0; f < 16; ++f) {
      const auto b = make(true);
      const auto m = make(false);
      b->write(t, f << 20);
      m->write(t, f << 20);
      const std::uint64_t code = t == Target::Enable ? 0x3 : 0x7;
      const std::uint64_t reset = t == Target::Enable ? kE : t == Target::Mode ? kM : kC;
      const std::uint64_t expected = (f & code) ? (reset & ~(0xfull << 20)) | f << 20 : reset;
      EXPECT_EQ(b->read(t), expected) << "board " << name(t) << " field 5 <- " << f;
      EXPECT_EQ(m->read(t), expected) << "mk2 model " << name(t) << " field 5 <- " << f;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BoardAndModel, ControlRegsVectors, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Board" : "Mk2Model"; });

// ---- decoding a field, one check per table row -----------------------------------------------------------
TEST(ControlRegsDecode, ModeTableB5) {
  // x000 NOP, x001 CLK, x010 Software, x011 External Enable, x100 External Signal, x101-x111 as x001-x011.
  constexpr Mode rows[8] = {Mode::Nop, Mode::Clock, Mode::Software, Mode::ExternalEnable,
                            Mode::ExternalSignal, Mode::Clock, Mode::Software, Mode::ExternalEnable};
  for (unsigned f = 0; f < 16; ++f) {
    EXPECT_EQ(mode_of(f), rows[f & 7]) << f;
    EXPECT_EQ(double_precision(f), f >= 8) << f << ": 1xxx double precision";
  }
  EXPECT_EQ(name(Mode::ExternalSignal), "External Signal");
}

TEST(ControlRegsDecode, ClockSelectTableB6) {
  // x000 NOP, x001 NodeClk, x010 NodeClk/10, x011 NodeClk/100, x100 TSclk, x101-x111 as x001-x011.
  constexpr ClockSel rows[8] = {ClockSel::Nop,   ClockSel::NodeClk, ClockSel::NodeClk10, ClockSel::NodeClk100,
                                ClockSel::TsClk, ClockSel::NodeClk, ClockSel::NodeClk10, ClockSel::NodeClk100};
  for (unsigned f = 0; f < 16; ++f) EXPECT_EQ(clock_of(f), rows[f & 7]) << f;
  EXPECT_EQ(name(ClockSel::NodeClk10), "NodeClk/10");
}

TEST(ControlRegsDecode, EnableTableB7) {
  // xx00 NOP, xx01 Disable counter, xx10 Enable counter, xx11 Reset & Enable counter.
  constexpr Enable rows[4] = {Enable::Nop, Enable::Disable, Enable::Enable, Enable::ResetEnable};
  for (unsigned f = 0; f < 16; ++f) {
    EXPECT_EQ(enable_of(f), rows[f & 3]) << f;
    EXPECT_EQ(enabled(f), (f & 3) >= 2) << f;
  }
}

TEST(ControlRegsDecode, CsrNamesAndMasksTableB1) {
  EXPECT_EQ(csr::kBits[csr::kSamplingEnable].status, "Sampling Enabled");
  EXPECT_EQ(csr::kBits[csr::kFifoOverrun].status, "FIFO Overrun");
  EXPECT_EQ(csr::kBits[csr::kMode32].control, "High Order Reg is used for upper 32 bits of input data");
  // Every bit is exactly one of: read only, or write-1-to-act.
  EXPECT_EQ(csr::kReadOnly & csr::kW1Act, 0);
  EXPECT_EQ(csr::kReadOnly | csr::kW1Act, 0xffff);
  for (unsigned b = 0; b < 16; ++b)
    EXPECT_EQ(csr::kBits[b].control == "Read Only, write data ignored.", (csr::kReadOnly >> b & 1) != 0) << b;
}

}  // namespace
}  // namespace kron::regs
