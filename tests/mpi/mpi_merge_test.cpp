// kron merge on a real job of one machine (DECISIONS D10, D12): examples/mpi/mpi_probes.cpp's `late-root`,
// 2 ranks under `kron record --mpi`, each MPI library kron is built for (tests/mpi/flavour.hpp). Rank 0, the
// root, arrives 20 ms late to five MPI_Bcasts of nothing (count 0); rank 1 may leave them at once (MPI 4.0
// section 6.1: a collective need not synchronize) and then waits in the MPI_Barrier. Merged with the
// defaults, nothing moves: rank 1's MPI_Bcast time stays under 1 ms, its wait is in MPI_Barrier, and kron
// merge says "0 events moved" with rank 1's clock exact. It fails against a merge that corrects exact
// clocks, or that takes a broadcast of nothing as a dependency (rank 1 then spends 100 ms in MPI_Bcast).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "kron/format/trace_file.hpp"
#include "mpi/flavour.hpp"

namespace kron {
namespace {

namespace fs = std::filesystem;
using testing::MpiFlavour;

int run(const std::string& cmd) {
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class LateRootTest : public ::testing::TestWithParam<MpiFlavour> {};

TEST_P(LateRootTest, EmptyBroadcastsOfALateRootMoveNothingOnOneMachine) {
  const MpiFlavour& fl = GetParam();
  const fs::path dir = fs::temp_directory_path() / ("kron-mpi-late-root-" + fl.name + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string prefix = (dir / "run").string();
  ASSERT_EQ(run(fl.run(2, "",
                       std::string(KRON_CLI) + " record --mpi -q -o " + prefix + " -- " + fl.probes + " late-root >" +
                           (dir / "out.txt").string() + " 2>" + (dir / "err.txt").string())),
            0)
      << slurp(dir / "err.txt");
  const std::string merged = (dir / "all.kron").string();
  ASSERT_EQ(run(std::string(KRON_CLI) + " merge " + prefix + ".rank-0.kron " + prefix + ".rank-1.kron -o " + merged +
                " >" + (dir / "merge.txt").string() + " 2>&1"),
            0)
      << slurp(dir / "merge.txt");
  const std::string text = slurp(dir / "merge.txt");
  EXPECT_NE(text.find(", 0 events moved"), std::string::npos) << text;
  EXPECT_NE(text.find("happened-before violations: 0 after alignment, 0 left"), std::string::npos) << text;
  EXPECT_NE(text.find("exact =0"), std::string::npos) << text;
  // Rank 1's time in each call, from the merged file's MPI records.
  tracefile::Reader rd(merged);
  rd.read_annex();
  std::map<record::MpiCall, double> ms;
  for (const auto& r : rd.mpi_records())
    if (r.rank == 1) ms[r.call] += double(r.end - r.timestamp) * 1e3 / double(rd.header().clock_hz);
  EXPECT_LT(ms[record::MpiCall::Bcast], 1.0) << text;
  EXPECT_GT(ms[record::MpiCall::Barrier], 80.0) << text;
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Flavours, LateRootTest, ::testing::ValuesIn(testing::mpi_flavours()),
                         [](const auto& p) { return p.param.name; });

}  // namespace
}  // namespace kron
