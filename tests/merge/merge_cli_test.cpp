// `kron merge` as a user runs it: what it says it did, by name (DECISION D10). Per rank how its clock reached
// the timeline, with every measurement in --json; each unmatched receive, incomplete collective and violation
// left: the first 20 in the text, all in --json. Rank files are written here (tests/support/rank_files.hpp).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/mpi_records.hpp"
#include "support/rank_files.hpp"

namespace kron {
namespace {

namespace fs = std::filesystem;
using record::MpiCall;

const std::string kron_bin = std::string(KRON_BINARY_DIR) + "/kron";

class MergeCli : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("kron-merge-cli-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  // Runs `kron merge ARGS` in the test's folder; its standard output.
  std::string merge(const std::string& args, int* rc) {
    const std::string cmd = "cd " + dir.string() + " && " + kron_bin + " merge " + args + " >out.txt 2>err.txt";
    const int st = std::system(cmd.c_str());
    *rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    std::ifstream f(dir / "out.txt");
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
  }
  // Two ranks of one machine (rank 1's measurements within their round trips of rank 0's clock): rank 1 posts
  // 25 receives no one sends to, both call 23 barriers of a communicator of 3 (rank 2 never came), and rank 1
  // leaves 22 broadcasts of data before the root entered them (on one clock: recording faults).
  void write_job() {
    for (std::uint32_t r = 0; r < 2; ++r) {
      testing::RankFileSpec f;
      f.rank = r;
      f.node = "hostA";
      f.tsc = true;
      f.t0 = 1000;
      f.step = 1000;
      f.samples = 100;
      for (std::uint64_t t : {1000u, 90'000u})
        f.offsets.push_back(testing::clock_offset(r, t, r ? t + 2 : t, r ? 30 : 0));
      for (std::uint64_t k = 0; r == 1 && k < 25; ++k)
        f.calls.push_back(testing::mpi_call(1, MpiCall::Recv, 0, 2, 0, std::int32_t(100 + k), 2000 + 100 * k,
                                            2010 + 100 * k, 8));
      for (std::uint64_t k = 0; k < 23; ++k)  // both ranks in each barrier at once: no violation there
        f.calls.push_back(testing::mpi_call(r, MpiCall::Barrier, 77, 3, -1, std::int32_t(k), 10'000 + 100 * k,
                                            10'050 + 100 * k, 0));
      for (std::uint64_t k = 0; k < 22; ++k) {  // rank 1 leaves (20 000 + 100 k + 5) before the root enters (70 000 ...)
        const std::uint64_t t = (r ? 20'000 : 70'000) + 100 * k;
        f.calls.push_back(testing::mpi_call(r, MpiCall::Bcast, 0, 2, 0, std::int32_t(k), t, t + (r ? 5 : 10), 8));
      }
      testing::write_rank_file((dir / ("j.rank-" + std::to_string(r) + ".kron")).string(), f);
    }
  }
};

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = 0; (p = s.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

TEST_F(MergeCli, TheTextNamesTheFirstTwentyOfEachFindingAndEachRanksClock) {
  write_job();
  int rc = 0;
  const std::string out = merge("j.rank-0.kron j.rank-1.kron -o all.kron", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(count(out, "  rank 1 MPI_Recv from rank 0, comm 0x0, tag "), 20u) << out;
  EXPECT_NE(out.find("  rank 1 MPI_Recv from rank 0, comm 0x0, tag 100, 0.000001-0.000001 s: no send matches it"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("unmatched receives: 25\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  ... and 5 more (--json lists all)"), std::string::npos) << out;
  EXPECT_EQ(count(out, "  MPI_Barrier #"), 20u) << out;
  EXPECT_NE(out.find("  MPI_Barrier #0 on comm 0x4d at "), std::string::npos) << out;
  EXPECT_NE(out.find(": records of ranks 0,1, 2 of 3 members"), std::string::npos) << out;
  EXPECT_NE(out.find("  ... and 3 more (--json lists all)"), std::string::npos) << out;
  EXPECT_NE(out.find("violations left: 22 (22 recording faults on one clock)"), std::string::npos) << out;
  EXPECT_EQ(count(out, "  recording fault (one clock: not corrected): rank 1 MPI_Bcast ended at "), 20u) << out;
  EXPECT_NE(out.find("before rank 0 MPI_Bcast began at"), std::string::npos) << out;
  EXPECT_NE(out.find("  ... and 2 more (--json lists all)"), std::string::npos) << out;
  EXPECT_NE(out.find(", 0 events moved"), std::string::npos) << out;
  // Per rank its clock: rank 1 exact on rank 0's (no offset or drift shown), one clock in all.
  EXPECT_NE(out.find("exact =0"), std::string::npos) << out;
  EXPECT_NE(out.find("alignment: 2 ranks on the reference rank's clock (exact: not moved); 1 clock\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("piecewise linear"), std::string::npos) << "no measured rank, yet the text says so:\n" << out;
}

TEST_F(MergeCli, TheJsonHasEveryFindingAndEveryMeasurementAsMeasured) {
  write_job();
  int rc = 0;
  const auto j = nlohmann::json::parse(merge("--json j.rank-0.kron j.rank-1.kron -o all.kron", &rc));
  ASSERT_EQ(rc, 0);
  ASSERT_EQ(j["unmatched_receives"].size(), 25u);
  EXPECT_EQ(j["unmatched_receives"][24]["tag"], 124);
  EXPECT_EQ(j["unmatched_receives"][0]["call"], "MPI_Recv");
  EXPECT_EQ(j["unmatched_receives"][0]["from"], 0);
  ASSERT_EQ(j["incomplete"].size(), 23u);
  EXPECT_EQ(j["incomplete"][22]["sequence"], 22);
  EXPECT_EQ(j["incomplete"][0]["ranks"], nlohmann::json::array({0, 1}));
  EXPECT_EQ(j["incomplete"][0]["comm_size"], 3);
  ASSERT_EQ(j["violations"].size(), 22u);
  EXPECT_EQ(j["recording_faults"], 22);
  EXPECT_EQ(j["violations"][0]["kind"], "recording fault");
  EXPECT_EQ(j["violations"][0]["rank"], 1);
  EXPECT_EQ(j["violations"][0]["peer"], 0);
  EXPECT_EQ(j["violations"][0]["call"], "MPI_Bcast");
  EXPECT_LT(j["violations"][0]["end_s"].get<double>(), j["violations"][0]["peer_begin_s"].get<double>());
  EXPECT_EQ(j["events_moved"], 0);
  // Rank 1: exact, and its two measurements as measured (not one {0,0,0}).
  const auto& r1 = j["ranks"][1];
  EXPECT_EQ(r1["clock"], "exact");
  EXPECT_EQ(r1["clock_of_rank"], 0);
  ASSERT_EQ(r1["measurements"].size(), 2u);
  EXPECT_EQ(r1["measurements"][1]["local"], 90'000);
  EXPECT_EQ(r1["measurements"][1]["reference"], 90'002);
  EXPECT_EQ(r1["measurements"][1]["rtt"], 30);
  EXPECT_DOUBLE_EQ(r1["measurements"][1]["offset_ns"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(r1["measurements"][1]["rtt_ns"].get<double>(), 30.0);
  EXPECT_NEAR(r1["measurements"][1]["time_s"].get<double>(), 89e-6, 1e-12);
  EXPECT_EQ(r1["measurements"][1]["used"], false);
  EXPECT_EQ(j["ranks"][0]["clock"], "reference");
  EXPECT_EQ(j["clocks"], 1);
}

}  // namespace
}  // namespace kron
