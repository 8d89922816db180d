// kserver: a small server loop for phases, latency histograms and virtual counters. Worker
// threads take requests of three types (get, put, scan) from a shared queue and serve them; the program
// runs two phases (1 warm-up: a cold cache, slower gets; 2 steady: a warm cache), set with kron::phase()
// as 004's PhaseID Register would be. Each request's service time goes into the histogram of its type
// (kron::latency_timer), per thread and per phase in the board; virtual counters count requests by type
// (0-2) and cache misses (3). Run it under kron record, then `kron hist kserver.trace`; while it runs,
// `kron hist --board NAME` reads the live board (kron run --board NAME -- kserver ...). Each thread also
// writes one Trace sample (data 1000 + phase) when it starts: every sample carries its thread's phase.
//
// With --scopes each request is also a named scope ("serve get", "serve put", "serve scan": kron rpt's and
// kron top's rows).
//
//   kserver [-t THREADS] [-n REQUESTS_PER_PHASE] [--slow] [--scopes]
//   (--slow: 1 ms pauses so a live look has time)
#include <kron/kron.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace {

enum Type : unsigned { Get = 0, Put = 1, Scan = 2 };
constexpr unsigned kMisses = 3;  // virtual counter: cache misses

kron::histogram g_get("get"), g_put("put"), g_scan("scan");

struct Store {
  std::vector<std::uint64_t> data = std::vector<std::uint64_t>(1 << 16);
  std::vector<bool> cached = std::vector<bool>(1 << 16);
  std::mutex m;
};

// A deterministic amount of work (no timing in the program itself): `units` rounds of a mixing function.
std::uint64_t work(std::uint64_t seed, unsigned units) {
  std::uint64_t x = seed | 1;
  for (unsigned i = 0; i < units * 64; ++i) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  return x;
}

std::atomic<std::uint64_t> g_sink{0};

void serve(Store& s, Type type, std::uint64_t key) {
  const std::size_t k = key % s.data.size();
  switch (type) {
    case Get: {
      kron::latency_timer t(g_get);
      std::lock_guard<std::mutex> l(s.m);
      if (!s.cached[k]) {  // a miss costs a "load": more work
        kron::vcount(kMisses);
        s.data[k] ^= work(key, 40);
        s.cached[k] = true;
      }
      g_sink += work(s.data[k], 2);
      break;
    }
    case Put: {
      kron::latency_timer t(g_put);
      std::lock_guard<std::mutex> l(s.m);
      s.data[k] = work(key, 8);
      break;
    }
    case Scan: {
      kron::latency_timer t(g_scan);
      std::uint64_t sum = 0;
      {
        std::lock_guard<std::mutex> l(s.m);  // puts write under the lock
        for (std::size_t i = 0; i < 512; ++i) sum += s.data[(k + i * 97) % s.data.size()];
      }
      g_sink += work(sum, 30);
      break;
    }
  }
  kron::vcount(type);
}

// serve() inside a named scope of the request's type (--scopes).
void serve_scoped(Store& s, Type type, std::uint64_t key) {
  switch (type) {
    case Get: {
      KRON_SCOPE("serve get");
      serve(s, type, key);
      break;
    }
    case Put: {
      KRON_SCOPE("serve put");
      serve(s, type, key);
      break;
    }
    case Scan: {
      KRON_SCOPE("serve scan");
      serve(s, type, key);
      break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  unsigned threads = 3;
  std::uint64_t per_phase = 20000;
  bool slow = false, scopes = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "-t") && i + 1 < argc)
      threads = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    else if (!std::strcmp(argv[i], "-n") && i + 1 < argc)
      per_phase = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--slow"))
      slow = true;
    else if (!std::strcmp(argv[i], "--scopes"))
      scopes = true;
    else {
      std::fprintf(stderr, "usage: kserver [-t THREADS] [-n REQUESTS_PER_PHASE] [--slow] [--scopes]\n");
      return 2;
    }
  }
  if (threads == 0 || threads > 64) threads = 3;
  Store store;
  for (std::uint16_t phase = 1; phase <= 2; ++phase) {
    std::atomic<std::uint64_t> next{0};
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
      ts.emplace_back([&, phase] {
        kron::phase(phase);            // each thread's PhaseID (004 4.4.1)
        kron::trace(0, 1000 + phase);  // a sample that carries the phase (trace format 1.4)
        for (std::uint64_t i; (i = next.fetch_add(1)) < per_phase;) {
          const std::uint64_t r = work(i * 2654435761u + phase, 1);
          // 70% get, 20% put, 10% scan; phase 1 gets spread over all keys (cold), phase 2 over a few (warm).
          const Type type = r % 10 < 7 ? Get : r % 10 < 9 ? Put : Scan;
          const std::uint64_t key = phase == 1 ? r >> 8 : (r >> 8) % 1024;
          if (scopes)
            serve_scoped(store, type, key);
          else
            serve(store, type, key);
          if (slow && i % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      });
    for (auto& t : ts) t.join();
  }
  std::printf("kserver: %llu requests in 2 phases on %u threads (checksum %llx)\n",
              static_cast<unsigned long long>(2 * per_phase), threads, static_cast<unsigned long long>(g_sink.load()));
  return 0;
}
