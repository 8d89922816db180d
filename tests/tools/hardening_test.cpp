// Hardening, round two, through the kron command as a user (or a careless or hostile one) meets it: output
// files that are FIFOs, devices or symlinks (ERRATUM E342, E129), outputs that survive a failed run
// (E341, E342), kron merge's checks of its inputs (E344), recorded names shown on a terminal (E346), a
// damaged threshold bucket (E347), stale boards (E345) and the small ones (E349). Each test fails against
// the code before these errata. Library-level rows: tests/probe/stats_probe_test.cpp (E340),
// tests/format/mapped_file_test.cpp (E349), tests/core/stats_test.cpp (E347).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kron/board.hpp"
#include "kron/core/stats.hpp"
#include "kron/core/vocabulary.hpp"
#include "kron/format/trace_file.hpp"
#include "support/mpi_records.hpp"

namespace fs = std::filesystem;

namespace kron {
namespace {

struct Result {
  int rc;
  std::string out, err;
};
std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}
// This tree's kron; $KRON_UNDER_TEST runs the same tests against another build (the check that each one
// fails against the code before these errata).
const std::string kron_bin =
    std::getenv("KRON_UNDER_TEST") ? std::getenv("KRON_UNDER_TEST") : std::string(KRON_BINARY_DIR) + "/kron";

class Hardening : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("kron-hardening-" + std::to_string(::getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir / "shm");
  }
  void TearDown() override { fs::remove_all(dir); }

  // kron ARGS run directly (no shell in the figure) in `dir`, boards in dir/shm, standard output discarded: its
  // peak resident memory (wait4's ru_maxrss) in MiB; -1 when it does not exit 0.
  long peak_rss_mib(std::vector<std::string> args) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("KRON_SHM_DIR", (dir / "shm").c_str(), 1);
      if (::chdir(dir.c_str()) != 0) ::_exit(126);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      std::vector<char*> argv{const_cast<char*>("kron")};
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(kron_bin.c_str(), argv.data());
      ::_exit(127);
    }
    int status = 0;
    rusage ru{};
    if (::wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    return ru.ru_maxrss / 1024;
  }

  // `cmd` in `dir` by sh, boards in dir/shm; $KRON is the kron binary.
  Result sh(const std::string& cmd) {
    const std::string line = "cd '" + dir.string() + "' && export KRON='" + kron_bin + "' KRON_SHM_DIR='" +
                             (dir / "shm").string() + "' && { " + cmd + "; } >'" + (dir / ".out").string() + "' 2>'" +
                             (dir / ".err").string() + "'";
    const int rc = std::system(line.c_str());
    return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(dir / ".out"), slurp(dir / ".err")};
  }

  // A small trace file: `n` samples, the first two a named scope called `scope`, the program `program`,
  // a histogram snapshot named `hist` per count in `counts` (one thread each, bucket 5).
  std::string trace(const std::string& name, int n, const std::string& scope = "work",
                    const std::string& program = "prog", const std::string& hist = "",
                    std::vector<std::uint64_t> counts = {}) {
    const std::string p = (dir / name).string();
    tracefile::FileHeader h = tracefile::make_header();
    h.clock_hz = 1'000'000'000;
    tracefile::set_program(h, program);
    tracefile::Writer w(p, h);
    for (int i = 0; i < n; ++i) {
      Sample s;
      s.source = board::source_id(0, 100);
      s.thread = 100;
      s.timestamp = 1000 + std::uint64_t(i) * 100;
      s.data = i < 2 ? record::named_data(1, 0) : std::uint64_t(i);
      s.flags = i == 0 ? (kFlagNamed | kFlagScopeBegin) : i == 1 ? (kFlagNamed | kFlagScopeEnd) : 0;
      w.append(s);
    }
    std::vector<std::uint8_t> snaps;
    std::uint32_t thread = 1;
    for (const std::uint64_t c : counts) {
      stats::HistSnapshotRecord r{};
      r.h.kind = record::RecordKind::HistSnapshot;
      r.h.size = sizeof r + sizeof(stats::HistEntry);
      r.h.group = 0xff;
      r.source = board::source_id(0, 100);
      r.thread = thread++;
      r.timestamp = 5000;
      r.hist = 1;
      r.entries = 1;
      r.sum = 10, r.min = 5, r.max = 5;
      std::memcpy(r.name, hist.data(), std::min(hist.size(), sizeof r.name - 1));
      const stats::HistEntry e{5, c};
      const auto* a = reinterpret_cast<const std::uint8_t*>(&r);
      snaps.insert(snaps.end(), a, a + sizeof r);
      const auto* b = reinterpret_cast<const std::uint8_t*>(&e);
      snaps.insert(snaps.end(), b, b + sizeof e);
    }
    if (!counts.empty()) w.append_snapshots(snaps, counts.size());
    record::NameRecord nr{};
    nr.h.kind = record::RecordKind::Names;
    nr.h.size = sizeof nr;
    nr.name_kind = record::NameKind::Scope;
    nr.id = 1;
    std::memcpy(nr.name, scope.data(), std::min(scope.size(), sizeof nr.name - 1));
    const record::NameRecord names[] = {nr};
    w.finish(h, {}, names);
    return p;
  }

  // A rank's file of an MPI job (as tests/analysis/merge_test.cpp builds them): `n` samples every 1000
  // ticks from t0, one send to / receive from the other rank, its clock-offset measurements.
  std::string rank_file(std::uint32_t rank, std::uint32_t world, std::vector<record::ClockOffsetRecord> offs,
                        std::uint32_t record_rank, std::int32_t peer, int n = 50, bool close = true) {
    const std::string p = (dir / ("r.rank-" + std::to_string(rank) + ".kron")).string();
    tracefile::FileHeader h = tracefile::make_header();
    h.clock_hz = 1'000'000'000;
    h.start_ticks = 1'000'000;
    h.node = rank;
    h.mpi_rank = rank;
    h.mpi_world_size = world;
    tracefile::Writer w(p, h);
    for (int i = 0; i < n; ++i) {
      Sample s;
      s.source = board::source_id(rank, 100 + rank);
      s.thread = 100 + rank;
      s.timestamp = 1'000'000 + std::uint64_t(i) * 1000;
      s.data = std::uint64_t(i);
      w.append(s);
    }
    const record::MpiRecord call =
        testing::mpi_call(record_rank, rank == 0 ? record::MpiCall::Send : record::MpiCall::Recv, 0, world, peer, 7,
                          1'010'000, 1'020'000);
    w.append_mpi(std::span(&call, 1));
    w.append_clock(offs);
    if (close) w.finish(h, {});
    return p;
  }
  std::vector<record::ClockOffsetRecord> good_offsets(std::uint32_t rank) {
    return {testing::clock_offset(rank, 1'000'000, 1'000'000, 10),
            testing::clock_offset(rank, 1'040'000, 1'040'000, 10)};
  }
};

bool has_control(const std::string& s) {
  for (const char c : s)
    if (c == '\x1b' || c == '\x07' || c == '\r') return true;
  return false;
}

// ---- outputs (ERRATUM E342) ----------------------------------------------------------------------------
TEST_F(Hardening, AnOutputFifoIsWrittenInPlaceNotReplaced) {
  trace("in.trace", 10);
  ASSERT_EQ(::mkfifo((dir / "out.fifo").c_str(), 0600), 0);
  const Result r =
      sh("(timeout 20 cat out.fifo > got.csv &) ; \"$KRON\" export --format csv -o out.fifo in.trace; "
         "rc=$?; sleep 0.5; exit $rc");
  EXPECT_EQ(r.rc, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::lstat((dir / "out.fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a regular file";
  EXPECT_NE(slurp(dir / "got.csv").find('\n'), std::string::npos) << "the reader of the FIFO got nothing";
  // An old kron left the reader waiting on the FIFO: free it, here and now (a writer in the background could
  // still be opening the FIFO when TearDown empties the folder, and leave a file there).
  if (const int fd = ::open((dir / "out.fifo").c_str(), O_WRONLY | O_NONBLOCK); fd >= 0) ::close(fd);
}

TEST_F(Hardening, ASymlinkToStandardOutputIsFollowed) {
  trace("in.trace", 10);
  ASSERT_EQ(::symlink("/dev/stdout", (dir / "out.csv").c_str()), 0);
  const Result r = sh("\"$KRON\" export --format csv -o out.csv in.trace | wc -l > lines.txt");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_GT(std::stoi(slurp(dir / "lines.txt")), 1) << "nothing came out of the pipe";
  struct stat st {};
  ASSERT_EQ(::lstat((dir / "out.csv").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the symlink was replaced by a regular file";
}

TEST_F(Hardening, ASymlinkToARegularFileReplacesTheFileAndKeepsTheLink) {
  trace("in.trace", 10);
  std::ofstream(dir / "real.csv") << "old\n";
  ASSERT_EQ(::symlink("real.csv", (dir / "link.csv").c_str()), 0);
  const Result r = sh("\"$KRON\" export --format csv -o link.csv in.trace");
  EXPECT_EQ(r.rc, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::lstat((dir / "link.csv").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_NE(slurp(dir / "real.csv"), "old\n");
}

TEST_F(Hardening, AFullDeviceIsAnErrorNamingTheFile) {
  trace("in.trace", 10);
  ASSERT_EQ(::symlink("/dev/full", (dir / "full.csv").c_str()), 0);
  const Result r = sh("\"$KRON\" export --format csv -o full.csv in.trace");
  EXPECT_NE(r.rc, 0) << "-o /dev/full succeeded";
  EXPECT_NE(r.err.find("full.csv: write failed: No space left on device"), std::string::npos) << r.err;
  struct stat st {};
  ASSERT_EQ(::lstat((dir / "full.csv").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST_F(Hardening, LongAndEmptyOutputNames) {  // ERRATUM E349
  trace("in.trace", 10);
  const std::string name(250, 'n');
  Result r = sh("\"$KRON\" export --format csv -o " + name + " in.trace");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / name));
  r = sh("\"$KRON\" export --format csv -o '' in.trace");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("an empty output file name"), std::string::npos) << r.err;
}

// ---- outputs that survive (ERRATUM E342, E341) --------------------------------------------------------
TEST_F(Hardening, AMergeThatFailsLeavesTheOldOutputAsItWas) {
  const std::string r0 = rank_file(0, 2, good_offsets(0), 0, 1);
  const std::string r1 = rank_file(1, 2, good_offsets(1), 1, 0);
  ASSERT_EQ(sh("\"$KRON\" merge -q r.rank-0.kron r.rank-1.kron -o all.kron").rc, 0);
  const std::string before = slurp(dir / "all.kron");
  // Damage a sample record in the middle of rank 1's file: found while the samples are merged.
  {
    std::fstream f(r1, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(sizeof(tracefile::FileHeader) + 20 * 32);
    const char bad[8] = {0x0e, 0, 0, 0, 0, 0, 0, 0};
    f.write(bad, sizeof bad);
  }
  const Result r = sh("\"$KRON\" merge -q r.rank-0.kron r.rank-1.kron -o all.kron");
  EXPECT_NE(r.rc, 0);
  EXPECT_EQ(slurp(dir / "all.kron"), before) << "the failed merge changed its output: " << r.err;
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << "left behind: " << e.path();
}

TEST_F(Hardening, RecordOfAProgramThatCannotRunLeavesTheOldOutput) {
  std::ofstream(dir / "old.trace") << "an old recording";
  const Result r = sh("\"$KRON\" record -q -o old.trace -- kron-no-such-program-here");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("kron-no-such-program-here"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(dir / "old.trace"), "an old recording");
}

// Found and executable, but its exec fails (the interpreter it names is missing): the failure is said, with
// the program's name and the reason, and OLD is as it was (ERRATUM E341).
TEST_F(Hardening, RecordOfAProgramWhoseExecFailsLeavesTheOldOutput) {
  std::ofstream(dir / "old.trace") << "an old recording";
  std::ofstream(dir / "script") << "#!/kron/no/such/interpreter\necho never\n";
  fs::permissions(dir / "script", fs::perms::owner_all);
  const Result r = sh("\"$KRON\" record -q -o old.trace -- ./script");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("cannot run ./script: No such file or directory"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(dir / "old.trace"), "an old recording");
  const Result ok = sh("\"$KRON\" record -q -o old.trace -- true");  // a program that runs: the file is written
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(slurp(dir / "old.trace"), "an old recording");
}

// An output that cannot be written is refused before the program starts (it never runs), naming the file.
TEST_F(Hardening, RecordRefusesAnUnwritableOutputBeforeTheProgramRuns) {
  const Result r = sh("\"$KRON\" record -q -o no/such/dir/out.trace -- touch ran");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("no/such/dir/out.trace: cannot create the trace file"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "ran"));
}

// ---- kron merge's inputs (ERRATUM E344) --------------------------------------------------------------
TEST_F(Hardening, MergeDropsAnImplausibleClockMeasurementNamingIt) {
  auto offs = good_offsets(1);
  offs.push_back(testing::clock_offset(1, 1'020'000, 61'000'000'000'000'000, 10));  // 10^9 ppm from its neighbours
  offs.push_back(testing::clock_offset(1, 1'030'000, 1'030'000, 10));
  rank_file(0, 2, good_offsets(0), 0, 1);
  rank_file(1, 2, offs, 1, 0);
  const Result r = sh("\"$KRON\" merge --json r.rank-0.kron r.rank-1.kron -o all.kron");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("rank 1: clock-offset measurement 2 (local tick 1020000) implies a drift of"), std::string::npos)
      << r.err;
  // Both ranks aligned without drift (the three good measurements agree), not at 10^9 ppm.
  std::size_t zero_drifts = 0;
  for (std::size_t p = 0; (p = r.out.find("\"drift_ppm\": 0.0,", p)) != std::string::npos; ++p) ++zero_drifts;
  EXPECT_EQ(zero_drifts, 2u) << r.out;
}

TEST_F(Hardening, MergeRefusesInconsistentWorldsNamingTheFiles) {
  rank_file(0, 2, good_offsets(0), 0, 1);
  rank_file(1, 3, good_offsets(1), 1, 0);
  Result r = sh("\"$KRON\" merge -q r.rank-0.kron r.rank-1.kron -o all.kron");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("r.rank-1.kron: offset"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("world size 3, but r.rank-0.kron has world size 2"), std::string::npos) << r.err;
  rank_file(1, 2, good_offsets(1), 0, 0);  // its MPI record says rank 0
  r = sh("\"$KRON\" merge -q r.rank-0.kron r.rank-1.kron -o all.kron");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("MPI record 0 of 1 is of rank 0, the file of rank 1"), std::string::npos) << r.err;
  rank_file(1, 2, good_offsets(1), 1, 5);  // a peer outside the world
  r = sh("\"$KRON\" merge -q r.rank-0.kron r.rank-1.kron -o all.kron");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("names peer rank 5, outside the world of 2"), std::string::npos) << r.err;
  trace("plain.trace", 10);  // not an MPI recording
  r = sh("\"$KRON\" merge -q r.rank-0.kron plain.trace -o all.kron");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("plain.trace: offset"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is not an MPI rank's file"), std::string::npos) << r.err;
}

TEST_F(Hardening, MergeTakesAFileThatWasNotClosedOnlyWithSalvage) {
  rank_file(0, 2, good_offsets(0), 0, 1);
  rank_file(1, 2, good_offsets(1), 1, 0, 50, false);  // its rank died: the file was never closed
  Result r = sh("\"$KRON\" merge -q r.rank-0.kron r.rank-1.kron -o all.kron");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("r.rank-1.kron: offset"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("was not closed"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "all.kron"));
  r = sh("\"$KRON\" merge --salvage --json r.rank-0.kron r.rank-1.kron -o all.kron");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("\"salvaged\": [\n  \"r.rank-1.kron\""), std::string::npos) << r.out;
  EXPECT_NE(sh("\"$KRON\" info all.kron").out.find("--salvage"), std::string::npos);
}

TEST_F(Hardening, MergeGammaNanIsRefused) {  // ERRATUM E349
  rank_file(0, 2, good_offsets(0), 0, 1);
  rank_file(1, 2, good_offsets(1), 1, 0);
  const Result r = sh("\"$KRON\" merge -q --gamma nan r.rank-0.kron r.rank-1.kron -o all.kron");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("--gamma"), std::string::npos) << r.err;
}

// ---- names on a terminal (ERRATUM E346) ---------------------------------------------------------------
TEST_F(Hardening, RecordedNamesAreEscapedInEveryTextOutput) {
  const std::string evil = "a\x1b]0;owned\x07\x1b[2J\nrow";
  trace("in.trace", 10, evil, "prog " + evil, evil, {3});
  for (const std::string cmd : {"rpt in.trace", "rpt -n in.trace", "rpt --wide in.trace", "expand in.trace",
                                "info in.trace", "hist in.trace"}) {
    const Result r = sh("\"$KRON\" " + cmd);
    EXPECT_EQ(r.rc, 0) << cmd << ": " << r.err;
    EXPECT_FALSE(has_control(r.out)) << cmd << " printed a control character:\n" << r.out;
    EXPECT_EQ(r.out.find("\nrow"), std::string::npos) << cmd << " split a line at a recorded newline:\n" << r.out;
    EXPECT_NE(r.out.find("a\\x1b]0;owned\\x07\\x1b[2J\\x0arow"), std::string::npos) << cmd << ":\n" << r.out;
  }
}

// A board of the test's own: its path, and its statistics area's first histogram slot.
board::HistSlot* first_hist_slot(const fs::path& file, void** map, std::size_t* size) {
  const int fd = ::open(file.c_str(), O_RDWR);
  if (fd < 0) return nullptr;
  struct stat st {};
  ::fstat(fd, &st);
  *size = static_cast<std::size_t>(st.st_size);
  *map = ::mmap(nullptr, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (*map == MAP_FAILED) return nullptr;
  const auto* h = static_cast<const board::BoardHeader*>(*map);
  return reinterpret_cast<board::HistSlot*>(static_cast<char*>(*map) + h->stats_offset);
}

TEST_F(Hardening, BoardNamesAndProgramAreEscapedAndABadThresholdBucketIsSaid) {  // E346, E347
  ASSERT_EQ(sh("\"$KRON\" board create hb --buffer 1M --lanes 4").rc, 0);
  ASSERT_EQ(sh("\"$KRON\" run --board hb -- true $(printf 'x\\033]0;owned\\007')").rc, 0);
  void* map = nullptr;
  std::size_t size = 0;
  board::HistSlot* s = first_hist_slot(dir / "shm" / "kron.hb", &map, &size);
  ASSERT_NE(s, nullptr);
  std::memcpy(s->name, "h\x1b[2J\nrow", 9);
  s->threshold_bucket.store(4000);
  s->threshold_count.store(1);
  s->header.store(board::kHistSlotWord);
  ::munmap(map, size);
  Result r = sh("\"$KRON\" status --board hb");
  EXPECT_FALSE(has_control(r.out)) << r.out;
  EXPECT_NE(r.out.find("x\\x1b]0;owned\\x07"), std::string::npos) << r.out;
  r = sh("\"$KRON\" counters --board hb");
  EXPECT_FALSE(has_control(r.out)) << r.out;
  EXPECT_NE(r.out.find("histogram #1 h\\x1b[2J\\x0arow: watch off, threshold 1 value at or above bucket 4000 (out of "
                       "range 0-975: a damaged board; never crossed)"),
            std::string::npos)
      << r.out;
}

// ---- the small ones (ERRATUM E349) --------------------------------------------------------------------
TEST_F(Hardening, HistogramTotalsSaturateAndSaySoNeverWrap) {
  trace("in.trace", 4, "w", "p", "big", {std::uint64_t{1} << 63, std::uint64_t{1} << 63, 5});
  const Result r = sh("\"$KRON\" hist in.trace");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("histogram big: its counts pass 2^64 - 1"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("count 5 "), std::string::npos) << r.out;
}

TEST_F(Hardening, TheHeadersSnapshotCountIsChecked) {
  const std::string p = trace("in.trace", 4, "w", "p", "h", {3});
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(offsetof(tracefile::FileHeader, snapshots));
    const std::uint64_t forged = 7;
    f.write(reinterpret_cast<const char*>(&forged), sizeof forged);
  }
  const Result r = sh("\"$KRON\" hist in.trace");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("offset 952: the header counts 7 histogram and counter snapshots, the record area holds 1"),
            std::string::npos)
      << r.err;
}

TEST_F(Hardening, CounterWatchWithAnIndexIsRefusedAndErrorsSayBoardOnce) {
  ASSERT_EQ(sh("\"$KRON\" board create wb --buffer 1M --lanes 4").rc, 0);
  Result r = sh("\"$KRON\" counters --board wb --watch vc:3=only:1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no index"), std::string::npos) << r.err;
  r = sh("\"$KRON\" counters --board wb --watch nosuch=off");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err.find("board board"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("board wb has no histogram 'nosuch'"), std::string::npos) << r.err;
}

// ---- memory (ERRATUM E348) ---------------------------------------------------------------------------
// kron status counts the records a board holds where they are: its peak memory is the board it maps (every
// page populated, E34) and little more, not a second copy of every record.
TEST_F(Hardening, StatusOfAFullBoardDoesNotCopyItsRecords) {
#if defined(__SANITIZE_ADDRESS__) || defined(__has_feature)
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
  GTEST_SKIP()
      << "a peak-memory figure: AddressSanitizer's shadow memory and quarantine are in it (the g++ tree checks)";
#endif
#endif
  constexpr long kBoardMiB = 64;
  ASSERT_EQ(sh("\"$KRON\" board create full --buffer " + std::to_string(kBoardMiB) + "M --lanes 4").rc, 0);
  const Result fill = sh("\"$KRON\" run --board full -- '" + std::string(KRON_SAMPLE1) + "' 400000 >/dev/null");
  ASSERT_EQ(fill.rc, 0) << fill.err;
  const long peak_mib = peak_rss_mib({"status", "--board", "full"});
  ASSERT_GE(peak_mib, 0) << "kron status failed";
  std::printf("kron status of a full %ld MiB board: peak RSS %ld MiB\n", kBoardMiB, peak_mib);  // docs/performance.md
  EXPECT_LT(peak_mib, kBoardMiB + kBoardMiB / 2)
      << "kron status of a full " << kBoardMiB << " MiB board peaked at " << peak_mib << " MiB";
}

// kron rdsample --board spills each lane's records a piece at a time as it reads them, giving the board's
// pages back behind it, and merges the lanes' runs by time through a window each: its peak memory does not
// grow with the board, nor with the largest lane (ERRATUM E348).
TEST_F(Hardening, RdsampleOfAFullBoardKeepsNoIndexOfIt) {
#if defined(__SANITIZE_ADDRESS__) || defined(__has_feature)
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
  GTEST_SKIP()
      << "a peak-memory figure: AddressSanitizer's shadow memory and quarantine are in it (the g++ tree checks)";
#endif
#endif
  constexpr long kBoardMiB = 64;
  ASSERT_EQ(sh("\"$KRON\" board create full --buffer " + std::to_string(kBoardMiB) + "M --lanes 16").rc, 0);
  // Eight processes at once, a lane each: together they fill the board.
  std::string fill;
  for (int k = 0; k < 8; ++k) fill += "\"$KRON\" run --board full -- '" + std::string(KRON_SAMPLE1) + "' 80000 & ";
  ASSERT_EQ(sh(fill + "wait").rc, 0);
  const long peak_mib = peak_rss_mib({"rdsample", "--board", "full", "-f", "all.trace"});
  ASSERT_GE(peak_mib, 0) << "kron rdsample failed";
  std::printf("kron rdsample --board of a full %ld MiB board: peak RSS %ld MiB\n", kBoardMiB, peak_mib);
  // Every record the board holds is in the file, in time order.
  tracefile::Reader rd((dir / "all.trace").string());
  EXPECT_GT(rd.header().samples, std::uint64_t(kBoardMiB << 20) / 64);
  std::uint64_t n = 0, last = 0;
  bool ordered = true;
  std::vector<Sample> batch(4096);
  for (std::size_t k; (k = rd.next_batch(batch)) > 0;)
    for (std::size_t j = 0; j < k; ++j, ++n) ordered &= batch[j].timestamp >= last, last = batch[j].timestamp;
  EXPECT_EQ(n, rd.header().samples);
  EXPECT_TRUE(ordered);
  // A constant and a little a lane (15 MiB measured); before, the board it mapped and the largest lane's
  // copy (112 MiB), and before that a copy of every record and a 16-byte index of each (201 MiB).
  EXPECT_LT(peak_mib, kBoardMiB / 2) << "kron rdsample --board of a full " << kBoardMiB << " MiB board peaked at "
                                     << peak_mib << " MiB";
}

// One thread alone fills the board (the simple buffer keeps its oldest records, the rest are overruns): the
// largest lane a board can hold. kron rdsample copies it a piece at a time into its spill file, gives the
// board's pages back behind it and merges from the spill file a bounded window at a time: its peak memory
// stays far below the board (ERRATUM E348); before, it copied the lane whole, a second board's worth.
TEST_F(Hardening, RdsampleOfABoardOneThreadFilledStaysFarBelowTheBoard) {
#if defined(__SANITIZE_ADDRESS__) || defined(__has_feature)
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
  GTEST_SKIP()
      << "a peak-memory figure: AddressSanitizer's shadow memory and quarantine are in it (the g++ tree checks)";
#endif
#endif
  constexpr long kBoardMiB = 128;
  constexpr std::uint64_t kCount = (std::uint64_t(kBoardMiB) << 20) / 32 + 100000;  // more than it holds
  ASSERT_EQ(sh("\"$KRON\" board create one --buffer " + std::to_string(kBoardMiB) + "M --lanes 4").rc, 0);
  const Result fill = sh("\"$KRON\" run --board one -- '" + std::string(KRON_ATTACH_WRITER) + "' seq 7 " +
                         std::to_string(kCount) + " 1");
  ASSERT_EQ(fill.rc, 0) << fill.err;
  const long peak_mib = peak_rss_mib({"rdsample", "--board", "one", "-f", "one.trace"});
  ASSERT_GE(peak_mib, 0) << "kron rdsample failed";
  std::printf("kron rdsample --board of a %ld MiB board one thread filled: peak RSS %ld MiB\n", kBoardMiB, peak_mib);
  // Every record the thread wrote is in the file or counted; the file's figures add up.
  tracefile::Reader rd((dir / "one.trace").string());
  const tracefile::FileHeader& h = rd.header();
  EXPECT_EQ(h.passed_filter, kCount);
  EXPECT_EQ(h.samples + h.overruns + h.overwritten, h.passed_filter);
  EXPECT_GT(h.samples, std::uint64_t(kBoardMiB << 20) / 32 * 9 / 10) << "the thread did not fill the board";
  ASSERT_EQ(rd.lanes().size(), 1u);
  EXPECT_EQ(rd.lanes()[0].samples, h.samples);
  // In time order, and each one: the thread's oldest, 0, 1, 2, ... (the simple buffer keeps the oldest).
  std::uint64_t n = 0, last = 0;
  bool ordered = true, consecutive = true;
  std::vector<Sample> batch(4096);
  for (std::size_t k; (k = rd.next_batch(batch)) > 0;)
    for (std::size_t j = 0; j < k; ++j, ++n) {
      ordered &= batch[j].timestamp >= last, last = batch[j].timestamp;
      consecutive &= batch[j].data == (std::uint64_t{7} << 40 | n);
    }
  EXPECT_EQ(n, h.samples);
  EXPECT_TRUE(ordered);
  EXPECT_TRUE(consecutive);
  // A constant (the program, a piece of the lane, the board's pages since the last give-back, the merge's
  // windows) and a little a block: 15 MiB measured (docs/performance.md "kron status"); before, 264 MiB.
  EXPECT_LT(peak_mib, kBoardMiB / 3) << "kron rdsample --board of a " << kBoardMiB
                                     << " MiB board one thread filled peaked at " << peak_mib << " MiB";
}

// ---- stale boards (ERRATUM E345) ----------------------------------------------------------------------
TEST_F(Hardening, BoardsOfDeadSessionsAreStaleAndRemovable) {
  // Made by `kron board create`, which has ended: a session's name makes them stale, any other name not.
  ASSERT_EQ(sh("\"$KRON\" board create record-1-00000000 --buffer 1M --lanes 4 && "
               "\"$KRON\" board create kron-mpi-1-00000000 --buffer 1M --lanes 4 && "
               "\"$KRON\" board create kept --buffer 1M --lanes 4")
                .rc,
            0);
  Result r = sh("\"$KRON\" board ls");
  EXPECT_NE(r.out.find("stale"), std::string::npos) << r.out;
  std::istringstream lines(r.out);
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("kept ", 0) == 0) {
      EXPECT_EQ(l.find("stale"), std::string::npos) << l;
    }
  }
  r = sh("\"$KRON\" board rm --stale");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir / "shm" / "kron.record-1-00000000"));
  EXPECT_FALSE(fs::exists(dir / "shm" / "kron.kron-mpi-1-00000000"));
  EXPECT_TRUE(fs::exists(dir / "shm" / "kron.kept"));
}

}  // namespace
}  // namespace kron
