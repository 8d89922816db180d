// ERRATUM E322 (kron/process_attach.hpp): a process that carries two copies of the probe, the program's and a
// library's with its symbols hidden (as libkron_mpi and libkron_omp do), is one process in the board's
// `attached` and `arrivals`, however many copies attach, and leaves it once at its normal exit. Each copy
// still writes through lanes of its own.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>

#include "recorder/board_reader.hpp"
#include "recorder_test_util.hpp"

namespace kron {
namespace {
using testing::ScratchBoard;

TEST(ProcessAttach, AProcessWithTwoCopiesOfTheProbeCountsOnce) {
  ScratchBoard b(testing::board_options(board::BufferMode::Simple, 1u << 20, 8), "copies");
  int to_child[2], from_child[2];
  ASSERT_EQ(::pipe(to_child), 0);
  ASSERT_EQ(::pipe(from_child), 0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(to_child[0], 0);
    ::dup2(from_child[1], 1);
    ::close(to_child[1]);
    ::close(from_child[0]);
    ::setenv("KRON_BOARD", b.name.c_str(), 1);
    ::execl(TWO_COPIES_PROGRAM, TWO_COPIES_PROGRAM, static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  char buf[64] = {};
  std::string said;
  while (said.find('\n') == std::string::npos) {
    const ssize_t n = ::read(from_child[0], buf, sizeof buf - 1);
    if (n <= 0) break;
    said.append(buf, static_cast<std::size_t>(n));
  }
  EXPECT_EQ(said, "ready 1 1\n") << "both copies attached";
  EXPECT_EQ(b.header().attached.load(), 1u) << "one process, two copies of the probe";
  EXPECT_EQ(b.header().arrivals.load(), 1u);
  std::set<std::uint32_t> lanes;  // each copy writes through a lane of its own
  auto r = b.reader();
  for (const auto& v : r.lanes())
    if (v.pid == static_cast<std::uint32_t>(pid) && v.passed) lanes.insert(v.index);
  EXPECT_EQ(lanes.size(), 2u);
  ASSERT_EQ(::write(to_child[1], "\n", 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(b.header().attached.load(), 0u) << "the last copy to leave takes the process off";
  EXPECT_EQ(b.header().arrivals.load(), 1u);
  ::close(to_child[1]);
  ::close(from_child[0]);
}

}  // namespace
}  // namespace kron
