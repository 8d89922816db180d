// libkron_mpi and kron merge on real MPI jobs: examples/mpi/mpi_demo.cpp (a ring, a halo
// exchange, an allreduce, reports received with MPI_ANY_SOURCE, a Sendrecv shift) run by mpirun with 4
// ranks, each rank's clock given a known fault (KRON_MPI_TEST_CLOCK_FAULT, ERRATUM E207): an offset up to
// 50 ms and a drift up to 100 ppm, once under each MPI library kron is built for (Open MPI's mpirun with
// libkron_mpi, MPICH's mpiexec.hydra with libkron_mpi_mpich: ERRATUM E436). What is checked, and why it can
// fail:
// - each rank's file (OUT.rank-N.kron) names its rank, the world's size and its node;
// - each clock-offset measurement recovers the injected offset to within its own RTT/2 (E204);
// - the merge leaves no happened-before violation, while the same files merged without alignment show
//   many (the fault is far larger than a message's latency: the check cannot pass by luck);
// - every send is matched to its receive, every collective has every member (E208);
// - nothing is lost uncounted: passed_filter = samples + overruns + overwritten summed over the ranks, and
//   the merged file holds every rank's samples.
// Source of the goal: 000 introduction and Appendix A (one timestamp clock for the whole machine).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/mpi_match.hpp"
#include "merge/clc.hpp"
#include "merge/merge.hpp"
#include "kron/board.hpp"
#include "kron/format/trace_file.hpp"
#include "mpi/flavour.hpp"

namespace kron {
namespace {

namespace fs = std::filesystem;

constexpr int kRanks = 4;
constexpr int kIterations = 40;
// Offset (ns) and drift (ppm) per rank; rank 0 is the reference and gets none.
struct FaultSpec {
  double offset_ns, ppm;
};
constexpr FaultSpec kFault[kRanks] = {{0, 0}, {30e6, 80}, {-45e6, -90}, {12e6, 100}};

std::string fault_setting() {
  std::string s;
  for (int r = 0; r < kRanks; ++r)
    s += (r ? "," : "") + std::to_string(static_cast<long long>(kFault[r].offset_ns)) + ":" +
         std::to_string(static_cast<long long>(kFault[r].ppm));
  return s;
}

int run(const std::string& cmd) {
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

std::string mpirun(int np, const std::string& env, const std::string& program) {
  return std::string("timeout 300 ") + KRON_MPIRUN + " --allow-run-as-root --oversubscribe -np " + std::to_string(np) +
         " " + env + " " + program + " " + std::to_string(kIterations) + " >/dev/null";
}

// The job of each MPI library, run once for all the tests of its flavour.
class MpiRecordTest : public ::testing::TestWithParam<testing::MpiFlavour> {
 protected:
  struct Job {
    fs::path dir;
    std::vector<std::string> files;
    int rc = -1;
  };
  static inline std::map<std::string, Job> jobs;
  fs::path dir;
  std::vector<std::string> files;

  static void TearDownTestSuite() {
    for (auto& [name, j] : jobs) fs::remove_all(j.dir);
  }
  void SetUp() override {
    const testing::MpiFlavour& f = GetParam();
    auto [it, fresh] = jobs.try_emplace(f.name);
    Job& j = it->second;
    if (fresh) {
      j.dir = fs::temp_directory_path() / ("kron-mpi-test-" + f.name + "-" + std::to_string(::getpid()));
      fs::create_directories(j.dir);
      const std::string env = f.env("LD_PRELOAD", f.lib) + f.env("KRON_MPI_OUT", (j.dir / "run").string()) +
                              f.env("KRON_MPI_TEST_CLOCK_FAULT", fault_setting()) + f.env("KRON_MPI_SYNC_S", "0.001");
      j.rc = run(f.run(kRanks, env, f.demo) + " " + std::to_string(kIterations) + " >/dev/null");
      for (int r = 0; r < kRanks; ++r)
        j.files.push_back((j.dir / ("run.rank-" + std::to_string(r) + ".kron")).string());
    }
    dir = j.dir;
    files = j.files;
    ASSERT_EQ(j.rc, 0) << f.name << ": the job failed";
    for (const auto& file : files) ASSERT_TRUE(fs::exists(file)) << file;
  }
};

TEST_P(MpiRecordTest, EachRankHasItsOwnFileWithRankWorldSizeAndNode) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  for (int r = 0; r < kRanks; ++r) {
    tracefile::Reader rd(files[static_cast<std::size_t>(r)]);
    EXPECT_EQ(rd.header().mpi_rank, static_cast<std::uint32_t>(r));
    EXPECT_EQ(rd.header().mpi_world_size, static_cast<std::uint32_t>(kRanks));
    EXPECT_EQ(rd.header().node, static_cast<std::uint32_t>(r));  // ERRATUM E201: sources tell ranks apart
    bool node = false;
    for (const auto& n : rd.names())
      if (n.name_kind == record::NameKind::Node) {
        node = true;
        EXPECT_EQ(std::string(n.name), std::string(host));  // MPI_Get_processor_name: the host's name
        EXPECT_EQ(n.thread, static_cast<std::uint32_t>(r));
      }
    EXPECT_TRUE(node);
    // Every call's begin and end are samples: named scopes "MPI_..." of the rank's board, begins and ends
    // in pairs.
    tracefile::NameTable names;
    for (const auto& nr : rd.names()) names.add(nr);
    Sample s;
    std::uint64_t begins = 0, ends = 0;
    while (rd.next(s)) {
      EXPECT_EQ(board::source_node(s.source), static_cast<std::uint32_t>(r));
      ASSERT_TRUE(s.flags & kFlagNamed);
      EXPECT_EQ(names.name_of(s).rfind("MPI_", 0), 0u) << names.name_of(s);
      begins += (s.flags & kFlagScopeBegin) != 0;
      ends += (s.flags & kFlagScopeEnd) != 0;
    }
    EXPECT_EQ(begins, ends);
    EXPECT_GE(begins, rd.mpi_records().size() / 2);  // a Sendrecv is one call and two records
  }
}

TEST_P(MpiRecordTest, RecoveredOffsetIsWithinHalfTheRoundTripOfTheInjectedOne) {
  for (int r = 1; r < kRanks; ++r) {
    tracefile::Reader rd(files[static_cast<std::size_t>(r)]);
    rd.read_annex();
    const auto& h = rd.header();
    const double hz = double(h.clock_hz);
    const double off = kFault[r].offset_ns * 1e-9 * hz, d = kFault[r].ppm * 1e-6;
    ASSERT_GE(rd.clock_offsets().size(), 2u) << "at MPI_Init and at MPI_Finalize";
    for (const auto& c : rd.clock_offsets()) {
      EXPECT_EQ(c.rank, static_cast<std::uint32_t>(r));
      EXPECT_GT(c.rtt, 0u);
      // The fault at this measurement: t' = t + off + d (t - origin), start_ticks = origin + off.
      const double since = double(std::int64_t(c.timestamp - h.start_ticks)) / (1 + d);
      const double injected = -(off + d * since);  // reference - local, ticks (rank 0's clock has no fault)
      const double recovered = double(std::int64_t(c.reference - c.timestamp));
      EXPECT_LE(std::fabs(recovered - injected), double(c.rtt) / 2 + 2)
          << "rank " << r << ": recovered " << recovered << " ticks, injected " << injected << ", rtt " << c.rtt;
    }
  }
}

TEST_P(MpiRecordTest, MergedFileHasNoViolationsWhileTheUnalignedMergeHasMany) {
  merge::MergeOptions raw;
  raw.align = false;
  raw.clc = false;
  const merge::MergeReport bad = merge::merge_files(files, (dir / "raw.kron").string(), raw);
  EXPECT_GT(bad.violations_found, 10u) << "a 75 ms fault between ranks must show";
  EXPECT_EQ(bad.violations_left, bad.violations_found);
  const merge::MergeReport good = merge::merge_files(files, (dir / "all.kron").string(), merge::MergeOptions{});
  EXPECT_EQ(good.violations_left, 0u);
  EXPECT_LT(good.violations_found, bad.violations_found);
  tracefile::Reader rd((dir / "all.kron").string());
  EXPECT_EQ(rd.header().violations_left, 0u);
  EXPECT_EQ(rd.header().violations_found, good.violations_found);
  EXPECT_EQ(rd.header().mpi_world_size, static_cast<std::uint32_t>(kRanks));
  // In the merged file every receive ends after its send began, collectives included: checked again on
  // the records as written, with the matching kron merge uses.
  rd.read_annex();
  std::vector<analysis::MpiEvent> ev;
  for (const auto& m : rd.mpi_records()) ev.push_back({m, m.rank});
  const analysis::Matching match = analysis::match_messages(ev);
  EXPECT_EQ(analysis::count_violations(ev, match), 0u);
  // And the samples are in time order, on rank 0's clock.
  Sample s;
  std::uint64_t last = 0, late = 0;
  while (rd.next(s)) {
    late += s.timestamp < last;
    last = std::max(last, s.timestamp);
  }
  EXPECT_EQ(late, rd.header().late);
}

TEST_P(MpiRecordTest, TheClcAloneRemovesTheFaultsViolationsAndKeepsEachRanksOrder) {
  // Without the alignment every violation the fault makes is left to the controlled logical clock (E206):
  // it must remove them all, moving events forward only, and keep each rank's samples in their order.
  merge::MergeOptions o;
  o.align = false;
  const std::string out = (dir / "clc.kron").string();
  const merge::MergeReport r = merge::merge_files(files, out, o);
  EXPECT_GT(r.violations_found, 10u);
  EXPECT_EQ(r.violations_left, 0u);
  EXPECT_GT(r.max_correction, 0u);
  EXPECT_EQ(r.forced, 0u);
  std::vector<std::vector<std::uint64_t>> merged(kRanks), original(kRanks);
  {
    tracefile::Reader rd(out);
    Sample s;
    std::uint64_t last = 0;
    while (rd.next(s)) {
      EXPECT_GE(s.timestamp, last);
      last = s.timestamp;
      merged[board::source_node(s.source)].push_back((s.data & record::kNamedValueMask) |
                                                     (std::uint64_t(s.flags) << 48));
    }
  }
  for (int k = 0; k < kRanks; ++k) {
    tracefile::Reader rd(files[static_cast<std::size_t>(k)]);
    Sample s;
    while (rd.next(s))
      original[static_cast<std::size_t>(k)].push_back((s.data & record::kNamedValueMask) |
                                                      (std::uint64_t(s.flags) << 48));
    EXPECT_EQ(merged[static_cast<std::size_t>(k)], original[static_cast<std::size_t>(k)]) << "rank " << k;
  }
}

TEST_P(MpiRecordTest, EverySendIsMatchedToItsReceive) {
  const merge::MergeReport m = merge::merge_files(files, (dir / "m.kron").string(), merge::MergeOptions{});
  // The demo's messages: the ring (kRanks a round), the halo (2 a rank), every fourth iteration the
  // reports to rank 0 (kRanks - 1, received with MPI_ANY_SOURCE) and the Sendrecv shift (kRanks).
  const std::uint64_t expected =
      std::uint64_t(kIterations) * (kRanks + 2 * kRanks) + (kIterations / 4) * (kRanks - 1 + kRanks);
  EXPECT_EQ(m.messages, expected);
  EXPECT_EQ(m.unmatched_sends, 0u);
  EXPECT_EQ(m.unmatched_recvs, 0u);
  EXPECT_EQ(m.collectives, std::uint64_t(kIterations));  // one allreduce an iteration
  EXPECT_EQ(m.incomplete_collectives, 0u);
}

TEST_P(MpiRecordTest, NothingIsLostUncountedSummedOverRanks) {
  std::uint64_t samples = 0, passed = 0, lost = 0;
  for (const auto& f : files) {
    tracefile::Reader rd(f);
    Sample s;
    std::uint64_t n = 0;
    while (rd.next(s)) ++n;
    EXPECT_EQ(n, rd.header().samples);
    samples += n;
    passed += rd.header().passed_filter;
    lost += rd.header().overruns + rd.header().overwritten;
  }
  EXPECT_EQ(passed, samples + lost);
  const merge::MergeReport m = merge::merge_files(files, (dir / "acc.kron").string(), merge::MergeOptions{});
  EXPECT_EQ(m.samples, samples);
  tracefile::Reader rd((dir / "acc.kron").string());
  EXPECT_EQ(rd.header().passed_filter, passed);
  EXPECT_EQ(rd.header().overruns + rd.header().overwritten, lost);
  EXPECT_EQ(rd.header().samples, samples);
}

TEST_P(MpiRecordTest, TheToolsReadTheMergedFile) {
  const std::string merged = (dir / "tools.kron").string();
  const std::string kron = KRON_CLI;
  ASSERT_EQ(run(kron + " merge -q " + files[0] + " " + files[1] + " " + files[2] + " " + files[3] + " -o " + merged),
            0);
  EXPECT_EQ(run(kron + " info " + merged + " >/dev/null"), 0);
  EXPECT_EQ(run(kron + " expand " + merged + " >/dev/null"), 0);
  EXPECT_EQ(run("cd " + dir.string() + " && " + kron + " rpt " + merged + " >/dev/null"), 0);
  EXPECT_EQ(run(kron + " export --format csv -o " + (dir / "t.csv").string() + " " + merged), 0);
  // 003 class 4 across ranks (E210): every message one send -> receive interval, per rank pair and for all.
  const std::string json = (dir / "rpt.json").string();
  ASSERT_EQ(run("cd " + dir.string() + " && " + kron + " rpt --json " + merged + " > " + json), 0);
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(json));
  const merge::MergeReport m = merge::merge_files(files, (dir / "again.kron").string(), merge::MergeOptions{});
  std::uint64_t pairs_total = 0;
  bool all = false;
  std::size_t mpi_scopes = 0;
  for (const auto& row : j["rows"]) {
    const std::string name = row["name"];
    // A wrapper's scope names the library, never a source path of kron's own build.
    if (name.rfind("MPI_", 0) == 0 && row.contains("location")) {
      ++mpi_scopes;
      EXPECT_EQ(row["location"], "libkron_mpi") << name;
    }
    if (name == "MPI messages (all)") {
      all = true;
      EXPECT_EQ(row["class"], 4);
      EXPECT_EQ(row["count"], m.messages);
      EXPECT_EQ(row["unmatched_ends"], 0);
    } else if (name.rfind("MPI message ", 0) == 0) {
      pairs_total += row["count"].get<std::uint64_t>();
    }
  }
  EXPECT_TRUE(all);
  EXPECT_GT(mpi_scopes, 0u);
  EXPECT_EQ(pairs_total, m.messages);
  // Every stream is named after its rank, the right one (ERRATUM E395): rank r's process is the source its
  // own file's Node entry names (E201), on this host.
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::vector<std::uint32_t> source_of(kRanks, 0);
  for (int r = 0; r < kRanks; ++r) {
    const tracefile::Reader rd(files[static_cast<std::size_t>(r)]);
    for (const auto& n : rd.names())
      if (n.name_kind == record::NameKind::Node) source_of[static_cast<std::size_t>(r)] = n.source;
  }
  std::vector<int> ranked_rows(kRanks, 0);
  for (const auto& row : j["rows"]) {
    if (row["stream"] == "all") continue;
    ASSERT_TRUE(row.contains("rank")) << row["stream"];
    const auto r = row["rank"].get<std::size_t>();
    ASSERT_LT(r, static_cast<std::size_t>(kRanks));
    ++ranked_rows[r];
    const std::string stream = row["stream"];
    char want[32];
    std::snprintf(want, sizeof want, "rank %zu 0x%08x/tid", r, source_of[r]);
    EXPECT_EQ(stream.rfind(want, 0), 0u) << stream;
  }
  for (int r = 0; r < kRanks; ++r) EXPECT_GT(ranked_rows[static_cast<std::size_t>(r)], 0) << "no row of rank " << r;
  const std::string text = (dir / "rpt.txt").string();
  ASSERT_EQ(run("cd " + dir.string() + " && " + kron + " rpt --wide " + merged + " > " + text), 0);
  std::ifstream tin(text);
  const std::string rpt_text((std::istreambuf_iterator<char>(tin)), std::istreambuf_iterator<char>());
  for (int r = 0; r < kRanks; ++r)
    EXPECT_NE(rpt_text.find("rank " + std::to_string(r) + " "), std::string::npos) << rpt_text;
  // kron info: each lane's rank is the rank whose process has its pid.
  const std::string info = (dir / "info.json").string();
  ASSERT_EQ(run(kron + " info --json " + merged + " > " + info), 0);
  const nlohmann::json ij = nlohmann::json::parse(std::ifstream(info));
  ASSERT_EQ(ij["lanes"].size(), static_cast<std::size_t>(kRanks));
  for (const auto& l : ij["lanes"]) {
    ASSERT_TRUE(l["rank"].is_number()) << l.dump();
    EXPECT_EQ(l["pid"], board::source_pid(source_of[l["rank"].get<std::size_t>()])) << l.dump();
  }
  // The exports: a process per rank, "rank R on HOST (pid P)" (Chrome JSON; Perfetto, OTF2 take the same label).
  const std::string cj = (dir / "t.json").string();
  ASSERT_EQ(run(kron + " export --format chrome-json -o " + cj + " " + merged + " >/dev/null"), 0);
  const nlohmann::json cjj = nlohmann::json::parse(std::ifstream(cj));
  std::map<std::uint32_t, std::string> process;
  for (const auto& ev : cjj["traceEvents"])
    if (ev["ph"] == "M" && ev["name"] == "process_name") process[ev["pid"]] = ev["args"]["name"];
  for (int r = 0; r < kRanks; ++r) {
    const std::uint32_t src = source_of[static_cast<std::size_t>(r)];
    EXPECT_EQ(process[src],
              "rank " + std::to_string(r) + " on " + host + " (pid " + std::to_string(board::source_pid(src)) + ")");
  }
  // An input that is not a trace file: a clear error (exit 2) naming it, never a crash.
  const std::string junk = (dir / "junk.kron").string();
  ASSERT_EQ(run("printf 'not a trace file' > " + junk), 0);
  EXPECT_EQ(run(kron + " merge -q " + files[0] + " " + junk + " -o " + (dir / "x.kron").string() + " 2>/dev/null"), 2);
}

INSTANTIATE_TEST_SUITE_P(Flavours, MpiRecordTest, ::testing::ValuesIn(testing::mpi_flavours()),
                         [](const ::testing::TestParamInfo<testing::MpiFlavour>& i) { return i.param.name; });

// A real job wider than the machine: 16 ranks oversubscribed on CI's 2 cores, each its own file, merged with
// every message matched, every collective whole, and no happened-before violation left.
TEST(MpiScaleTest, SixteenRanksOversubscribedMergeWhole) {
  constexpr int kWide = 16;
  const fs::path d = fs::temp_directory_path() / ("kron-mpi-16-" + std::to_string(::getpid()));
  fs::create_directories(d);
  ASSERT_EQ(run(mpirun(kWide, std::string("-x LD_PRELOAD=") + KRON_MPI_LIB + " -x KRON_MPI_OUT=" + (d / "w").string(),
                       KRON_MPI_DEMO)),
            0);
  std::vector<std::string> ranks;
  for (int r = 0; r < kWide; ++r) ranks.push_back((d / ("w.rank-" + std::to_string(r) + ".kron")).string());
  const merge::MergeReport m = merge::merge_files(ranks, (d / "all.kron").string(), merge::MergeOptions{});
  EXPECT_EQ(m.ranks.size(), std::size_t{kWide});
  EXPECT_GT(m.messages, std::uint64_t{kWide});
  EXPECT_EQ(m.unmatched_sends + m.unmatched_recvs, 0u);
  EXPECT_GT(m.collectives, 0u);
  EXPECT_EQ(m.incomplete_collectives, 0u);
  EXPECT_EQ(m.violations_left, 0u);
  tracefile::Reader rd((d / "all.kron").string());
  EXPECT_EQ(rd.header().mpi_world_size, std::uint32_t{kWide});
  fs::remove_all(d);
}

// ERRATUM E204: of a measurement's ping-pongs each rank keeps the one of shortest round trip. Rank 0 answers
// every second ping 100 ms late (KRON_MPI_TEST_SLOW_PINGS, E207): each measurement must keep a prompt one,
// never a round trip of 100 ms or more.
TEST(MpiPingTest, EachMeasurementKeepsItsShortestRoundTrip) {
  const fs::path d = fs::temp_directory_path() / ("kron-mpi-ping-" + std::to_string(::getpid()));
  fs::create_directories(d);
  ASSERT_EQ(run(mpirun(2,
                       std::string("-x LD_PRELOAD=") + KRON_MPI_LIB + " -x KRON_MPI_OUT=" + (d / "p").string() +
                           " -x KRON_MPI_SYNC_S=0 -x KRON_MPI_PINGS=4 -x KRON_MPI_TEST_SLOW_PINGS=100",
                       KRON_MPI_DEMO)),
            0);
  tracefile::Reader rd((d / "p.rank-1.kron").string());
  rd.read_annex();
  const double slow_ticks = 0.1 * double(rd.header().clock_hz);
  ASSERT_GE(rd.clock_offsets().size(), 2u) << "at MPI_Init and at MPI_Finalize";
  for (const auto& c : rd.clock_offsets()) {
    EXPECT_EQ(c.exchanges, 4u);
    EXPECT_GT(c.rtt, 0u);
    EXPECT_LT(double(c.rtt), slow_ticks) << "a late answer was kept: rtt " << c.rtt << " ticks";
  }
  fs::remove_all(d);
}

TEST(MpiLinkedTest, LinkedBeforeMpiItRecordsToo) {
  const fs::path d = fs::temp_directory_path() / ("kron-mpi-linked-" + std::to_string(::getpid()));
  fs::create_directories(d);
  ASSERT_EQ(run(mpirun(2, "-x KRON_MPI_OUT=" + (d / "l").string(), KRON_MPI_DEMO_LINKED)), 0);
  for (int r = 0; r < 2; ++r) {
    tracefile::Reader rd((d / ("l.rank-" + std::to_string(r) + ".kron")).string());
    rd.read_annex();
    EXPECT_EQ(rd.header().mpi_rank, static_cast<std::uint32_t>(r));
    EXPECT_GT(rd.mpi_records().size(), 0u);
    EXPECT_GE(rd.clock_offsets().size(), 2u);
  }
  fs::remove_all(d);
}

// Four ranks on one machine, no fault (docs/trace-format.md "Time base", E300-E305): one TSC, each rank's
// rate exact to the hertz (the kernel's conversion, or anchors over the whole run), so kron merge's
// measured drift of every rank is 0 within 5 ppm and its offset within 2 us. 300 iterations of mpi_demo
// (a few seconds on a 2-core VM) with a measurement every 0.5 s; each of 50 ping-pongs (the best one
// counts: four busy ranks on two cores preempt many). With each rank's rate calibrated over 7 ms and
// rounded to 100 kHz (files before 1.6) the same job read 76-121 ppm.
TEST(MpiOneMachineTest, RanksSharingOneTscHaveNoDriftAndNoOffset) {
  const fs::path d = fs::temp_directory_path() / ("kron-mpi-one-" + std::to_string(::getpid()));
  fs::create_directories(d);
  const std::string env = std::string("-x LD_PRELOAD=") + KRON_MPI_LIB + " -x KRON_MPI_OUT=" + (d / "o").string() +
                          " -x KRON_MPI_SYNC_S=0.5 -x KRON_MPI_PINGS=50";
  const std::string cmd = std::string("timeout 300 ") + KRON_MPIRUN + " --allow-run-as-root --oversubscribe -np " +
                          std::to_string(kRanks) + " " + env + " " + KRON_MPI_DEMO + " 300 >/dev/null";
  ASSERT_EQ(run(cmd), 0);
  std::vector<std::string> in;
  for (int r = 0; r < kRanks; ++r) in.push_back((d / ("o.rank-" + std::to_string(r) + ".kron")).string());
  const merge::MergeReport m = merge::merge_files(in, (d / "all.kron").string(), merge::MergeOptions{});
  ASSERT_EQ(m.ranks.size(), static_cast<std::size_t>(kRanks));
  for (const auto& r : m.ranks) {
    if (r.rank == 0) continue;
    EXPECT_LE(std::fabs(r.drift_ppm), 5.0) << "rank " << r.rank << " +- " << r.drift_uncertainty_ppm;
    EXPECT_LE(std::fabs(r.offset_ns), 2000.0) << "rank " << r.rank;
  }
  // The merged file carries one conversion: the reference rank's.
  tracefile::Reader rd((d / "all.kron").string());
  tracefile::Reader r0(in[0]);
  EXPECT_EQ(rd.header().time_source, r0.header().time_source);
  EXPECT_EQ(rd.header().clock_hz, r0.header().clock_hz);
  EXPECT_TRUE(rd.header().clock_flags & tracefile::kClockMerged);
  fs::remove_all(d);
}

// ERRATUM E345: the settings every rank must agree on are rank 0's, and bounded. Rank 0 asks for
// 99999999999 ping-pongs (1000 is used) and a measurement every millisecond; rank 1 for 3 and none.
// Before, the job hung in MPI_Init (different ping counts) or at the first collective (rank 0 alone
// measuring); the timeout ends it then.
TEST(MpiSettingsTest, RankZerosSettingsDecideAndAreBounded) {
  const fs::path dir = fs::temp_directory_path() / ("kron-mpi-settings-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string wrapper = (dir / "rank.sh").string();
  std::ofstream(wrapper) << "#!/bin/sh\n"
                            "r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}\n"
                            "if [ \"$r\" = 0 ]; then export KRON_MPI_PINGS=99999999999 KRON_MPI_SYNC_S=0.001; "
                            "else export KRON_MPI_PINGS=3; fi\n"
                            "LD_PRELOAD='" KRON_MPI_LIB "' exec '" KRON_MPI_DEMO "' 10\n";
  fs::permissions(wrapper, fs::perms::owner_all);
  const std::string err = (dir / "err.txt").string();
  const int rc = run(std::string("timeout 120 ") + KRON_MPIRUN +
                     " --allow-run-as-root --oversubscribe -np 2 -x KRON_MPI_OUT=" + (dir / "run").string() + " " +
                     wrapper + " >/dev/null 2>" + err);
  std::ifstream f(err);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << text;
  EXPECT_NE(text.find("KRON_MPI_PINGS=99999999999 is outside 1-1000: using 1000"), std::string::npos) << text;
  EXPECT_NE(text.find("differ from rank 0's"), std::string::npos) << text;
  for (int r = 0; r < 2; ++r) {
    const std::string file = (dir / ("run.rank-" + std::to_string(r) + ".kron")).string();
    ASSERT_TRUE(fs::exists(file));
    tracefile::Reader rd(file);
    rd.read_annex();
    // Both ranks measured at the same collectives (rank 0's KRON_MPI_SYNC_S), each with 1000 ping-pongs.
    ASSERT_FALSE(rd.clock_offsets().empty());
    if (r == 1) {
      EXPECT_EQ(rd.clock_offsets().front().exchanges, 1000u);
    }
  }
  fs::remove_all(dir);
}

// ERRATUM E343: two jobs in separate PID namespaces (their ranks have the same pid) sharing a board
// directory: each rank's board is kron-mpi-PID-RANDOM, created O_EXCL, so both record their program
// whole. Before, the second replaced the first's board kron-mpi-PID. Each job is one rank started as an MPI
// singleton (no mpirun: a second concurrent mpirun in its own PID namespace launches nothing on the 2-core
// VM, with or without kron), as pid 1 of its namespace; both run at once, 10 times.
TEST(MpiSettingsTest, JobsInSeparatePidNamespacesKeepTheirOwnBoards) {
  if (run("unshare -Upf --map-root-user true 2>/dev/null") != 0) GTEST_SKIP() << "unshare -Upf not permitted here";
  const fs::path dir = fs::temp_directory_path() / ("kron-mpi-ns-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "shm");
  for (int round = 0; round < 10; ++round) {
    std::string cmd = "cd " + dir.string() + " && export KRON_SHM_DIR=" + (dir / "shm").string() + " && { ";
    // Each job its own TMPDIR: Open MPI's session directory is named by pid too.
    for (int j = 0; j < 2; ++j) {
      const std::string n = std::to_string(j);
      cmd += "(mkdir -p tmp" + n + " && TMPDIR=$PWD/tmp" + n +
             " timeout 120 unshare -Upf --map-root-user env LD_PRELOAD=" KRON_MPI_LIB " KRON_MPI_OUT=job" + n +
             " " KRON_MPI_DEMO " 200 >/dev/null 2>job" + n + ".err) & ";
    }
    cmd += "wait; }";
    ASSERT_EQ(run(cmd), 0);
    std::uint64_t samples[2] = {};
    for (int j = 0; j < 2; ++j) {
      const std::string file = (dir / ("job" + std::to_string(j) + ".rank-0.kron")).string();
      ASSERT_TRUE(fs::exists(file)) << file << " (round " << round << ")";
      tracefile::Reader rd(file);
      EXPECT_TRUE(rd.complete()) << file;
      ASSERT_FALSE(rd.lanes().empty()) << file;
      EXPECT_EQ(rd.lanes().front().pid, 1u) << "not pid 1 of its own namespace: the two jobs cannot collide";
      samples[j] = rd.header().samples;
      fs::remove(file);
    }
    EXPECT_GT(samples[0], 0u);
    ASSERT_EQ(samples[0], samples[1]) << "round " << round << ": one job recorded into the other's board, or nothing";
  }
  EXPECT_TRUE(fs::is_empty(dir / "shm")) << "a board was left behind";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kron
