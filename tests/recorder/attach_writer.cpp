// A writer for the live-attach tests (attach_test.sh, counters_test.sh): a program started with
// `kron run --board NAME` that writes known sequences. The data of each Trace sample is
// ID << 40 | thread << 32 | i, i counting from 0 in each thread, so a test can tell every sample apart.
//
//   attach_writer seq ID COUNT THREADS   COUNT samples in each of THREADS threads, then exit
//   attach_writer run ID STOPFILE        one thread writing until STOPFILE exists (about 100 samples/ms)
//   attach_writer idle ID COUNT GOFILE   attached but silent (no lane) until GOFILE exists, then COUNT samples
//   attach_writer counters STOPFILE      kron::count(5, 100) between Resource samples (group 2, data = i)
//                                        every ms until STOPFILE exists, then three more samples
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kron/kron.hpp"

namespace {
std::uint64_t tag(std::uint64_t id, std::uint64_t thread, std::uint64_t i) { return id << 40 | thread << 32 | i; }
bool exists(const char* path) { return ::access(path, F_OK) == 0; }
void nap_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }
}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (!kron::attached()) {
    std::fprintf(stderr, "attach_writer: not attached to a board (run me with kron run --board NAME)\n");
    return 3;
  }
  if (mode == "seq" && argc == 5) {
    const std::uint64_t id = std::strtoull(argv[2], nullptr, 0), count = std::strtoull(argv[3], nullptr, 0);
    const unsigned threads = static_cast<unsigned>(std::atoi(argv[4]));
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
      ts.emplace_back([=] {
        for (std::uint64_t i = 0; i < count; ++i) kron::trace(1, tag(id, t, i));
      });
    for (auto& t : ts) t.join();
    return 0;
  }
  if (mode == "run" && argc == 4) {
    const std::uint64_t id = std::strtoull(argv[2], nullptr, 0);
    for (std::uint64_t i = 0; !exists(argv[3]); ++i) {
      kron::trace(1, tag(id, 0, i));
      if (i % 100 == 99) nap_ms(1);
    }
    return 0;
  }
  if (mode == "idle" && argc == 5) {
    const std::uint64_t id = std::strtoull(argv[2], nullptr, 0), count = std::strtoull(argv[3], nullptr, 0);
    while (!exists(argv[4])) nap_ms(5);
    for (std::uint64_t i = 0; i < count; ++i) kron::trace(1, tag(id, 0, i));
    return 0;
  }
  if (mode == "counters" && argc == 3) {
    std::uint64_t i = 0;
    for (; !exists(argv[2]); ++i) {
      kron::count(5, 100);  // counts only while counter 5 is Software and enabled (000 Table B5, B7)
      kron::resource(2, i);
      nap_ms(1);
    }
    for (int k = 0; k < 3; ++k, ++i) kron::count(5, 100), kron::resource(2, i);
    return 0;
  }
  std::fprintf(stderr, "usage: attach_writer seq ID COUNT THREADS | run ID STOPFILE | idle ID COUNT GOFILE | counters STOPFILE\n");
  return 2;
}
