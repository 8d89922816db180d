// kron trace files: round trip, validation of hostile headers, crash-truncated files.
#include "kron/format/trace_file.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "kron/core/error.hpp"
#include "support/file_bytes.hpp"

using namespace kron;
using namespace kron::tracefile;
namespace fs = std::filesystem;

namespace {
fs::path temp_path(const char* name) { return fs::temp_directory_path() / (std::string("kron-tf-") + name); }

std::vector<Sample> some_samples() {
  std::vector<Sample> v;
  for (unsigned i = 0; i < 10; ++i) {
    Sample s;
    s.type = i % 3 == 2 ? SampleType::Resource : SampleType::Trace;
    s.cpu = static_cast<std::uint16_t>(i % 4);
    s.group = static_cast<std::uint8_t>(i % 16);
    s.source = 0x10000 + i;
    s.thread = 4242;
    s.timestamp = 1000 + 10 * i;
    s.data = 0xabcdef00u + i;
    s.flags = i == 5 ? kFlagFifoOverrun : 0;
    if (s.is_resource())
      for (unsigned c = 0; c < 16; ++c) s.counters[c] = (1ull << 40) + c * i;
    v.push_back(s);
  }
  return v;
}

using kron::testing::slurp;
using kron::testing::spit;

fs::path write_file(const char* name, const std::vector<Sample>& samples, bool finish = true) {
  const auto p = temp_path(name);
  FileHeader h = make_header();
  h.clock_hz = 10'000'000;
  h.node = 3;
  set_counter_name(h, 0, "clock");
  set_program(h, "./sample1 --loops 3");
  {
    Writer w(p.string(), h);
    for (const auto& s : samples) w.append(s);
    if (finish) {
      h.overruns = 2;
      h.passed_filter = samples.size() + 2;
      LaneEntry lane{100, 101, samples.size(), 2, 0, 0, 0};
      w.finish(h, std::span(&lane, 1));
    }
  }
  return p;
}
}  // namespace

TEST(TraceFile, RoundTripKeepsEverySampleAndCount) {
  const auto samples = some_samples();
  const auto p = write_file("roundtrip", samples);
  Reader r(p.string());
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.header().clock_hz, 10'000'000u);
  EXPECT_EQ(r.header().samples, samples.size());
  EXPECT_EQ(r.header().overruns, 2u);
  EXPECT_EQ(counter_name(r.header(), 0), "clock");
  EXPECT_EQ(program(r.header()), "./sample1 --loops 3");
  ASSERT_EQ(r.lanes().size(), 1u);
  EXPECT_EQ(r.lanes()[0].tid, 101u);
  std::vector<Sample> back;
  Sample s;
  while (r.next(s)) back.push_back(s);
  EXPECT_EQ(back, samples);
}

TEST(TraceFile, BadMagicNamesFileAndOffset) {
  const auto p = write_file("badmagic", some_samples());
  auto b = slurp(p);
  b[0] = 'X';
  spit(p, b);
  try {
    Reader r(p.string());
    FAIL() << "accepted a bad magic";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), p.string());
    EXPECT_EQ(e.offset(), 0u);
    EXPECT_NE(std::string(e.what()).find("bad magic"), std::string::npos);
  }
}

TEST(TraceFile, OtherMajorVersionRefused) {
  const auto p = write_file("major", some_samples());
  auto b = slurp(p);
  FileHeader h;
  std::memcpy(&h, b.data(), sizeof h);
  h.major = 99;
  std::memcpy(b.data(), &h, sizeof h);
  spit(p, b);
  EXPECT_THROW(Reader r(p.string()), InputError);
}

TEST(TraceFile, HostileOffsetsRefused) {
  const auto p = write_file("hostile", some_samples());
  auto b = slurp(p);
  FileHeader h;
  std::memcpy(&h, b.data(), sizeof h);
  for (int which = 0; which < 4; ++which) {
    FileHeader x = h;
    if (which == 0) x.records_bytes = ~0ull;
    if (which == 1) x.lane_count = 0x7fffffff;
    if (which == 2) x.header_size = 0xfffffff0u;
    if (which == 3) x.lanes_offset = ~0ull - 10;
    std::memcpy(b.data(), &x, sizeof x);
    spit(p, b);
    EXPECT_THROW(Reader r(p.string()), InputError) << which;
  }
}

TEST(TraceFile, CompleteFileTruncatedIsAnErrorNotGarbage) {
  const auto p = write_file("trunc", some_samples());
  auto b = slurp(p);
  b.resize(b.size() - 60);  // cuts into the lane table and the records' declared area
  spit(p, b);
  EXPECT_THROW(Reader r(p.string()), InputError);
}

// A recorder killed mid-write leaves an unclosed file: every whole record is read, the partial one
// is dropped and its bytes are counted.
TEST(TraceFile, UnclosedFileDropsOnlyThePartialLastRecord) {
  const auto samples = some_samples();
  const auto p = write_file("unclosed", samples, /*finish=*/false);
  auto b = slurp(p);
  b.resize(b.size() - 20);  // the last record (resource? trace) loses its tail
  spit(p, b);
  Reader r(p.string());
  EXPECT_FALSE(r.complete());
  std::vector<Sample> back;
  Sample s;
  while (r.next(s)) back.push_back(s);
  ASSERT_EQ(back.size(), samples.size() - 1);
  EXPECT_TRUE(std::equal(back.begin(), back.end(), samples.begin()));
  EXPECT_EQ(r.dropped_tail_bytes(), 32u - 20u);
}

TEST(TraceFile, BadRecordSizeNamesItsOffset) {
  const auto p = write_file("badrec", some_samples());
  auto b = slurp(p);
  // Second record starts at 1024 + 32; give it an odd size.
  std::uint16_t bad = 33;
  std::memcpy(b.data() + 1024 + 32 + 2, &bad, 2);
  spit(p, b);
  Reader r(p.string());
  Sample s;
  ASSERT_TRUE(r.next(s));
  try {
    r.next(s);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.offset(), 1024u + 32u);
  }
}

TEST(TraceFile, UnknownRecordKindOfLaterMinorIsSkipped) {
  const auto p = temp_path("unknown");
  FileHeader h = make_header();
  h.clock_hz = 1;
  Writer w(p.string(), h);
  std::vector<std::uint8_t> rec(16, 0);
  rec[0] = 77;  // kind 77
  rec[2] = 16;  // size 16
  w.append_records(rec, 0);
  Sample s;
  s.data = 9;
  w.append(s);
  w.finish(h, {});
  Reader r(p.string());
  Sample out;
  ASSERT_TRUE(r.next(out));
  EXPECT_EQ(out.data, 9u);
  EXPECT_FALSE(r.next(out));
}

// next_batch (the tools' inner loop) yields exactly what next() yields, whatever the batch size,
// across Trace and Resource records, an unknown kind to skip, and an unclosed file's cut tail; a buffer
// reused from batch to batch still gives a Trace sample zero counters after a Resource one held its slot.
TEST(TraceFile, NextBatchYieldsWhatNextYields) {
  auto samples = some_samples();
  const auto p = temp_path("batch");
  {
    FileHeader h = make_header();
    h.clock_hz = 1;
    Writer w(p.string(), h);
    for (std::size_t i = 0; i < samples.size(); ++i) {
      if (i == 4) {
        std::vector<std::uint8_t> rec(24, 0);
        rec[0] = 77;  // a kind of a later minor version, 24 bytes: skipped
        rec[2] = 24;
        w.append_records(rec, 0);
      }
      w.append(samples[i]);
    }
    // not finished: an unclosed file, and its last record cut
  }
  auto b = slurp(p);
  b.resize(b.size() - 8);
  spit(p, b);
  samples.pop_back();
  for (std::size_t size : {1u, 2u, 3u, 7u, 64u}) {
    Reader r(p.string());
    std::vector<Sample> buf(size), back;
    while (const std::size_t n = r.next_batch(buf)) back.insert(back.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_EQ(back, samples) << "batch of " << size;
    EXPECT_GT(r.dropped_tail_bytes(), 0u);
  }
}

// A malformed record ends a batch with the samples before it; the next call throws naming its offset.
TEST(TraceFile, NextBatchStopsBeforeABadRecordThenThrows) {
  const auto p = write_file("batchbad", some_samples());
  auto b = slurp(p);
  std::uint16_t bad = 33;  // the third record (1024 + 2 x 32) gets an odd size
  std::memcpy(b.data() + 1024 + 64 + 2, &bad, 2);
  spit(p, b);
  Reader r(p.string());
  std::vector<Sample> buf(8);
  EXPECT_EQ(r.next_batch(buf), 2u);
  EXPECT_EQ(buf[1], some_samples()[1]);
  try {
    r.next_batch(buf);
    FAIL() << "no error at the bad record";
  } catch (const InputError& e) {
    EXPECT_EQ(e.offset(), 1024u + 64u);
  }
}
