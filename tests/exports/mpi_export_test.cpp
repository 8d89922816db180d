// kron export of MPI records (trace format 1.5) on rank files written here, no MPI needed (the real
// 4-rank job is tests/exports/mpi_test.sh): the Chrome JSON's message flows (E169) and the OTF2 archive's
// MPI records read back by otf2-print: a communicator other than MPI_COMM_WORLD numbered by world rank
// (E170), the MPI events placed inside their scopes at equal times (E173), a rank's files' ClockOffsets
// (E171). Sources: 003 section 3.5, class 4 (a message sent on one node and received on another).
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/timeline.hpp"
#include "exports/exports.hpp"
#include "kron/board.hpp"
#include "kron/format/trace_file.hpp"
#include "support/mpi_records.hpp"

namespace kron::analysis {
namespace {

using record::MpiCall;
using record::MpiRecord;

constexpr std::uint32_t kComm = 7;  // a communicator of ranks 0 and 2

MpiRecord call(std::uint32_t rank, MpiCall c, std::uint32_t comm, std::uint32_t comm_size, std::int32_t peer,
               std::int32_t tag, std::uint64_t t0, std::uint64_t t1) {
  return testing::mpi_call(rank, c, comm, comm_size, peer, tag, t0, t1, 8);
}

class MpiExportTest : public ::testing::Test {
 protected:
  std::filesystem::path dir;
  std::vector<std::string> files;

  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("kron-mpi-export-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    // Rank 0 sends to rank 2 on communicator 7 at 1000 (its MPI_Send scope begins then too), rank 2's
    // receive ends at 1200 (its MPI_Recv scope ends then too); both call MPI_Bcast on 7 with root 2.
    // Rank 1 sends to rank 0 on MPI_COMM_WORLD, never received: not a flow.
    files.push_back(rank_file(0, {{1000, 1, true}, {1100, 1, false}},
                              {call(0, MpiCall::Send, kComm, 2, 2, 5, 1000, 1090),
                               call(0, MpiCall::Bcast, kComm, 2, 2, 0, 2000, 2100)},
                              {clock(0, 500, 500, 0)}));
    files.push_back(rank_file(1, {{400, 1, true}, {700, 1, false}}, {call(1, MpiCall::Send, 0, 3, 0, 1, 500, 600)},
                              {clock(1, 450, 470, 10), clock(1, 2450, 2490, 30)}));
    files.push_back(rank_file(2, {{1050, 2, true}, {1200, 2, false}},
                              {call(2, MpiCall::Recv, kComm, 2, 0, 5, 1050, 1200),
                               call(2, MpiCall::Bcast, kComm, 2, 2, 0, 2000, 2050)},
                              {clock(2, 500, 500, 4)}));
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  static record::ClockOffsetRecord clock(std::uint32_t rank, std::uint64_t local, std::uint64_t ref, std::uint64_t rtt) {
    return testing::clock_offset(rank, local, ref, rtt, 4);
  }
  struct Scope {
    std::uint64_t t;
    std::uint16_t id;
    bool begin;
  };
  std::string rank_file(std::uint32_t rank, std::vector<Scope> scopes, std::vector<MpiRecord> calls,
                        std::vector<record::ClockOffsetRecord> offs) {
    const std::string p = (dir / ("run.rank-" + std::to_string(rank) + ".kron")).string();
    tracefile::FileHeader h = tracefile::make_header();
    h.clock_hz = 1'000'000'000;
    h.mpi_rank = rank;
    h.mpi_world_size = 3;
    tracefile::Writer w(p, h);
    for (const Scope& sc : scopes) {
      Sample s;
      s.source = board::source_id(rank, 100 + rank);
      s.thread = 100 + rank;
      s.timestamp = sc.t;
      s.data = record::named_data(sc.id, 0);
      s.flags = kFlagNamed | (sc.begin ? kFlagScopeBegin : kFlagScopeEnd);
      w.append(s);
    }
    w.append_mpi(calls);
    w.append_clock(offs);
    h.passed_filter = scopes.size();
    std::vector<record::NameRecord> names;
    for (auto [id, name] : {std::pair<std::uint16_t, const char*>{1, "MPI_Send"}, {2, "MPI_Recv"}}) {
      record::NameRecord nr{};
      nr.h.kind = record::RecordKind::Names;
      nr.h.size = sizeof nr;
      nr.name_kind = record::NameKind::Scope;
      nr.id = id;
      std::snprintf(nr.name, sizeof nr.name, "%s", name);
      names.push_back(nr);
    }
    w.finish(h, {}, names);
    return p;
  }
};

TEST_F(MpiExportTest, InputsReadTheirMpiRecordsAhead) {
  Merged in = open_inputs(files, InputOptions{});
  const MpiCalls c = mpi_calls(in);
  ASSERT_EQ(c.events.size(), 5u);
  ASSERT_EQ(c.matching.pairs.size(), 1u);  // rank 0 -> rank 2 on communicator 7; rank 1's send unmatched
  EXPECT_EQ(c.events[c.matching.pairs[0].first].rec.rank, 0u);
  EXPECT_EQ(c.events[c.matching.pairs[0].second].rec.rank, 2u);
  EXPECT_EQ(in.inputs()[1]->clock_offsets().size(), 2u);
  EXPECT_FALSE(in.inputs()[0]->mpi_merged());
}

TEST_F(MpiExportTest, ChromeJsonDrawsEachMatchedMessageAsOneFlowFromSendBeginToReceiveEnd) {
  Merged in = open_inputs(files, InputOptions{});
  const std::string out = (dir / "t.json").string();
  std::FILE* f = std::fopen(out.c_str(), "w");
  ASSERT_NE(f, nullptr);
  Timeline tl(in);
  const exports::ExportStats st = exports::export_chrome_json(tl, f);
  std::fclose(f);
  EXPECT_EQ(st.mpi_flows, 1u);
  const auto j = nlohmann::json::parse(std::ifstream(out));
  std::vector<nlohmann::json> s, e;
  for (const auto& ev : j["traceEvents"]) {
    if (ev.value("cat", "") != "mpi") continue;
    (ev["ph"] == "s" ? s : e).push_back(ev);
  }
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(s[0]["id"], e[0]["id"]);
  EXPECT_EQ(e[0]["ph"], "f");
  EXPECT_EQ(e[0]["bp"], "e");
  // Times in microseconds since the first sample (rank 1's, at 400 ns): send begin 1000, receive end 1200.
  EXPECT_EQ(s[0]["pid"], board::source_id(0, 100));
  EXPECT_EQ(s[0]["tid"], 100);
  EXPECT_DOUBLE_EQ(s[0]["ts"].get<double>(), 0.6);
  EXPECT_EQ(e[0]["pid"], board::source_id(2, 102));
  EXPECT_EQ(e[0]["tid"], 102);
  EXPECT_DOUBLE_EQ(e[0]["ts"].get<double>(), 0.8);
  EXPECT_EQ(s[0]["args"]["to_rank"], 2);
  EXPECT_EQ(e[0]["args"]["from_rank"], 0);
}

#ifdef KRON_OTF2_PRINT
std::string run(const std::string& cmd) {
  std::string out;
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  EXPECT_EQ(::pclose(p), 0) << cmd;
  return out;
}
// The lines of otf2-print's event listing for one location, as "KIND TIME REST".
std::vector<std::string> events_of(const std::string& print, int loc) {
  std::vector<std::string> v;
  std::istringstream in(print);
  std::string line;
  const std::regex re(R"(^(\S+)\s+(\d+)\s+(\d+)\s+(.*)$)");
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_match(line, m, re) && std::stoi(m[2]) == loc) v.push_back(m[1].str() + " " + m[3].str() + " " + m[4].str());
  return v;
}

TEST_F(MpiExportTest, Otf2MpiRecordsNameRanksOfTheirCommunicatorInsideTheirScopes) {
  ASSERT_TRUE(exports::otf2_built_in());
  Merged in = open_inputs(files, InputOptions{});
  const std::string out = (dir / "t.otf2").string();
  std::filesystem::create_directories(out);
  Timeline tl(in);
  const exports::ExportStats st = exports::export_otf2(tl, out);
  EXPECT_EQ(st.mpi_flows, 7u);      // Send, Recv, 2 x 2 collective events, rank 1's Send
  EXPECT_EQ(st.clock_offsets, 4u);  // rank files, not merged: each its own measurements
  const std::string anchor = out + "/traces.otf2";
  const std::string print = run(std::string(KRON_OTF2_PRINT) + " " + anchor);
  const std::string defs = run(std::string(KRON_OTF2_PRINT) + " -G " + anchor);
  // Locations in rank order (E170): 0, 1, 2.
  EXPECT_TRUE(std::regex_search(defs, std::regex(R"(LOCATION\s+0\s+Name: "thread 100")"))) << defs;
  EXPECT_TRUE(std::regex_search(defs, std::regex(R"(LOCATION\s+2\s+Name: "thread 102")"))) << defs;
  // Communicator 7 over world ranks 0 and 2: world rank 2 is its rank 1.
  EXPECT_TRUE(std::regex_search(defs, std::regex(R"(COMM\s+\d+\s+Name: "MPI communicator 7")"))) << defs;
  EXPECT_TRUE(std::regex_search(defs, std::regex(R"(COMM\s+\d+\s+Name: "MPI_COMM_WORLD")"))) << defs;
  EXPECT_TRUE(std::regex_search(defs, std::regex(R"(COMM_GROUP, Paradigm: MPI, Flags: NONE, 2 Members)"))) << defs;
  // Rank 0: the send at its scope's begin time goes after the Enter (E173), the collective after.
  const auto r0 = events_of(print, 0);
  ASSERT_GE(r0.size(), 5u) << print;
  EXPECT_EQ(r0[0].substr(0, 10), "ENTER 1000");
  EXPECT_TRUE(std::regex_search(r0[1], std::regex(R"(^MPI_SEND 1000 Receiver: 1 .*"MPI communicator 7".*Tag: 5)"))) << r0[1];
  EXPECT_EQ(r0[2].substr(0, 10), "LEAVE 1100");
  EXPECT_EQ(r0[3].substr(0, 25), "MPI_COLLECTIVE_BEGIN 2000");
  EXPECT_TRUE(std::regex_search(r0[4], std::regex(R"(^MPI_COLLECTIVE_END 2100 .*BCAST.*Root: 1)"))) << r0[4];
  // Rank 2: the receive at its end, which is its scope's end time: before the Leave (E173).
  const auto r2 = events_of(print, 2);
  ASSERT_GE(r2.size(), 3u) << print;
  EXPECT_EQ(r2[0].substr(0, 10), "ENTER 1050");
  EXPECT_TRUE(std::regex_search(r2[1], std::regex(R"(^MPI_RECV 1200 Sender: 0 .*"MPI communicator 7")"))) << r2[1];
  EXPECT_EQ(r2[2].substr(0, 10), "LEAVE 1200");
  // Rank 1's send to world rank 0 on MPI_COMM_WORLD, at 500 on its clock: otf2-print applies its
  // ClockOffsets (E171), +20 at 450 and +40 at 2450, interpolated: 520.5, printed as 520 or 521.
  const auto r1 = events_of(print, 1);
  ASSERT_GE(r1.size(), 2u) << print;
  EXPECT_TRUE(std::regex_search(r1[1], std::regex(R"(^MPI_SEND 52[01] Receiver: 0 .*"MPI_COMM_WORLD".*Tag: 1)"))) << r1[1];
  const std::string offsets = run(std::string(KRON_OTF2_PRINT) + " -C " + anchor);
  EXPECT_TRUE(std::regex_search(offsets, std::regex(R"(CLOCK_OFFSET\s+1\s+Time: 2450, Offset: \+40, StdDev: 15)"))) << offsets;
}
#endif

}  // namespace
}  // namespace kron::analysis
