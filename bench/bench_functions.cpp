// bench_functions (make bench): the function hooks' cost per hooked call (src/functions/hooks.cpp), side by
// side in one run with a hand-written named scope around the same work and with the bare call:
//   plain_call_ns     a noinline call of a small function, no probe
//   hooked_call_ns    the same function compiled with -finstrument-functions (functions/hooked.c): entry and exit
//                     recorded by the hooks (two records a call)
//   scope_call_ns     the same function with KRON_SCOPE_V("bench fn", x) inside (two records a call)
//   hooked_off_ns     the hooked call with the functions' group filtered out: the hooks' no-board path (one test)
// Each figure is the median of several batches of this thread's CPU time, lanes drained between batches
// (untimed). Prints a table and writes BUILD/bench-functions.json (BUILD = the directory above this program).
#include <fmt/core.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kron/board_ops.hpp"
#include "kron/kron.hpp"
#include "kron/mk.h"
#include "recorder/board_reader.hpp"

extern "C" std::uint64_t hooked_leaf(std::uint64_t x);

namespace {

constexpr std::uint64_t kBatch = 200000;
constexpr int kReps = 9;

__attribute__((noinline)) std::uint64_t plain_leaf(std::uint64_t x) {
  __asm__ volatile("" : "+r"(x));
  return x * 2654435761u + 1;
}
__attribute__((noinline)) std::uint64_t scoped_leaf(std::uint64_t x) {
  KRON_SCOPE_V("bench fn", x);
  __asm__ volatile("" : "+r"(x));
  return x * 2654435761u + 1;
}

std::uint64_t g_sink = 0;
template <std::uint64_t (*F)(std::uint64_t)>
__attribute__((noinline)) void batch(std::uint64_t n) {
  std::uint64_t s = 0;
  for (std::uint64_t i = 0; i < n; ++i) s += F(i);
  g_sink += s;
}

std::uint64_t cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}
double measure(const std::function<void()>& run, const std::function<void()>& between) {
  std::vector<double> v;
  for (int r = 0; r < kReps; ++r) {
    between();
    const std::uint64_t t0 = cpu_ns();
    run();
    v.push_back(double(cpu_ns() - t0) / double(kBatch));
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int, char** argv) {
  namespace board = kron::board;
  const std::string name = "bench-fn-" + std::to_string(::getpid());
  board::CreateOptions o;
  o.name = name;
  o.size = 64ull << 20;  // a batch (two records a call) never fills a lane
  o.lanes = 4;
  std::string err;
  board::Mapping m = board::Mapping::create(o, &err);
  if (!m) {
    fmt::print(stderr, "bench_functions: {}\n", err);
    return 1;
  }
  if (!kron::attach(name.c_str())) return 1;
  auto reader = kron::recorder::BoardReader::open(name);
  auto drain = [&] { reader.drain(nullptr, nullptr); };
  batch<plain_leaf>(kBatch), batch<hooked_leaf>(kBatch), batch<scoped_leaf>(kBatch);  // warm, sites registered
  drain();
  const double plain_ns = measure([] { batch<plain_leaf>(kBatch); }, [] {});
  const double hooked_ns = measure([] { batch<hooked_leaf>(kBatch); }, drain);
  const double scope_ns = measure([] { batch<scoped_leaf>(kBatch); }, drain);
  mk_set_filter(0xfffe);  // group 0 (the functions' and the named probes') filtered out
  const double off_ns = measure([] { batch<hooked_leaf>(kBatch); }, [] {});
  mk_set_filter(0xffff);
  const double plain_after_ns = measure([] { batch<plain_leaf>(kBatch); }, [] {});
  const double hooked_after_ns = measure([] { batch<hooked_leaf>(kBatch); }, drain);
  const double scope_after_ns = measure([] { batch<scoped_leaf>(kBatch); }, drain);
  drain();
  board::unlink(name, nullptr);

  const double plain = std::min(plain_ns, plain_after_ns), hooked = std::min(hooked_ns, hooked_after_ns),
               scope = std::min(scope_ns, scope_after_ns);
  fmt::print("\nkron function hooks, one run, same machine (median of {} batches of {} calls; better of two rounds)\n",
             kReps, kBatch);
  fmt::print("{:<52} {:>10}\n", "measurement", "ns/call");
  fmt::print("{:<52} {:>10.2f}\n", "plain call (no probe)", plain);
  fmt::print("{:<52} {:>10.2f}   +{:.2f} over the plain call\n", "hooked call (-finstrument-functions, 2 records)",
             hooked, hooked - plain);
  fmt::print("{:<52} {:>10.2f}   +{:.2f} over the plain call\n", "hand-written KRON_SCOPE_V in the call (2 records)",
             scope, scope - plain);
  fmt::print("{:<52} {:>10.2f}   {:.2f}x the scope's cost (goal: close to 1)\n", "hooks' cost / named scope's cost",
             (hooked - plain) / (scope - plain), (hooked - plain) / (scope - plain));
  fmt::print("{:<52} {:>10.2f}   +{:.2f} over the plain call\n", "hooked call, group filtered out (no-board path)",
             off_ns, off_ns - plain);
  const std::filesystem::path build = std::filesystem::absolute(argv[0]).parent_path().parent_path();
  nlohmann::json j = {{"functions_plain_call_ns", plain},
                      {"functions_hooked_call_ns", hooked},
                      {"functions_scope_call_ns", scope},
                      {"functions_hooked_off_ns", off_ns},
                      {"functions_hooked_over_scope", (hooked - plain) / (scope - plain)}};
  std::ofstream(build / "bench-functions.json") << j.dump(1) << "\n";
  return g_sink == 42 ? 2 : 0;
}
