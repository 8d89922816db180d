// kron merge keeps every field of a sample but its timestamp (put on the common timeline) and a named
// sample's id (renumbered in the merged name table): phases, cpus, groups, flags, threads, sources, data and
// counters of phased samples on two and on three ranks come out as their rank files hold them (DECISION D1:
// the merge encodes through the one codec; trace format 1.4, ERRATUM E180).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "kron/board.hpp"
#include "kron/core/record.hpp"
#include "kron/format/trace_file.hpp"
#include "merge/merge.hpp"
#include "support/mpi_records.hpp"

namespace kron::merge {
namespace {

class MergeFieldsTest : public ::testing::Test {
 protected:
  std::filesystem::path dir;
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("kron-merge-fields-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  // Rank `rank`'s samples: phases 0, 1, 2 and 65535, cpus 0, 1 and 1023, two threads, every group, named and
  // plain, Resource samples with extreme counters.
  static std::vector<Sample> samples_of(std::uint32_t rank, int n) {
    std::vector<Sample> v;
    const std::uint16_t phases[] = {0, 1, 2, 0xffff}, cpus[] = {0, 1, 1023};
    for (int i = 0; i < n; ++i) {
      Sample s;
      s.type = i % 7 == 3 ? SampleType::Resource : SampleType::Trace;
      s.source = board::source_id(rank, 100 + rank);
      s.thread = (i % 2 ? record::kThreadMask - rank : 100 + rank);
      s.phase = phases[(i / 3 + rank) % 4];
      s.cpu = cpus[(i + rank) % 3];
      s.group = static_cast<std::uint8_t>(i % 16);
      s.timestamp = 1000 + std::uint64_t(i) * 10 + rank;
      const bool named = i % 5 == 1;
      s.flags = static_cast<std::uint8_t>(named ? kFlagNamed : i % 4 == 0 ? kFlagFifoOverrun : 0);
      s.data = named ? record::named_data(3 + rank, std::uint64_t(i)) : ~std::uint64_t{0} - std::uint64_t(i);
      if (s.is_resource())
        for (unsigned c = 0; c < kResourceCounters; ++c) s.counters[c] = c % 2 ? ~std::uint64_t{0} : c * rank;
      v.push_back(s);
    }
    return v;
  }
  std::string rank_file(std::uint32_t rank, std::uint32_t world, const std::vector<Sample>& v) {
    const std::string p = (dir / ("f.rank-" + std::to_string(rank) + ".kron")).string();
    tracefile::FileHeader h = tracefile::make_header();
    h.clock_hz = 1'000'000'000;
    h.start_ticks = 1000;
    h.node = rank;
    h.mpi_rank = rank;
    h.mpi_world_size = world;
    tracefile::Writer w(p, h);
    for (const Sample& s : v) w.append(s);
    const std::vector<record::ClockOffsetRecord> offs = {testing::clock_offset(rank, 1000, 1000, 0)};
    w.append_clock(offs);  // one measurement: offset 0
    h.passed_filter = v.size();
    record::NameRecord nr{};
    nr.h.kind = record::RecordKind::Names;
    nr.h.size = sizeof nr;
    nr.name_kind = record::NameKind::Event;
    nr.id = static_cast<std::uint16_t>(3 + rank);
    std::snprintf(nr.name, sizeof nr.name, "%s", "step");
    const record::NameRecord names[] = {nr};
    w.finish(h, {}, names);
    return p;
  }

  // Every field but the timestamp and a named sample's id, keyed by (source, rank-local timestamp order).
  void expect_merged_equal(std::uint32_t world) {
    std::vector<std::string> files;
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, Sample> want;
    for (std::uint32_t r = 0; r < world; ++r) {
      const auto v = samples_of(r, 300);
      files.push_back(rank_file(r, world, v));
      for (const Sample& s : v) want[{s.source, s.thread, record::named_value_of(s.data)}] = s;
    }
    const std::string out = (dir / "all.kron").string();
    merge_files(files, out, MergeOptions{});
    tracefile::Reader rd(out);
    tracefile::NameTable names;
    for (const auto& nr : rd.names()) names.add(nr);
    Sample s;
    std::uint64_t n = 0;
    while (rd.next(s)) {
      const auto it = want.find({s.source, s.thread, record::named_value_of(s.data)});
      ASSERT_NE(it, want.end()) << "a sample no rank file holds: source " << s.source << " thread " << s.thread;
      Sample w = it->second;
      EXPECT_EQ(s.phase, w.phase);
      EXPECT_EQ(s.cpu, w.cpu);
      if (s.flags & kFlagNamed) {
        EXPECT_EQ(names.name_of(s), "step");
        w.data = s.data;  // the id is the merged table's
      }
      w.timestamp = s.timestamp;  // on the common timeline
      EXPECT_EQ(s, w) << "phase " << w.phase << " cpu " << w.cpu;
      ++n;
    }
    EXPECT_EQ(n, want.size());
  }
};

TEST_F(MergeFieldsTest, PhasesCpusAndEveryOtherFieldOfTwoRanksComeOutAsRecorded) { expect_merged_equal(2); }
TEST_F(MergeFieldsTest, PhasesCpusAndEveryOtherFieldOfThreeRanksComeOutAsRecorded) { expect_merged_equal(3); }

}  // namespace
}  // namespace kron::merge
