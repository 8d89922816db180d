// libkron_mpi on the MPI a real code uses: examples/mpi/mpi_surface.c (every call of the wider surface,
// once or a few times, deterministically) run by mpirun with 4 ranks, each rank's clock given a known
// fault (KRON_MPI_TEST_CLOCK_FAULT, ERRATUM E207), once per MPI library kron is built for (Open MPI, and
// MPICH where built: each has its own interposer, their ABIs differ). What is checked, and why it can fail:
// - every message leaves one record at each end, with the right call, peer (a world rank, E202), tag and
//   size, none incomplete but the send whose request was freed while active (E435): a wrapper missing, a
//   persistent request not re-armed at its next MPI_Start, a matched receive without its communicator, a
//   receive's status not read, all show;
// - on a split communicator whose ranks differ from the world's, peers and roots are world ranks (E203);
// - every collective, blocking, `v` or non-blocking, is one record per member with its sequence number in
//   calling order (MPI 3.1 section 5.12: non-blocking collectives are ordered by their posting, as the
//   blocking ones by their call), its root and this rank's bytes (E434);
// - kron merge matches every send to its receive and every collective instance has every member (E208),
//   with no happened-before violation left (E206) though the fault makes many.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/mpi_match.hpp"
#include "kron/format/trace_file.hpp"
#include "merge/merge.hpp"
#include "mpi/flavour.hpp"

namespace kron {
namespace {

namespace fs = std::filesystem;
using record::MpiCall;
using record::MpiRecord;

constexpr int kRanks = 4;
const std::string kFault = "0:0,30000000:80,-45000000:-90,12000000:100";  // E207: offset ns, drift ppm per rank

using Flavour = testing::MpiFlavour;

int run(const std::string& cmd) {
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

// The job of a flavour, run once for all its tests.
struct Job {
  fs::path dir;
  int rc = -1;
  std::vector<std::string> files;
  std::vector<std::vector<MpiRecord>> records;  // by rank
  std::vector<std::set<std::string>> scopes;    // the named scopes of each rank's samples
};

class MpiSurfaceTest : public ::testing::TestWithParam<Flavour> {
 protected:
  static inline std::map<std::string, Job> jobs;
  static void TearDownTestSuite() {
    for (auto& [n, j] : jobs) fs::remove_all(j.dir);
  }
  Job* job = nullptr;
  void SetUp() override {
    const Flavour& f = GetParam();
    auto [it, fresh] = jobs.try_emplace(f.name);
    job = &it->second;
    if (fresh) {
      job->dir = fs::temp_directory_path() / ("kron-mpi-surface-" + f.name + "-" + std::to_string(::getpid()));
      fs::create_directories(job->dir);
      const std::string env = f.env("LD_PRELOAD", f.lib) + f.env("KRON_MPI_OUT", (job->dir / "s").string()) +
                              f.env("KRON_MPI_TEST_CLOCK_FAULT", kFault);
      job->rc = run(f.run(kRanks, env, f.surface) + " >/dev/null");
      for (int r = 0; r < kRanks; ++r) {
        job->files.push_back((job->dir / ("s.rank-" + std::to_string(r) + ".kron")).string());
        if (!fs::exists(job->files.back())) continue;
        tracefile::Reader rd(job->files.back());
        tracefile::NameTable names;
        for (const auto& nr : rd.names()) names.add(nr);
        std::set<std::string> sc;
        Sample s;
        while (rd.next(s))
          if (s.flags & kFlagScopeBegin) sc.insert(names.name_of(s));
        job->scopes.push_back(std::move(sc));
        rd.read_annex();
        job->records.emplace_back(rd.mpi_records().begin(), rd.mpi_records().end());
      }
    }
    ASSERT_EQ(job->rc, 0) << f.name << ": the job failed (mpi_surface checks its own results too)";
    ASSERT_EQ(job->records.size(), std::size_t{kRanks});
  }
};

int right_of(int r) { return (r + 1) % kRanks; }
int left_of(int r) { return (r + kRanks - 1) % kRanks; }
std::uint64_t ints(int n) { return std::uint64_t(n) * sizeof(int); }

// The program's point-to-point messages (examples/mpi/mpi_surface.c): tag, the sender's call and the
// receiver's, how many. Every one goes from rank r to r+1 with r+1 ints (tag 16: 2 ints).
struct P2p {
  int tag;
  MpiCall send, recv;
  int times;
};
const P2p kP2p[] = {
    {11, MpiCall::Send, MpiCall::Recv, 1},                  // MPI_Bsend (MPI 3.1 section 3.4: a send mode)
    {12, MpiCall::Send, MpiCall::Irecv, 1},                 // MPI_Rsend
    {13, MpiCall::Isend, MpiCall::Irecv, 1},                // MPI_Ibsend (section 3.7.2)
    {14, MpiCall::Isend, MpiCall::Irecv, 1},                // MPI_Issend
    {15, MpiCall::Isend, MpiCall::Irecv, 1},                // MPI_Irsend
    {16, MpiCall::SendrecvSend, MpiCall::SendrecvRecv, 1},  // MPI_Sendrecv_replace (section 3.10)
    {17, MpiCall::Send, MpiCall::Recv, 1},                  // after MPI_Probe (section 3.8.1)
    {18, MpiCall::Isend, MpiCall::Recv, 1},                 // after MPI_Iprobe
    {19, MpiCall::Send, MpiCall::Mrecv, 1},                 // MPI_Mprobe + MPI_Mrecv (section 3.8.2-3)
    {20, MpiCall::Isend, MpiCall::Imrecv, 1},               // MPI_Improbe + MPI_Imrecv
    {21, MpiCall::PsendStart, MpiCall::PrecvStart, 3},      // MPI_Send_init, MPI_Recv_init (section 3.9)
    {22, MpiCall::PsendStart, MpiCall::PrecvStart, 3},      // MPI_Ssend_init
    {23, MpiCall::PsendStart, MpiCall::Recv, 2},            // MPI_Bsend_init
    {24, MpiCall::PsendStart, MpiCall::Irecv, 2},           // MPI_Rsend_init
    {25, MpiCall::Isend, MpiCall::Recv, 1},                 // MPI_Isend, its request freed while active
    {26, MpiCall::Isend, MpiCall::Recv, 1},                 // the next MPI_Isend (perhaps the freed handle)
};

TEST_P(MpiSurfaceTest, EveryMessageHasItsRecordAtBothEndsWithWorldPeerTagAndSize) {
  for (int r = 0; r < kRanks; ++r) {
    const auto& recs = job->records[static_cast<std::size_t>(r)];
    for (const MpiRecord& m : recs) {
      // ERRATUM E435: the one send whose request was freed while active is incomplete, its end its posting
      // (E202's incomplete request); every other record was completed.
      const bool freed = m.call == MpiCall::Isend && m.tag == 25 && m.comm == 0;
      EXPECT_EQ((m.h.flags & record::kMpiIncomplete) != 0, freed)
          << "rank " << r << " call " << int(m.call) << " tag " << m.tag;
      if (freed) {
        EXPECT_EQ(m.end, m.timestamp) << "rank " << r;
      }
      EXPECT_EQ(m.rank, static_cast<std::uint32_t>(r));
      EXPECT_GE(m.end, m.timestamp);
    }
    for (const P2p& p : kP2p) {
      int sends = 0, recvs = 0;
      for (const MpiRecord& m : recs) {
        if (record::mpi_is_collective(m.call) || m.tag != p.tag || m.comm != 0) continue;
        if (record::mpi_is_send(m.call)) {
          ++sends;
          EXPECT_EQ(m.call, p.send) << "rank " << r << " tag " << p.tag;
          EXPECT_EQ(m.peer, right_of(r)) << "tag " << p.tag;
          EXPECT_EQ(m.bytes, ints(p.tag == 16 ? 2 : r + 1)) << "tag " << p.tag;
        } else {
          ++recvs;
          EXPECT_EQ(m.call, p.recv) << "rank " << r << " tag " << p.tag;
          // E202: a receive's peer, tag and size are its status's.
          EXPECT_EQ(m.peer, left_of(r)) << "tag " << p.tag;
          EXPECT_EQ(m.bytes, ints(p.tag == 16 ? 2 : left_of(r) + 1)) << "tag " << p.tag;
        }
      }
      EXPECT_EQ(sends, p.times) << "rank " << r << " tag " << p.tag;
      EXPECT_EQ(recvs, p.times) << "rank " << r << " tag " << p.tag;
    }
  }
}

// ERRATUM E203 and E202: ranks are world ranks. The split communicator holds the ranks of one parity in
// descending world order, so rank r's partner is r+2 mod 4 in the world and rank 0 or 1 in it; its root
// (member 0) is the highest world rank of the parity.
TEST_P(MpiSurfaceTest, OnASplitCommunicatorPeersAndRootsAreWorldRanks) {
  std::set<std::uint32_t> ids;
  for (int r = 0; r < kRanks; ++r) {
    int messages = 0, bcasts = 0;
    for (const MpiRecord& m : job->records[static_cast<std::size_t>(r)]) {
      if (m.comm == 0) continue;
      ids.insert(m.comm);
      EXPECT_EQ(m.comm_size, 2u);
      if (m.call == MpiCall::SendrecvSend || m.call == MpiCall::SendrecvRecv) {
        ++messages;
        EXPECT_EQ(m.tag, 30);
        EXPECT_EQ(m.peer, (r + 2) % kRanks) << "rank " << r << ": not the partner's world rank";
        EXPECT_EQ(m.bytes, ints((m.call == MpiCall::SendrecvSend ? r : (r + 2) % kRanks) + 1));
      } else {
        ++bcasts;
        EXPECT_TRUE(m.call == MpiCall::Bcast || m.call == MpiCall::Ibcast) << int(m.call);
        EXPECT_EQ(m.peer, r % 2 ? 3 : 2) << "rank " << r << ": the root is not a world rank";
        EXPECT_EQ(m.tag, m.call == MpiCall::Bcast ? 0 : 1) << "sequence numbers are per communicator";
      }
    }
    EXPECT_EQ(messages, 2) << "rank " << r;
    EXPECT_EQ(bcasts, 2) << "rank " << r;
  }
  EXPECT_EQ(ids.size(), 2u) << "the two halves have distinct ids";
}

// MPI 3.1 section 5.12 (and 5.13): collectives of a communicator, blocking and non-blocking, are matched
// in the order they are called on it. The program's collectives on MPI_COMM_WORLD, in calling order:
// their call, root (-1: none) and this rank's bytes (E434: the send buffer; MPI_Scatter(v): the share).
struct Coll {
  MpiCall call;
  int root;
  std::uint64_t (*bytes)(int r);
};
std::uint64_t none(int) { return 0; }
std::uint64_t one(int) { return ints(1); }
std::uint64_t share(int r) { return ints(r + 1); }
std::uint64_t all_shares(int) { return ints(kRanks * (kRanks + 1) / 2); }
std::uint64_t two_each(int) { return ints(2 * kRanks); }
const Coll kWorld[] = {
    {MpiCall::Barrier, -1, none},  // before MPI_Rsend
    {MpiCall::Barrier, -1, none},  // before MPI_Irsend
    {MpiCall::Barrier, -1, none},  // after the freed request's message
    {MpiCall::Barrier, -1, none},  // before each MPI_Start of the MPI_Rsend_init
    {MpiCall::Barrier, -1, none},
    {MpiCall::Gatherv, 0, share},
    {MpiCall::Scatterv, 0, share},
    {MpiCall::Allgatherv, -1, share},
    {MpiCall::Alltoallv, -1, all_shares},
    {MpiCall::Ialltoallv, -1, all_shares},
    {MpiCall::ReduceScatter, -1, all_shares},
    {MpiCall::ReduceScatterBlock, -1, two_each},
    {MpiCall::Scan, -1, one},
    {MpiCall::Exscan, -1, one},
    {MpiCall::Ibarrier, -1, none},
    {MpiCall::Ibcast, 1, one},
    {MpiCall::Ireduce, 0, one},
    {MpiCall::Iallreduce, -1, one},
    {MpiCall::Allreduce, -1, one},  // blocking, posted after the four above, completed before them
    {MpiCall::Igather, 0, one},
    {MpiCall::Iallgather, -1, one},
    {MpiCall::Iscatter, 0, one},
    {MpiCall::Ialltoall, -1, one},
    {MpiCall::Igatherv, 0, share},
    {MpiCall::Iscatterv, 0, share},
    {MpiCall::Iallgatherv, -1, share},
    {MpiCall::Ibarrier, -1, none},  // completed by MPI_Test
};

TEST_P(MpiSurfaceTest, EveryCollectiveIsOneRecordPerMemberInCallingOrder) {
  constexpr std::size_t kN = std::size(kWorld);
  for (int r = 0; r < kRanks; ++r) {
    std::vector<MpiRecord> world;
    for (const MpiRecord& m : job->records[static_cast<std::size_t>(r)])
      if (record::mpi_is_collective(m.call) && m.comm == 0) world.push_back(m);
    ASSERT_EQ(world.size(), kN) << "rank " << r;
    std::sort(world.begin(), world.end(), [](const MpiRecord& a, const MpiRecord& b) { return a.tag < b.tag; });
    for (std::size_t k = 0; k < kN; ++k) {
      const MpiRecord& m = world[k];
      EXPECT_EQ(m.tag, static_cast<std::int32_t>(k)) << "rank " << r;
      EXPECT_EQ(m.call, kWorld[k].call) << "rank " << r << " sequence number " << k;
      EXPECT_EQ(m.peer, kWorld[k].root) << "rank " << r << " sequence number " << k;
      EXPECT_EQ(m.bytes, kWorld[k].bytes(r)) << "rank " << r << " sequence number " << k;
      EXPECT_EQ(m.comm_size, std::uint32_t{kRanks});
    }
    // A non-blocking collective posted before the blocking MPI_Allreduce completed after it began: its
    // record spans from its posting to its completion, not only the posting call.
    EXPECT_EQ(world[17].call, MpiCall::Iallreduce);
    EXPECT_LT(world[17].timestamp, world[18].timestamp) << "rank " << r;
    EXPECT_GT(world[17].end, world[18].timestamp) << "rank " << r;
  }
}

// Each wrapper is a named scope (E202), the ones that move nothing too.
TEST_P(MpiSurfaceTest, EveryWrappedCallIsANamedScope) {
  const char* calls[] = {"MPI_Bsend",
                         "MPI_Rsend",
                         "MPI_Ibsend",
                         "MPI_Issend",
                         "MPI_Irsend",
                         "MPI_Sendrecv_replace",
                         "MPI_Probe",
                         "MPI_Iprobe",
                         "MPI_Mprobe",
                         "MPI_Mrecv",
                         "MPI_Improbe",
                         "MPI_Imrecv",
                         "MPI_Send_init",
                         "MPI_Recv_init",
                         "MPI_Ssend_init",
                         "MPI_Bsend_init",
                         "MPI_Rsend_init",
                         "MPI_Start",
                         "MPI_Startall",
                         "MPI_Request_free",
                         "MPI_Testsome",
                         "MPI_Waitsome",
                         "MPI_Testany",
                         "MPI_Waitany",
                         "MPI_Testall",
                         "MPI_Gatherv",
                         "MPI_Scatterv",
                         "MPI_Allgatherv",
                         "MPI_Alltoallv",
                         "MPI_Reduce_scatter",
                         "MPI_Reduce_scatter_block",
                         "MPI_Scan",
                         "MPI_Exscan",
                         "MPI_Ibarrier",
                         "MPI_Ibcast",
                         "MPI_Ireduce",
                         "MPI_Iallreduce",
                         "MPI_Igather",
                         "MPI_Iallgather",
                         "MPI_Iscatter",
                         "MPI_Ialltoall",
                         "MPI_Igatherv",
                         "MPI_Iscatterv",
                         "MPI_Iallgatherv",
                         "MPI_Ialltoallv"};
  for (int r = 0; r < kRanks; ++r)
    for (const char* c : calls)
      EXPECT_TRUE(job->scopes[static_cast<std::size_t>(r)].count(c)) << "rank " << r << ": " << c;
}

// ERRATUM E208 and E206: the merge pairs every send with its receive (persistent, buffered, ready and
// matched-probe ones included), every collective instance has all its members, and no happened-before
// violation is left, though the injected fault (up to 75 ms between ranks) makes many before alignment.
TEST_P(MpiSurfaceTest, TheMergeMatchesEverythingAndLeavesNoViolation) {
  int per_rank = 1;  // the split communicator's message
  for (const P2p& p : kP2p) per_rank += p.times;
  const merge::MergeReport m = merge::merge_files(job->files, (job->dir / "all.kron").string(), merge::MergeOptions{});
  EXPECT_EQ(m.messages, std::uint64_t(kRanks) * std::uint64_t(per_rank));
  EXPECT_EQ(m.unmatched_sends, 0u);
  EXPECT_EQ(m.unmatched_recvs, 0u);
  EXPECT_EQ(m.collectives, std::size(kWorld) + 2 * 2);  // the world's, and two on each half
  EXPECT_EQ(m.incomplete_collectives, 0u);
  EXPECT_EQ(m.violations_left, 0u);
  merge::MergeOptions raw;
  raw.align = false;
  raw.clc = false;
  const merge::MergeReport bad = merge::merge_files(job->files, (job->dir / "raw.kron").string(), raw);
  EXPECT_GT(bad.violations_found, 5u) << "the fault must show before alignment";
  // The controlled logical clock alone removes them all, the new calls' dependencies included.
  merge::MergeOptions clc_only;
  clc_only.align = false;
  const merge::MergeReport clc = merge::merge_files(job->files, (job->dir / "clc.kron").string(), clc_only);
  EXPECT_EQ(clc.violations_left, 0u);
  EXPECT_EQ(clc.forced, 0u);
  tracefile::Reader rd((job->dir / "all.kron").string());
  rd.read_annex();
  std::vector<analysis::MpiEvent> ev;
  for (const auto& r : rd.mpi_records()) ev.push_back({r, r.rank});
  EXPECT_EQ(analysis::count_violations(ev, analysis::match_messages(ev)), 0u);
}

// ERRATUM E436: each interposer serves the MPI library it was built against; the other one's, preloaded,
// makes the job fail at MPI_Init (MPICH handed Open MPI's MPI_COMM_WORLD, or the reverse), never record
// quietly wrong handles.
TEST(MpiFlavourTest, TheOtherLibrarysInterposerFailsLoudly) {
  const auto f = testing::mpi_flavours();
  ASSERT_EQ(f.size(), 2u);
  const fs::path d = fs::temp_directory_path() / ("kron-mpi-wrong-" + std::to_string(::getpid()));
  fs::create_directories(d);
  for (int k = 0; k < 2; ++k) {
    const Flavour& program = f[static_cast<std::size_t>(k)];
    const Flavour& other = f[static_cast<std::size_t>(1 - k)];
    const std::string out = (d / program.name).string();
    const std::string env = program.env("LD_PRELOAD", other.lib) + program.env("KRON_MPI_OUT", out);
    EXPECT_NE(run(program.run(2, env, program.demo) + " 2 >/dev/null 2>&1"), 0) << program.name;
    EXPECT_FALSE(fs::exists(out + ".rank-0.kron")) << program.name;
  }
  fs::remove_all(d);
}

INSTANTIATE_TEST_SUITE_P(Flavours, MpiSurfaceTest, ::testing::ValuesIn(testing::mpi_flavours()),
                         [](const ::testing::TestParamInfo<Flavour>& i) { return i.param.name; });

}  // namespace
}  // namespace kron
