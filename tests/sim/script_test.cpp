// The `kron sim` script language and printer, on the MultiKron II model.
#include "sim/script.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "kron/core/error.hpp"
#include "models/mk2/mk2.hpp"
#include "models/numachine/numachine.hpp"
#include "support/input_error.hpp"

namespace kron::sim {
namespace {

std::string run(const std::string& text, unsigned* failures = nullptr, const RunOptions& options = {}) {
  std::istringstream in(text);
  const auto commands = parse_script(in, "t.sim");
  mk2::Mk2 chip;
  std::ostringstream out;
  const unsigned f = run_script(commands, "t.sim", chip, out, options);
  if (failures) *failures = f;
  return out.str();
}

std::string error_of(const std::string& text) {
  return kron::testing::error_of([&] { run(text); });
}

TEST(ScriptParse, CommentsBlanksAndNumbers) {
  EXPECT_FALSE(parse_line("", "f", 1));
  EXPECT_FALSE(parse_line("   # only a comment", "f", 1));
  const auto c = parse_line("  write 0x7F 1234 # trailing comment", "f", 3);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, Op::Write);
  EXPECT_EQ(c->line, 3u);
  EXPECT_EQ(c->num, (std::vector<std::uint64_t>{127, 1234}));
  const auto e = parse_line("expect 4 0xffffffffffffffff 0xf", "f", 1);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->num[1], ~std::uint64_t{0});
  EXPECT_EQ(e->mask, 0xfu);
  const auto k = parse_line("clocks ts=5000000", "f", 1);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->num, (std::vector<std::uint64_t>{0, 5'000'000}));
}

TEST(ScriptParse, ErrorsNameFileLineColumn) {
  EXPECT_EQ(error_of("read 1\nwrite 1\n"), "t.sim:2:1: usage: write ADDR DATA");
  EXPECT_EQ(error_of("write 1 2 3\n"), "t.sim:1:1: usage: write ADDR DATA");  // one too many
  EXPECT_EQ(error_of("drain 5\n"), "t.sim:1:1: usage: drain");
  EXPECT_EQ(error_of("tick -5\n"), "t.sim:1:6: '-5' is not a number (decimal or 0x-hex)");
  EXPECT_EQ(error_of("clocks node=1 node=2\n"), "t.sim:1:15: node given twice");
  EXPECT_EQ(error_of("clocks hz=5\n"), "t.sim:1:8: expected node=HZ or ts=HZ, got 'hz=5'");
  EXPECT_EQ(error_of("clocks ts=0\n"), "t.sim:1:11: a clock frequency must be greater than 0 Hz");
  EXPECT_EQ(error_of("ext 16 1\n"), "t.sim:1:5: 16 out of range 0-15");
  EXPECT_EQ(error_of("netrdy 2\n"), "t.sim:1:8: expected 0 or 1, got '2'");
  EXPECT_EQ(error_of("read 1\nbogus\n"), "t.sim:2: unknown command 'bogus'");
}

// A syntax error anywhere stops the script before anything runs.
TEST(ScriptParse, WholeScriptParsedFirst) {
  std::istringstream in("write 1 1\nwrite 4 1\nwrite 96 1\ndrain\nwrite x\n");
  EXPECT_THROW(parse_script(in, "t.sim"), InputError);
}

// docs/tools.md "kron sim": `read ADDR = 0xHHHHHHHHHHHHHHHH` with ADDR in decimal; the sample line.
TEST(ScriptRun, ReadAndSampleLines) {
  const std::string out = run(
      "write 33 0xdeadbeef\nwrite 1 1\nwrite 4 0xffff\ncpu 1\nwrite 112 0x2a\nread 0x21\ndrain\n");
  EXPECT_EQ(out,
            "read 33 = 0xffffffffdeadbeef\n"
            "sample @176 type=resource cpu=1 ts=1 src=0xdeadbeef data=0x000000000000002a flags=- "
            "counters=0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n");
}

// A failed expect prints the line and both values; the script goes on; the count is returned.
TEST(ScriptRun, ExpectFailuresCounted) {
  unsigned failures = 0;
  const std::string out = run("expect 4 0xffffffffffff0000\nexpect 4 1\nexpect 4 2 0x1\nexpect 1 0x8000 0xffff\n", &failures);
  EXPECT_EQ(failures, 1u);
  EXPECT_EQ(out, "t.sim:2: expect failed: read 4 = 0xffffffffffff0000, expected 0x0000000000000001\n");
}

// Device refusals become script errors at their line (exit 2 in the tool).
TEST(ScriptRun, DeviceErrorsAtLine) {
  EXPECT_EQ(error_of("tick 1\nclocks node=30 ts=11\n"),
            "t.sim:2: timestamp clock 11 Hz exceeds a third of the node clock 30 Hz (000 Timestamp: ts <= node/3)");
  EXPECT_EQ(error_of("read 200\n"), "t.sim:1: address 200 out of range 0-127");
  EXPECT_NE(error_of("write 1 5\nwrite 4 1\nnetrdy 0\nwrite 96 1\nwrite 96 1\nwrite 96 1\nwrite 96 1\nwrite 96 1\n")
                .find("t.sim:8: Trace sample waits for the FIFO while NETRDY is low"),
            std::string::npos);
}

// A device that outlives a failed run must not keep observers that point into the run's frame.
TEST(ScriptRun, ObserversRemovedWhenTheScriptFails) {
  std::istringstream in("write 1 1\nwrite 4 1\nwrite 96 7\nread 200\n");
  const auto commands = parse_script(in, "t.sim");
  mk2::Mk2 chip;
  std::ostringstream out;
  EXPECT_THROW(run_script(commands, "t.sim", chip, out, RunOptions{}), InputError);
  EXPECT_FALSE(chip.on_sample);
  EXPECT_FALSE(chip.on_element);
}

// `clocks` keeps the frequency it is not given: ts=10 MHz stays when only node changes.
TEST(ScriptRun, ClocksKeepOmittedFrequency) {
  EXPECT_EQ(run("clocks node=30000000\ntick 300\nread 2\n"), "read 2 = 0xff00000000000064\n");
}

TEST(ScriptRun, NetOutputs) {
  std::ostringstream net;
  RunOptions o;
  o.net = &net;
  o.net_bits = true;
  const std::string out = run("write 1 1\nwrite 4 1\nwrite 96 0\ndrain\n", nullptr, o);
  EXPECT_EQ(net.str().size(), 20u);
  EXPECT_EQ(static_cast<unsigned char>(net.str()[0]), 0x10u);
  EXPECT_NE(out.find("net @8 0x010 data=0x10 parity=0 eom=0\n"), std::string::npos);
  EXPECT_NE(out.find("net @46 0x300 data=0x00 parity=1 eom=1\n"), std::string::npos) << out;
}

// A device's own vocabulary (Device::address_named, address_text, data_digits, on_line, command): the
// NUMAchine monitor's register names and 32-bit words; the MultiKron II keeps numbers only.
TEST(ScriptDevice, NamesWidthsAndLinesComeFromTheDevice) {
  numachine::Numachine monitor;
  std::istringstream in("write pr 5\nread PR\nread 16\nexpect SRAM[3] 1\nwrite GPCM0 0x808800\n"
                        "write GPC0 0xffffffff\nwrite GPCE 1\n");
  const auto commands = parse_script(in, "t.sim", &monitor);
  std::ostringstream out;
  EXPECT_EQ(run_script(commands, "t.sim", monitor, out), 1u);
  EXPECT_EQ(out.str(),
            "read PR = 0x00000005\nread GPC0 = 0x00000000\n"
            "t.sim:4: expect failed: read SRAM[0x0003] = 0x00000000, expected 0x00000001\n"
            "irq @12 GPC0\n");
  EXPECT_FALSE(monitor.on_line) << "the observer is removed when the run ends";
  mk2::Mk2 chip;
  std::istringstream mk2_in("write PR 5\n");
  EXPECT_THROW(parse_script(mk2_in, "t.sim", &chip), InputError);
}

}  // namespace
}  // namespace kron::sim
