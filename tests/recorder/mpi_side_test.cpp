// The MPI side area (src/recorder/mpi_side.hpp, ERRATUM E440): libkron_mpi publishes each MPI record and clock
// measurement there as it exists; kron record --mpi reads it after the rank ended, however it ended. Checked
// here without MPI: what is published is read back, in order, across the file's growth; a request published
// incomplete and completed in its slot reads completed; nothing unpublished is read; and a damaged area is
// refused with its offset named, the records before the damage kept (bad input names the offset: the
// project's rule for every parser).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "recorder/mpi_side.hpp"

namespace kron::recorder::mpiside {
namespace {

namespace fs = std::filesystem;

record::MpiRecord call(std::uint64_t t, std::int32_t tag) {
  record::MpiRecord m{};
  m.h.kind = record::RecordKind::Mpi;
  m.h.size = sizeof m;
  m.timestamp = t;
  m.end = t + 5;
  m.tag = tag;
  m.call = record::MpiCall::Send;
  return m;
}

struct SideFile {
  fs::path path = fs::temp_directory_path() / ("kron-side-test-" + std::to_string(::getpid()));
  SideFile() { fs::remove(path); }
  ~SideFile() { fs::remove(path); }
};

// More records than the first MiB holds (16,380 slots): the file grows under the writer and every record
// reads back in publishing order, the clock measurements apart.
TEST(MpiSideTest, WhatIsPublishedReadsBackInOrderAcrossGrowth) {
  SideFile f;
  create(f.path.string());
  Writer w = Writer::open(f.path.string());
  constexpr int kCalls = 40000;
  for (int i = 0; i < kCalls; ++i) {
    const record::MpiRecord m = call(std::uint64_t(i) * 10, i);
    EXPECT_EQ(w.append(&m, sizeof m), std::uint64_t(i) + (i >= 20000 ? 1 : 0));
    if (i == 19999) {
      record::ClockOffsetRecord o{};
      o.h.kind = record::RecordKind::ClockOffset;
      o.h.size = sizeof o;
      o.timestamp = 123;
      o.reference = 456;
      o.rtt = 7;
      w.append(&o, sizeof o);
    }
  }
  w.header().rank = 3;
  w.header().world_size = 8;
  std::snprintf(w.header().host, sizeof w.header().host, "node-a");
  w.header().state.store(static_cast<std::uint32_t>(State::Finalized));
  const Contents c = read(f.path.string());
  EXPECT_EQ(c.problem, "");
  ASSERT_EQ(c.calls.size(), std::size_t{kCalls});
  for (int i = 0; i < kCalls; ++i) {
    EXPECT_EQ(c.calls[std::size_t(i)].tag, i);
    EXPECT_EQ(c.calls[std::size_t(i)].timestamp, std::uint64_t(i) * 10);
  }
  ASSERT_EQ(c.offsets.size(), 1u);
  EXPECT_EQ(c.offsets[0].reference, 456u);
  EXPECT_EQ(c.rank, 3u);
  EXPECT_EQ(c.world_size, 8u);
  EXPECT_EQ(c.host, "node-a");
  EXPECT_EQ(c.state, static_cast<std::uint32_t>(State::Finalized));
}

// A request published at its posting is flagged incomplete; completed in its slot, it reads completed with
// its new end, and the one never completed stays flagged (a rank killed with it in flight).
TEST(MpiSideTest, ARequestCompletedInItsSlotReadsCompletedTheOtherStaysIncomplete) {
  Writer w = Writer::anonymous();
  record::MpiRecord a = call(100, 1), b = call(200, 2);
  a.h.flags = b.h.flags = record::kMpiIncomplete;
  const std::uint64_t sa = w.append(&a, sizeof a);
  w.append(&b, sizeof b);
  w.mpi(sa).end = 999;
  w.mpi(sa).h.flags = 0;
  const Contents c = read_fd(w.fd(), "anon");
  ASSERT_EQ(c.calls.size(), 2u);
  EXPECT_EQ(c.calls[0].end, 999u);
  EXPECT_EQ(c.calls[0].h.flags & record::kMpiIncomplete, 0);
  EXPECT_EQ(c.calls[1].h.flags & record::kMpiIncomplete, record::kMpiIncomplete);
  EXPECT_EQ(c.state, static_cast<std::uint32_t>(State::Created));
}

// A slot written but not yet published (the count not raised: the rank died between the two) is not read.
TEST(MpiSideTest, ASlotNotPublishedIsNotRead) {
  Writer w = Writer::anonymous();
  const record::MpiRecord a = call(1, 1), b = call(2, 2);
  w.append(&a, sizeof a);
  w.append(&b, sizeof b);
  w.header().count.store(1);
  EXPECT_EQ(read_fd(w.fd(), "anon").calls.size(), 1u);
}

std::vector<std::uint8_t> bytes_of(Writer& w) {
  const Contents c = read_fd(w.fd(), "x");  // (sizes the file as the reader sees it)
  struct stat st {};
  ::fstat(w.fd(), &st);
  std::vector<std::uint8_t> b(static_cast<std::size_t>(st.st_size));
  EXPECT_EQ(::pread(w.fd(), b.data(), b.size(), 0), static_cast<ssize_t>(b.size()));
  return b;
}

// Damage is named with its offset; what came before it is kept.
TEST(MpiSideTest, DamageIsNamedWithItsOffsetAndTheRecordsBeforeItKept) {
  Writer w = Writer::anonymous();
  for (int i = 0; i < 3; ++i) {
    const record::MpiRecord m = call(std::uint64_t(i), i);
    w.append(&m, sizeof m);
  }
  const std::vector<std::uint8_t> good = bytes_of(w);
  {  // the third record's kind scribbled on
    auto b = good;
    b[kHeaderBytes + 2 * kSlotBytes] = 77;
    const Contents c = parse(b, "side");
    EXPECT_EQ(c.calls.size(), 2u);
    EXPECT_NE(c.problem.find("side: offset 384: record 2 of kind 77"), std::string::npos) << c.problem;
  }
  {  // a count beyond the file
    auto b = good;
    const std::uint64_t n = 1u << 30;
    std::memcpy(b.data() + 40, &n, sizeof n);
    const Contents c = parse(b, "side");
    EXPECT_NE(c.problem.find("offset 40"), std::string::npos) << c.problem;
    EXPECT_EQ(c.calls.size(), 3u);  // the room's worth: 3 records and zeroed slots stop at the first zero kind
  }
  {  // not a side area
    auto b = good;
    b[0] = 'X';
    EXPECT_NE(parse(b, "side").problem.find("offset 0: not an MPI side area"), std::string::npos);
  }
  {  // a header cut short
    EXPECT_NE(parse(std::span(good.data(), 100), "side").problem.find("shorter than"), std::string::npos);
  }
  {  // a state none of the four
    auto b = good;
    const std::uint32_t st = 9;
    std::memcpy(b.data() + 20, &st, sizeof st);
    EXPECT_NE(parse(b, "side").problem.find("offset 20: state 9"), std::string::npos);
  }
}

}  // namespace
}  // namespace kron::recorder::mpiside
