// Crash survival: kill -9 of an instrumented program loses no completed sample, and a record
// cut short by the death is detected, counted and never decoded.
#include <signal.h>

#include <thread>

#include "recorder_test_util.hpp"

namespace kron {
namespace {
using testing::samples_of;
using testing::ScratchBoard;

board::CreateOptions opts(board::BufferMode mode) { return testing::board_options(mode, 1 << 20, 4); }

// A child that records data = 0, 1, 2, ... until it is killed.
pid_t start_writer(const std::string& name) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    kron::attach(name.c_str());
    for (std::uint64_t i = 0;; ++i) kron::trace(0, i);
  }
  return pid;
}

void kill_after_some_samples(board::BoardHeader& h, pid_t pid, std::uint64_t want) {
  auto* lane0 = reinterpret_cast<board::LaneHeader*>(reinterpret_cast<std::uint8_t*>(&h) + h.lanes_offset);
  for (int i = 0; i < 20000 && lane0->passed.load() < want; ++i)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  ::kill(pid, SIGKILL);
  int status;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
}

class CrashTest : public ::testing::TestWithParam<board::BufferMode> {};

TEST_P(CrashTest, KillNineLosesNoCompletedSample) {
  ScratchBoard b(opts(GetParam()));
  const pid_t pid = start_writer(b.name);
  kill_after_some_samples(b.header(), pid, 50000);
  auto r = b.reader();
  const auto s = samples_of(r);
  ASSERT_FALSE(s.empty());
  const auto lanes = r.lanes();
  ASSERT_TRUE(lanes[0].owner_dead);
  // Every completed sample is there, consecutive: the newest kept ones in circular mode, the oldest in simple.
  for (std::size_t i = 1; i < s.size(); ++i) ASSERT_EQ(s[i].data, s[i - 1].data + 1) << i;
  const auto t = r.totals();
  EXPECT_LE(t.torn, 1u);  // killed between `passed` and the head store at most once
  EXPECT_TRUE(t.exact()) << t.passed << " " << t.recorded << " " << t.overruns << " " << t.overwritten;
  if (GetParam() == board::BufferMode::Circular) {
    EXPECT_EQ(s.back().data + 1 + t.torn, t.passed);
  } else {
    EXPECT_EQ(s.front().data, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, CrashTest, ::testing::Values(board::BufferMode::Simple, board::BufferMode::Circular));

// A death in the middle of a record, made exactly: the child writes half a record at its head the way a
// probe does (passed first, then the slots) and is killed before it publishes the head.
void die_in_the_middle_of_a_record(ScratchBoard& b) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    kron::attach(b.name.c_str());
    for (std::uint64_t i = 0; i < 10; ++i) kron::trace(0, i);
    auto& h = b.header();
    auto* L = b.map.lane(0);
    auto* ring = reinterpret_cast<std::uint64_t*>(b.map.block_data(L->cur.load()));  // the lane's current block
    const std::uint64_t head = L->head.load() & (h.block_bytes / board::kSlot - 1);
    L->passed.store(L->passed.load() + 1);
    ring[head * 4] = 2u | (160u << 16);  // a Resource record's first words...
    ring[head * 4 + 1] = 0xdeadbeef;
    ::raise(SIGKILL);  // ...and death before the rest and the release of head
  }
  int status;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
}

TEST(CrashCutTest, HalfWrittenRecordIsDetectedAndDropped) {
  ScratchBoard b(opts(board::BufferMode::Simple));
  die_in_the_middle_of_a_record(b);
  auto r = b.reader();
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 10u);
  for (std::uint64_t i = 0; i < 10; ++i) EXPECT_EQ(s[i].data, i);
  const auto t = r.totals();
  EXPECT_EQ(t.torn, 1u);
  EXPECT_EQ(t.passed, 11u);
  EXPECT_EQ(t.overruns, 1u);  // the cut record counts as lost
  EXPECT_TRUE(t.exact());
}

// The same death seen by kron record: the drain takes the ten records, finds the owner gone and frees the
// lane. The cut record is counted in the lane's final figures (its file lane entry and the board's totals:
// an overrun, and torn), so that passed = recorded + overruns + overwritten still holds once the lane is gone.
TEST(CrashCutTest, TornRecordOfADeadLaneFreedByDrainIsCounted) {
  ScratchBoard b(opts(board::BufferMode::Simple));
  die_in_the_middle_of_a_record(b);
  auto r = b.reader();
  std::uint64_t drained = 0;
  std::vector<tracefile::LaneEntry> finished;
  r.drain([&](const recorder::LaneView&, std::span<const std::uint8_t>, std::uint64_t n) { drained += n; }, &finished);
  EXPECT_EQ(drained, 10u);
  ASSERT_EQ(finished.size(), 1u) << "the dead owner's lane was not freed";
  EXPECT_EQ(finished[0].samples, 10u);
  EXPECT_EQ(finished[0].overruns, 1u) << "the torn record is missing from the freed lane's entry";
  EXPECT_EQ(finished[0].overwritten, 0u);
  EXPECT_EQ(r.lanes()[0].state, board::LaneState::Free);
  const auto t = r.totals();
  EXPECT_EQ(t.passed, 11u);
  EXPECT_EQ(t.recorded, 10u);
  EXPECT_EQ(t.overruns, 1u);
  EXPECT_EQ(t.torn, 1u);
  EXPECT_TRUE(t.exact()) << t.passed << " " << t.recorded << " " << t.overruns << " " << t.overwritten;
}

}  // namespace
}  // namespace kron
