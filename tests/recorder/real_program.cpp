// A program as a user would record it (tests/recorder/real_program_test.sh): it writes to its standard
// output, runs threads, blocks and computes. Modes:
//   bytes N       N bytes of every value 0-255 (a fixed pseudo-random sequence) to standard output, in
//                 chunks, a Trace sample around each chunk (group 1, data 1 / 2)
//   threads T M   T threads alive at once, each M Trace samples (group 1, data 7)
//   work N        N times: a computing interval (events 10-11) and a sleeping one (events 12-13) of about
//                 2 ms each, both ends Resource samples (on-CPU time from a task-clock counter)
//   hold S        S seconds asleep after one Trace sample (kron status while it runs)
//   badcell N     N Trace samples and a virtual counter, then its statistics cell's descriptor is scribbled
//                 with an unknown kind (a stray store: kron record must name the cell and exit 1)
//   spin N        N times: 1 ms asleep, then 50 us computing inside the named scope "spin" (on a CPU all
//                 along: its on-CPU share from the context switches is 1 where switches and probes share
//                 one clock; tests/recorder/clock_test.cpp)
#include <kron/kron.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <string>
#include <thread>
#include <vector>

namespace {

std::uint64_t next(std::uint64_t& x) {  // splitmix64: the same bytes every run
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int bytes(std::uint64_t n) {
  std::uint64_t seed = 42;
  std::vector<unsigned char> chunk(4096);
  while (n) {
    const std::size_t k = n < chunk.size() ? static_cast<std::size_t>(n) : chunk.size();
    for (std::size_t i = 0; i < k; ++i) chunk[i] = static_cast<unsigned char>(next(seed));
    kron::trace(1, 1);
    if (std::fwrite(chunk.data(), 1, k, stdout) != k) return 1;
    kron::trace(1, 2);
    n -= k;
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

int threads(unsigned t, unsigned m) {
  // All T threads are alive from before the first probe of any to after the last probe of all: a thread
  // that claimed a lane holds it all along, so with fewer lanes than T the others find none.
  std::latch start(t), done(t);
  std::vector<std::thread> ts;
  for (unsigned i = 0; i < t; ++i)
    ts.emplace_back([&, m] {
      start.arrive_and_wait();
      for (unsigned k = 0; k < m; ++k) kron::trace(1, 7);
      done.arrive_and_wait();
    });
  for (auto& x : ts) x.join();
  return 0;
}

int work(unsigned n) {
  volatile std::uint64_t sink = 0;
  for (unsigned i = 0; i < n; ++i) {
    kron::resource(1, 10);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    std::uint64_t x = i;
    while (std::chrono::steady_clock::now() < until) sink = sink + next(x);
    kron::resource(1, 11);
    kron::resource(1, 12);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    kron::resource(1, 13);
  }
  return 0;
}

int spin(unsigned n) {
  volatile std::uint64_t sink = 0;
  for (unsigned i = 0; i < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    KRON_SCOPE("spin");
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    std::uint64_t x = i;
    while (std::chrono::steady_clock::now() < until) sink = sink + next(x);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const auto arg = [&](int i) { return argc > i ? std::strtoull(argv[i], nullptr, 10) : 0ull; };
  if (mode == "bytes") return bytes(arg(2));
  if (mode == "spin") return spin(static_cast<unsigned>(arg(2)));
  if (mode == "threads") return threads(static_cast<unsigned>(arg(2)), static_cast<unsigned>(arg(3)));
  if (mode == "work") return work(static_cast<unsigned>(arg(2)));
  if (mode == "badcell") {
    for (unsigned i = 0; i < arg(2); ++i) kron::trace(1, 7);
    kron::vcount(0, 1);  // takes the board's first statistics cell
    using kron::board::BoardHeader;
    auto* h = reinterpret_cast<BoardHeader*>(reinterpret_cast<std::uintptr_t>(kron::detail::g_stat_gen) -
                                             offsetof(BoardHeader, stat_gen));
    auto* d = reinterpret_cast<kron::board::CellDesc*>(reinterpret_cast<char*>(h) + h->stats_offset +
                                                       std::uint64_t{h->hist_slots} * h->hist_slot_size);
    d->key.store(kron::stats::cell_key(static_cast<kron::stats::CellKind>(7), 0, 0), std::memory_order_release);
    return 0;
  }
  if (mode == "hold") {
    kron::trace(1, 5);
    std::this_thread::sleep_for(std::chrono::seconds(arg(2)));
    return 0;
  }
  std::fprintf(stderr, "usage: real_program bytes N | threads T M | work N | hold S | badcell N\n");
  return 2;
}
