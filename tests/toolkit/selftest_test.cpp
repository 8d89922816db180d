// The toolkit test programs (003 section 3.4) against the PCI board model: they pass on a sound board and
// find a fault when one is injected (`memfault`), so they are tests that can fail.
#include <gtest/gtest.h>

#include <sstream>

#include "models/pcib/pcib.hpp"
#include "toolkit/selftest.hpp"

namespace kron::toolkit {
namespace {

void inject(pcib::PciBoard& b, const std::string& word, const std::string& mask) {
  std::string err;
  ASSERT_TRUE(b.command("memfault", {word, mask}, err));
  ASSERT_TRUE(err.empty()) << err;
}

TEST(ToolkitSelftest, MemTestPassesAndFindsAStuckBit) {  // 003 3.4 mk_mem_test <start> <count>
  pcib::PciBoard b;
  std::ostringstream out;
  EXPECT_EQ(mem_test(b, 100, 300, out), 0u);
  inject(b, "0x123", "0x00010000");
  std::ostringstream bad;
  EXPECT_GT(mem_test(b, 100, 300, bad), 0u);
  EXPECT_NE(bad.str().find("word 0x000123"), std::string::npos) << bad.str();
  EXPECT_THROW(mem_test(b, 0x3fffff, 2, out), sim::ConfigError);
}

// Every pass that writes a 1 where a bit is stuck at 0 reports it: word 0's address pattern is 0x00a5a5a5
// (not all zeros, so its low bit is tested by the address pass too), then the all-ones and 0x55555555 passes.
TEST(ToolkitSelftest, MemTestReportsAStuckBitInEveryPassThatWritesIt) {  // 003 3.4 mk_mem_test
  pcib::PciBoard b;
  inject(b, "0x0", "0x00000001");
  std::ostringstream out;
  EXPECT_EQ(mem_test(b, 0, 16, out), 3u);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("mk_mem_test: word 0x000000: wrote 0x00a5a5a5, read 0x00a5a5a4\n", 0), 0u) << text;
  EXPECT_NE(text.find("wrote 0xffffffff, read 0xfffffffe"), std::string::npos) << text;
  EXPECT_NE(text.find("wrote 0x55555555, read 0x55555554"), std::string::npos) << text;
}

TEST(ToolkitSelftest, BasicTestPassesAndChecksTimestampRate) {  // 003 3.4 test_mk
  pcib::PciBoard b;
  std::ostringstream out;
  EXPECT_EQ(basic_test(b, out), 0u) << out.str();
  EXPECT_NE(out.str().find("100000000 ticks"), std::string::npos) << out.str();  // 10 s at 10 MHz
  inject(b, "5", "0x1");  // inside the first 2048 words
  std::ostringstream bad;
  EXPECT_GT(basic_test(b, bad), 0u);
}

TEST(ToolkitSelftest, SampleTestPrints20And84BytesFromCpu0Then1) {  // 003 3.4 mk_sample_test
  pcib::PciBoard b;
  std::ostringstream out;
  EXPECT_EQ(sample_test(b, out), 0u) << out.str();
  const std::string s = out.str();
  const auto t0 = s.find("trace sample, CPU ID 0, 20 bytes");
  const auto t1 = s.find("trace sample, CPU ID 1, 20 bytes");
  const auto r0 = s.find("resource sample, CPU ID 0, 84 bytes");
  const auto r1 = s.find("resource sample, CPU ID 1, 84 bytes, memory address pointer 0x000034");
  ASSERT_NE(t0, std::string::npos);
  ASSERT_NE(r1, std::string::npos);
  EXPECT_LT(t0, t1);
  EXPECT_LT(t1, r0);
  EXPECT_LT(r0, r1);
  inject(b, "4", "0x1000");  // the first sample's low user-data word (0x1000)
  std::ostringstream bad;
  EXPECT_GT(sample_test(b, bad), 0u);
}

TEST(ToolkitSelftest, NiteTestBoundedSoakPassesAndFindsAFault) {  // 003 3.4 mk_nite_test
  pcib::PciBoard b;
  std::ostringstream out;
  NiteOptions o;
  o.max_rounds = 30;
  o.seconds = 60;
  EXPECT_EQ(nite_test(b, o, out), 0u) << out.str();
  EXPECT_NE(out.str().find("30 rounds"), std::string::npos) << out.str();
  inject(b, "2", "0x80000000");  // word 2 of every round's sample area
  std::ostringstream bad;
  EXPECT_GT(nite_test(b, o, bad), 0u);
}

}  // namespace
}  // namespace kron::toolkit
