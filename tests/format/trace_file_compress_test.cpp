// kron trace files 1.2 with a compressed record area (kFlagCompressed, docs/trace-format.md "Compressed
// record area"): the same samples back through every read path as from an uncompressed file; a file cut
// by a crash loses only its last chunk and says how many bytes; each kind of damaged chunk is an
// InputError naming the chunk's file offset, never a crash.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <random>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kron/core/codec.hpp"
#include "analysis/input.hpp"
#include "kron/core/error.hpp"
#include "kron/format/trace_file.hpp"
#include "support/file_bytes.hpp"

using namespace kron;
using namespace kron::tracefile;
namespace fs = std::filesystem;

namespace {
// The pid keeps two runs of this test (two build trees at once) apart.
fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / ("kron-tfz-" + name + "-" + std::to_string(::getpid()));
}

// `n` samples, one in 64 a Resource sample (as in a live recording), with slowly changing fields (they
// compress) or, with `noisy`, random ones (a small chunk of them does not shrink).
std::vector<Sample> make_samples(std::size_t n, bool noisy = false) {
  std::mt19937_64 rng(42);
  std::vector<Sample> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    Sample& s = v[i];
    s.type = i % 64 == 63 ? SampleType::Resource : SampleType::Trace;
    s.cpu = static_cast<std::uint16_t>(i % 2);
    s.group = static_cast<std::uint8_t>(i % 16);
    s.source = noisy ? static_cast<std::uint32_t>(rng()) : 0x4000 + static_cast<std::uint32_t>(i % 3);
    s.thread = noisy ? static_cast<std::uint32_t>(rng()) & record::kThreadMask : 77;  // 22 bits in 1.4 (ERRATUM E180)
    s.timestamp = noisy ? rng() : 1'000'000 + 37 * i;
    s.data = noisy ? rng() : i / 4;
    if (s.is_resource())
      for (unsigned c = 0; c < kResourceCounters; ++c) s.counters[c] = noisy ? rng() : 1000 * c + i;
  }
  return v;
}

// Writes `samples` at `level` (0: uncompressed), compressed on `threads` workers; finished (complete) unless
// `finish` is false.
fs::path write_file(const std::string& name, const std::vector<Sample>& samples, int level, bool finish = true,
                    unsigned threads = 0) {
  const auto p = temp_path(name);
  FileHeader h = make_header();
  h.clock_hz = 1'000'000'000;
  Writer w(p.string(), h, level, threads);
  for (const auto& s : samples) w.append(s);
  if (finish) {
    h.passed_filter = samples.size();
    w.finish(h, {});
  }
  return p;
}

using kron::testing::slurp;
using kron::testing::spit;

// The chunks of a compressed file: file offset and header of each, walked from the raw bytes.
struct ChunkAt {
  std::size_t at;
  ChunkHeader h;
};
std::vector<ChunkAt> chunks_of(const std::vector<char>& b, std::size_t end) {
  std::vector<ChunkAt> v;
  for (std::size_t at = sizeof(FileHeader); at + sizeof(ChunkHeader) <= end;) {
    ChunkAt c{at, {}};
    std::memcpy(&c.h, b.data() + at, sizeof c.h);
    v.push_back(c);
    at += sizeof(ChunkHeader) + (c.h.stored_bytes + 7u) / 8u * 8u;
  }
  return v;
}

// Every way a tool reads a kron file: Reader::next, Reader::next_batch at several batch sizes, a rewind,
// and the analysis input (expand, rpt, export) in both of its modes.
std::vector<std::vector<Sample>> read_every_way(const fs::path& p) {
  std::vector<std::vector<Sample>> out;
  Reader r(p.string());
  Sample s;
  out.emplace_back();
  while (r.next(s)) out.back().push_back(s);
  for (std::size_t size : {1u, 3u, 1000u, 70000u}) {
    r.rewind();
    out.emplace_back();
    std::vector<Sample> buf(size);
    while (const std::size_t n = r.next_batch(buf)) out.back().insert(out.back().end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
  }
  auto in = analysis::open_input(p.string(), {});
  out.emplace_back();
  while (in->next(s)) out.back().push_back(s);
  auto batched = analysis::open_input(p.string(), {});
  out.emplace_back();
  std::vector<Sample> buf(500);
  while (const std::size_t n = batched->next_batch(buf)) out.back().insert(out.back().end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
  return out;
}

template <class F>
InputError error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError";
  return InputError::at_offset("none", ~0ull, "none");
}
// Reads the whole file by next() and by next_batch(); both must fail with the same error.
InputError read_error(const fs::path& p) {
  const InputError one = error_of([&] {
    Reader r(p.string());
    Sample s;
    while (r.next(s)) {
    }
  });
  const InputError batch = error_of([&] {
    Reader r(p.string());
    std::vector<Sample> buf(64);
    while (r.next_batch(buf)) {
    }
  });
  EXPECT_EQ(one.offset(), batch.offset());
  EXPECT_STREQ(one.what(), batch.what());
  return one;
}
}  // namespace

TEST(TraceFileCompressed, RoundTripThroughEveryReaderPathCompressedAndRaw) {
  const auto samples = make_samples(100'000);  // about 3.4 MB of records: four 1 MiB chunks
  for (int level : {0, 1, 6}) {
    const auto p = write_file("rt" + std::to_string(level), samples, level);
    Reader r(p.string());
    EXPECT_EQ(r.compressed(), level > 0);
    EXPECT_EQ(r.header().minor, kMinor);  // 1.2 made compression; later minors keep it
    EXPECT_EQ(r.header().samples, samples.size());
    const std::uint64_t raw = 100'000ull * 32 + (100'000 / 64) * (160 - 32);
    EXPECT_EQ(r.header().records_raw_bytes, raw);
    if (level) EXPECT_LT(r.header().records_bytes * 4, raw) << "level " << level;  // these samples shrink
    else EXPECT_EQ(r.header().records_bytes, raw);
    for (const auto& got : read_every_way(p)) EXPECT_TRUE(got == samples) << "level " << level;
    if (level) {
      const auto b = slurp(p);
      const auto chunks = chunks_of(b, sizeof(FileHeader) + r.header().records_bytes);
      EXPECT_GE(chunks.size(), 4u);
      std::uint64_t records = 0;
      for (const auto& c : chunks) {
        EXPECT_LE(c.h.raw_bytes, kChunkRawBytes);
        EXPECT_LT(c.h.stored_bytes, c.h.raw_bytes);
        EXPECT_EQ(c.at % 8, 0u);
        records += c.h.records;
      }
      EXPECT_EQ(records, samples.size());
    }
  }
}

// ERRATUM E37: a chunk that would not shrink (a few random samples: the zstd frame's header and checksum
// outweigh what it saves) is stored as it is, and reads back the same.
TEST(TraceFileCompressed, ChunkThatDoesNotShrinkIsStoredRaw) {
  const auto samples = make_samples(2, /*noisy=*/true);
  const auto p = write_file("noisy", samples, 1);
  const auto b = slurp(p);
  const auto chunks = chunks_of(b, b.size());
  ASSERT_FALSE(chunks.empty());
  EXPECT_EQ(chunks[0].h.stored_bytes, chunks[0].h.raw_bytes);
  EXPECT_EQ(chunks[0].h.raw_bytes, 2u * 32u);
  for (const auto& got : read_every_way(p)) EXPECT_TRUE(got == samples);
}

// A recording cut by a crash: every whole chunk reads back; the chunk cut short (or header bytes never
// written) is dropped and its bytes counted, as a cut record is in an uncompressed file.
TEST(TraceFileCompressed, CutFileLosesOnlyItsLastChunkAndCountsItsBytes) {
  const auto samples = make_samples(100'000);
  const auto p = write_file("cut", samples, 1, /*finish=*/false);
  const auto whole = slurp(p);
  const auto chunks = chunks_of(whole, whole.size());
  ASSERT_GE(chunks.size(), 3u);
  const ChunkAt& last = chunks.back();
  std::uint64_t before = 0;
  for (std::size_t i = 0; i + 1 < chunks.size(); ++i) before += chunks[i].h.records;
  const std::vector<Sample> kept(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(before));
  // Cut in the last chunk's payload, in its header, and followed by zeros never written.
  for (std::size_t cut_at : {last.at + 100, last.at + 7}) {
    auto b = whole;
    b.resize(cut_at);
    spit(p, b);
    Reader r(p.string());
    EXPECT_FALSE(r.complete());
    for (const auto& got : read_every_way(p)) EXPECT_TRUE(got == kept) << "cut at " << cut_at;
    std::vector<Sample> all;
    Sample s;
    while (r.next(s)) all.push_back(s);
    EXPECT_EQ(r.dropped_tail_bytes(), cut_at - last.at);
  }
  auto b = whole;
  b.resize(last.at);
  b.resize(last.at + 4096, 0);
  spit(p, b);
  Reader r(p.string());
  Sample s;
  std::uint64_t n = 0;
  while (r.next(s)) ++n;
  EXPECT_EQ(n, before);
  EXPECT_EQ(r.dropped_tail_bytes(), 4096u);
}

// Each damaged chunk header field, and a damaged zstd frame, is an error naming the chunk's offset.
TEST(TraceFileCompressed, DamagedChunkIsAnErrorNamingItsOffset) {
  const auto p = write_file("damaged", make_samples(100'000), 1);
  const auto whole = slurp(p);
  FileHeader fh;
  std::memcpy(&fh, whole.data(), sizeof fh);
  const auto chunks = chunks_of(whole, sizeof(FileHeader) + fh.records_bytes);
  ASSERT_GE(chunks.size(), 3u);
  const ChunkAt c = chunks[1];  // the second chunk: the first one's samples come back before the error
  struct Damage {
    const char* what;
    std::function<void(ChunkHeader&, std::vector<char>&)> apply;
    const char* message;
  };
  const Damage damages[] = {
      {"raw size far too large", [](ChunkHeader& h, auto&) { h.stored_bytes = 0x7fffff00u; h.raw_bytes = 0x7fffff00u; },
       "is not 1-4194304"},
      {"stored size past the record area", [](ChunkHeader& h, auto&) { h.stored_bytes = 3u << 20; h.raw_bytes = 4u << 20; },
       "runs past the end of the record area"},
      {"raw size over the bound", [](ChunkHeader& h, auto&) { h.raw_bytes = kMaxChunkRawBytes + 8; }, "is not 1-4194304"},
      {"raw size zero", [](ChunkHeader& h, auto&) { h.raw_bytes = 0; }, "uncompressed size 0"},
      {"stored larger than raw", [](ChunkHeader& h, auto&) { h.raw_bytes = h.stored_bytes - 8; }, "stored size"},
      {"raw size smaller than the frame's", [](ChunkHeader& h, auto&) { h.raw_bytes -= 32; }, "zstd"},
      {"raw size larger than the frame's", [](ChunkHeader& h, auto&) { h.raw_bytes += 32; }, "decompressed to"},
      {"record count", [](ChunkHeader& h, auto&) { h.records += 1; }, "its header says"},
      {"corrupt frame", [&](ChunkHeader& h, std::vector<char>& b) {
         for (std::size_t i = 0; i < 16; ++i) b[c.at + sizeof h + h.stored_bytes / 2 + i] ^= 0x5a;
       }, "zstd"},
  };
  for (const auto& d : damages) {
    auto b = whole;
    ChunkHeader h = c.h;
    d.apply(h, b);
    std::memcpy(b.data() + c.at, &h, sizeof h);
    spit(p, b);
    const InputError e = read_error(p);
    EXPECT_EQ(e.offset(), c.at) << d.what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("compressed chunk"), std::string::npos) << d.what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(d.message), std::string::npos) << d.what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << d.what;
    // The first chunk's samples come back before the error.
    Reader r(p.string());
    Sample s;
    for (std::uint64_t i = 0; i < chunks[0].h.records; ++i) ASSERT_TRUE(r.next(s)) << d.what;
  }
}

// A record inside a chunk that a reader refuses (a known kind of the wrong size) names the chunk and the
// record's byte in it.
TEST(TraceFileCompressed, BadRecordInsideAChunkNamesTheChunkAndTheRecord) {
  const auto p = temp_path("badrec");
  FileHeader h = make_header();
  h.clock_hz = 1;
  {
    Writer w(p.string(), h, 1);
    std::vector<std::uint8_t> recs(64, 0);
    recs[0] = 1;  // a Trace record
    recs[2] = 32;
    recs[32] = 2;  // a "Resource record" of 32 bytes
    recs[34] = 32;
    w.append_records(recs, 2);
    w.finish(h, {});
  }
  const InputError e = read_error(p);
  EXPECT_EQ(e.offset(), sizeof(FileHeader));
  EXPECT_NE(std::string(e.what()).find("record at byte 32"), std::string::npos) << e.what();
}

TEST(TraceFileCompressed, WriterRefusesALevelOutsideZstds) {
  FileHeader h = make_header();
  EXPECT_THROW(Writer(temp_path("lvl").string(), h, 20), std::invalid_argument);
  EXPECT_THROW(Writer(temp_path("lvl").string(), h, -1), std::invalid_argument);
  EXPECT_THROW(Writer(temp_path("lvl").string(), h, 1, kMaxCompressThreads + 1), std::invalid_argument);
}

// ---- --compress-threads (ERRATUM E323) -------------------------------------------------------------------
namespace {
// The same records through every way a writer takes them: single samples, small pieces gathered, pieces of
// half a chunk and more written straight, one of several chunks, a few noisy samples (a chunk stored raw),
// snapshots and switches; at level 1 on `threads` workers.
fs::path write_mixed(const std::string& name, unsigned threads) {
  const auto p = temp_path(name);
  FileHeader h = make_header();
  h.clock_hz = 1'000'000'000;
  Writer w(p.string(), h, 1, threads);
  const auto quiet = make_samples(60'000), noisy = make_samples(20'000, true);
  std::vector<std::uint8_t> recs;
  std::uint64_t count = 0;
  auto encode = [&](const Sample& s) {
    std::uint8_t r[codec::kMaxRecordBytes];
    const std::size_t n = codec::encode(s, r);
    recs.insert(recs.end(), r, r + n);
    ++count;
  };
  std::size_t i = 0;
  for (; i < 10'000; ++i) w.append(quiet[i]);
  for (const std::size_t piece : {10u, 300u, 17'000u, 33'000u}) {  // 300 B .. 1.1 MB: gathered, then straight
    recs.clear(), count = 0;
    for (std::size_t k = 0; k < piece && i < quiet.size(); ++k) encode(quiet[i++]);
    w.append_records(recs, count);
  }
  recs.clear(), count = 0;
  for (const auto& s : noisy) encode(s);  // ~0.7 MB of random fields, straight
  w.append_records(recs, count);
  for (std::size_t k = 0; k < 2; ++k) w.append(noisy[k]);
  std::vector<SchedRecord> sw(3);
  for (std::size_t k = 0; k < sw.size(); ++k) {
    sw[k].h.kind = record::RecordKind::SchedSwitch;
    sw[k].h.size = sizeof(SchedRecord);
    sw[k].source = 0x4000, sw[k].thread = 77, sw[k].timestamp = 2'000'000'000 + k;
  }
  w.append_sched(sw);
  h.passed_filter = w.samples();
  w.finish(h, {});
  return p;
}
}  // namespace

TEST(TraceFileCompressed, WorkerThreadsWriteTheSameBytesAsTheCallersThread) {
  const auto one = slurp(write_mixed("thr0", 0));
  {
    Reader r(temp_path("thr0").string());
    EXPECT_EQ(r.header().samples, 10'000u + 10 + 300 + 17'000 + 32'690 + 20'000 + 2);
    const auto b = slurp(temp_path("thr0"));
    const auto chunks = chunks_of(b, sizeof(FileHeader) + r.header().records_bytes);
    EXPECT_GE(chunks.size(), 5u);
  }
  for (unsigned t : {1u, 2u, 5u}) {
    const auto p = write_mixed("thr" + std::to_string(t), t);
    EXPECT_TRUE(slurp(p) == one) << t << " threads wrote other bytes";
    Reader r(p.string());
    Sample s;
    std::uint64_t n = 0;
    while (r.next(s)) ++n;
    EXPECT_EQ(n, r.header().samples);
    EXPECT_EQ(r.sched_switches().size(), 3u);
  }
  // A chunk that does not shrink (E37) goes through a worker too.
  const auto samples = make_samples(2, /*noisy=*/true);
  EXPECT_TRUE(slurp(write_file("thrraw1", samples, 1, true, 3)) == slurp(write_file("thrraw0", samples, 1, true, 0)));
}

// A write that fails on a worker (here the file size limit, as a full disk would) is thrown to the caller,
// naming the file, by a later append or by finish(); nothing waits forever.
TEST(TraceFileCompressed, WorkerThreadsSayAFailedWrite) {
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  struct sigaction ign {}, was {};
  ign.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ign, &was), 0);  // EFBIG instead of the signal
  const struct rlimit small{256 * 1024, old.rlim_max};
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const auto noisy = make_samples(200'000, true);  // ~6.6 MB that hardly shrinks
  std::string what;
  try {
    write_file("thrfull", noisy, 1, true, 2);
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::sigaction(SIGXFSZ, &was, nullptr);
  EXPECT_NE(what.find(temp_path("thrfull").string() + ": write failed: File too large"), std::string::npos)
      << "said: '" << what << "'";
}
