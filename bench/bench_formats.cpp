// Classic sample encode/decode throughput (the expand/rdsample inner loop).
#include <benchmark/benchmark.h>

#include "kron/format/classic.hpp"

using namespace kron;
using namespace kron::classic;

static void BM_Mk2DecodeTrace(benchmark::State& state) {
  Sample s;
  s.timestamp = 123456789;
  s.data = 42;
  const auto bytes = encode(Chip::Mk2, s);
  Sample out;
  for (auto _ : state) {
    benchmark::DoNotOptimize(decode(Chip::Mk2, bytes, out));
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}
BENCHMARK(BM_Mk2DecodeTrace);

static void BM_Mk2EncodeResource(benchmark::State& state) {
  Sample s;
  s.type = SampleType::Resource;
  std::uint8_t out[kMaxSampleBytes];
  for (auto _ : state) {
    s.timestamp++;
    benchmark::DoNotOptimize(encode(Chip::Mk2, s, out));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Mk2EncodeResource);

BENCHMARK_MAIN();
