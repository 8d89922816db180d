// Streaming inputs: kron trace files, raw MultiKron II (000 Table B2, 20/84 bytes) and MultiKron (001
// Tables 5-7, 16/80 bytes) streams, standard input (`-`), merging, and every kind of bad input named by
// file and offset.
#include "analysis/input.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "fixtures.hpp"
#include "kron/core/error.hpp"
#include "kron/format/trace_file.hpp"
#include "support/input_error.hpp"

using namespace kron;
using namespace kron::analysis;
using namespace kron::testing;
namespace fs = std::filesystem;

namespace {

std::vector<Sample> mixed(classic::Chip chip) {
  std::vector<Sample> v;
  for (unsigned i = 0; i < 7; ++i) {
    Sample s;
    s.type = i % 3 == 1 ? SampleType::Resource : SampleType::Trace;
    s.cpu = static_cast<std::uint16_t>(i % 8);
    s.source = 0x01000000u + i;
    s.timestamp = 1000 + 100 * i;
    s.data = (chip == classic::Chip::Mk1 ? 0x0000123456789abcull : 0x123456789abcdef0ull) + i;
    s.flags = i == 4 ? kFlagFifoOverrun : 0;
    s.group = Sample::kGroupUnknown;
    if (s.is_resource())
      for (unsigned c = 0; c < kResourceCounters; ++c) s.counters[c] = 0x10000000u * (c % 15) + i;
    v.push_back(s);
  }
  return v;
}

std::vector<Sample> read_all(Merged& m) {
  std::vector<Sample> v;
  Sample s;
  while (m.next(s)) v.push_back(s);
  return v;
}

using kron::testing::error_of;

}  // namespace

// 000 Table B2: 20-byte Trace and 84-byte Resource samples back to back decode to what was encoded.
TEST(RawStream, Mk2RoundTrip) {
  const auto v = mixed(classic::Chip::Mk2);
  const auto bytes = encode_stream(classic::Chip::Mk2, v);
  EXPECT_EQ(bytes.size(), 5 * 20u + 2 * 84u);
  ClassicStream in("mem", classic::Chip::Mk2, bytes, 10'000'000);
  Sample s;
  for (const auto& want : v) {
    ASSERT_TRUE(in.next(s));
    EXPECT_EQ(s, want);
  }
  EXPECT_FALSE(in.next(s));
  EXPECT_EQ(in.ts_mask(), (std::uint64_t{1} << 56) - 1);
}

// 001 Tables 5-7: 16-byte Trace and 80-byte Resource samples.
TEST(RawStream, Mk1RoundTripFromFile) {
  const auto dir = temp_dir("mk1");
  const auto v = mixed(classic::Chip::Mk1);
  const auto bytes = encode_stream(classic::Chip::Mk1, v);
  EXPECT_EQ(bytes.size(), 5 * 16u + 2 * 80u);
  write_bytes(dir / "mk.dat", bytes);
  InputOptions o;
  o.format = InputFormat::Mk1;
  o.ts_hz = 5'000'000;
  auto m = open_inputs({(dir / "mk.dat").string()}, o);
  EXPECT_EQ(m.clock_hz(), 5'000'000u);
  EXPECT_EQ(m.ts_mask(), (std::uint64_t{1} << 40) - 1);
  EXPECT_EQ(read_all(m), v);
  fs::remove_all(dir);
}

TEST(RawStream, KronFileIsRecognisedByItsHeader) {
  const auto dir = temp_dir("kron");
  write_kron(dir / "t.kron", hand_checked(), 1'000'000'000);
  for (auto f : {InputFormat::Auto, InputFormat::Mk2, InputFormat::Kron}) {
    InputOptions o;
    o.format = f;
    auto m = open_inputs({(dir / "t.kron").string()}, o);
    EXPECT_EQ(m.clock_hz(), 1'000'000'000u);  // the file's clock, not --ts-hz
    EXPECT_EQ(read_all(m).size(), hand_checked().size());
  }
  fs::remove_all(dir);
}

// Bad inputs: every one names the file and the byte offset of the bad sample.
TEST(RawStream, TruncatedSampleNamesFileAndOffset) {
  const auto v = mixed(classic::Chip::Mk2);
  auto bytes = encode_stream(classic::Chip::Mk2, v);
  bytes.resize(bytes.size() - 3);  // the last sample (a trace sample at offset 20*4 + 84*2 = 248) cut short
  ClassicStream in("cut.dat", classic::Chip::Mk2, bytes, 10'000'000);
  Sample s;
  for (unsigned i = 0; i + 1 < v.size(); ++i) ASSERT_TRUE(in.next(s));
  const auto e = error_of([&] { in.next(s); });
  EXPECT_EQ(e.rfind("cut.dat: offset 248: mk2 sample cut short: it needs 20 bytes, the stream ends after 17", 0), 0u)
      << e;
}

TEST(RawStream, BadHeaderNamesFileAndOffset) {
  auto bytes = encode_stream(classic::Chip::Mk2, mixed(classic::Chip::Mk2));
  bytes[20] = 0x08;  // type bits 01: neither Trace nor Resource
  ClassicStream in("bad.dat", classic::Chip::Mk2, bytes, 10'000'000);
  Sample s;
  ASSERT_TRUE(in.next(s));
  const auto e = error_of([&] { in.next(s); });
  EXPECT_EQ(e.rfind("bad.dat: offset 20: byte 0x08 does not start a mk2 sample: its sample type bits are 01", 0), 0u)
      << e;
}

TEST(RawStream, OpenErrors) {
  const auto dir = temp_dir("errors");
  write_bytes(dir / "raw.dat", encode_stream(classic::Chip::Mk2, mixed(classic::Chip::Mk2)));
  // A raw stream without --input-format.
  EXPECT_EQ(error_of([&] { open_inputs({(dir / "raw.dat").string()}, {}); })
                .find("not a kron trace file (no KRONTRC1 magic); for a raw classic stream give --input-format"),
            (dir / "raw.dat").string().size() + std::string(": offset 0: ").size());
  // A missing file, a directory.
  EXPECT_NE(error_of([&] { open_inputs({(dir / "none").string()}, {}); }).find("cannot open"), std::string::npos);
  EXPECT_NE(error_of([&] { open_inputs({dir.string()}, {}); }).find("not a regular file"), std::string::npos);
  // A kron file with a broken header (the foundation's reader reports it).
  write_kron(dir / "t.kron", hand_checked());
  {
    std::fstream f(dir / "t.kron", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);
    const char bad[4] = {9, 9, 9, 9};
    f.write(bad, 4);
  }
  EXPECT_NE(error_of([&] { open_inputs({(dir / "t.kron").string()}, {}); }).find("offset 8: byte-order mark"),
            std::string::npos);
  // A kron file cut inside its record area.
  write_kron(dir / "u.kron", hand_checked());
  fs::resize_file(dir / "u.kron", sizeof(tracefile::FileHeader) + 32 * 3 + 5);
  EXPECT_NE(error_of([&] {
              auto m = open_inputs({(dir / "u.kron").string()}, {});
              read_all(m);
            }).find("u.kron: offset"),
            std::string::npos);
  // Inputs of different clocks are not merged.
  write_kron(dir / "fast.kron", hand_checked(), 1'000'000'000);
  InputOptions o;
  o.format = InputFormat::Mk2;
  EXPECT_NE(error_of([&] { open_inputs({(dir / "raw.dat").string(), (dir / "fast.kron").string()}, o); })
                .find("timestamp clock 1000000000 Hz differs from 10000000 Hz"),
            std::string::npos);
  fs::remove_all(dir);
}

// The merge yields every sample of every input, in time order; ties go to the earlier input.
TEST(Merge, KWayInTimeOrder) {
  const auto dir = temp_dir("kway");
  std::vector<std::string> paths;
  std::vector<Sample> all;
  for (unsigned f = 0; f < 4; ++f) {
    std::vector<Sample> v;
    for (unsigned i = 0; i < 50; ++i) {
      Sample s;
      s.source = f;
      s.timestamp = (i * 7 + f * 3) % 5 == 0 ? i * 10 : i * 10 + f;  // interleaved, with ties
      s.data = i;
      v.push_back(s);
    }
    const auto p = dir / ("in" + std::to_string(f) + ".mk2");
    write_bytes(p, encode_stream(classic::Chip::Mk2, v));
    paths.push_back(p.string());
    all.insert(all.end(), v.begin(), v.end());
  }
  InputOptions o;
  o.format = InputFormat::Mk2;
  auto m = open_inputs(paths, o);
  const auto got = read_all(m);
  ASSERT_EQ(got.size(), all.size());
  for (std::size_t i = 1; i < got.size(); ++i) {
    ASSERT_LE(got[i - 1].timestamp, got[i].timestamp);
    if (got[i - 1].timestamp == got[i].timestamp) {
      EXPECT_LT(got[i - 1].source, got[i].source);
    }
  }
  EXPECT_EQ(m.out_of_order(), 0u);
  fs::remove_all(dir);
}

// Without a reorder window (E50: 0), a sample out of order is delivered where it is and counted.
TEST(Merge, SampleOutOfOrderInOneInputIsCountedNotDropped) {
  std::vector<Sample> v(3);
  v[0].timestamp = 10;
  v[1].timestamp = 5;
  v[2].timestamp = 20;
  const auto bytes = encode_stream(classic::Chip::Mk2, v);
  std::vector<std::unique_ptr<Input>> ins;
  ins.push_back(std::make_unique<ClassicStream>("x", classic::Chip::Mk2, bytes, 10'000'000));
  Merged m(std::move(ins), 0);
  EXPECT_EQ(read_all(m).size(), 3u);
  EXPECT_EQ(m.out_of_order(), 1u);
}

// The batch path of one input (the tools' inner loop): the same samples as next(), the same count of
// samples out of time order, across batch boundaries.
TEST(Merge, OneInputBatchesGiveWhatNextGives) {
  std::vector<Sample> v(5);
  const std::uint64_t ts[] = {10, 5, 20, 30, 25};  // two samples earlier than the one before them
  for (unsigned i = 0; i < 5; ++i) v[i].timestamp = ts[i];
  const auto bytes = encode_stream(classic::Chip::Mk2, v);
  std::vector<std::unique_ptr<Input>> ins;
  ins.push_back(std::make_unique<ClassicStream>("x", classic::Chip::Mk2, bytes, 10'000'000));
  Merged m(std::move(ins), 0);
  std::vector<Sample> buf(2), back;
  while (const std::size_t n = m.next_batch(buf)) back.insert(back.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
  ASSERT_EQ(back.size(), 5u);
  for (unsigned i = 0; i < 5; ++i) EXPECT_EQ(back[i].timestamp, ts[i]);
  EXPECT_EQ(m.out_of_order(), 2u);
  EXPECT_EQ(m.samples(), 5u);
}

// The batch path keeps the reorder window (E50) for an input that does not vouch for its order: the
// stragglers are put in their place, as next() would.
TEST(Merge, BatchPathAppliesTheReorderWindow) {
  std::vector<Sample> v(5);
  const std::uint64_t ts[] = {10, 5, 20, 30, 25};
  for (unsigned i = 0; i < 5; ++i) v[i].timestamp = ts[i];
  const auto bytes = encode_stream(classic::Chip::Mk2, v);
  std::vector<std::unique_ptr<Input>> ins;
  ins.push_back(std::make_unique<ClassicStream>("x", classic::Chip::Mk2, bytes, 10'000'000));
  Merged m(std::move(ins));
  std::vector<Sample> buf(4), back;
  while (const std::size_t n = m.next_batch(buf)) back.insert(back.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
  ASSERT_EQ(back.size(), 5u);
  const std::uint64_t sorted[] = {5, 10, 20, 25, 30};
  for (unsigned i = 0; i < 5; ++i) EXPECT_EQ(back[i].timestamp, sorted[i]);
  EXPECT_EQ(m.out_of_order(), 0u);
  EXPECT_EQ(m.reordered(), 2u);
}

// A kron file that vouches for its order (kFlagTimeOrdered, late 0, complete) is read without the window
// (the fast path); without the flag, the same file goes through the window.
TEST(Merge, TimeOrderedKronFileSkipsTheWindow) {
  const fs::path dir = fs::temp_directory_path() / ("kron-input-ordered-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<Sample> v(3);
  const std::uint64_t ts[] = {10, 5, 20};  // a straggler the flag falsely denies: counted, not reordered
  for (unsigned i = 0; i < 3; ++i) v[i].timestamp = ts[i];
  for (const bool flagged : {true, false}) {
    const fs::path p = dir / (flagged ? "ordered.kron" : "plain.kron");
    tracefile::FileHeader h = tracefile::make_header();
    h.clock_hz = 1'000'000'000;
    tracefile::Writer w(p.string(), h);
    for (const auto& s : v) w.append(s);
    if (flagged) h.flags |= tracefile::kFlagTimeOrdered;
    w.finish(h, {});
    Merged m = open_inputs({p.string()}, InputOptions{});
    std::vector<Sample> buf(8);
    std::vector<std::uint64_t> got;
    while (const std::size_t n = m.next_batch(buf))
      for (std::size_t k = 0; k < n; ++k) got.push_back(buf[k].timestamp);
    if (flagged) {
      EXPECT_EQ(got, (std::vector<std::uint64_t>{10, 5, 20}));
      EXPECT_EQ(m.out_of_order(), 1u);
      EXPECT_EQ(m.reordered(), 0u);
    } else {
      EXPECT_EQ(got, (std::vector<std::uint64_t>{5, 10, 20}));
      EXPECT_EQ(m.reordered(), 1u);
    }
  }
}

// A bad sample ends a batch with the samples before it; the next batch throws naming its offset.
TEST(RawStream, BatchStopsBeforeABadSampleThenThrows) {
  auto bytes = encode_stream(classic::Chip::Mk2, mixed(classic::Chip::Mk2));
  bytes[20] = 0x08;  // the second sample's type bits 01
  ClassicStream in("bad.dat", classic::Chip::Mk2, bytes, 10'000'000);
  std::vector<Sample> buf(4);
  EXPECT_EQ(in.next_batch(buf), 1u);
  const auto e = error_of([&] { in.next_batch(buf); });
  EXPECT_EQ(e.rfind("bad.dat: offset 20: byte 0x08", 0), 0u) << e;
}

TEST(StdinInput, ReadsARawStreamAndRefusesWhatItCannot) {  // `-` for kron expand / rpt / export
  std::string bytes;
  for (std::uint64_t i = 0; i < 3; ++i) {  // sample i: every third a resource sample
    Sample x;
    x.type = i % 3 == 2 ? SampleType::Resource : SampleType::Trace;
    x.timestamp = 1000 + 7 * i;
    x.source = 0x100;
    x.data = i;
    const auto b = classic::encode(classic::Chip::Mk2, x);
    bytes.append(b.begin(), b.end());
  }
  InputOptions o;
  o.format = InputFormat::Mk2;
  std::istringstream in(bytes);
  auto input = open_stdin(in, o);
  Sample s;
  std::uint64_t n = 0;
  while (input->next(s)) EXPECT_EQ(s.data, n++);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(input->path(), "<stdin>");
  std::istringstream cut(bytes.substr(0, 30));
  auto c = open_stdin(cut, o);
  EXPECT_TRUE(c->next(s));
  EXPECT_NE(error_of([&] { c->next(s); }).find("<stdin>: offset 20"), std::string::npos);
  o.format = InputFormat::Auto;
  std::istringstream again(bytes);
  EXPECT_NE(error_of([&] { open_stdin(again, o); }).find("give --input-format mk2"), std::string::npos);
  std::istringstream kron(std::string(tracefile::kMagic, sizeof tracefile::kMagic) + "rest");
  o.format = InputFormat::Mk2;
  EXPECT_NE(error_of([&] { open_stdin(kron, o); }).find("kron trace file"), std::string::npos);
}

TEST(StdinInput, NamedOnlyOnceAmongTheInputs) {  // `-` is one more input of open_inputs
  InputOptions o;
  o.format = InputFormat::Mk2;
  EXPECT_NE(error_of([&] { open_inputs({"-", "-"}, o); }).find("<stdin>: offset 0: standard input (-) can be named only once"),
            std::string::npos);
}
