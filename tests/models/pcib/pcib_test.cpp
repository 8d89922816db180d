// The PCI toolkit board model against 003 (NISTIR 5993): one test per row of Table 1 and Table 2 and per
// stated behaviour of sections 1.2-2.7, each naming its source.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "models/mk2/mk2.hpp"
#include "models/pcib/pcib.hpp"

namespace kron::pcib {
namespace {

// MultiKron II word addresses (000 Table B4) as board byte offsets.
constexpr std::uint32_t mk(unsigned word) { return offset::kChip + 4 * word; }
constexpr unsigned kMkCsr = 1, kMkTimestamp = 2, kMkFilter = 4, kMkEnable = 8, kMkMode = 10, kMkClock = 12,
                   kMkIncrTimestamp = 16, kMkSource = 32, kMkCopy = 64, kMkNoCopy = 80, kMkTrace = 96, kMkResource = 112;

class PciBoardTest : public ::testing::Test {
 protected:
  PciBoardTest() {
    b.on_sample = [this](const sim::SampleOut& s) { samples.emplace_back(s.bytes.begin(), s.bytes.end()); };
  }
  // The recommended default (003 Table 2, "Default Configuration") with sampling enabled on the chip.
  void start(std::uint32_t config = cfg::kDefault) {
    b.write(offset::kConfig, config);
    b.write(mk(kMkCsr), 1);  // 000 Table B1 bit 0: enable sampling
    b.write(mk(kMkFilter), 0xffff);
  }
  std::vector<std::uint8_t> memory_bytes(std::uint32_t words) const {
    std::vector<std::uint8_t> out;
    for (std::uint32_t i = 0; i < words; ++i)
      for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(b.memory_word(i) >> s));
    return out;
  }
  PciBoard b;
  std::vector<std::vector<std::uint8_t>> samples;
};

// ---- Table 1 ---------------------------------------------------------------------------------------

TEST_F(PciBoardTest, Table1Row0x1000ChipWindowIsMultiKronIIWords) {  // Table 1 "0,001,000 - 0,001,1FC"
  b.write(offset::kConfig, cfg::kDefault);
  b.write(mk(kMkSource + 3), 0x12345678);
  EXPECT_EQ(b.mk().peek(kMkSource + 3) & 0xffffffffu, 0x12345678u);  // 000 E3: high bits read 1
  EXPECT_EQ(b.read(mk(kMkSource + 3)) & 0xffffffffu, 0x12345678u);
  EXPECT_EQ(b.peek(mk(kMkSource + 3)) & 0xffffffffu, 0x12345678u);
}

TEST_F(PciBoardTest, Table1NotApplicableRangesReadZeroIgnoreWrites) {  // Table 1 N/A rows; vc not installed
  for (std::uint32_t off : {0x0u, 0xffcu, 0x1210u, 0x3ffcu, 0x4000u, 0x7ffcu, 0x8000u, 0xfffffcu}) {
    b.write(off, 0xffffffff);
    EXPECT_EQ(b.read(off), 0u) << std::hex << off;
  }
  EXPECT_EQ(b.read(offset::kConfig), cfg::kReset);
}

TEST_F(PciBoardTest, Table1Row0x1200SoftwareResetResetsBoardAndChip) {  // Table 1; 003 1.2
  start();
  b.write(mk(kMkSource), 0x55);
  b.write(offset::kMemory + 8, 0xabcdef01);
  b.write(offset::kSoftwareReset, 0);
  EXPECT_EQ(b.read(offset::kConfig), 0x90000000u);  // bits 0-23 zero, V_NUM kept
  EXPECT_EQ(b.read(offset::kPointer), 0u);
  EXPECT_EQ(b.mk().peek(kMkSource) & 0xffffffffu, 0u);  // "always resets the MultiKron_II"
  EXPECT_EQ(b.memory_word(2), 0xabcdef01u);  // memory keeps its data (ERRATUM E74)
  EXPECT_EQ(b.read(offset::kSoftwareReset), 0u);
}

TEST_F(PciBoardTest, Table1Row0x1208PointerReadable24Bits) {  // Table 1; 003 2.7
  b.write(offset::kConfig, cfg::kMkOe);  // LOCAL = 0: writable
  b.write(offset::kPointer, 0xff123456);
  EXPECT_EQ(b.read(offset::kPointer), 0x123456u);
}

TEST_F(PciBoardTest, Table1LocalMemoryIs4MWordsFrom0x1000000) {  // Table 1 "1,000,000 - 1,FFF,FFC"; 003 2.7
  b.write(offset::kMemory, 0x11111111);
  b.write(0x1fffffc, 0x22222222);
  EXPECT_EQ(b.read(offset::kMemory), 0x11111111u);
  EXPECT_EQ(b.read(0x1fffffc), 0x22222222u);
  EXPECT_EQ(b.memory_word(kMemoryWords - 1), 0x22222222u);
  b.write(0x1000006, 0x33333333);  // the two low address bits are not decoded (003 2.1)
  EXPECT_EQ(b.memory_word(1), 0x33333333u);
}

TEST_F(PciBoardTest, Table1Row0x120CTestOperationReadAndWrite) {  // Table 1 TEST Operation; 003 2.5
  start(cfg::kDefault | cfg::kTest);
  b.write(mk(kMkTrace), 0x0102030405060708ull);
  b.drain();
  EXPECT_EQ(b.fifo_level(), 20u);  // TEST: the state machine leaves the FIFO to the processor
  EXPECT_EQ(b.read(offset::kTestOp), 0x10u);  // "read 1 data byte from the FIFO": the header (CPU 0, trace)
  EXPECT_EQ(b.fifo_level(), 19u);
  b.write(offset::kPointer, 100);  // TEST active: the pointer is writable
  b.write(offset::kTestOp, 0);     // "assemble 4 data bytes from the FIFO and write it into memory and incr the MAP"
  EXPECT_EQ(b.memory_word(100), 0x00000000u);  // timestamp bytes 1-4 (0 at this clock)
  EXPECT_EQ(b.read(offset::kPointer), 101u);
  EXPECT_EQ(b.fifo_level(), 15u);
}

// ---- Table 2: Configuration Register ------------------------------------------------------------

TEST_F(PciBoardTest, Table2ResetValueAndReadOnlyVersion) {  // Table 2; 003 1.2 "On reset ... zeros"
  EXPECT_EQ(b.read(offset::kConfig), 0x90000000u);
  b.write(offset::kConfig, 0xffffffff);
  EXPECT_EQ(b.read(offset::kConfig), 0x901dffffu);  // V_NUM read only; 17, 21-23 N/A
}

TEST_F(PciBoardTest, Table2RecommendedDefault003201) {  // Table 2 / "Default Configuration"
  EXPECT_EQ(describe_config(0x90003201),
            "CPU_ID=0x01 TEST=0 LOCAL=1 EXT_CPU=0 WAIT_CPU=0 TESTB=1 MK_OE=1 WRAPB=0 EN_EXT=0 DIS_STATE=0 "
            "TS_RATIO=0 DIV2=0 WAIT_MEM=0 V_NUM=0x90");
  b.write(offset::kConfig, cfg::kDefault);
  EXPECT_EQ(b.node_hz(), 40'000'000u);  // "NODECLK = 40 MHz and Timestamp clock = 10 MHz"
  EXPECT_EQ(b.ts_hz(), 10'000'000u);
  start();
  b.write(mk(kMkSource), 0xfeed);
  b.write(mk(kMkTrace), 1);
  b.drain();
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0][0] >> 5, 0);  // CPU ID 0, Source Address Register 0
  EXPECT_EQ(b.read(offset::kPointer), 5u);  // one 20-byte Trace sample = five words in local memory
}

TEST_F(PciBoardTest, Table2Bits0To7CpuIdLines) {  // Table 2 CPU_ID; 003 2.2
  start(cfg::kDefault & ~0xffu);
  b.write(offset::kConfig, (cfg::kDefault & ~0xffu) | 0x08);  // line 3
  b.write(mk(kMkSource + 3), 0x333);
  b.write(mk(kMkTrace), 1);
  b.write(offset::kConfig, (cfg::kDefault & ~0xffu) | 0x00);  // no line: CPU 0 (ERRATUM E73)
  b.write(mk(kMkTrace), 2);
  b.drain();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0][0] >> 5, 3);
  EXPECT_EQ(samples[0][10] << 8 | samples[0][11], 0x333);  // 000 Table B2: source after the 56-bit timestamp
  EXPECT_EQ(samples[1][0] >> 5, 0);
}

TEST_F(PciBoardTest, Table2Bit10ExtCpuSelectsXcpuLines) {  // Table 2 EXT_CPUID
  start(cfg::kDefault | cfg::kExtCpu);
  b.set_cpu(6);  // XCPU[6]
  b.write(mk(kMkTrace), 1);
  b.write(offset::kConfig, cfg::kDefault);  // back to CPU_ID = 01
  b.write(mk(kMkTrace), 2);
  b.drain();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0][0] >> 5, 6);
  EXPECT_EQ(samples[1][0] >> 5, 0);
}

TEST_F(PciBoardTest, Table2Bit9LocalZeroSendsToCable) {  // Table 2 LOCAL; 003 1.3, 2.6
  const std::string path = ::testing::TempDir() + "pcib_cable.bin";
  std::string err;
  ASSERT_TRUE(b.command("cable", {path}, err));
  ASSERT_TRUE(err.empty()) << err;
  start(cfg::kDefault & ~cfg::kLocal);
  b.write(mk(kMkTrace), 0xabc);
  b.drain();
  ASSERT_TRUE(b.command("cable", {"off"}, err));
  EXPECT_EQ(b.read(offset::kPointer), 0u);  // nothing in local memory
  EXPECT_EQ(b.cable_bytes(), 20u);
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> got{std::istreambuf_iterator<char>(in), {}};
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(got, samples[0]);  // the byte stream as sent (ERRATUM E78)
}

TEST_F(PciBoardTest, Table2Bit11WaitCpuLatchedAtMultiKronReset) {  // Table 2 WAIT_CPU; 003 1.2 Bit 11
  b.write(offset::kConfig, cfg::kDefault | cfg::kWaitCpu | cfg::kEnExt);
  std::uint64_t t = b.now();
  b.read(mk(kMkCsr));
  const std::uint64_t fast = b.now() - t;
  std::string err;
  ASSERT_TRUE(b.command("extreset", {}, err));  // EN_EXT: "an externally supplied signal will also cause a MultiKron reset"
  EXPECT_TRUE(err.empty()) << err;
  t = b.now();
  b.read(mk(kMkCsr));
  EXPECT_EQ(b.now() - t, fast + 1);
  EXPECT_EQ(b.read(mk(kMkCsr)) >> 12 & 3, 1u);  // 000 Table B1 bits 12-13
}

TEST_F(PciBoardTest, Table2Bit12TestBZeroPlacesMultiKronInTestMode) {  // Table 2 TESTB
  b.write(offset::kConfig, cfg::kDefault & ~cfg::kTestB);
  b.write(mk(kMkIncrTimestamp), 0);  // 000 Table B4 "*": only in TEST mode
  constexpr std::uint64_t k56 = (std::uint64_t{1} << 56) - 1;
  EXPECT_EQ(b.mk().peek(kMkTimestamp) & k56, 1u);  // stopped in TEST mode, incremented once
  b.write(offset::kConfig, cfg::kDefault);
  const std::uint64_t ts = b.mk().peek(kMkTimestamp) & k56;
  b.write(mk(kMkIncrTimestamp), 0);  // ignored outside TEST mode
  EXPECT_LE(b.mk().peek(kMkTimestamp) & k56, ts + 2);  // counting normally, not incremented by the write
}

TEST_F(PciBoardTest, Table2Bit13MkOeLowTimesOut) {  // Table 2 MK_OE; 003 1.2 Bit 13
  EXPECT_THROW(b.read(mk(kMkCsr)), sim::ConfigError);  // reset value: outputs disabled
  EXPECT_THROW(b.write(mk(kMkCsr), 1), sim::ConfigError);
  b.write(offset::kConfig, cfg::kDefault);
  EXPECT_NO_THROW(b.read(mk(kMkCsr)));
}

TEST_F(PciBoardTest, Table2Bit14WrapBSimpleBufferStopsAtMaximum) {  // Table 2 WRAPB = 1; 003 1.3
  b.write(offset::kConfig, cfg::kDefault & ~cfg::kLocal);
  b.write(offset::kPointer, kMemoryWordMask - 5);  // six words before the maximum
  start(cfg::kDefault | cfg::kWrapB);
  b.write(mk(kMkTrace), 1);  // 5 words: fits
  b.write(mk(kMkTrace), 2);  // the pointer is at 3FFFFF: "new writes are disabled"
  b.drain();
  EXPECT_EQ(b.read(offset::kPointer), kMemoryWordMask);  // "stops incrementing"
  EXPECT_EQ(b.lost_full(), 20u);  // the whole second sample discarded, each byte counted
  EXPECT_EQ(b.memory_word(kMemoryWordMask), 0u);  // ERRATUM E71
  EXPECT_EQ(samples.size(), 1u);  // only the sample that reached memory is reported
}

TEST_F(PciBoardTest, Table2Bit14WrapBCircularWrapsWithCountInTopBits) {  // Table 2 WRAPB = 0; 003 1.3
  b.write(offset::kConfig, cfg::kDefault & ~cfg::kLocal);
  b.write(offset::kPointer, 0x3ffffe);
  start();
  b.write(mk(kMkTrace), 1);  // five words: 3FFFFE, 3FFFFF, then 400000 = word 0, 1, 2
  b.drain();
  EXPECT_EQ(b.read(offset::kPointer), 0x400003u);  // "from 3FFFFF the results are actually 400000"
  EXPECT_EQ(b.memory_word(0x3ffffe) >> 24, 0x10u);  // the header
  b.write(offset::kConfig, cfg::kDefault & ~cfg::kLocal);
  b.write(offset::kPointer, 0xfffffe);
  start();
  b.write(mk(kMkTrace), 2);
  b.drain();
  EXPECT_EQ(b.read(offset::kPointer), 3u);  // "and from FFFFFF to 0"
}

TEST_F(PciBoardTest, Table2Bit15EnExtUsesExternalClock) {  // Table 2 EN_EXT; 003 1.2 Bits 15, 19
  b.set_clocks(25'000'000, 0);
  b.write(offset::kConfig, cfg::kDefault | cfg::kEnExt | cfg::kDiv2);
  EXPECT_EQ(b.node_hz(), 25'000'000u);  // "DIV2 has no effect on it"
  EXPECT_EQ(b.ts_hz(), 6'250'000u);
}

TEST_F(PciBoardTest, Table2Bit16DisStateHoldsFifoThenResumes) {  // Table 2 DIS_STATE; 003 1.2 Bit 16
  start(cfg::kDefault | cfg::kDisState);
  b.write(mk(kMkTrace), 1);
  b.drain();
  EXPECT_EQ(b.fifo_level(), 20u);
  EXPECT_EQ(b.read(offset::kPointer), 0u);
  EXPECT_EQ(samples.size(), 0u);  // reported when it reaches memory, not when the chip sends it
  b.write(offset::kConfig, cfg::kDefault);
  EXPECT_EQ(b.fifo_level(), 0u);
  EXPECT_EQ(b.read(offset::kPointer), 5u);
  EXPECT_EQ(samples.size(), 1u);
}

TEST_F(PciBoardTest, Table2Bits18And19TimestampRatioAndDiv2) {  // Table 2 TS_RATIO, DIV2; 003 1.2
  const struct { std::uint32_t bits; std::uint64_t node, ts, per_tick; } rows[] = {
      {0, 40'000'000, 10'000'000, 4},
      {cfg::kTsRatio, 40'000'000, 13'333'333, 3},
      {cfg::kDiv2, 20'000'000, 5'000'000, 4},
      {cfg::kDiv2 | cfg::kTsRatio, 20'000'000, 6'666'666, 3},
  };
  for (const auto& r : rows) {
    b.write(offset::kConfig, cfg::kDefault | r.bits);
    EXPECT_EQ(b.node_hz(), r.node);
    EXPECT_EQ(b.ts_hz(), r.ts);
    const std::uint64_t t0 = b.mk().peek(kMkTimestamp);
    b.tick(r.per_tick * 3000);
    EXPECT_EQ(b.mk().peek(kMkTimestamp) - t0, 3000u) << r.bits;  // exactly one tick per 4 or 3 node clocks
  }
}

TEST_F(PciBoardTest, Table2Bit20WaitMemStoredWithoutEffect) {  // Table 2 WAIT_MEM (MultiKron_vc only)
  b.write(offset::kConfig, cfg::kDefault | cfg::kWaitMem);
  EXPECT_EQ(b.read(offset::kConfig) & cfg::kWaitMem, cfg::kWaitMem);
}

// ---- FIFO, memory, pointer (003 2.4-2.7) -------------------------------------------------------

TEST_F(PciBoardTest, FifoFullFlagHoldsChipOutputWithoutLoss) {  // 003 2.4: 1024 ranks, full flag to the chip
  start(cfg::kDefault | cfg::kDisState);
  for (int i = 0; i < 53; ++i) {  // 1060 bytes: 51.2 samples fill the board FIFO, the chip holds the rest
    b.write(mk(kMkTrace), static_cast<std::uint64_t>(i));
    b.tick(100);
  }
  EXPECT_EQ(b.fifo_level(), 1024u);
  EXPECT_EQ(b.lost_fifo(), 0u);
  EXPECT_EQ(b.mk().peek(6) & 0xffffffffu, 0u);  // no overrun in the chip either
  EXPECT_THROW(b.drain(), sim::HangError);  // the chip waits on the full flag for ever
  b.write(offset::kConfig, cfg::kDefault);  // resume the state machine: everything reaches memory
  b.drain();
  EXPECT_EQ(b.read(offset::kPointer), 53u * 5);
  EXPECT_EQ(samples.size(), 53u);
  EXPECT_EQ(b.lost_fifo() + b.lost_full() + b.lost_oe(), 0u);
}

TEST_F(PciBoardTest, MemoryWordByteOrderFirstByteMostSignificant) {  // 003 2.7; ERRATUM E70
  start();
  b.write(mk(kMkSource), 0xa1b2c3d4);
  b.write(mk(kMkResource), 0x1122334455667788ull);
  b.drain();
  ASSERT_EQ(samples.size(), 1u);
  ASSERT_EQ(samples[0].size(), 84u);
  EXPECT_EQ(memory_bytes(21), samples[0]);
  EXPECT_EQ(b.memory_word(0) >> 24, samples[0][0]);
}

TEST_F(PciBoardTest, PointerInterlockIgnoresWritesInLocalMode) {  // 003 2.7 safety interlock; 1.2 Bit 16
  b.write(offset::kConfig, cfg::kDefault);  // LOCAL = 1, TEST = 0
  b.write(offset::kPointer, 77);
  EXPECT_EQ(b.read(offset::kPointer), 0u);
  b.write(offset::kConfig, cfg::kDefault | cfg::kTest);  // "requires either TEST to be active
  b.write(offset::kPointer, 77);
  EXPECT_EQ(b.read(offset::kPointer), 77u);
  b.write(offset::kConfig, cfg::kDefault & ~cfg::kLocal);  // or LOCAL to be inactive"
  b.write(offset::kPointer, 78);
  EXPECT_EQ(b.read(offset::kPointer), 78u);
}

TEST_F(PciBoardTest, MemdumpWritesWordsMostSignificantByteFirst) {  // `memdump START COUNT FILE`
  b.write(offset::kMemory + 4, 0x01020304);
  b.write(offset::kMemory + 8, 0x05060708);
  const std::string path = ::testing::TempDir() + "pcib_memdump.bin";
  std::string err;
  ASSERT_TRUE(b.command("memdump", {"1", "2", path}, err));
  ASSERT_TRUE(err.empty()) << err;
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> got{std::istreambuf_iterator<char>(in), {}};
  EXPECT_EQ(got, (std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_TRUE(b.command("memdump", {"0x3fffff", "2", path}, err));
  EXPECT_FALSE(err.empty());
  err.clear();
  EXPECT_TRUE(b.command("memdump", {"x"}, err));
  EXPECT_FALSE(err.empty());
  EXPECT_FALSE(b.command("nosuch", {}, err));
}

// 003 2.3: counters 0 and 2 on the two DEVSEL# versions as enables, counter 4 on elapsed clocks.
TEST_F(PciBoardTest, DevselWiringsMeasureBusUtilisation) {  // 003 section 2.3
  b.write(offset::kConfig, cfg::kDefault);
  // 000 Tables B5-B7: mode x011 external enable (counters 0, 2), x001 clock (counter 4); clock 0001 node.
  b.write(mk(kMkMode), 0x00010303);    // c0 = 3 (external enable), c2 = 3, c4 = 1 (clock)
  b.write(mk(kMkClock), 0x00010101);   // c0, c2, c4: node clock
  b.write(mk(kMkEnable), 0x00030303);  // 0011: reset and enable c0, c2, c4
  b.set_external(0, true);             // another PCI master holds the bus for 1000 node clocks
  b.tick(1000);
  b.set_external(0, false);
  for (int i = 0; i < 10; ++i) b.read(offset::kMemory);  // ten board accesses of kPciAccessClocks each
  b.tick(500);
  // 000: a read with copy (64+j) copies all counters to the shadow registers; reads without copy (80+j)
  // return the shadows. The copying read is itself a board access, so DEVSEL# is up for part of it.
  const std::uint64_t all = b.read(mk(kMkCopy + 0)) & 0xffffffffu;
  const std::uint64_t board = b.read(mk(kMkNoCopy + 2)) & 0xffffffffu;
  const std::uint64_t elapsed = b.read(mk(kMkNoCopy + 4)) & 0xffffffffu;
  EXPECT_EQ(all - board, 1000u);  // the other master's share, exactly
  EXPECT_GE(board, 10 * PciBoard::kPciAccessClocks);
  EXPECT_LE(board, 10 * PciBoard::kPciAccessClocks + 4);
  EXPECT_GE(elapsed, 1500 + 10 * PciBoard::kPciAccessClocks);
  EXPECT_LE(elapsed, 1500 + 10 * PciBoard::kPciAccessClocks + 30);  // + the mode/clock/enable writes
  EXPECT_THROW(b.set_external(2, true), sim::ConfigError);  // hardwired
}

}  // namespace
}  // namespace kron::pcib
