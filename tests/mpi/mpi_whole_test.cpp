// An MPI job recorded whole (ERRATA E440-E442): examples/mpi/mpi_probes.cpp, a program with kron probes of its
// own (a named scope and two trace samples an iteration, data = rank << 32 | iteration), run by mpirun with 4
// ranks both ways a user records a job: `kron record --mpi` per rank, and libkron_mpi preloaded alone, under
// each MPI library kron is built for (Open MPI's mpirun, MPICH's mpiexec.hydra: tests/mpi/flavour.hpp). What
// is checked, and why it can fail:
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
#include <tuple>
#include <vector>

#include "kron/format/trace_file.hpp"
#include "mpi/flavour.hpp"

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

using testing::MpiFlavour;

// What a rank's file holds of the program's own probes: the data words of its group-1 trace samples, and how
// many "iteration" scope samples.
struct RankFile {
  tracefile::FileHeader h{};
  std::multiset<std::uint64_t> data;
  std::size_t scope_samples = 0, mpi_calls = 0, clock = 0;
  std::map<record::MpiCall, std::size_t> calls;
  std::size_t incomplete = 0;
  std::uint64_t samples = 0;  // read (an unclosed file's header counts none)
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
    ++f.samples;
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

// The entries of the board directory whose name starts with `prefix` (boards are kron.NAME).
std::set<std::string> shm_entries(const std::string& prefix) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator("/dev/shm"))
    if (e.path().filename().string().rfind(prefix, 0) == 0) names.insert(e.path().filename().string());
  return names;
}

using Way = std::tuple<MpiFlavour, std::string>;  // the MPI library; kron_record, preload, preload_env or _sh

class WholeJobTest : public ::testing::TestWithParam<Way> {
 protected:
  const MpiFlavour& flavour() const { return std::get<0>(GetParam()); }
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("kron-mpi-whole-" + flavour().name + std::get<1>(GetParam()) + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  // The job, recorded the way the parameter names; returns the launcher's status.
  int record(const std::string& args) {
    const std::string prefix = (dir / "run").string();
    const std::string out = " >" + (dir / "out.txt").string() + " 2>" + (dir / "err.txt").string();
    if (std::get<1>(GetParam()) == "kron_record")
      return run(flavour().run(
          kRanks, "",
          std::string(KRON_CLI) + " record --mpi -q -o " + prefix + " -- " + flavour().probes + " " + args + out));
    // Preloaded, the program as the launcher starts it, or behind a wrapper that loads libkron_mpi too: env,
    // which execs the program in its place, or sh, which forks it (ERRATUM E440: the rank's board is the
    // program's either way).
    const std::string way = std::get<1>(GetParam());
    const std::string program = flavour().probes + " " + args;
    const std::string wrapped = way == "preload_env"  ? "env KRON_TEST_WRAPPED=1 " + program
                                : way == "preload_sh" ? "sh -c '" + program + "; true'"
                                                      : program;
    return run(flavour().run(kRanks, flavour().env("LD_PRELOAD", flavour().lib) + flavour().env("KRON_MPI_OUT", prefix),
                             wrapped + out));
  }
  std::string file(int r) const { return (dir / ("run.rank-" + std::to_string(r) + ".kron")).string(); }
  fs::path dir;
};

// Both ways: each rank's file holds every probe of the program, its MPI calls and its clock measurements.
TEST_P(WholeJobTest, EveryProbeOfTheProgramIsInItsRanksFileAndTheReportNamesEachRank) {
  const std::set<std::string> boards_before = shm_entries("kron.");
  ASSERT_EQ(record(std::to_string(kIterations)), 0) << slurp(dir / "err.txt");
  // No board of the job is left behind: each rank's is removed (its name at MPI_Init, kron record's at its
  // end), and so is a wrapper's (E440).
  for (const auto& name : shm_entries("kron.")) EXPECT_TRUE(boards_before.count(name)) << name << " left behind";
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

INSTANTIATE_TEST_SUITE_P(Ways, WholeJobTest,
                         ::testing::Combine(::testing::ValuesIn(testing::mpi_flavours()),
                                            ::testing::Values(std::string("kron_record"), std::string("preload"),
                                                              std::string("preload_env"), std::string("preload_sh"))),
                         [](const auto& p) { return std::get<0>(p.param).name + "_" + std::get<1>(p.param); });

// kron record --mpi: rank 2 kills itself with SIGKILL at iteration 20 of 40, after that iteration's first
// sample, 100 ms later and after one more. Its file holds iterations 0-20's first samples and 0-19's second,
// every MPI call of iterations 0-19, and says it was killed by signal 9. The launcher then ends the others,
// kron record with them: Open MPI with SIGTERM, which kron record passes on, and SIGKILL soon after, MPICH's
// hydra with SIGKILL at once (E441). A rank's kron record that finished before the SIGKILL wrote a complete
// file; one that did not left an unclosed one with what it had handed to the kernel (every 50 ms) and its
// rank in the header. kron merge --salvage merges the four and names rank 2, the one that was killed, with
// its signal; when another's file is complete too it names rank 2 as the first to end, though its last
// sample is later than theirs (they were all waiting for it): a rank's end is when its recording ended.
class WholeJobKillTest : public ::testing::TestWithParam<MpiFlavour> {};

// The MPI side areas in the board directory (ERRATUM E440: kron-mpi-side.BOARD beside the board).
std::set<std::string> side_areas() { return shm_entries("kron-mpi-side."); }

TEST_P(WholeJobKillTest, ARankKilledHalfwayKeepsItsFirstHalfAndTheMergeNamesIt) {
  const MpiFlavour& fl = GetParam();
  const fs::path dir = fs::temp_directory_path() / ("kron-mpi-kill-" + fl.name + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string prefix = (dir / "run").string();
  const std::set<std::string> before = side_areas(), boards_before = shm_entries("kron.record-");
  const int rc = run(fl.run(kRanks, "",
                            std::string(KRON_CLI) + " record --mpi -q -o " + prefix + " -- " + fl.probes +
                                " 40 2 20 >/dev/null 2>" + (dir / "err.txt").string()));
  EXPECT_NE(rc, 0);  // a rank was killed: the launcher says the job failed
  std::vector<std::string> files;
  std::uint64_t samples = 0;
  int complete_others = 0;
  for (int r = 0; r < kRanks; ++r) {
    files.push_back((dir / ("run.rank-" + std::to_string(r) + ".kron")).string());
    ASSERT_TRUE(fs::exists(files.back())) << files.back() << "\n" << slurp(dir / "err.txt");
    const RankFile f = read_rank(files.back());
    samples += f.samples;
    if (r != 2) {
      if (f.h.flags & tracefile::kFlagComplete) ++complete_others;
      EXPECT_EQ(f.h.mpi_rank, static_cast<std::uint32_t>(r));  // a rank's file, closed or not
      EXPECT_EQ(f.h.mpi_world_size, static_cast<std::uint32_t>(kRanks));
      EXPECT_GT(f.samples, 0u) << "rank " << r;  // what it had handed to the kernel at least
      continue;
    }
    EXPECT_TRUE(f.h.flags & tracefile::kFlagComplete);
    EXPECT_EQ(f.samples, f.h.samples);
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
  std::string cmd = std::string(KRON_CLI) + " merge --salvage -o " + merged;
  for (const auto& f : files) cmd += " " + f;
  ASSERT_EQ(run(cmd + " > " + (dir / "merge.txt").string() + " 2>&1"), 0) << slurp(dir / "merge.txt");
  const std::string out = slurp(dir / "merge.txt");
  EXPECT_NE(out.find("rank 2 was killed by signal 9 before MPI_Finalize"), std::string::npos) << out;
  if (complete_others > 0) {  // rank 2 and another finished as ranks that ended early: rank 2 ended first
    const std::size_t first = out.find("(the first to end)");
    ASSERT_NE(first, std::string::npos) << out;
    EXPECT_EQ(out.rfind("rank 2 ", first), out.rfind("\nrank ", first) + 1) << out;  // on rank 2's line
  }
  tracefile::Reader rd(merged);
  EXPECT_EQ(rd.header().samples, samples);  // every rank's samples, the killed one's included
  // What a kron record killed by the launcher left behind, its board and its side area, goes with
  // kron board rm --stale: none of this job's side areas is left.
  // (The launcher may return before the last of them has died and been reaped: a board whose creator is a
  // zombie is not stale yet. The kron record of each new board or side area, kron.record-PID-... or
  // kron-mpi-side.record-PID-..., is waited for until its process is gone, 10 s at most.)
  for (const auto& name : shm_entries("")) {
    if (before.count(name) || boards_before.count(name) || name.find("record-") == std::string::npos) continue;
    const std::string pid = name.substr(name.find("record-") + 7, name.rfind('-') - name.find("record-") - 7);
    for (int i = 0; i < 100 && fs::exists("/proc/" + pid); ++i) ::usleep(100000);
  }
  ASSERT_EQ(run(std::string(KRON_CLI) + " board rm --stale >/dev/null"), 0);
  for (const auto& name : side_areas()) EXPECT_TRUE(before.count(name)) << name << " outlived its kron record";
  for (const auto& name : shm_entries("kron.record-")) EXPECT_TRUE(boards_before.count(name)) << name << " left behind";
  fs::remove_all(dir);
}

// libkron_mpi alone (preloaded): rank 1 calls MPI_Abort at iteration 10 of 40. Its file is finished in the
// MPI_Abort wrapper: complete, marked as a rank that called MPI_Abort, with iterations 0-10's first samples,
// 0-9's second and every MPI call of iterations 0-9 (ERRATUM E441).
TEST_P(WholeJobKillTest, ARankThatAbortsFinishesItsFileAndSaysSo) {
  const MpiFlavour& fl = GetParam();
  const fs::path dir = fs::temp_directory_path() / ("kron-mpi-abort-" + fl.name + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  run(fl.run(kRanks, fl.env("LD_PRELOAD", fl.lib) + fl.env("KRON_MPI_OUT", (dir / "run").string()),
             fl.probes + " 40 1 10 abort >/dev/null 2>" + (dir / "err.txt").string()));
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

INSTANTIATE_TEST_SUITE_P(Flavours, WholeJobKillTest, ::testing::ValuesIn(testing::mpi_flavours()),
                         [](const auto& p) { return p.param.name; });

}  // namespace
}  // namespace kron
