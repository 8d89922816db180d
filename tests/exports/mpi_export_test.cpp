// kron export of MPI records (trace format 1.5) on rank files written here, no MPI needed (the real
// 4-rank job is tests/exports/mpi_test.sh): the Chrome JSON's message flows (E169) and the OTF2 archive's
// MPI records read back by otf2-print: a communicator other than MPI_COMM_WORLD numbered by world rank
// (E170), the MPI events placed inside their scopes at equal times (E173), a rank's files' ClockOffsets
// (E171). Sources: 003 section 3.5, class 4 (a message sent on one node and received on another).
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <map>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/rpt.hpp"
#include "analysis/summary.hpp"
#include "analysis/timeline.hpp"
#include "exports/exports.hpp"
#include "kron/board.hpp"
#include "kron/core/stats.hpp"
#include "kron/format/trace_file.hpp"
#include "merge/merge.hpp"
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
    files.push_back(rank_file(
        0, {{1000, 1, true}, {1100, 1, false}},
        {call(0, MpiCall::Send, kComm, 2, 2, 5, 1000, 1090), call(0, MpiCall::Bcast, kComm, 2, 2, 0, 2000, 2100)},
        {clock(0, 500, 500, 0)}));
    files.push_back(rank_file(1, {{400, 1, true}, {700, 1, false}}, {call(1, MpiCall::Send, 0, 3, 0, 1, 500, 600)},
                              {clock(1, 450, 470, 10), clock(1, 2450, 2490, 30)}));
    files.push_back(rank_file(
        2, {{1050, 2, true}, {1200, 2, false}},
        {call(2, MpiCall::Recv, kComm, 2, 0, 5, 1050, 1200), call(2, MpiCall::Bcast, kComm, 2, 2, 0, 2000, 2050)},
        {clock(2, 500, 500, 4)}));
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  static record::ClockOffsetRecord clock(std::uint32_t rank, std::uint64_t local, std::uint64_t ref,
                                         std::uint64_t rtt) {
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
    w.append_snapshots(hist_snapshot(rank), 1);
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
    if (rank != 1) {  // libkron_mpi's Node entry (E201); rank 1 wrote none: its rank is its source's node (E395)
      record::NameRecord nr{};
      nr.h.kind = record::RecordKind::Names;
      nr.h.size = sizeof nr;
      nr.name_kind = record::NameKind::Node;
      nr.source = board::source_id(rank, 100 + rank);
      nr.thread = rank;
      std::snprintf(nr.name, sizeof nr.name, "host-%u", rank);
      std::snprintf(nr.function, sizeof nr.function, "rank %u of 3", rank);
      names.push_back(nr);
    }
    const tracefile::LaneEntry lane{100 + rank, 100 + rank, scopes.size(), 0, 0, 0, 0};
    w.finish(h, std::span(&lane, 1), names);
    return p;
  }
  // A histogram "lat" of thread 100 + rank: (rank + 1) values of 1000 (rank + 1) ticks.
  static std::vector<std::uint8_t> hist_snapshot(std::uint32_t rank) {
    std::vector<std::uint8_t> rec(sizeof(stats::HistSnapshotRecord));
    stats::HistSnapshotRecord r{};
    r.h.kind = record::RecordKind::HistSnapshot;
    r.h.phase = 1;
    r.source = board::source_id(rank, 100 + rank), r.thread = 100 + rank, r.hist = 1, r.timestamp = 1000;
    std::snprintf(r.name, sizeof r.name, "lat");
    const std::uint64_t v = 1000 * (rank + 1), b = stats::bucket_of(v);
    r.min = r.max = stats::bucket_range(static_cast<unsigned>(b)).lo;
    r.sum = (rank + 1) * r.min;
    const stats::HistEntry e{b, rank + 1};
    const auto* p = reinterpret_cast<const std::uint8_t*>(&e);
    rec.insert(rec.end(), p, p + sizeof e);
    r.entries = 1;
    r.h.size = static_cast<std::uint16_t>(rec.size());
    std::memcpy(rec.data(), &r, sizeof r);
    return rec;
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

// ERRATUM E395: a stream of an MPI rank's process is named after its rank, and the right one: rank R's process
// (pid 100 + R on node R, thread 100 + R) is "rank R" in every label, its host where its Node entry names it.
TEST_F(MpiExportTest, EveryStreamLabelNamesItsOwnRank) {
  Merged in = open_inputs(files, InputOptions{});
  Timeline tl(in);
  for (std::uint32_t r = 0; r < 3; ++r) {
    const std::uint32_t src = board::source_id(r, 100 + r);
    ASSERT_TRUE(tl.rank(src).has_value()) << r;
    EXPECT_EQ(*tl.rank(src), r);
    const StreamKey k{src, 100 + r, true};
    EXPECT_EQ(stream_name(k, &tl.ranks()), fmt::format("rank {} 0x{:08x}/tid{}", r, src, 100 + r));
    EXPECT_EQ(tl.stream_label(k), fmt::format("rank {} thread {}", r, 100 + r));
  }
  EXPECT_EQ(tl.process_label(board::source_id(2, 102)), "rank 2 on host-2 (pid 102)");
  EXPECT_EQ(tl.process_label(board::source_id(1, 101)), "rank 1 (pid 101)");  // no Node entry: the node part
}

TEST_F(MpiExportTest, ReportRowsAndThreadsSayTheirRankInTextAndJson) {
  Merged in = open_inputs(files, InputOptions{});
  Timeline tl(in);
  const Report r = make_report(tl, ReportOptions{});
  std::vector<std::uint32_t> send, recv;
  for (const auto& row : r.rows) {
    if (row.stream == "all") {
      EXPECT_FALSE(row.rank.has_value()) << row.name;
      continue;
    }
    ASSERT_TRUE(row.rank.has_value()) << row.stream;
    EXPECT_EQ(row.stream, fmt::format("rank {} 0x{:08x}/tid{}", *row.rank, board::source_id(*row.rank, 100 + *row.rank),
                                      100 + *row.rank));
    (row.name == "MPI_Send" ? send : recv).push_back(*row.rank);
  }
  EXPECT_EQ(send, (std::vector<std::uint32_t>{0, 1}));  // ranks 0 and 1 sent, in rank order
  EXPECT_EQ(recv, (std::vector<std::uint32_t>{2}));
  ASSERT_EQ(r.threads.size(), 3u);
  for (std::uint32_t k = 0; k < 3; ++k) {
    ASSERT_TRUE(r.threads[k].rank.has_value());
    EXPECT_EQ(*r.threads[k].rank, k);
    EXPECT_EQ(r.threads[k].tid, 100 + k);
  }
  const std::string text = render_text(r, TextOptions{});
  EXPECT_NE(text.find(fmt::format("rank 2 0x{:08x}/tid102", board::source_id(2, 102))), std::string::npos) << text;
  EXPECT_NE(text.find(" rank thread"), std::string::npos) << text;  // the thread summary's rank column
  const auto j = nlohmann::json::parse(render_json(r, false));
  EXPECT_EQ(j["schema"], 2);
  std::size_t ranked = 0;
  for (const auto& row : j["rows"]) {
    if (row["stream"] == "all") continue;
    ++ranked;
    EXPECT_EQ(row["stream"].get<std::string>().rfind(fmt::format("rank {} ", row["rank"].get<int>()), 0), 0u);
    EXPECT_NE(row["stream"].get<std::string>().find(fmt::format("/tid{}", 100 + row["rank"].get<int>())),
              std::string::npos);
  }
  EXPECT_EQ(ranked, 3u);
  for (const auto& t : j["threads"]) EXPECT_EQ(t["rank"].get<int>() + 100, t["tid"].get<int>());
}

TEST_F(MpiExportTest, ExportsNameEachRanksProcessAndStreams) {
  {  // Chrome JSON: a process per rank, named by its rank (and host)
    Merged in = open_inputs(files, InputOptions{});
    Timeline tl(in);
    const std::string out = (dir / "t.json").string();
    std::FILE* f = std::fopen(out.c_str(), "w");
    ASSERT_NE(f, nullptr);
    exports::export_chrome_json(tl, f);
    std::fclose(f);
    std::map<std::uint32_t, std::string> process, thread;
    const auto j = nlohmann::json::parse(std::ifstream(out));
    for (const auto& ev : j["traceEvents"])
      if (ev["ph"] == "M") (ev["name"] == "process_name" ? process : thread)[ev["pid"]] = ev["args"]["name"];
    EXPECT_EQ(process[board::source_id(0, 100)], "rank 0 on host-0 (pid 100)");
    EXPECT_EQ(process[board::source_id(1, 101)], "rank 1 (pid 101)");
    EXPECT_EQ(process[board::source_id(2, 102)], "rank 2 on host-2 (pid 102)");
    EXPECT_EQ(thread[board::source_id(2, 102)], "rank 2 thread 102");
    std::set<std::string> series;  // the snapshots' counter tracks: "hist NAME (rank R thread T, phase P)"
    for (const auto& ev : j["traceEvents"])
      if (ev["ph"] == "C") series.insert(ev["name"].get<std::string>());
    EXPECT_EQ(series,
              (std::set<std::string>{"hist lat (rank 0 thread 100, phase 1)", "hist lat (rank 1 thread 101, phase 1)",
                                     "hist lat (rank 2 thread 102, phase 1)"}));
  }
  {  // CSV: the rank column of every sample is its process's rank
    Merged in = open_inputs(files, InputOptions{});
    Timeline tl(in);
    const std::string out = (dir / "t.csv").string();
    std::FILE* f = std::fopen(out.c_str(), "w");
    ASSERT_NE(f, nullptr);
    exports::export_csv(tl, f);
    std::fclose(f);
    std::ifstream csv(out);
    std::string line;
    std::getline(csv, line);
    ASSERT_EQ(line.substr(line.rfind(',') + 1), "rank");
    std::size_t rows = 0;
    while (std::getline(csv, line)) {
      ++rows;
      const std::size_t c1 = line.find(','), c2 = line.find(',', c1 + 1), c3 = line.find(',', c2 + 1);
      const std::uint32_t source =
          static_cast<std::uint32_t>(std::stoul(line.substr(c2 + 1, c3 - c2 - 1), nullptr, 16));
      EXPECT_EQ(line.substr(line.rfind(',') + 1), std::to_string(board::source_node(source))) << line;
    }
    EXPECT_EQ(rows, 6u);
  }
  {  // CTF: the packet context ends with the stream's rank (CTF 1.8 names no stream)
    Merged in = open_inputs(files, InputOptions{});
    Timeline tl(in);
    const std::string out = (dir / "t.ctf").string();
    std::filesystem::create_directories(out);
    exports::export_ctf(tl, out);
    std::ifstream m(out + "/metadata");
    const std::string meta((std::istreambuf_iterator<char>(m)), std::istreambuf_iterator<char>());
    EXPECT_NE(meta.find("uint8_t by_thread;\n\t\tint32_t rank;\n\t};"), std::string::npos) << meta;
    for (std::uint32_t k = 0; k < 3; ++k) {  // stream_N in order of first samples: ranks 1, 0, 2
      std::ifstream st(out + "/stream_" + std::to_string(k), std::ios::binary);
      std::vector<char> b((std::istreambuf_iterator<char>(st)), std::istreambuf_iterator<char>());
      ASSERT_GE(b.size(), 61u);
      std::uint32_t source = 0;
      std::int32_t rank = -1;
      std::memcpy(&source, b.data() + 48, 4);  // header 8, five u64 40, then source, lane, by_thread, rank
      std::memcpy(&rank, b.data() + 57, 4);
      EXPECT_EQ(rank, static_cast<std::int32_t>(board::source_node(source))) << k;
    }
  }
}

TEST_F(MpiExportTest, InfoOfAMergedFileAndHistOfRankFilesNameEachRank) {
  const std::string merged = (dir / "all.kron").string();
  merge::merge_files(files, merged, merge::MergeOptions{});
  analysis::InputOptions io;
  io.format = InputFormat::Kron;
  {
    Merged in = open_inputs({merged}, io);
    Timeline tl(in);
    const FileSummary fs = summarize_file(tl);
    ASSERT_TRUE(fs.mpi);
    ASSERT_EQ(fs.lane_rank.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {  // each lane's pid is 100 + its rank
      const std::uint32_t pid = fs.file->lanes()[i].pid;
      if (pid == 101) {  // rank 1 wrote no Node entry: a lane names a pid only, which says no rank (E395)
        EXPECT_FALSE(fs.lane_rank[i].has_value());
        continue;
      }
      ASSERT_TRUE(fs.lane_rank[i].has_value()) << i;
      EXPECT_EQ(*fs.lane_rank[i] + 100, pid);
    }
  }
  // kron hist: the rank files' snapshots (kron merge does not carry snapshots over yet).
  Merged in = open_inputs(files, io);
  Timeline tl(in);
  const SnapshotTotals m = merged_snapshots(tl);
  ASSERT_EQ(m.rank_hists.count("lat"), 1u);
  const auto& per_rank = m.rank_hists.at("lat");
  ASSERT_EQ(per_rank.size(), 3u);
  for (const auto& [rank, phases] : per_rank)
    EXPECT_EQ(phases.at(1).count(), rank + 1) << rank;  // rank R: R + 1 values
  EXPECT_EQ(m.hists.at("lat").at(1).count(), 6u);       // and the sum over ranks as before
  const std::string text = render_hist_text(m, HistRenderOptions{});
  EXPECT_NE(text.find("rank 2 phase 1"), std::string::npos) << text;
  const auto j = nlohmann::json::parse(render_hist_json(m, HistRenderOptions{}, 0, 0));
  EXPECT_EQ(j["version"], 2);
  ASSERT_EQ(j["histograms"][0]["ranks"].size(), 3u);
  for (const auto& r : j["histograms"][0]["ranks"]) EXPECT_EQ(r["total"]["count"], r["rank"].get<int>() + 1);
}

// A recording that is not MPI: no rank anywhere (the reference outputs, tests/exports/reference, hold the rest).
TEST(MpiNamesTest, ARecordingThatIsNotMpiHasNoRanks) {
  const auto dir = std::filesystem::temp_directory_path() / ("kron-no-mpi-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string p = (dir / "plain.kron").string();
  {
    tracefile::FileHeader h = tracefile::make_header();
    h.clock_hz = 1'000'000'000;
    tracefile::Writer w(p, h);
    Sample s;
    s.source = board::source_id(2, 102);  // node 2, as a rank's would be: not a rank without an MPI header
    s.thread = 102;
    s.timestamp = 10;
    w.append(s);
    h.passed_filter = 1;
    w.finish(h, {});
  }
  Merged in = open_inputs({p}, InputOptions{});
  Timeline tl(in);
  EXPECT_FALSE(tl.ranks().any());
  EXPECT_FALSE(tl.rank(board::source_id(2, 102)).has_value());
  EXPECT_EQ(tl.stream_label(StreamKey{board::source_id(2, 102), 102, true}), "thread 102");
  EXPECT_EQ(stream_name(StreamKey{board::source_id(2, 102), 102, true}, &tl.ranks()),
            fmt::format("0x{:08x}/tid102", board::source_id(2, 102)));
  std::filesystem::remove_all(dir);
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
    if (std::regex_match(line, m, re) && std::stoi(m[2]) == loc)
      v.push_back(m[1].str() + " " + m[3].str() + " " + m[4].str());
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
  EXPECT_TRUE(std::regex_search(defs, std::regex(R"(LOCATION\s+0\s+Name: "rank 0 thread 100")"))) << defs;
  EXPECT_TRUE(std::regex_search(defs, std::regex(R"(LOCATION\s+2\s+Name: "rank 2 thread 102")"))) << defs;
  // A location group per rank, named by its rank and host (E395); rank 1 wrote no Node entry: no host.
  EXPECT_TRUE(std::regex_search(defs, std::regex(R"re(LOCATION_GROUP\s+\d+\s+Name: "rank 2 on host-2 \(pid 102\)")re")))
      << defs;
  EXPECT_TRUE(std::regex_search(defs, std::regex(R"re(LOCATION_GROUP\s+\d+\s+Name: "rank 1 \(pid 101\)")re"))) << defs;
  // Communicator 7 over world ranks 0 and 2: world rank 2 is its rank 1.
  EXPECT_TRUE(std::regex_search(defs, std::regex(R"(COMM\s+\d+\s+Name: "MPI communicator 7")"))) << defs;
  EXPECT_TRUE(std::regex_search(defs, std::regex(R"(COMM\s+\d+\s+Name: "MPI_COMM_WORLD")"))) << defs;
  EXPECT_TRUE(std::regex_search(defs, std::regex(R"(COMM_GROUP, Paradigm: MPI, Flags: NONE, 2 Members)"))) << defs;
  // Rank 0: the send at its scope's begin time goes after the Enter (E173), the collective after.
  const auto r0 = events_of(print, 0);
  ASSERT_GE(r0.size(), 5u) << print;
  EXPECT_EQ(r0[0].substr(0, 10), "ENTER 1000");
  EXPECT_TRUE(std::regex_search(r0[1], std::regex(R"(^MPI_SEND 1000 Receiver: 1 .*"MPI communicator 7".*Tag: 5)")))
      << r0[1];
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
  EXPECT_TRUE(std::regex_search(r1[1], std::regex(R"(^MPI_SEND 52[01] Receiver: 0 .*"MPI_COMM_WORLD".*Tag: 1)")))
      << r1[1];
  const std::string offsets = run(std::string(KRON_OTF2_PRINT) + " -C " + anchor);
  EXPECT_TRUE(std::regex_search(offsets, std::regex(R"(CLOCK_OFFSET\s+1\s+Time: 2450, Offset: \+40, StdDev: 15)")))
      << offsets;
}

// The calls of the wider surface in OTF2 (ERRATUM E433-E435): a persistent start is a non-blocking send or
// receive (request and completion), a matched receive (MPI_Mrecv) a receive at its end, MPI_Imrecv a
// non-blocking receive, a non-blocking collective its blocking form's operation from posting to completion,
// a `v` collective and MPI_Scan their own operations (the OTF2 standard's OTF2_CollectiveOp).
TEST_F(MpiExportTest, Otf2WritesTheWiderSurfaceAsItsOwnEvents) {
  ASSERT_TRUE(exports::otf2_built_in());
  auto world = [](std::uint32_t r, MpiCall c, std::int32_t peer, std::int32_t tag, std::uint64_t t0, std::uint64_t t1) {
    return call(r, c, 0, 3, peer, tag, t0, t1);
  };
  files[0] = rank_file(0, {},
                       {world(0, MpiCall::PsendStart, 2, 9, 1000, 1100), world(0, MpiCall::Ibcast, 0, 0, 2000, 2300),
                        world(0, MpiCall::Gatherv, 0, 1, 3000, 3100), world(0, MpiCall::Scan, -1, 2, 4000, 4100)},
                       {clock(0, 500, 500, 0)});
  files[2] = rank_file(2, {},
                       {world(2, MpiCall::PrecvStart, 0, 9, 1010, 1200), world(2, MpiCall::Ibcast, 0, 0, 2005, 2310),
                        world(2, MpiCall::Gatherv, 0, 1, 3005, 3110), world(2, MpiCall::Scan, -1, 2, 4005, 4110),
                        world(2, MpiCall::Mrecv, 1, 4, 5000, 5100), world(2, MpiCall::Imrecv, 1, 5, 6000, 6200)},
                       {clock(2, 500, 500, 0)});
  Merged in = open_inputs(files, InputOptions{});
  const std::string out = (dir / "w.otf2").string();
  std::filesystem::create_directories(out);
  Timeline tl(in);
  exports::export_otf2(tl, out);
  const std::string print = run(std::string(KRON_OTF2_PRINT) + " " + out + "/traces.otf2");
  const auto r0 = events_of(print, 0);
  ASSERT_EQ(r0.size(), 8u) << print;
  EXPECT_TRUE(std::regex_search(r0[0], std::regex(R"(^MPI_ISEND 1000 Receiver: 2 .*Tag: 9)"))) << r0[0];
  EXPECT_TRUE(std::regex_search(r0[1], std::regex(R"(^MPI_ISEND_COMPLETE 1100 )"))) << r0[1];
  EXPECT_EQ(r0[2].substr(0, 25), "MPI_COLLECTIVE_BEGIN 2000");
  EXPECT_TRUE(std::regex_search(r0[3], std::regex(R"(^MPI_COLLECTIVE_END 2300 Operation: BCAST.*Root: 0)"))) << r0[3];
  EXPECT_TRUE(std::regex_search(r0[5], std::regex(R"(^MPI_COLLECTIVE_END 3100 Operation: GATHERV)"))) << r0[5];
  EXPECT_TRUE(std::regex_search(r0[7], std::regex(R"(^MPI_COLLECTIVE_END 4100 Operation: SCAN)"))) << r0[7];
  const auto r2 = events_of(print, 2);
  ASSERT_EQ(r2.size(), 11u) << print;
  EXPECT_TRUE(std::regex_search(r2[0], std::regex(R"(^MPI_IRECV_REQUEST 1010 )"))) << r2[0];
  EXPECT_TRUE(std::regex_search(r2[1], std::regex(R"(^MPI_IRECV 1200 Sender: 0 .*Tag: 9)"))) << r2[1];
  EXPECT_TRUE(std::regex_search(r2[3], std::regex(R"(^MPI_COLLECTIVE_END 2310 Operation: BCAST)"))) << r2[3];
  EXPECT_TRUE(std::regex_search(r2[8], std::regex(R"(^MPI_RECV 5100 Sender: 1 .*Tag: 4)"))) << r2[8];
  EXPECT_TRUE(std::regex_search(r2[9], std::regex(R"(^MPI_IRECV_REQUEST 6000 )"))) << r2[9];
  EXPECT_TRUE(std::regex_search(r2[10], std::regex(R"(^MPI_IRECV 6200 Sender: 1 .*Tag: 5)"))) << r2[10];
}
#endif

}  // namespace
}  // namespace kron::analysis
