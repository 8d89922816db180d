// An MPI job recorded whole (ERRATA E440-E442): examples/mpi/mpi_probes.cpp, a program with kron probes of its
// own (a named scope and two trace samples an iteration, data = rank << 32 | iteration), run by mpirun with 4
// ranks both ways a user records a job: `kron record --mpi` per rank, and libkron_mpi preloaded alone. What is
// checked, and why it can fail:
// - every probe of the program is in its rank's file, each sample once, with its rank's data (a rank file
//   without the program's probes, or with another rank's, fails);
// - each rank's file names its rank and world, holds its MPI calls and clock measurements, and says the rank
//   reached MPI_Finalize;
// - the merged report names each rank ("rank R ...");
// - a rank that kills itself with SIGKILL halfway keeps its first half: every sample it took before it died and
//   every MPI call it completed (kron record --mpi), its file says how it ended, and kron merge merges the four
//   files, naming it as the rank that ended first.
// Source of the goal: 000 introduction and Appendix A (one clock, one record of the whole machine); nothing
// recorded is lost uncounted (the accounting of 003 section 2.6).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kron/format/trace_file.hpp"

namespace kron {
namespace {

namespace fs = std::filesystem;

constexpr int kRanks = 4;
constexpr int kIterations = 30;

int run(const std::string& cmd) {
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string mpirun(const std::string& env, const std::string& program) {
  return std::string("timeout 300 ") + KRON_MPIRUN + " --allow-run-as-root --oversubscribe -np " +
         std::to_string(kRanks) + " " + env + " " + program;
}

// What a rank's file holds of the program's own probes: the data words of its group-1 trace samples, and how
// many "iteration" scope samples.
struct RankFile {
  tracefile::FileHeader h{};
  std::multiset<std::uint64_t> data;
  std::size_t scope_samples = 0, mpi_calls = 0, clock = 0;
  std::map<record::MpiCall, std::size_t> calls;
  std::size_t incomplete = 0;
};

RankFile read_rank(const std::string& path) {
  RankFile f;
  tracefile::Reader rd(path);
  f.h = rd.header();
  std::uint16_t iteration_id = 0;
  for (const auto& n : rd.names())
    if (n.name_kind == record::NameKind::Scope && std::string(n.name) == "iteration") iteration_id = n.id;
  Sample s;
  while (rd.next(s)) {
    if (s.flags & kFlagNamed) {
      if (iteration_id && record::name_id_of(s.data) == iteration_id) ++f.scope_samples;
    } else if (s.group == 1) {
      f.data.insert(s.data);
    }
  }
  rd.read_annex();
  f.mpi_calls = rd.mpi_records().size();
  f.clock = rd.clock_offsets().size();
  for (const auto& m : rd.mpi_records()) {
    ++f.calls[m.call];
    if (m.h.flags & record::kMpiIncomplete) ++f.incomplete;
  }
  return f;
}

// The program's samples of rank r, iterations [0, n) (first sample) and [0, m) (second); `died`: the sample it
// took at iteration n - 1 before it died.
std::multiset<std::uint64_t> expected(int r, int n, int m, bool died = false) {
  std::multiset<std::uint64_t> e;
  if (died) e.insert((std::uint64_t(unsigned(r)) << 32 | unsigned(n - 1)) | std::uint64_t{1} << 30);
  for (int it = 0; it < n; ++it) e.insert(std::uint64_t(unsigned(r)) << 32 | unsigned(it));
  for (int it = 0; it < m; ++it) e.insert((std::uint64_t(unsigned(r)) << 32 | unsigned(it)) | std::uint64_t{1} << 31);
  return e;
}

class WholeJobTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("kron-mpi-whole-" + std::string(GetParam()) + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  // The job, recorded the way the parameter names; returns mpirun's status.
  int record(const std::string& args) {
    const std::string prefix = (dir / "run").string();
    if (std::string(GetParam()) == "kron_record")
      return run(mpirun("", std::string(KRON_CLI) + " record --mpi -q -o " + prefix + " -- " + KRON_MPI_PROBES + " " +
                                args + " >" + (dir / "out.txt").string() + " 2>" + (dir / "err.txt").string()));
    return run(mpirun(std::string("-x LD_PRELOAD=") + KRON_MPI_LIB + " -x KRON_MPI_OUT=" + prefix,
                      std::string(KRON_MPI_PROBES) + " " + args + " >" + (dir / "out.txt").string() + " 2>" +
                          (dir / "err.txt").string()));
  }
  std::string file(int r) const { return (dir / ("run.rank-" + std::to_string(r) + ".kron")).string(); }
  fs::path dir;
};

// Both ways: each rank's file holds every probe of the program, its MPI calls and its clock measurements.
TEST_P(WholeJobTest, EveryProbeOfTheProgramIsInItsRanksFileAndTheReportNamesEachRank) {
  ASSERT_EQ(record(std::to_string(kIterations)), 0) << slurp(dir / "err.txt");
  std::vector<std::string> files;
  for (int r = 0; r < kRanks; ++r) {
    files.push_back(file(r));
    ASSERT_TRUE(fs::exists(file(r))) << file(r) << "\n" << slurp(dir / "err.txt");
    const RankFile f = read_rank(file(r));
    EXPECT_EQ(f.h.mpi_rank, static_cast<std::uint32_t>(r));
    EXPECT_EQ(f.h.mpi_world_size, static_cast<std::uint32_t>(kRanks));
    EXPECT_TRUE(f.h.flags & tracefile::kFlagComplete);
    EXPECT_EQ(f.h.merge_flags & tracefile::kRankEndedEarly, 0u) << "rank " << r;
    EXPECT_EQ(f.h.end_signal, 0u);
    EXPECT_EQ(f.data, expected(r, kIterations, kIterations)) << "rank " << r;
    EXPECT_EQ(f.scope_samples, 2u * kIterations) << "rank " << r;  // begin and end of each iteration
    EXPECT_EQ(f.calls.at(record::MpiCall::Allreduce), std::size_t{kIterations});
    EXPECT_EQ(f.calls.at(record::MpiCall::Send), std::size_t{kIterations});
    EXPECT_EQ(f.calls.at(record::MpiCall::Recv), std::size_t{kIterations});
    EXPECT_EQ(f.calls.at(record::MpiCall::Isend), 2u * kIterations);
    EXPECT_EQ(f.calls.at(record::MpiCall::Irecv), 2u * kIterations);
    EXPECT_EQ(f.incomplete, 0u);  // every request was completed by its MPI_Waitall
    EXPECT_GE(f.clock, 2u);       // MPI_Init and MPI_Finalize
    EXPECT_EQ(f.h.passed_filter, f.h.samples + f.h.overruns + f.h.overwritten);
  }
  const std::string merged = (dir / "all.kron").string();
  std::string cmd = std::string(KRON_CLI) + " merge -q -o " + merged;
  for (const auto& f : files) cmd += " " + f;
  ASSERT_EQ(run(cmd), 0);
  ASSERT_EQ(run(std::string(KRON_CLI) + " rpt " + merged + " > " + (dir / "rpt.txt").string()), 0);
  const std::string rpt = slurp(dir / "rpt.txt");
  for (int r = 0; r < kRanks; ++r) EXPECT_NE(rpt.find("rank " + std::to_string(r) + " "), std::string::npos) << rpt;
}

INSTANTIATE_TEST_SUITE_P(Ways, WholeJobTest, ::testing::Values("kron_record", "preload"));

// kron record --mpi: rank 2 kills itself with SIGKILL at iteration 20 of 40, after that iteration's first
// sample, 100 ms later and after one more. Its file holds iterations 0-20's first samples and 0-19's second,
// every MPI call of iterations 0-19, and says it was killed by signal 9; mpirun then ends the other ranks
// (their files are finished too); kron merge merges the four and names rank 2 as the rank that ended first,
// though its last sample is later than the others' (they were all waiting for it): a rank's end is when its
// recording ended, not its last record.
TEST(WholeJobKillTest, ARankKilledHalfwayKeepsItsFirstHalfAndTheMergeNamesIt) {
  const fs::path dir = fs::temp_directory_path() / ("kron-mpi-kill-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string prefix = (dir / "run").string();
  // ERRATUM E441: Open MPI ends the other ranks with SIGTERM and SIGKILL a second later; an Open MPI process
  // handles SIGTERM itself and may take longer than that to end, so kron record, which finishes its file once
  // its program ended, is given the time (the documented mpirun setting).
  const int rc = run(mpirun("--mca odls_base_sigkill_timeout 10",
                            std::string(KRON_CLI) + " record --mpi -q -o " + prefix + " -- " + KRON_MPI_PROBES +
                                " 40 2 20 >/dev/null 2>" + (dir / "err.txt").string()));
  EXPECT_NE(rc, 0);  // a rank was killed: the launcher says the job failed
  std::vector<std::string> files;
  std::uint64_t samples = 0;
  for (int r = 0; r < kRanks; ++r) {
    files.push_back((dir / ("run.rank-" + std::to_string(r) + ".kron")).string());
    ASSERT_TRUE(fs::exists(files.back())) << files.back() << "\n" << slurp(dir / "err.txt");
    const RankFile f = read_rank(files.back());
    EXPECT_TRUE(f.h.flags & tracefile::kFlagComplete) << "rank " << r;
    samples += f.h.samples;
    if (r != 2) continue;
    EXPECT_TRUE(f.h.merge_flags & tracefile::kRankEndedEarly);
    EXPECT_EQ(f.h.merge_flags & tracefile::kRankAborted, 0u);
    EXPECT_EQ(f.h.end_signal, 9u);
    EXPECT_EQ(f.data, expected(2, 21, 20, true));
    EXPECT_EQ(f.calls.at(record::MpiCall::Allreduce), 20u);
    EXPECT_EQ(f.calls.at(record::MpiCall::Recv), 20u);
    EXPECT_EQ(f.calls.at(record::MpiCall::Send), 20u);
    EXPECT_EQ(f.calls.at(record::MpiCall::Isend), 40u);
    EXPECT_EQ(f.incomplete, 0u);
    EXPECT_GE(f.clock, 1u);  // MPI_Init's measurement; never MPI_Finalize's
  }
  const std::string merged = (dir / "all.kron").string();
  std::string cmd = std::string(KRON_CLI) + " merge -o " + merged;
  for (const auto& f : files) cmd += " " + f;
  ASSERT_EQ(run(cmd + " > " + (dir / "merge.txt").string()), 0) << slurp(dir / "merge.txt");
  const std::string out = slurp(dir / "merge.txt");
  EXPECT_NE(out.find("rank 2 was killed by signal 9 before MPI_Finalize"), std::string::npos) << out;
  const std::size_t first = out.find("(the first to end)");
  ASSERT_NE(first, std::string::npos) << out;
  EXPECT_EQ(out.rfind("rank 2 ", first), out.rfind("\nrank ", first) + 1) << out;  // on rank 2's line
  tracefile::Reader rd(merged);
  EXPECT_EQ(rd.header().samples, samples);  // every rank's samples, the killed one's included
  fs::remove_all(dir);
}

// libkron_mpi alone (preloaded): rank 1 calls MPI_Abort at iteration 10 of 40. Its file is finished in the
// MPI_Abort wrapper: complete, marked as a rank that called MPI_Abort, with iterations 0-10's first samples,
// 0-9's second and every MPI call of iterations 0-9 (ERRATUM E441).
TEST(WholeJobKillTest, ARankThatAbortsFinishesItsFileAndSaysSo) {
  const fs::path dir = fs::temp_directory_path() / ("kron-mpi-abort-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  run(mpirun(std::string("-x LD_PRELOAD=") + KRON_MPI_LIB + " -x KRON_MPI_OUT=" + (dir / "run").string(),
             std::string(KRON_MPI_PROBES) + " 40 1 10 abort >/dev/null 2>" + (dir / "err.txt").string()));
  const std::string f1 = (dir / "run.rank-1.kron").string();
  ASSERT_TRUE(fs::exists(f1)) << slurp(dir / "err.txt");
  const RankFile f = read_rank(f1);
  EXPECT_TRUE(f.h.flags & tracefile::kFlagComplete);
  EXPECT_TRUE(f.h.merge_flags & tracefile::kRankEndedEarly);
  EXPECT_TRUE(f.h.merge_flags & tracefile::kRankAborted);
  EXPECT_EQ(f.data, expected(1, 11, 10, true));
  EXPECT_EQ(f.calls.at(record::MpiCall::Allreduce), 10u);
  EXPECT_EQ(f.calls.at(record::MpiCall::Recv), 10u);
  EXPECT_EQ(f.calls.at(record::MpiCall::Send), 10u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kron
