// The board is untrusted shared memory (docs/board-format.md "Trust model"). Each test is one
// row of the table rewritten as the hostile or unlucky process would: a header changed after it
// was validated (row 1), a board larger than its tmpfs (row 3), two recorders naming their boards alike
// (row 4), probes and control calls facing scribbled or abandoned words (row 7), a lane count that hides a
// lane (row 8), and the owner/mode check.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <cstring>
#include <set>
#include <thread>

#include "kron/board_ops.hpp"
#include "kron/board_pool.hpp"
#include "kron/core/error.hpp"
#include "kron/core/record.hpp"
#include "kron/kron.hpp"
#include "recorder/board_reader.hpp"
#include "recorder_test_util.hpp"

namespace kron {
namespace {
using namespace board;
using testing::ScratchBoard;
using testing::board_options;
using testing::in_child;

std::uint64_t count_records(recorder::BoardReader& r) {
  std::uint64_t n = 0;
  r.snapshot([&](const recorder::LaneView&, std::span<const std::uint8_t>, std::uint64_t k) { n += k; });
  return n;
}

// Row 1: a recorded program rewrites the header after kron validated it. The reader works from its copy
// of the fixed fields: same records, no SEGV (before: BoardReader::view_lane at lanes_offset + 2^40).
TEST(TrustTest, HeaderRewrittenAfterOpenIsNotFollowed) {
  ScratchBoard b(board_options(BufferMode::Simple, 64 << 10, 4), "trust");
  ASSERT_EQ(testing::trace_in_child(b.name, 500), 0);
  auto r = b.reader();
  BoardHeader& h = b.header();
  h.lanes_offset = 1ull << 40;
  h.lane_count = kMaxLanes;
  h.lane_header_size = 1u << 20;
  h.blocks_offset = 1ull << 40;
  h.block_count = 0xfffffff0u;
  h.data_offset = 1ull << 41;
  h.block_bytes = 1ull << 30;
  h.lane_hwm.store(3);  // within the validated count: a lane, not a lie
  EXPECT_EQ(count_records(r), 500u);
  const auto t = r.totals();
  EXPECT_EQ(t.passed, 500u);
  EXPECT_TRUE(t.exact());
  EXPECT_EQ(r.pool().blocks, 16u);
  std::uint64_t drained = 0;
  r.drain([&](const recorder::LaneView&, std::span<const std::uint8_t>, std::uint64_t n) { drained += n; }, nullptr);
  EXPECT_EQ(drained, 500u);
  EXPECT_TRUE(r.problems().empty()) << r.problems()[0];
}

// Row 8: a lane count one short hides the last lane (its samples and its probes: the figures would
// balance). The reader refuses the board naming the field; lane_hwm, raised by every claim, tells.
TEST(TrustTest, LaneCountBelowTheClaimedLanesIsRefused) {
  ScratchBoard b(board_options(BufferMode::Simple, 64 << 10, 2), "trust");
  ASSERT_EQ(in_child(b.name, [] {
              for (int i = 0; i < 100; ++i) kron::trace(0, i);  // the main thread holds lane 0 until exit
              std::thread t([] { for (int i = 0; i < 50; ++i) kron::trace(0, i); });  // lane 1
              t.join();
              return 0;
            }),
            0);
  ASSERT_EQ(b.header().lane_hwm.load(), 2u);
  b.header().lane_count = 1;
  try {
    (void)b.reader();
    FAIL() << "a lane count below lane_hwm was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("lane count 1 is below the 2 lanes claimed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(offsetof(BoardHeader, lane_count))), std::string::npos) << e.what();
  }
}

// Row 8: a block holding a lane's records beyond the lane count is a problem naming it, never a silent
// loss with balanced figures.
TEST(TrustTest, BlockOfALaneBeyondTheCountIsAProblem) {
  ScratchBoard b(board_options(BufferMode::Simple, 64 << 10, 2), "trust");
  ASSERT_EQ(testing::trace_in_child(b.name, 10), 0);
  auto r = b.reader();
  const std::uint32_t x = b.map.lane(0)->first.load();
  ASSERT_LT(x, b.map.geometry().block_count);
  b.map.blocks()[x].lane.store(7);
  (void)count_records(r);
  ASSERT_FALSE(r.problems().empty());
  EXPECT_NE(r.problems()[0].find("holds records of lane 7, beyond the lane count 2"), std::string::npos) << r.problems()[0];
}

// Row 8: a doubled lane header size runs the lane table into the block table: refused, field named.
TEST(TrustTest, DoubledLaneHeaderSizeIsRefused) {
  ScratchBoard b(board_options(BufferMode::Simple, 64 << 10, 4), "trust");
  b.header().lane_header_size *= 2;
  const Problem p = validate(b.map.bytes(), b.map.size());
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.offset, offsetof(BoardHeader, blocks_offset)) << p.what;
  b.header().lane_header_size /= 2;
  b.header().clock_hz = ~0ull;  // would make every wait computed from it endless
  EXPECT_EQ(validate(b.map.bytes(), b.map.size()).offset, offsetof(BoardHeader, clock_hz));
}

// Row 7: ctl_lock left held by a process that died. The lock word names its holder; a dead holder is
// replaced (before: every control call spun forever on the value 1). A live holder that keeps it makes
// the write fail, not hang.
TEST(TrustTest, ControlLockOfADeadProcessIsBroken) {
  ScratchBoard b(board_options(BufferMode::Simple, 64 << 10, 2), "trust");
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ::waitpid(dead, nullptr, 0);
  b.header().ctl_lock.store(static_cast<std::uint32_t>(dead));
  b.header().ctr_seq.store(7);  // it died inside its update: the sequence is odd
  EXPECT_TRUE(write_counter_control(b.header(), 0x2, 0, 0));  // counter 0 enabled (Table B7 xx10)
  EXPECT_EQ(b.header().ctl_lock.load(), 0u);
  EXPECT_EQ(b.header().ctr_seq.load() % 2, 0u);
  EXPECT_EQ(field(b.header().enable_reg.load(), 0), 0x2);
  // A live holder (this process's parent stands for a stopped one) that never lets go.
  b.header().ctl_lock.store(static_cast<std::uint32_t>(::getppid()));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(write_counter_control(b.header(), 0x1, 0, 0));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));  // behaviour: it returns
  EXPECT_EQ(field(b.header().enable_reg.load(), 0), 0x2);  // nothing written
}

// Row 7: a program's probes on a circular board whose sealed queue and counter seqlock were scribbled
// (cells ahead of the queue, an odd sequence number nobody will ever make even) and whose lane has a
// hostile head: the program ends (an alarm turns a spin into a failed test).
TEST(TrustTest, ProbesNeverSpinOnScribbledWords) {
  ScratchBoard b(board_options(BufferMode::Circular, 64 << 10, 2), "trust");
  BoardHeader& h = b.header();
  for (std::uint32_t c = 0; c < b.map.geometry().block_count; ++c) b.map.sealed_cells()[c].seq.store(1ull << 63);
  h.ctr_seq.store(1);
  h.mode_reg.store(0x1);  // counter 0: CLK (Table B5 x001): a Resource probe reads the stopwatches
  b.map.lane(0)->head.store(1ull << 63);
  const int rc = in_child(b.name, [] {
    ::alarm(20);
    for (int i = 0; i < 100; ++i) kron::resource(0, i);  // reads the stopwatches under the seqlock
    for (int i = 0; i < 3000; ++i) kron::trace(0, i);    // crosses all 16 blocks: seals, queues, recycles
    return 0;
  });
  EXPECT_EQ(rc, 0) << "the probes spun (SIGALRM is 142)";
}

// Row 7: a simple board with Write Wait, a lane whose head is 2^63 and a drainer heartbeat from the far
// future (both scribbled): the probe does not wait for a drain that could never catch up.
TEST(TrustTest, WaitingProbeIgnoresAHeadNoDrainCanReach) {
  auto o = board_options(BufferMode::Simple, 64 << 10, 2);
  o.csr = kCsrSamplingEnabled | kCsrWriteWait;
  ScratchBoard b(o, "trust");
  b.map.lane(0)->head.store(1ull << 63);
  b.header().drainer_pid.store(static_cast<std::uint32_t>(::getpid()));  // alive: this process
  b.header().drainer_beat.store(~0ull);
  const int rc = in_child(b.name, [] {
    ::alarm(20);
    for (int i = 0; i < 5000; ++i) kron::trace(0, i);
    return 0;
  });
  EXPECT_EQ(rc, 0) << "the probe waited (SIGALRM is 142)";
}

// Owner and mode (ERRATUM E121): a board others may write is refused by name and mode, unless trusted.
TEST(TrustTest, BoardWritableByOthersIsRefusedUnlessTrusted) {
  auto o = board_options(BufferMode::Simple, 64 << 10, 2);
  o.perms = 0666;
  ScratchBoard b(o, "trust");
  try {
    (void)b.reader();
    FAIL() << "a 0666 board was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has mode 0666"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--trust-board"), std::string::npos) << e.what();
  }
  set_trust_boards(true);
  EXPECT_NO_THROW((void)b.reader());
  set_trust_boards(false);
  if (::geteuid() == 0) {  // another owner: only root can make one
    ASSERT_EQ(::chmod(board_path(b.name).c_str(), 0600), 0);
    ASSERT_EQ(::chown(board_path(b.name).c_str(), 65534, 65534), 0);
    EXPECT_THROW((void)b.reader(), InputError);
  }
}

// A board whose creator has not finished (mode 0 until its fchmod, header not yet written) is waited for,
// not read as a foreign file: root can open a mode-0 file and read "bad magic" (ERRATUM E400).
TEST(TrustTest, HalfCreatedBoardIsWaitedFor) {
  ScratchBoard b(board_options(BufferMode::Simple, 64 << 10, 2), "half");
  const std::string path = board_path(b.name);
  char magic[sizeof b.header().magic];
  std::memcpy(magic, b.header().magic, sizeof magic);
  std::memset(b.header().magic, 0, sizeof magic);  // as before the creator wrote the header
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  std::thread creator([&] {  // the creator finishes: header, release, fchmod
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::memcpy(b.header().magic, magic, sizeof magic);
    std::atomic_thread_fence(std::memory_order_release);
    ::chmod(path.c_str(), 0600);
  });
  EXPECT_NO_THROW((void)b.reader());
  creator.join();
}

// A board left half-created (its creator died before the fchmod) is named as such after the wait.
TEST(TrustTest, BoardLeftHalfCreatedIsNamedSo) {
  ScratchBoard b(board_options(BufferMode::Simple, 64 << 10, 2), "half");
  std::memset(b.header().magic, 0, sizeof b.header().magic);
  ASSERT_EQ(::chmod(board_path(b.name).c_str(), 0), 0);
  std::string err;
  Mapping m = Mapping::open(b.name, &err);
  EXPECT_FALSE(m);
  EXPECT_NE(err.find("is being created"), std::string::npos) << err;
  EXPECT_EQ(err.find("bad magic"), std::string::npos) << err;
}

// Row 3: a board larger than the free space where it is made is refused with sizes and the directory
// (before: created, and the traced program died of SIGBUS on its first touch of a missing page).
TEST(TrustTest, BoardLargerThanItsDirectoryIsRefused) {
  struct statvfs fs;
  ASSERT_EQ(::statvfs(shm_dir().c_str(), &fs), 0);
  const std::uint64_t avail = std::uint64_t{fs.f_bavail} * fs.f_frsize;
  if (avail + (256ull << 20) > kMaxSegment) GTEST_SKIP() << "more than 1 TiB free in " << shm_dir();
  CreateOptions o = board_options(BufferMode::Simple, avail + (256ull << 20), 4);
  o.block_bytes = kMaxBlockBytes;
  o.name = "trust-big-" + std::to_string(::getpid());
  std::string err;
  Mapping m = Mapping::create(o, &err);
  EXPECT_FALSE(m);
  EXPECT_NE(err.find("MiB free"), std::string::npos) << err;
  EXPECT_NE(err.find(shm_dir()), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(board_path(o.name)));
}

// Row 3, --shm-dir: boards may live in another directory (KRON_SHM_DIR), found there by every reader and
// by the probes of a program that inherits the variable.
TEST(TrustTest, BoardsLiveInTheChosenDirectory) {
  char dir[] = "/tmp/kron-shm-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  ::setenv(kEnvShmDir, dir, 1);
  {
    ScratchBoard b(board_options(BufferMode::Simple, 64 << 10, 2), "dir");
    EXPECT_TRUE(std::filesystem::exists(std::string(dir) + "/kron." + b.name));
    ASSERT_EQ(testing::trace_in_child(b.name, 100), 0);
    auto r = b.reader();
    EXPECT_EQ(count_records(r), 100u);
  }
  ::unsetenv(kEnvShmDir);
  std::filesystem::remove_all(dir);
}

// Row 4: kron record's board names are unique across PID namespaces (the same pid in two of them gave
// both `record-PID`, and the first to end unlinked the other's board), and creation never replaces.
TEST(TrustTest, RecordBoardNamesDifferAndNeverReplace) {
  std::set<std::string> names;
  for (int i = 0; i < 100; ++i) {
    const std::string n = unique_name("record");
    EXPECT_TRUE(valid_name(n)) << n;
    EXPECT_EQ(n.rfind("record-" + std::to_string(::getpid()) + "-", 0), 0u) << n;
    names.insert(n);
  }
  EXPECT_EQ(names.size(), 100u);
  EXPECT_TRUE(valid_name("record-4194304-ffffffff"));  // the longest: pid_max is 2^22
  ScratchBoard b(board_options(BufferMode::Simple, 64 << 10, 2), "trust");
  CreateOptions o = board_options(BufferMode::Simple, 64 << 10, 2);
  o.name = b.name;
  std::string err;
  EXPECT_FALSE(Mapping::create(o, &err));
  EXPECT_NE(err.find("File exists"), std::string::npos) << err;
  EXPECT_NO_THROW((void)b.reader());  // the first board is intact
}

// A record scribbled on the board (its header word: kind and size) is never handed on: the drain checks each
// record's kind and size in its own copy (ERRATUM E324), hands on the records before it, and names the bad
// one's segment offset. Two ways: a kind that is no probe's, and a Resource record's size running past the
// lane's head. Both after records recognised by the Trace shortcut, so that neither check can be skipped.
TEST(TrustTest, AScribbledRecordStopsTheDrainNamingItsOffset) {
  for (const bool past_head : {false, true}) {
    ScratchBoard b(board_options(BufferMode::Simple, 64 << 10, 4), "trust");
    ASSERT_EQ(testing::trace_in_child(b.name, 300), 0);
    board::Mapping& m = b.map;
    const std::uint64_t per_block = m.header()->block_bytes / kSlot;
    const std::uint64_t bad = past_head ? 299 : 200;  // the lane's last record, or one in its second block
    std::uint32_t x = m.lane(0)->first.load();
    for (std::uint64_t i = 0; i < bad / per_block; ++i) x = m.blocks()[x].next.load();
    std::uint8_t* rec = m.block_data(x) + (bad % per_block) * kSlot;
    const std::uint64_t word = past_head ? record::header_word(record::RecordKind::Resource) : 9u | 32u << 16;
    std::memcpy(rec, &word, sizeof word);
    auto r = b.reader();
    std::uint64_t got = 0;
    r.drain([&](const recorder::LaneView&, std::span<const std::uint8_t>, std::uint64_t n) { got += n; }, nullptr);
    EXPECT_EQ(got, bad) << "the records before the bad one are handed on, it and what follows are not";
    ASSERT_EQ(r.problems().size(), 1u);
    const std::uint64_t off = m.header()->data_offset + std::uint64_t{x} * m.header()->block_bytes + (bad % per_block) * kSlot;
    EXPECT_NE(r.problems()[0].find("offset " + std::to_string(off) + ": lane 0: "), std::string::npos) << r.problems()[0];
    EXPECT_NE(r.problems()[0].find(past_head ? "record runs past the end of its block or the lane's head"
                                             : "record of kind 9 and size 32 is not a Trace or Resource record"),
              std::string::npos)
        << r.problems()[0];
  }
}

}  // namespace
}  // namespace kron
