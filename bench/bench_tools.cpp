// The analysis tools' speed ("Fast"): `kron rpt` and `kron expand` over a large kron trace file
// against the floor `cat FILE > /dev/null`, in the same run, with peak memory at two file sizes (memory
// must stay flat), and expand against a second floor, `head -c BYTES /dev/zero > /dev/null` (producing
// and writing as many bytes as expand prints). Wall and CPU (user + system) time of each child. Writes
// BUILD/bench-tools.json (top-level keys tools_*), then runs the in-process
// Google Benchmarks of the inner loops.
//
//   build/bench/kron_bench_tools                  (1 GiB trace; KRON_BENCH_TOOLS_MIB=N for another size)
//
// The trace: four streams (source, cpu), events of every interval class of 003 section 3.5 and some
// other events, one Resource sample in 64. The file is written next to the binary and removed after.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/expand.hpp"
#include "analysis/input.hpp"
#include "analysis/interval_info.hpp"
#include "analysis/rpt.hpp"
#include "kron/format/trace_file.hpp"
#include "support/run_child.hpp"


using namespace kron;
using namespace kron::analysis;
namespace fs = std::filesystem;

namespace {

const char* kInfo =
    "1 10 20 \"loop body\"\n"
    "2 81 82 83 \"if then\" \"if else\"\n"
    "3 8 17 12 \"process input\" \"write output\"\n"
    "4 27 36 \"message timer\"\n";

// A deterministic event pattern: each stream cycles through class 1, 2, 3 and 4 events and others.
Sample synth(std::uint64_t i) {
  static constexpr std::uint64_t kPattern[] = {10, 81, 82, 8, 17, 12, 27, 20, 5, 81, 83, 36, 7, 10, 20, 99};
  Sample s;
  const unsigned stream = static_cast<unsigned>(i & 3);
  s.source = 0x00010000u + stream;
  s.cpu = static_cast<std::uint16_t>(stream);
  s.thread = 1000 + stream;
  s.group = static_cast<std::uint8_t>(i & 15);
  s.timestamp = 1000 + i * 7 + ((i * 2654435761u) >> 28);  // increasing, with jitter below one step
  s.data = kPattern[(i >> 2) % std::size(kPattern)];
  if ((i & 63) == 63) {
    s.type = SampleType::Resource;
    for (unsigned c = 0; c < kResourceCounters; ++c) s.counters[c] = i * (c + 1);
  }
  return s;
}

// `time_ordered`: set the 1.1 flag `kron record` sets (the samples are in order), so the tools read the
// file without their reorder window, as they read a recording; without it they go through the window.
std::uint64_t write_trace(const fs::path& p, std::uint64_t bytes, bool time_ordered) {
  auto h = tracefile::make_header();
  h.clock_hz = 10'000'000;
  tracefile::Writer w(p.string(), h);
  std::uint64_t i = 0;
  while (w.bytes() < bytes) w.append(synth(i++));
  if (time_ordered) h.flags |= tracefile::kFlagTimeOrdered;
  w.finish(h, {});
  return i;
}

RunResult best_of(int n, const std::vector<std::string>& args) {
  RunResult best{1e30, 1e30, 0};
  for (int k = 0; k < n; ++k) {
    const auto r = run(args);
    if (r.seconds < best.seconds) best.seconds = r.seconds;
    if (r.cpu_seconds < best.cpu_seconds) best.cpu_seconds = r.cpu_seconds;
    if (r.maxrss_kib > best.maxrss_kib) best.maxrss_kib = r.maxrss_kib;
  }
  return best;
}

// Bytes `kron expand` prints for the file (default options), counted in-process with the same code.
std::uint64_t expand_bytes(const fs::path& p) {
  Merged in = open_inputs({p.string()}, {});
  Expander ex({}, classic::Chip::Mk2, true, in.ts_mask());
  std::vector<Sample> batch(256);
  std::vector<char> line(Expander::kMaxLine);
  std::uint64_t total = 0;
  while (const std::size_t n = in.next_batch(batch))
    for (std::size_t k = 0; k < n; ++k) total += static_cast<std::uint64_t>(ex.line(batch[k], line.data()) - line.data());
  return total;
}

void tool_figures(const fs::path& build) {
  const char* mib_env = std::getenv("KRON_BENCH_TOOLS_MIB");
  const std::uint64_t mib = mib_env ? std::strtoull(mib_env, nullptr, 10) : 1024;
  const std::string kron = (build / "kron").string();
  const fs::path big = build / "bench-tools-big.kron", small = build / "bench-tools-small.kron",
                 info = build / "bench-tools-interval.info";
  std::ofstream(info) << kInfo;
  std::printf("== kron rpt / kron expand over a %llu MiB trace (writing it...)\n",
              static_cast<unsigned long long>(mib));
  std::fflush(stdout);
  const std::uint64_t samples = write_trace(big, mib << 20, true);
  const std::uint64_t small_samples = write_trace(small, (mib << 20) / 4, true);
  const fs::path unflagged = build / "bench-tools-unflagged.kron";
  write_trace(unflagged, (mib << 20) / 4, false);
  const double bytes = static_cast<double>(fs::file_size(big));
  run({"cat", big.string()});  // warm the page cache: every run below reads from memory
  const auto cat = best_of(3, {"cat", big.string()});
  const auto rpt = best_of(3, {kron, "rpt", "-f", info.string(), big.string()});
  const auto rpt_small = best_of(1, {kron, "rpt", "-f", info.string(), small.string()});
  // The same quarter-size samples in a file that does not vouch for its order: through the window.
  const auto rpt_window = best_of(2, {kron, "rpt", "-f", info.string(), unflagged.string()});
  const auto rpt_h = best_of(2, {kron, "rpt", "-s", "-h", "-f", info.string(), big.string()});
  const auto expand = best_of(2, {kron, "expand", big.string()});
  const auto expand_small = best_of(1, {kron, "expand", small.string()});
  // expand's fair floor: producing as many bytes as it prints (2-3 per byte of trace) and writing them
  // to the same /dev/null: `head -c BYTES /dev/zero`.
  const std::uint64_t text_bytes = expand_bytes(big);
  const auto write_floor = best_of(3, {"head", "-c", std::to_string(text_bytes), "/dev/zero"});
  fs::remove(big);
  fs::remove(small);
  fs::remove(unflagged);
  fs::remove(info);
  const double n = static_cast<double>(samples);
  std::printf("file %.0f bytes, %llu samples (%llu in the quarter-size file)\n", bytes,
              static_cast<unsigned long long>(samples), static_cast<unsigned long long>(small_samples));
  auto line = [&](const char* what, const RunResult& r, const RunResult& floor, const char* floor_name) {
    std::printf("%-22s %7.3f s wall %7.3f s cpu  %7.1f Msamples/s  %5.2fx %s (cpu %5.2fx)  peak RSS %ld KiB\n", what,
                r.seconds, r.cpu_seconds, n / r.seconds / 1e6, r.seconds / floor.seconds, floor_name,
                r.cpu_seconds / floor.cpu_seconds, r.maxrss_kib);
  };
  std::printf("cat > /dev/null        %7.3f s wall %7.3f s cpu  %8.1f MB/s\n", cat.seconds, cat.cpu_seconds,
              bytes / cat.seconds / 1e6);
  std::printf("head -c %llu /dev/zero (expand's write floor) %7.3f s wall %7.3f s cpu\n",
              static_cast<unsigned long long>(text_bytes), write_floor.seconds, write_floor.cpu_seconds);
  line("kron rpt", rpt, cat, "cat");
  line("kron rpt -s -h", rpt_h, cat, "cat");
  line("kron expand", expand, cat, "cat");
  line("kron expand", expand, write_floor, "write floor");
  std::printf("kron rpt, quarter-size file: time-ordered %.3f s cpu, through the reorder window %.3f s cpu "
              "(%.1f ns a sample more)\n",
              rpt_small.cpu_seconds, rpt_window.cpu_seconds,
              (rpt_window.cpu_seconds - rpt_small.cpu_seconds) / static_cast<double>(small_samples) * 1e9);
  std::printf("peak RSS at a quarter of the size: rpt %ld KiB, expand %ld KiB\n", rpt_small.maxrss_kib,
              expand_small.maxrss_kib);
  std::ofstream out(build / "bench-tools.json");
  out << "{\n"
      << " \"tools_file_bytes\": " << static_cast<std::uint64_t>(bytes) << ",\n"
      << " \"tools_samples\": " << samples << ",\n"
      << " \"tools_cat_s\": " << cat.seconds << ",\n"
      << " \"tools_cat_cpu_s\": " << cat.cpu_seconds << ",\n"
      << " \"tools_rpt_s\": " << rpt.seconds << ",\n"
      << " \"tools_rpt_cpu_s\": " << rpt.cpu_seconds << ",\n"
      << " \"tools_rpt_samples_per_s\": " << n / rpt.seconds << ",\n"
      << " \"tools_rpt_ratio_to_cat\": " << rpt.seconds / cat.seconds << ",\n"
      << " \"tools_rpt_maxrss_kib\": " << rpt.maxrss_kib << ",\n"
      << " \"tools_rpt_maxrss_kib_quarter_file\": " << rpt_small.maxrss_kib << ",\n"
      << " \"tools_rpt_quarter_cpu_s\": " << rpt_small.cpu_seconds << ",\n"
      << " \"tools_rpt_quarter_window_cpu_s\": " << rpt_window.cpu_seconds << ",\n"
      << " \"tools_rpt_hist_s\": " << rpt_h.seconds << ",\n"
      << " \"tools_rpt_hist_ratio_to_cat\": " << rpt_h.seconds / cat.seconds << ",\n"
      << " \"tools_expand_s\": " << expand.seconds << ",\n"
      << " \"tools_expand_cpu_s\": " << expand.cpu_seconds << ",\n"
      << " \"tools_expand_samples_per_s\": " << n / expand.seconds << ",\n"
      << " \"tools_expand_ratio_to_cat\": " << expand.seconds / cat.seconds << ",\n"
      << " \"tools_expand_output_bytes\": " << text_bytes << ",\n"
      << " \"tools_write_floor_s\": " << write_floor.seconds << ",\n"
      << " \"tools_expand_ratio_to_write_floor\": " << expand.seconds / write_floor.seconds << ",\n"
      << " \"tools_expand_maxrss_kib\": " << expand.maxrss_kib << ",\n"
      << " \"tools_expand_maxrss_kib_quarter_file\": " << expand_small.maxrss_kib << "\n"
      << "}\n";
  std::printf("wrote %s\n", (build / "bench-tools.json").c_str());
}

// ---- In-process inner loops ----------------------------------------------------------------------

void BM_MatcherFeed(benchmark::State& state) {
  const auto info = parse_interval_info(kInfo, "bench");
  Matcher m(info, {}, ~std::uint64_t{0});
  std::vector<Sample> v;
  for (std::uint64_t i = 0; i < 4096; ++i) v.push_back(synth(i));
  std::size_t k = 0;
  for (auto _ : state) {
    m.feed(v[k]);
    k = (k + 1) & 4095;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MatcherFeed);

void BM_ExpandLine(benchmark::State& state) {
  Expander ex({}, classic::Chip::Mk2, true, ~std::uint64_t{0});
  std::string out;
  out.reserve(1 << 16);
  std::uint64_t i = 0;
  for (auto _ : state) {
    ex.line(synth(i++), out);
    if (out.size() > 60000) out.clear();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExpandLine);

void BM_Mk2StreamRead(benchmark::State& state) {
  std::vector<std::uint8_t> bytes;
  for (std::uint64_t i = 0; i < 4096; ++i) {
    const auto b = classic::encode(classic::Chip::Mk2, synth(i));
    bytes.insert(bytes.end(), b.begin(), b.end());
  }
  Sample s;
  std::int64_t n = 0;
  for (auto _ : state) {
    ClassicStream in("bench", classic::Chip::Mk2, bytes, 10'000'000);
    while (in.next(s)) ++n;
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(n);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}
BENCHMARK(BM_Mk2StreamRead);

}  // namespace

int main(int argc, char** argv) {
  const fs::path build = fs::canonical("/proc/self/exe").parent_path().parent_path();  // BUILD/bench/x
  tool_figures(build);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
