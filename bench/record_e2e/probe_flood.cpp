// kron_probe_flood: the instrumented program of the end-to-end recorder benchmark (bench_record_e2e.cpp).
// THREADS threads each call kron::trace SAMPLES times as fast as they can, all starting together; the
// program prints how long that took by the wall clock:
//
//   kron record --wait -- build/bench/kron_probe_flood THREADS SAMPLES
//   -> "probe_flood threads=T samples=S seconds=X cpu=C user=U"   (S per thread; X from the common start
//      to the last end; C the process's user + system CPU time, U its user time)
//
// Before the timed loop it commits its mapping of the board (MADV_POPULATE_WRITE over the /dev/shm
// mapping found in /proc/self/maps), so that what is timed is the probe and the drain behind it, not the
// first touch of each ring page (board format 2.0 moves that into the board itself; until then a probe's
// first touch of a page costs microseconds in this VM and would swamp a board large enough never to wait).
#include <sys/mman.h>
#include <sys/resource.h>

#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kron/kron.hpp"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

namespace {

// Commits every page of this process's board mapping (the one named /dev/shm/kron.NAME).
void populate_board() {
  const char* name = std::getenv("KRON_BOARD");
  if (!name) return;
  const std::string want = std::string("/dev/shm/kron.") + name;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.size() < want.size() || line.compare(line.size() - want.size(), want.size(), want) != 0) continue;
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream in(line);
    in >> std::hex >> lo >> dash >> hi;
    if (::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE) != 0)
      std::fprintf(stderr, "probe_flood: MADV_POPULATE_WRITE: %s (first touches are timed)\n", std::strerror(errno));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s THREADS SAMPLES_PER_THREAD\n", argv[0]);
    return 2;
  }
  const unsigned threads = static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10));
  const std::uint64_t samples = std::strtoull(argv[2], nullptr, 10);
  if (threads == 0 || threads > 1024 || samples == 0) return 2;
  populate_board();
  std::barrier start(threads + 1);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      kron::trace(1, 0);  // claims the lane before the start: the claim is not what is measured
      start.arrive_and_wait();
      for (std::uint64_t i = 1; i < samples; ++i) kron::trace(1, i);
    });
  start.arrive_and_wait();
  const auto t0 = std::chrono::steady_clock::now();
  for (auto& th : pool) th.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  const double cpu =
      double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  const double user = double(ru.ru_utime.tv_sec) + double(ru.ru_utime.tv_usec) * 1e-6;
  std::printf("probe_flood threads=%u samples=%llu seconds=%.6f cpu=%.6f user=%.6f\n", threads,
              static_cast<unsigned long long>(samples), secs, cpu, user);
  return 0;
}
