// NUMAchine monitor model speed: one simulated second of a busy card, 50 MHz with a transaction every other
// cycle (25 million packets through the External Agent, each 2 cycles), every counter configured: GPC0 bus
// cycles, GPC1 transactions under a command watch, GPC2 reads in an address region, GPC3 cycles of one
// phase, and the SRAM counting every response in the Address Mode. Issue: "well under a second".
// Figures: BUILD/bench-numachine.json (numachine_second_ms wall, numachine_second_cpu_ms, numachine_ns_per_packet
// from the CPU time), merged by scripts/bench.sh.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "models/numachine/numachine.hpp"

using namespace kron::numachine;

namespace {

constexpr std::uint64_t kPackets = kCardHz / kPacketCycles;  // one every other cycle for one second

void configure(Numachine& m) {
  m.hardware_reset();
  const auto w = [&](Reg r, std::uint64_t v) { m.write(static_cast<std::uint32_t>(r), v); };
  w(Reg::PW, 1);
  w(Reg::PR, 1);
  w(Reg::CF, cmd::kMask & ~2u);
  w(Reg::CW, cmd::kResponse | cmd::kRead);
  w(Reg::AFhi, 0x0000'00ff'fff0'0000);  // doubleword: AF = 0xff_fff00000
  w(Reg::AWhi, 0x0000'0000'4000'0000 | (std::uint64_t{1} << 32));  // AWhi = 1, AWlo = 0x40000000
  w(Reg::GPCM0, 0x806000);  // event C, cycles
  w(Reg::GPCM1, 0x806408);  // event C, transitions, CW compare
  w(Reg::GPCM2, 0x806420);  // event C, transitions, AW compare
  w(Reg::GPCM3, 0x800880);  // always, PW compare
  w(Reg::SCM, 0x203601);    // mode 2 (Address Mode), event 6, transitions, receiving mask
  w(Reg::GPCE, 0x0000'0001'0000'0001);  // GPCE and SRAMCE
}

// One simulated second: requests and responses in turn, addresses walking through 1 MB blocks.
std::uint64_t one_second(Numachine& m) {
  configure(m);
  for (std::uint64_t i = 0; i < kPackets; ++i) {
    const std::uint64_t addr = (i * 0x9e3779b97f4a7c15ull >> 24) & kAddressMask;
    const bool response = i & 1;
    m.packet(!response, static_cast<std::uint16_t>((response ? cmd::kResponse : 0) | ((i & 2) ? cmd::kReadEx : cmd::kRead)),
             addr);
  }
  return m.gpc(0);
}

void BM_NumachineBusySecond(benchmark::State& state) {
  Numachine m;
  std::uint64_t cycles = 0;
  for (auto _ : state) cycles = one_second(m);
  if (cycles != kPackets * kPacketCycles) state.SkipWithError("GPC0 did not count every bus cycle");
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kPackets));
}
BENCHMARK(BM_NumachineBusySecond)->Unit(benchmark::kMillisecond);

// Floor: the same second with no traffic, one tick.
void BM_NumachineIdleSecond(benchmark::State& state) {
  Numachine m;
  for (auto _ : state) {
    configure(m);
    m.tick(kCardHz);
    benchmark::DoNotOptimize(m.gpc(3));
  }
}
BENCHMARK(BM_NumachineIdleSecond)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // The project figure, measured once more outside the framework: best of three simulated seconds.
  // Wall time, and the process's CPU time beside it: on a shared machine the wall figure includes the time
  // other processes held the CPU.
  Numachine m;
  double best_ms = 1e99, best_cpu_ms = 1e99;
  const auto cpu_now = [] { return static_cast<double>(std::clock()) * 1000.0 / CLOCKS_PER_SEC; };
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_now();
    const std::uint64_t cycles = one_second(m);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double cpu_ms = cpu_now() - c0;
    if (cycles != kPackets * kPacketCycles) continue;
    best_ms = std::min(best_ms, ms);
    best_cpu_ms = std::min(best_cpu_ms, cpu_ms);
  }
  // The binary is BUILD/bench/kron_bench_numachine; the figure goes to BUILD/bench-numachine.json.
  const std::string out =
      (std::filesystem::absolute(argv[0]).lexically_normal().parent_path().parent_path() / "bench-numachine.json").string();
  std::ofstream(out) << "{\"numachine_second_ms\": " << best_ms << ", \"numachine_second_cpu_ms\": " << best_cpu_ms
                     << ", \"numachine_ns_per_packet\": " << best_cpu_ms * 1e6 / kPackets << "}\n";
  std::printf("one simulated second of a busy card (50 MHz, %llu packets): %.1f ms (%.1f ms CPU) -> %s\n",
              static_cast<unsigned long long>(kPackets), best_ms, best_cpu_ms, out.c_str());
  return 0;
}
