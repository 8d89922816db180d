// Speed of the first MultiKron model and of the PCI board model, side by side with their peer (the
// MultiKron II model alone) and a floor (the same simulated second with no sample):
//   mk1:  one simulated second of a 50 MHz first MultiKron taking a million Trace samples (one trigger
//         every 50 node clocks; each 16-byte sample leaves in 32).
//   pcib: one simulated second of the PCI board at 40 MHz taking 500,000 Trace samples (one every 80 node
//         clocks) through its MultiKron II, board FIFO and local memory (circular buffer).
// Figures: BUILD/bench-mk1pcib.json (mk1_second_ms, pcib_second_ms), merged by scripts/bench.sh.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "models/mk1/mk1.hpp"
#include "models/mk2/mk2.hpp"
#include "models/pcib/pcib.hpp"

namespace {

template <class Chip>
std::uint64_t chip_second(Chip& chip, bool sample, std::uint64_t samples, std::uint64_t period) {
  std::uint64_t sent = 0;
  chip.on_sample = [&](const kron::sim::SampleOut&) { ++sent; };
  chip.hardware_reset();
  chip.write(1, 1);       // CSR: Enable Sampling (001 Table 2 / 000 Table B1)
  chip.write(4, 0xffff);  // Filter Register
  const std::uint64_t start = chip.now();
  for (std::uint64_t i = 0; i < samples; ++i) {
    if (sample) chip.write(96 + (i & 15), i);
    chip.tick(start + (i + 1) * period - chip.now());
  }
  chip.drain();
  return sent;
}

std::uint64_t board_second(kron::pcib::PciBoard& b, bool sample) {
  constexpr std::uint64_t kSamples = 500'000, kPeriod = 80;
  std::uint64_t sent = 0;
  b.on_sample = [&](const kron::sim::SampleOut&) { ++sent; };
  b.hardware_reset();
  b.write(0x1204, 0x003201);  // 003 default configuration
  b.write(0x1004, 1);
  b.write(0x1010, 0xffff);
  const std::uint64_t start = b.now();
  for (std::uint64_t i = 0; i < kSamples; ++i) {
    if (sample) b.write(static_cast<std::uint32_t>(0x1180 + 4 * (i & 15)), i);
    b.tick(start + (i + 1) * kPeriod - b.now());
  }
  b.drain();
  return sent;
}

void BM_Mk1SecondMillionSamples(benchmark::State& state) {
  kron::mk1::Mk1 chip;
  std::uint64_t sent = 0;
  for (auto _ : state) sent = chip_second(chip, true, 1'000'000, 50);
  if (sent != 1'000'000) state.SkipWithError("not every sample left the chip");
  state.SetItemsProcessed(state.iterations() * 1'000'000);
}
BENCHMARK(BM_Mk1SecondMillionSamples)->Unit(benchmark::kMillisecond);

void BM_Mk1SecondIdle(benchmark::State& state) {  // floor
  kron::mk1::Mk1 chip;
  for (auto _ : state) benchmark::DoNotOptimize(chip_second(chip, false, 1'000'000, 50));
}
BENCHMARK(BM_Mk1SecondIdle)->Unit(benchmark::kMillisecond);

void BM_Mk2PeerSecondMillionSamples(benchmark::State& state) {  // peer
  kron::mk2::Mk2 chip;
  std::uint64_t sent = 0;
  for (auto _ : state) sent = chip_second(chip, true, 1'000'000, 50);
  if (sent != 1'000'000) state.SkipWithError("not every sample left the chip");
}
BENCHMARK(BM_Mk2PeerSecondMillionSamples)->Unit(benchmark::kMillisecond);

void BM_PcibSecondHalfMillionSamples(benchmark::State& state) {
  kron::pcib::PciBoard b;
  std::uint64_t sent = 0;
  for (auto _ : state) sent = board_second(b, true);
  if (sent != 500'000) state.SkipWithError("not every sample reached memory");
  state.SetItemsProcessed(state.iterations() * 500'000);
}
BENCHMARK(BM_PcibSecondHalfMillionSamples)->Unit(benchmark::kMillisecond);

void BM_PcibSecondIdle(benchmark::State& state) {  // floor
  kron::pcib::PciBoard b;
  for (auto _ : state) benchmark::DoNotOptimize(board_second(b, false));
}
BENCHMARK(BM_PcibSecondIdle)->Unit(benchmark::kMillisecond);

template <class F>
double best_ms(F f) {
  double best = 1e99;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  kron::mk1::Mk1 chip;
  kron::pcib::PciBoard board;
  const double mk1 = best_ms([&] { chip_second(chip, true, 1'000'000, 50); });
  const double pcib = best_ms([&] { board_second(board, true); });
  const std::string out =
      (std::filesystem::absolute(argv[0]).lexically_normal().parent_path().parent_path() / "bench-mk1pcib.json").string();
  std::ofstream(out) << "{\"mk1_second_ms\": " << mk1 << ", \"pcib_second_ms\": " << pcib << "}\n";
  std::printf("mk1: one simulated second, 1M samples: %.1f ms; pcib: one simulated second, 500k samples: %.1f ms -> %s\n",
              mk1, pcib, out.c_str());
  return 0;
}
