// kron trace files: round trip, validation of hostile headers, crash-truncated files.
#include "kron/format/trace_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "kron/core/error.hpp"
#include "support/file_bytes.hpp"
#include "support/input_error.hpp"

using namespace kron;
using namespace kron::tracefile;
namespace fs = std::filesystem;

namespace {
// The pid keeps two runs of this test (two build trees at once) apart.
fs::path temp_path(const char* name) {
  return fs::temp_directory_path() / (std::string("kron-tf-") + name + "-" + std::to_string(::getpid()));
}

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

std::vector<Sample> samples_in(Reader& r) {
  std::vector<Sample> out;
  Sample s;
  while (r.next(s)) out.push_back(s);
  return out;
}
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
  const std::vector<Sample> back = samples_in(r);
  EXPECT_EQ(back, samples);
}

// A writer over an existing, longer file leaves only its own file: the old bytes are gone (a new file is not
// truncated, an existing one is emptied first: docs/performance.md "The drain's one copy").
TEST(TraceFile, AWriterOverALongerFileLeavesOnlyItsOwn) {
  std::vector<Sample> many;
  for (int k = 0; k < 50; ++k)
    for (const auto& s : some_samples()) many.push_back(s);
  const auto p = write_file("overwrite", many);
  const auto long_size = fs::file_size(p);
  const auto few = some_samples();
  ASSERT_EQ(write_file("overwrite", few), p);
  EXPECT_LT(fs::file_size(p), long_size / 10);
  Reader r(p.string());
  EXPECT_TRUE(r.complete());
  const std::vector<Sample> back = samples_in(r);
  EXPECT_EQ(back, few);
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
  const std::vector<Sample> back = samples_in(r);
  ASSERT_EQ(back.size(), samples.size() - 1);
  EXPECT_TRUE(std::equal(back.begin(), back.end(), samples.begin()));
  EXPECT_EQ(r.dropped_tail_bytes(), 32u - 20u);
}

// A recorder killed while it finished the file (ERRATUM E441: a launcher's SIGKILL) leaves an unclosed file
// whose records are followed by the start of the lane table, which is no record: every record is read, and
// the rest is dropped and counted, never decoded and never an error.
TEST(TraceFile, UnclosedFileEndsAtWhatIsNoRecord) {
  const auto samples = some_samples();
  const auto p = write_file("unclosed_table", samples, /*finish=*/false);
  auto b = slurp(p);
  const std::uint8_t table[48] = {3, 0, 0, 0, 7, 0, 0, 0};  // as a record header: kind 3, size 0
  b.insert(b.end(), std::begin(table), std::end(table));
  spit(p, b);
  Reader r(p.string());
  EXPECT_FALSE(r.complete());
  const std::vector<Sample> back = samples_in(r);
  ASSERT_EQ(back.size(), samples.size());
  EXPECT_TRUE(std::equal(back.begin(), back.end(), samples.begin()));
  EXPECT_EQ(r.dropped_tail_bytes(), 48u);
}

TEST(TraceFile, BadRecordSizeNamesItsOffset) {
  const auto p = write_file("badrec", some_samples());
  auto b = slurp(p);
  // Second record starts at the header's end (1088) + 32; give it an odd size.
  std::uint16_t bad = 33;
  std::memcpy(b.data() + sizeof(FileHeader) + 32 + 2, &bad, 2);
  spit(p, b);
  Reader r(p.string());
  Sample s;
  ASSERT_TRUE(r.next(s));
  try {
    r.next(s);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.offset(), sizeof(FileHeader) + 32u);
  }
}

TEST(TraceFile, UnknownRecordKindOfLaterMinorIsSkipped) {
  const auto p = temp_path("unknown");
  FileHeader h = make_header();
  h.clock_hz = 1;
  h.minor = kMinor + 1;  // a later minor may add kinds (E128)
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
  EXPECT_EQ(r.skipped_records(), 1u);  // counted, and said
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_NE(r.warnings()[0].find("1 records of unknown kinds skipped"), std::string::npos) << r.warnings()[0];
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
    h.minor = kMinor + 1;
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
    while (const std::size_t n = r.next_batch(buf))
      back.insert(back.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_EQ(back, samples) << "batch of " << size;
    EXPECT_GT(r.dropped_tail_bytes(), 0u);
  }
}

// A malformed record ends a batch with the samples before it; the next call throws naming its offset.
TEST(TraceFile, NextBatchStopsBeforeABadRecordThenThrows) {
  const auto p = write_file("batchbad", some_samples());
  auto b = slurp(p);
  std::uint16_t bad = 33;  // the third record (1088 + 2 x 32) gets an odd size
  std::memcpy(b.data() + sizeof(FileHeader) + 64 + 2, &bad, 2);
  spit(p, b);
  Reader r(p.string());
  std::vector<Sample> buf(8);
  EXPECT_EQ(r.next_batch(buf), 2u);
  EXPECT_EQ(buf[1], some_samples()[1]);
  try {
    r.next_batch(buf);
    FAIL() << "no error at the bad record";
  } catch (const InputError& e) {
    EXPECT_EQ(e.offset(), sizeof(FileHeader) + 64u);
  }
}

// ---- Hardening: nothing silent, nothing hangs, nothing crashes (ERRATA E127-E129) -------------------

namespace {
using kron::testing::error_of;
std::uint64_t read_all(Reader& r) {
  std::uint64_t n = 0;
  for (Sample s; r.next(s);) ++n;
  return n;
}
void set_header(fs::path p, void (*change)(FileHeader&)) {
  auto b = slurp(p);
  FileHeader h;
  std::memcpy(&h, b.data(), sizeof h);
  change(h);
  std::memcpy(b.data(), &h, sizeof h);
  spit(p, b);
}
}  // namespace

// A record kind flipped to 0 or 7 in a file of this reader's minor was skipped silently.
TEST(TraceFile, UnknownRecordKindOfThisMinorIsAnErrorOrSalvaged) {
  for (const std::uint16_t kind : {std::uint16_t{0}, std::uint16_t{7}}) {
    const auto p = write_file("kindflip", some_samples());
    auto b = slurp(p);
    std::memcpy(b.data() + sizeof(FileHeader) + 32, &kind, 2);  // the second record (a Trace record, 32 bytes)
    spit(p, b);
    Reader r(p.string());
    const std::string e = error_of([&] { read_all(r); });
    EXPECT_NE(e.find("offset 1120: record kind " + std::to_string(kind) + " is not a Trace (1) or Resource (2)"),
              std::string::npos)
        << e;
    Reader s(p.string(), ReadOptions{true});
    EXPECT_EQ(read_all(s), some_samples().size() - 1);
    EXPECT_EQ(s.skipped_records(), 1u);
    ASSERT_EQ(s.warnings().size(), 2u);  // the skipped record, and the count it leaves short
    EXPECT_NE(s.warnings()[0].find("1 records of unknown kinds skipped (the first at offset 1120) (salvaged)"),
              std::string::npos)
        << s.warnings()[0];
    EXPECT_NE(s.warnings()[1].find("the header counts 10 samples, the record area holds 9"), std::string::npos)
        << s.warnings()[1];
  }
}

// records_bytes set to 0 read as an empty recording, exit 0 and no output.
TEST(TraceFile, EmptyRecordAreaWithSamplesIsAnError) {
  const auto p = write_file("zerobytes", some_samples());
  set_header(p, [](FileHeader& h) { h.records_bytes = 0; });
  EXPECT_NE(error_of([&] { Reader r(p.string()); }).find("does not end where the lane table starts"),
            std::string::npos);
  set_header(p, [](FileHeader& h) { h.lanes_offset = h.header_size; });  // and a lane table moved to match
  EXPECT_NE(error_of([&] { Reader r(p.string()); }).find("record area is empty but the header counts 10 samples"),
            std::string::npos);
}

// The header's count and the records found must agree (else an error, or a warning).
TEST(TraceFile, SampleCountMismatchIsAnErrorOrSalvaged) {
  const auto p = write_file("countoff", some_samples());
  set_header(p, [](FileHeader& h) { h.samples += 2000; });
  Reader r(p.string());
  const std::string e = error_of([&] { read_all(r); });
  EXPECT_NE(e.find("the header counts 2010 samples, the record area holds 10"), std::string::npos) << e;
  Reader s(p.string(), ReadOptions{true});
  EXPECT_EQ(read_all(s), 10u);
  ASSERT_EQ(s.warnings().size(), 1u);
  std::vector<Sample> buf(4);  // next_batch counts too
  Reader t(p.string());
  EXPECT_NE(error_of([&] {
              while (t.next_batch(buf)) {}
            }).find("the header counts 2010"),
            std::string::npos);
}

// A FIFO given as a trace file blocked in open() for ever.
TEST(TraceFile, FifoIsRefusedWithoutBlocking) {
  const auto p = temp_path("fifo");
  fs::remove(p);
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  const std::string e = error_of([&] { Reader r(p.string()); });
  EXPECT_NE(e.find("not a regular file (a FIFO"), std::string::npos) << e;
  fs::remove(p);
  EXPECT_NE(error_of([&] { Reader r(fs::temp_directory_path().string()); }).find("not a regular file (a directory)"),
            std::string::npos);
}

// A file that shrinks while it is read gave SIGBUS (exit 135); now an InputError.
TEST(TraceFile, FileShrinkingWhileReadIsAnErrorNotSigbus) {
  std::vector<Sample> many;
  for (int i = 0; i < 50000; ++i) many.push_back(some_samples()[static_cast<std::size_t>(i % 10)]);
  for (const bool batch : {false, true}) {
    const auto p = write_file("shrink", many);
    Reader r(p.string());
    ASSERT_EQ(::truncate(p.c_str(), 4096), 0);  // a page: every record page after it is gone
    const std::string e = error_of([&] {
      std::vector<Sample> buf(64);
      if (batch)
        while (r.next_batch(buf)) {}
      else
        read_all(r);
    });
    EXPECT_NE(e.find("the file shrank while it was read"), std::string::npos) << e;
  }
}

// Two writers of one file interleaved their records; the second is now refused.
TEST(TraceFile, SecondWriterOfTheSameFileIsRefused) {
  const auto p = temp_path("twowriters");
  FileHeader h = make_header();
  h.clock_hz = 1;
  Writer first(p.string(), h);
  first.append(some_samples()[0]);
  try {
    Writer second(p.string(), h);
    FAIL() << "a second writer of the file was let in";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("another kron is writing this trace file"), std::string::npos) << e.what();
  }
  first.finish(h, {});
  Reader r(p.string());  // the first writer's file is whole
  EXPECT_EQ(read_all(r), 1u);
  Writer again(p.string(), h);  // the lock went with the first writer
}

// Trace format 1.3: scheduling switches (kron record --sched, record kind 4) follow the samples, are not
// samples (FileHeader::samples does not count them), and come back apart from them, in order; compressed
// or not. A kind-4 record in a 1.2 file is damage, as any unknown kind of the file's own version.
TEST(TraceFile, SchedSwitchesAreKeptApartFromSamples) {
  for (const int level : {0, 3}) {
    const auto p = temp_path("sched");
    const auto samples = some_samples();
    std::vector<record::SchedRecord> sw(3);
    for (std::size_t i = 0; i < sw.size(); ++i) {
      sw[i].h.kind = record::RecordKind::SchedSwitch;
      sw[i].h.size = sizeof(record::SchedRecord);
      sw[i].h.flags = i % 2 ? record::kSchedOut : 0;
      sw[i].h.cpu = static_cast<std::uint16_t>(i);
      sw[i].source = 0x10;
      sw[i].thread = 77;
      sw[i].timestamp = 100 + i;
    }
    {
      FileHeader h = make_header();
      h.clock_hz = 1;
      Writer w(p.string(), h, level);
      for (const auto& s : samples) w.append(s);
      w.append_sched(sw);
      w.finish(h, {});
    }
    Reader r(p.string());
    EXPECT_EQ(r.header().samples, samples.size());
    EXPECT_EQ(r.header().minor, kMinor);  // written with the current minor (1.3 added kind 4)
    std::vector<Sample> back;
    Sample s;
    while (r.next(s)) back.push_back(s);
    EXPECT_EQ(back, samples) << "level " << level;
    ASSERT_EQ(r.sched_switches().size(), 3u);
    for (std::size_t i = 0; i < sw.size(); ++i) {
      EXPECT_EQ(r.sched_switches()[i].timestamp, 100 + i);
      EXPECT_EQ(r.sched_switches()[i].h.flags, sw[i].h.flags);
      EXPECT_EQ(r.sched_switches()[i].h.cpu, i);
    }
    EXPECT_TRUE(r.warnings().empty());
    EXPECT_EQ(r.header().sched_switches, 3u);
    if (level == 0) {  // the header's count must agree with the records, as `samples` must (ERRATUM E157, E128)
      set_header(p, [](FileHeader& h) { h.sched_switches = 2; });
      Reader bad(p.string());
      const std::string e = error_of([&] {
        while (bad.next(s)) {}
      });
      EXPECT_NE(e.find("offset 944: the header counts 2 scheduling switches, the record area holds 3"),
                std::string::npos)
          << e;
      ReadOptions salvage;
      salvage.salvage = true;
      Reader lenient(p.string(), salvage);
      while (lenient.next(s)) {}
      ASSERT_EQ(lenient.warnings().size(), 1u);
      EXPECT_NE(lenient.warnings()[0].find("2 scheduling switches"), std::string::npos) << lenient.warnings()[0];
    }
  }
  const auto p = temp_path("sched12");
  {
    FileHeader h = make_header();
    h.clock_hz = 1;
    h.minor = 2;
    Writer w(p.string(), h);
    w.append(Sample{});
    std::vector<record::SchedRecord> sw(1);
    sw[0].h.kind = record::RecordKind::SchedSwitch;
    sw[0].h.size = sizeof(record::SchedRecord);
    w.append_sched(sw);
    h.minor = 2;
    w.finish(h, {});
  }
  Reader r(p.string());
  Sample s;
  EXPECT_TRUE(r.next(s));
  EXPECT_THROW(r.next(s), InputError);
}

// Trace format 1.5: MPI calls (kind 8) and clock-offset measurements (kind 9) follow the samples,
// are not samples, come back apart from them (passed over by next(), or read at once by read_annex()), and
// are counted in the header (mpi_records at 992, clock_offsets at 1000), checked as `samples` is (E128).
TEST(TraceFile, MpiAndClockOffsetRecordsAreKeptApartAndCounted) {
  for (const int level : {0, 3}) {
    const auto p = temp_path("mpi");
    const auto samples = some_samples();
    std::vector<record::MpiRecord> calls(4);
    for (std::size_t i = 0; i < calls.size(); ++i) {
      calls[i].h.kind = record::RecordKind::Mpi;
      calls[i].h.size = sizeof(record::MpiRecord);
      calls[i].call = i % 2 ? record::MpiCall::Recv : record::MpiCall::Send;
      calls[i].peer = static_cast<std::int32_t>(i);
      calls[i].timestamp = 10 + i;
    }
    std::vector<record::ClockOffsetRecord> offs(2);
    for (std::size_t i = 0; i < offs.size(); ++i) {
      offs[i].h.kind = record::RecordKind::ClockOffset;
      offs[i].h.size = sizeof(record::ClockOffsetRecord);
      offs[i].timestamp = 1000 * (i + 1);
      offs[i].rtt = 7;
    }
    {
      FileHeader h = make_header();
      h.clock_hz = 1;
      h.mpi_rank = 3;
      h.mpi_world_size = 4;
      Writer w(p.string(), h, level);
      for (const auto& s : samples) w.append(s);
      w.append_mpi(calls);
      w.append_clock(offs);
      w.finish(h, {});
    }
    {
      Reader r(p.string());
      EXPECT_EQ(r.header().samples, samples.size());
      EXPECT_EQ(r.header().mpi_records, 4u);
      EXPECT_EQ(r.header().clock_offsets, 2u);
      EXPECT_EQ(r.header().mpi_rank, 3u);
      std::vector<Sample> back;
      Sample s;
      while (r.next(s)) back.push_back(s);
      EXPECT_EQ(back, samples) << "level " << level;
      ASSERT_EQ(r.mpi_records().size(), 4u);
      EXPECT_EQ(r.mpi_records()[3].peer, 3);
      ASSERT_EQ(r.clock_offsets().size(), 2u);
      EXPECT_EQ(r.clock_offsets()[1].timestamp, 2000u);
    }
    {  // read_annex() first (kron merge), then the samples: the records once, the counts still checked
      Reader r(p.string());
      r.read_annex();
      ASSERT_EQ(r.mpi_records().size(), 4u);
      ASSERT_EQ(r.clock_offsets().size(), 2u);
      EXPECT_EQ(r.mpi_records()[0].timestamp, 10u);
      Sample s;
      std::size_t n = 0;
      while (r.next(s)) ++n;
      EXPECT_EQ(n, samples.size());
      EXPECT_EQ(r.mpi_records().size(), 4u);
    }
    if (level == 0) {
      set_header(p, [](FileHeader& h) { h.mpi_records = 5; });
      Reader bad(p.string());
      Sample s;
      const std::string e = error_of([&] {
        while (bad.next(s)) {}
      });
      EXPECT_NE(e.find("offset 992: the header counts 5 MPI records, the record area holds 4"), std::string::npos) << e;
      set_header(p, [](FileHeader& h) { h.mpi_records = 4, h.clock_offsets = 1; });
      Reader bad2(p.string());
      const std::string e2 = error_of([&] {
        bad2.read_annex();  // the tail is not what the header says: read through instead, and checked
        while (bad2.next(s)) {}
      });
      EXPECT_NE(e2.find("offset 1000: the header counts 1 clock-offset records, the record area holds 2"),
                std::string::npos)
          << e2;
    }
  }
}

// ---- The time base (1.6, docs/trace-format.md "Time base", ERRATA E300-E304) ----------------------------
namespace {
// A 1.6 file whose header `change` edits (after the writer's finish, as a damaged file would hold it).
fs::path time_base_file(const char* name, void (*change)(FileHeader&)) {
  const auto p = write_file(name, some_samples());
  set_header(p, change);
  return p;
}
void as_kernel(FileHeader& h) {
  h.time_source = static_cast<std::uint32_t>(TimeSource::Kernel);
  h.time_shift = 31;
  h.time_mult = 1024570630;  // 2^31 x 10^9 / 2095.984 MHz, rounded down
  h.clock_hz = static_cast<std::uint64_t>(KernelConversion{h.time_mult, h.time_shift, 0}.hz() + 0.5);
}
void as_anchors(FileHeader& h) {
  h.time_source = static_cast<std::uint32_t>(TimeSource::Anchors);
  h.anchor0_ticks = 1'000'000, h.anchor0_ns = 5'000'000'000;
  h.anchor1_ticks = 1'000'000 + 20'959'840'000, h.anchor1_ns = 15'000'000'000;  // 10 s at 2095.984 MHz
  h.clock_hz = 2'095'984'000;
}
}  // namespace

namespace {
// A 1.5 file: 1024 header bytes, records right after them; `clock_hz` its rate.
fs::path v15_file(const char* name, std::uint64_t clock_hz = 10'000'000) {
  const auto p = write_file(name, some_samples());
  auto b = slurp(p);
  FileHeader h;
  std::memcpy(&h, b.data(), sizeof h);
  h.minor = 5;
  h.header_size = kHeaderBytes15;
  h.lanes_offset -= sizeof(FileHeader) - kHeaderBytes15;
  h.origin = Origin::Live;
  h.clock_hz = clock_hz;
  std::vector<char> old(b.size() - (sizeof(FileHeader) - kHeaderBytes15));
  std::memcpy(old.data(), &h, kHeaderBytes15);
  std::memcpy(old.data() + kHeaderBytes15, b.data() + sizeof(FileHeader), b.size() - sizeof(FileHeader));
  spit(p, old);
  return p;
}
}  // namespace

TEST(TraceFile, OlderMinorReadsWithItsRoundedRateAndSaysSo) {
  const auto p = v15_file("v15");
  Reader r(p.string());
  EXPECT_EQ(read_all(r), some_samples().size());
  EXPECT_EQ(time_source(r.header()), TimeSource::Legacy);
  EXPECT_EQ(r.header().time_mult, 0u);  // the bytes after 1024 are records, not a time base
  EXPECT_EQ(rate_hz(r.header()), 10e6);
  EXPECT_EQ(rate_uncertainty_ppm(r.header()), 600);  // E302
  EXPECT_NE(time_source_text(r.header()).find("rounded to 100 kHz"), std::string::npos);
}

// ERRATUM E304: a rate above 100 GHz is refused in a file of any version (kron merge writes the current
// format from a 1.5 file and copies its rate; what it writes must read back).
TEST(TraceFile, OlderMinorWithAScribbledRateIsRefused) {
  Reader at_limit(v15_file("v15ok", 100'000'000'000).string());
  EXPECT_EQ(read_all(at_limit), some_samples().size());
  const auto p = v15_file("v15hz", 100'000'000'001);
  try {
    Reader r(p.string());
    FAIL() << "a 1.5 file at 100 GHz + 1 Hz was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("offset " + std::to_string(offsetof(FileHeader, clock_hz)) + ":"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("above 100 GHz"), std::string::npos) << e.what();
  }
}

TEST(TraceFile, KernelConversionAndAnchorsConvertOnTheirLine) {
  FileHeader k = make_header();
  as_kernel(k);
  EXPECT_NEAR(rate_hz(k), 2095.984e6, 2.0);
  for (std::uint64_t t : {std::uint64_t{12345}, std::uint64_t{1} << 40}) {
    const std::uint64_t ns = KernelConversion{k.time_mult, k.time_shift, k.time_zero}.to_ns(t);
    // Back to the tick: the last of the two or three ticks of that nanosecond.
    const std::uint64_t back = kernel_ns_to_ticks(k, ns);
    EXPECT_LE(back > t ? back - t : t - back, 2u) << t;
  }
  FileHeader a = make_header();
  as_anchors(a);
  EXPECT_EQ(kernel_ns_to_ticks(a, a.anchor0_ns), a.anchor0_ticks);
  EXPECT_EQ(kernel_ns_to_ticks(a, a.anchor1_ns), a.anchor1_ticks);
  EXPECT_EQ(kernel_ns_to_ticks(a, 10'000'000'000), 1'000'000 + 10'479'920'000u);  // the middle
  // close_anchors: the end anchor gives the rate, and the uncertainty from the anchors' half widths.
  FileHeader c = make_header();
  c.time_source = static_cast<std::uint32_t>(TimeSource::Anchors);
  c.anchor0_ticks = 1000, c.anchor0_ns = 1'000'000, c.anchor_half_ns = 20;
  c.clock_hz = 2'095'000'000;  // the board's calibration, before the end anchor
  close_anchors(c, Anchor{1000 + 4'191'968'000, 2'001'000'000, 30});
  EXPECT_EQ(c.clock_hz, 2'095'984'000u);
  EXPECT_EQ(c.anchor_half_ns, 30u);
  EXPECT_NEAR(rate_uncertainty_ppm(c), 2 * 30 / 2e9 * 1e6, 0.002);  // and clock_hz's rounding
  // A recording of microseconds: the anchors would be worse than the board's calibration, which stays.
  FileHeader u = make_header();
  u.time_source = static_cast<std::uint32_t>(TimeSource::Anchors);
  u.anchor0_ticks = 1000, u.anchor0_ns = 1'000'000, u.anchor_half_ns = 20;
  u.clock_hz = 2'095'000'000, u.rate_uncertainty_ppb = 20'000;  // 20 ppm
  close_anchors(u, Anchor{1000 + 4192, 1'002'000, 30});
  EXPECT_EQ(u.clock_hz, 2'095'000'000u);
  EXPECT_EQ(u.anchor1_ns, 0u);
  std::size_t at = 0;
  EXPECT_EQ(time_base_problem(u, &at), nullptr);
}

TEST(TraceFile, AbsurdTimeBaseIsRefusedNamingTheField) {
  struct Case {
    const char* name;
    void (*change)(FileHeader&);
    std::size_t offset;
  };
  const Case cases[] = {
      {"source", [](FileHeader& h) { h.time_source = 9; }, offsetof(FileHeader, time_source)},
      {"mult0", [](FileHeader& h) { as_kernel(h), h.time_mult = 0; }, offsetof(FileHeader, time_mult)},
      {"shift", [](FileHeader& h) { as_kernel(h), h.time_shift = 64; }, offsetof(FileHeader, time_shift)},
      {"ghz", [](FileHeader& h) { as_kernel(h), h.time_shift = 40, h.time_mult = 1; }, offsetof(FileHeader, time_mult)},
      {"khz", [](FileHeader& h) { as_kernel(h), h.clock_hz += 5; }, offsetof(FileHeader, clock_hz)},
      {"back", [](FileHeader& h) { as_anchors(h), h.anchor1_ticks = 5; }, offsetof(FileHeader, anchor1_ticks)},
      {"backns", [](FileHeader& h) { as_anchors(h), h.anchor1_ns = 1; }, offsetof(FileHeader, anchor1_ns)},
      {"slope", [](FileHeader& h) { as_anchors(h), h.clock_hz = 2'000'000'000; }, offsetof(FileHeader, clock_hz)},
      {"mono", [](FileHeader& h) { h.time_source = 4, h.clock_hz = 999; }, offsetof(FileHeader, clock_hz)},
      {"ppb", [](FileHeader& h) { h.rate_uncertainty_ppb = 20'000'000; }, offsetof(FileHeader, rate_uncertainty_ppb)},
  };
  for (const Case& c : cases) {
    const auto p = time_base_file(c.name, c.change);
    const std::string e = error_of([&] { Reader r(p.string()); });
    EXPECT_NE(e.find("offset " + std::to_string(c.offset) + ":"), std::string::npos) << c.name << ": " << e;
  }
  // The good ones read.
  for (auto good : {as_kernel, as_anchors}) {
    const auto p = time_base_file("good", good);
    Reader r(p.string());
    EXPECT_EQ(read_all(r), some_samples().size());
  }
}
