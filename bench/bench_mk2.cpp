// MultiKron II model speed: one simulated second of a 50 MHz chip taking a million Trace samples
// (one trigger every 50 node clocks, the network sending each in 40), against a floor of the same
// second with no samples (tick only). The goal: well under a second.
// Figures: BUILD/bench-mk2.json (mk2_second_ms, mk2_ns_per_sample), merged by scripts/bench.sh.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "models/mk2/mk2.hpp"

using kron::mk2::Mk2;

namespace {

constexpr std::uint64_t kNodeHz = 50'000'000;
constexpr std::uint64_t kSamples = 1'000'000;
constexpr std::uint64_t kPeriod = kNodeHz / kSamples;  // node clocks between triggers

// step = 0: tick straight to the next trigger (events); step = 1: tick one node clock at a time, the way a
// model that steps idle clocks would (the peer).
std::uint64_t one_second(Mk2& chip, bool sample, std::uint64_t step = 0) {
  std::uint64_t sent = 0;
  chip.on_sample = [&](const kron::sim::SampleOut&) { ++sent; };
  chip.hardware_reset();
  chip.write(1, 1);       // CSR: Enable Sampling
  chip.write(4, 0xffff);  // Filter Register: every level
  const std::uint64_t start = chip.now();
  for (std::uint64_t i = 0; i < kSamples; ++i) {
    if (sample) chip.write(96 + (i & 15), i);  // Trace trigger, filter level i mod 16
    const std::uint64_t next = start + (i + 1) * kPeriod;
    if (step == 0) chip.tick(next - chip.now());
    else
      while (chip.now() < next) chip.tick(step);
  }
  chip.drain();
  return sent;
}

void BM_Mk2SecondMillionSamples(benchmark::State& state) {
  Mk2 chip;
  std::uint64_t sent = 0;
  for (auto _ : state) sent = one_second(chip, true);
  if (sent != kSamples) state.SkipWithError("not every sample left the chip");
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kSamples));
}
BENCHMARK(BM_Mk2SecondMillionSamples)->Unit(benchmark::kMillisecond);

// Floor: the same loop of ticks with no sample, so the figure above shows what sampling costs.
void BM_Mk2SecondIdle(benchmark::State& state) {
  Mk2 chip;
  for (auto _ : state) benchmark::DoNotOptimize(one_second(chip, false));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kSamples));
}
BENCHMARK(BM_Mk2SecondIdle)->Unit(benchmark::kMillisecond);

// Peer: the same second stepped one node clock at a time (50 million tick calls).
void BM_Mk2SecondStepped(benchmark::State& state) {
  Mk2 chip;
  std::uint64_t sent = 0;
  for (auto _ : state) sent = one_second(chip, true, 1);
  if (sent != kSamples) state.SkipWithError("not every sample left the chip");
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kSamples));
}
BENCHMARK(BM_Mk2SecondStepped)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // The project figure, measured once more outside the framework: best of three simulated seconds.
  Mk2 chip;
  double best_ms = 1e99;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::uint64_t sent = one_second(chip, true);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (sent == kSamples && ms < best_ms) best_ms = ms;
  }
  // The binary is BUILD/bench/kron_bench_mk2; the figure goes to BUILD/bench-mk2.json.
  const std::string out = (std::filesystem::absolute(argv[0]).lexically_normal().parent_path().parent_path() / "bench-mk2.json").string();
  std::ofstream(out) << "{\"mk2_second_ms\": " << best_ms << ", \"mk2_ns_per_sample\": " << best_ms * 1e6 / kSamples
                     << "}\n";
  std::printf("one simulated second (50 MHz, %llu samples): %.1f ms -> %s\n", static_cast<unsigned long long>(kSamples),
              best_ms, out.c_str());
  return 0;
}
