// kron rdsample --pci-memory: the board memory file formats (src/models/pcib/image.hpp) and mk_rdsample's
// reading of a PCI toolkit board's local memory (src/toolkit/rdsample.hpp): simple and circular buffers,
// the wrap count, -s/-e, and refusal of bad dumps naming the file and offset. (The reader end of the
// cable, `-` as a raw stream for the analysis tools, is tested in tests/analysis/input_test.cpp.)
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "kron/core/error.hpp"
#include "kron/format/classic.hpp"
#include "models/pcib/image.hpp"
#include "models/pcib/pcib.hpp"
#include "toolkit/rdsample.hpp"
#include "support/input_error.hpp"

namespace kron::toolkit {
namespace {

using pcib::kMemoryWords;
constexpr std::uint32_t kCircular = pcib::cfg::kDefault;                    // WRAPB = 0
constexpr std::uint32_t kSimple = pcib::cfg::kDefault | pcib::cfg::kWrapB;  // WRAPB = 1

std::vector<std::uint8_t> sample_bytes(std::uint64_t i) {  // sample i: every third a resource sample
  Sample s;
  s.type = i % 3 == 2 ? SampleType::Resource : SampleType::Trace;
  s.timestamp = 1000 + 7 * i;
  s.source = 0x100;
  s.data = i;
  return classic::encode(classic::Chip::Mk2, s);
}

// A memory written the way the board writes it: the stream from word 0 on, four bytes a word most
// significant first (ERRATUM E70), round the ring in circular mode. Returns the samples' start words
// (in stream words) and sets `total` to the stream words written.
struct Written {
  std::vector<std::uint32_t> memory = std::vector<std::uint32_t>(kMemoryWords, 0);
  std::vector<std::uint64_t> starts;
  std::vector<std::vector<std::uint8_t>> samples;
  std::uint64_t total = 0;
  bool simple = false;  // the board stops writing at word 3FFFFF (ERRATUM E71)
  void put(const std::vector<std::uint8_t>& b) {
    starts.push_back(total);
    samples.push_back(b);
    for (std::size_t k = 0; k < b.size(); k += 4, ++total)
      if (!simple || total < kMemoryWords - 1) memory[total % kMemoryWords] = std::uint32_t{b[k]} << 24 | std::uint32_t{b[k + 1]} << 16 | std::uint32_t{b[k + 2]} << 8 | b[k + 3];
  }
};

pcib::MemoryDump dump_of(const std::vector<std::uint8_t>& image, std::optional<std::uint32_t> pointer = {},
                         std::optional<std::uint32_t> config = {}) {
  return pcib::parse_memory_dump("board.img", image, pointer, config);
}

using kron::testing::error_of;

TEST(PciRdsample, BoardModelImageGivesTheStreamTheBoardSent) {  // 003 3.5 mk_rdsample; Table 1 0x1208
  pcib::PciBoard b;
  std::vector<std::uint8_t> sent;
  b.on_sample = [&](const sim::SampleOut& s) { sent.insert(sent.end(), s.bytes.begin(), s.bytes.end()); };
  b.write(pcib::offset::kConfig, pcib::cfg::kDefault);
  b.write(pcib::offset::kChip + 4 * 1, 1u | 1u << 2);  // CSR: enable sampling, wait on overrun (000 Table B1)
  b.write(pcib::offset::kChip + 4 * 4, 0xffff);    // Filter Register
  for (unsigned i = 0; i < 10; ++i) b.write(pcib::offset::kChip + 4 * (i % 4 == 3 ? 112 : 96), i);
  b.drain();
  const std::string path = ::testing::TempDir() + "pci_rdsample.img";
  std::string err;
  ASSERT_TRUE(b.command("memimage", {path}, err));
  ASSERT_TRUE(err.empty()) << err;
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> file{std::istreambuf_iterator<char>(in), {}};
  const auto m = dump_of(file);
  EXPECT_TRUE(m.image);
  EXPECT_EQ(m.pointer, b.pointer());
  EXPECT_EQ(m.config, b.config());
  EXPECT_EQ(m.word_count(), b.pointer());  // words 0 up to the pointer
  const auto r = rdsample(m);
  EXPECT_EQ(r.stream, sent);
  EXPECT_EQ(r.trace, 8u);
  EXPECT_EQ(r.resource, 2u);
  EXPECT_EQ(r.skipped_head + r.cut_tail, 0u);
}

TEST(PciRdsample, CircularBufferThatWrappedIsReadOldestFirst) {  // 003 1.3 circular buffer, wrap bits; 2.7
  Written w;
  for (std::uint64_t i = 0; w.total < kMemoryWords + 1000; ++i) w.put(sample_bytes(i));
  const auto p = static_cast<std::uint32_t>(w.total % kMemoryWords | (w.total / kMemoryWords) << 22);
  ASSERT_EQ(p >> 22, 1u);  // "from 3FFFFF ... 400000": one wrap
  const auto image = pcib::encode_memory_image(kCircular, p, 0, w.memory);
  // The samples not overwritten: those that start at or after the oldest word still held.
  const std::uint64_t oldest = w.total - kMemoryWords;
  std::vector<std::uint8_t> want;
  std::uint64_t first = 0;
  for (std::size_t i = 0; i < w.starts.size(); ++i)
    if (w.starts[i] >= oldest) {
      if (want.empty()) first = w.starts[i];
      want.insert(want.end(), w.samples[i].begin(), w.samples[i].end());
    }
  const auto r = rdsample(dump_of(image));
  EXPECT_TRUE(r.unwrapped);
  EXPECT_EQ(r.wraps, 1u);
  EXPECT_EQ(r.first_word, p & 0x3fffff);
  EXPECT_EQ(r.words, kMemoryWords);
  EXPECT_EQ(r.skipped_head, 4 * (first - oldest));
  EXPECT_GT(r.skipped_head, 0u);  // this layout cuts the oldest sample
  EXPECT_EQ(r.stream.size(), want.size());
  EXPECT_TRUE(r.stream == want);
  // Wrap counts 2 and 3 read the same; a count of 0 after four wraps needs --wrapped.
  EXPECT_TRUE(rdsample(dump_of(image, (p & 0x3fffff) | 3u << 22)).stream == want);
  RdsampleOptions o;
  o.wrapped = true;
  EXPECT_TRUE(rdsample(dump_of(image, p & 0x3fffff), o).stream == want);
  // The same memory as a simple buffer is read from word 0, where a sample is cut: refused.
  EXPECT_NE(error_of([&] { rdsample(dump_of(image, {}, kSimple)); }).find("board.img: offset "), std::string::npos);
}

TEST(PciRdsample, SimpleBufferFullKeepsTheOldest) {  // 003 1.3 simple buffer; ERRATUM E71
  Written clean;  // the board stopped at 3FFFFF: the sample that reached it is cut
  clean.simple = true;
  for (std::uint64_t i = 0; clean.total < kMemoryWords - 1; ++i) clean.put(sample_bytes(i));
  ASSERT_GT(clean.total, kMemoryWords - 1u);
  std::vector<std::uint32_t> mem(clean.memory.begin(), clean.memory.begin() + (kMemoryWords - 1));
  const auto r = rdsample(dump_of(pcib::encode_memory_image(kSimple, kMemoryWords - 1, 0, mem)));
  EXPECT_TRUE(r.full);
  EXPECT_FALSE(r.circular);
  EXPECT_EQ(r.trace + r.resource, clean.samples.size() - 1);  // the last one is cut by the full memory
  EXPECT_EQ(r.cut_tail, 4 * (kMemoryWords - 1 - clean.starts.back()));
  EXPECT_NE(r.describe().find("full"), std::string::npos);
}

TEST(PciRdsample, StartAndEndAreMemoryWords) {  // 003 3.5: -s start_addr (default 0), -e end_addr (default pointer)
  Written w;
  for (std::uint64_t i = 0; i < 3; ++i) w.put(sample_bytes(i));  // trace (5 words), trace (5), resource (21)
  const std::vector<std::uint32_t> mem(w.memory.begin(), w.memory.begin() + 31);
  const auto image = pcib::encode_memory_image(kCircular, 31, 0, mem);
  RdsampleOptions o;
  o.start = 5;
  auto r = rdsample(dump_of(image), o);
  EXPECT_EQ(r.trace + r.resource, 2u);
  EXPECT_EQ(r.skipped_head, 0u);
  o.start = 3;  // inside sample 0: its tail is skipped
  r = rdsample(dump_of(image), o);
  EXPECT_EQ(r.skipped_head, 8u);
  EXPECT_EQ(r.trace + r.resource, 2u);
  o.start.reset();
  o.end = 20;  // inside the resource sample: it is dropped, counted
  r = rdsample(dump_of(image), o);
  EXPECT_EQ(r.trace, 2u);
  EXPECT_EQ(r.resource, 0u);
  EXPECT_EQ(r.cut_tail, 40u);
  o.end = 40;  // beyond the words the image holds
  EXPECT_NE(error_of([&] { rdsample(dump_of(image), o); }).find("the dump holds words 0x000000-0x00001e"), std::string::npos);
}

TEST(PciRdsample, FirstWholeSampleIsFoundPastLookAlikes) {  // resynchronisation (docs/models-mk1-pcib.md)
  // A resource sample whose counters look like sample headers: word 16 (counter 11) like a trace sample
  // whose 5 words end exactly where the next real sample starts, but with a timestamp (counter 12) later
  // than that sample's; word 17 (counter 12, 0xff) like a resource sample cut by the end. Neither is taken.
  Sample a;
  a.type = SampleType::Resource;
  a.timestamp = 1000;
  a.counters[11] = 0x10000000;
  a.counters[12] = 0xffffffff;
  Written w;
  w.put(classic::encode(classic::Chip::Mk2, a));  // words 0-20
  w.put(sample_bytes(1));                          // 21-25, ts 1007
  w.put(sample_bytes(3));                          // 26-30
  const std::vector<std::uint32_t> mem(w.memory.begin(), w.memory.begin() + 31);
  RdsampleOptions o;
  o.start = 16;
  const auto r = rdsample(dump_of(pcib::encode_memory_image(kCircular, 31, 0, mem)), o);
  EXPECT_EQ(r.skipped_head, 20u);
  EXPECT_EQ(r.trace, 2u);
  EXPECT_EQ(r.resource, 0u);
}

// Two samples taken in one timestamp tick (two processors, or one probe right after another) are in time
// order: reading from inside a sample (-s, or the oldest word of a wrapped buffer), the search for the first
// whole sample takes the first of them, not the second.
TEST(PciRdsample, SamplesOfOneTimestampTickAreInOrder) {  // 003 3.5 mk_rdsample -s; 000 TIMESTAMP
  Written w;
  for (std::uint64_t i = 0; i < 4; ++i) {  // trace samples of 5 words: 0-4, 5-9, 10-14, 15-19
    Sample s;
    s.timestamp = i == 3 ? 1007 : 1000;
    s.source = 0x100 + static_cast<std::uint32_t>(i);
    s.data = i;
    w.put(classic::encode(classic::Chip::Mk2, s));
  }
  const std::vector<std::uint32_t> mem(w.memory.begin(), w.memory.begin() + 20);
  RdsampleOptions o;
  o.start = 3;  // inside sample 0: the first whole one is sample 1, at word 5
  const auto r = rdsample(dump_of(pcib::encode_memory_image(kCircular, 20, 0, mem)), o);
  EXPECT_EQ(r.skipped_head, 8u);
  EXPECT_EQ(r.trace, 3u);
  std::vector<std::uint8_t> want;
  for (std::size_t i = 1; i < 4; ++i) want.insert(want.end(), w.samples[i].begin(), w.samples[i].end());
  EXPECT_TRUE(r.stream == want);
}

TEST(PciRdsample, RawDumpNeedsThePointer) {  // memdump output: words from 0, no header
  Written w;
  w.put(sample_bytes(0));
  w.put(sample_bytes(2));
  std::vector<std::uint8_t> raw;
  for (std::uint32_t k = 0; k < 26; ++k)
    for (int s = 24; s >= 0; s -= 8) raw.push_back(static_cast<std::uint8_t>(w.memory[k] >> s));
  EXPECT_NE(error_of([&] { dump_of(raw); }).find("board.img: offset 0: a raw memory dump"), std::string::npos);
  const auto m = dump_of(raw, 26);
  EXPECT_FALSE(m.image);
  EXPECT_EQ(m.config, pcib::cfg::kDefault);  // 003's recommended default: circular
  const auto r = rdsample(m);
  EXPECT_EQ(r.stream, raw);
  raw.push_back(0);
  EXPECT_NE(error_of([&] { dump_of(raw, 26); }).find("board.img: offset 104: a raw memory dump is whole 32-bit words"),
            std::string::npos);
}

TEST(PciRdsample, BadDumpsAreRefusedWithFileAndOffset) {
  Written w;
  w.put(sample_bytes(0));
  std::vector<std::uint32_t> mem(w.memory.begin(), w.memory.begin() + 10);
  mem[5] = 0x00112233;  // word 5: header byte 0x00, type bits 00
  auto image = pcib::encode_memory_image(kCircular, 10, 0, mem);
  EXPECT_NE(error_of([&] { rdsample(dump_of(image)); }).find("board.img: offset 60: memory word 0x000005: header byte 0x00"),
            std::string::npos);  // 40-byte header + 5 words
  auto bad = image;
  bad[8] = 1;
  EXPECT_NE(error_of([&] { dump_of(bad); }).find("offset 8: byte-order mark"), std::string::npos);
  bad = image;
  bad[12] = 2;
  EXPECT_NE(error_of([&] { dump_of(bad); }).find("offset 12: board memory image version 2.0"), std::string::npos);
  bad = image;
  bad[16] = 200;
  EXPECT_NE(error_of([&] { dump_of(bad); }).find("offset 16: header size 200"), std::string::npos);
  bad = image;
  bad[27] = 1;  // pointer 0x0100000a
  EXPECT_NE(error_of([&] { dump_of(bad); }).find("offset 24: memory address pointer"), std::string::npos);
  bad = image;
  bad[31] = 0x01;  // first word 0x0100_0000
  EXPECT_NE(error_of([&] { dump_of(bad); }).find("offset 28: words"), std::string::npos);
  bad = image;
  bad.pop_back();
  EXPECT_NE(error_of([&] { dump_of(bad); }).find("offset 79: the header announces 10 memory words"), std::string::npos);
  bad.resize(20);
  EXPECT_NE(error_of([&] { dump_of(bad); }).find("offset 20: board memory image header cut short"), std::string::npos);
  // A pointer beyond the words the image holds.
  EXPECT_NE(error_of([&] { rdsample(dump_of(image, 12)); }).find("dump holds words 0x000000-0x000009"), std::string::npos);
}

}  // namespace
}  // namespace kron::toolkit
