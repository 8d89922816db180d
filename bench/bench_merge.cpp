// kron merge's rate (goal: 20 M samples/s on one core): four rank files of synthetic samples
// (each rank's clock offset and drift known, a few MPI calls and clock-offset measurements after the
// samples) merged into one file, alignment and the controlled logical clock on. The figure is samples
// merged a second (CPU time of the one merging thread, best of the repetitions); the files are written
// once, in the build tree, and read from the page cache.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/mpi_match.hpp"
#include "merge/clc.hpp"
#include "merge/merge.hpp"
#include "kron/board.hpp"
#include "kron/format/trace_file.hpp"

namespace {

constexpr int kRanks = 4;
constexpr std::uint64_t kSamplesPerRank = 5'000'000;  // 20 M samples in all

const std::vector<std::string>& rank_files() {
  static std::vector<std::string> files = [] {
    std::vector<std::string> f;
    const auto dir = std::filesystem::temp_directory_path() / "kron-bench-merge";
    std::filesystem::create_directories(dir);
    for (int r = 0; r < kRanks; ++r) {
      const std::string p = (dir / ("b.rank-" + std::to_string(r) + ".kron")).string();
      f.push_back(p);
      if (std::filesystem::exists(p)) continue;
      using namespace kron;
      tracefile::FileHeader h = tracefile::make_header();
      h.clock_hz = 1'000'000'000;
      h.mpi_rank = static_cast<std::uint32_t>(r);
      h.mpi_world_size = kRanks;
      const std::uint64_t skew = std::uint64_t(r) * 1'000'000;  // each rank 1 ms further ahead
      h.start_ticks = 1'000'000'000 + skew;
      tracefile::Writer w(p + ".tmp", h);
      Sample s;
      s.source = board::source_id(static_cast<std::uint32_t>(r), 1000u + static_cast<std::uint32_t>(r));
      s.thread = 1000u + static_cast<std::uint32_t>(r);
      for (std::uint64_t i = 0; i < kSamplesPerRank; ++i) {
        s.timestamp = h.start_ticks + i * 50 + std::uint64_t(r) * 7;
        s.data = i;
        w.append(s);
      }
      std::vector<record::ClockOffsetRecord> offs;
      for (std::uint64_t k = 0; k < 3; ++k) {
        record::ClockOffsetRecord c{};
        c.h.kind = record::RecordKind::ClockOffset;
        c.h.size = sizeof c;
        c.rank = static_cast<std::uint32_t>(r);
        c.timestamp = h.start_ticks + k * kSamplesPerRank * 25;
        c.reference = c.timestamp - skew;
        c.rtt = 2000;
        offs.push_back(c);
      }
      w.append_clock(offs);
      h.passed_filter = kSamplesPerRank;
      w.finish(h, {});
      std::filesystem::rename(p + ".tmp", p);
    }
    return f;
  }();
  return files;
}

void BM_MergeFourRanks(benchmark::State& state) {
  const auto& files = rank_files();
  const std::string out = (std::filesystem::temp_directory_path() / "kron-bench-merge" / "all.kron").string();
  std::uint64_t samples = 0;
  for (auto _ : state) {
    const kron::merge::MergeReport r = kron::merge::merge_files(files, out, kron::merge::MergeOptions{});
    samples = r.samples;
    benchmark::DoNotOptimize(samples);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(samples * state.iterations()));
  state.counters["samples"] = double(samples);
  std::filesystem::remove(out);
}
BENCHMARK(BM_MergeFourRanks)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(5)->MeasureProcessCPUTime()
    ->ReportAggregatesOnly(false);

}  // namespace

BENCHMARK_MAIN();
