// Helpers for the recorder's tests: scratch boards and child processes.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <cstring>
#include <vector>

#include "kron/core/codec.hpp"
#include "kron/board_ops.hpp"
#include "kron/kron.hpp"
#include "recorder/board_reader.hpp"
#include "recorder/recorder.hpp"

namespace kron::testing {

// A board that exists for one test and is removed after it.
struct ScratchBoard {
  std::string name;
  board::Mapping map;
  explicit ScratchBoard(board::CreateOptions o, const std::string& tag = "t") {
    static std::atomic<int> seq{0};
    name = "test-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(seq++);
    o.name = name;
    o.replace = true;
    std::string err;
    map = board::Mapping::create(o, &err);
    if (!map) ADD_FAILURE() << err;
  }
  ~ScratchBoard() {
    std::string err;
    board::unlink(name, &err);
  }
  board::BoardHeader& header() { return *map.header(); }
  recorder::BoardReader reader() { return recorder::BoardReader::open(name); }
};

// A board's creation options for a test: `size` bytes of sample memory over `lanes` lanes, in `mode`.
inline board::CreateOptions board_options(board::BufferMode mode, std::uint64_t size, std::uint32_t lanes) {
  board::CreateOptions o;
  o.size = size;
  o.lanes = lanes;
  o.mode = mode;
  return o;
}

// Trace records a board's pool holds: what one thread alone may fill (no static split).
inline std::uint64_t pool_slots(const board::BoardHeader& h) { return std::uint64_t{h.block_count} * (h.block_bytes / board::kSlot); }

// Every record on a board now, in lane order (a snapshot; in pieces of `piece_bytes` when not 0, E348).
inline std::vector<Sample> samples_of(recorder::BoardReader& r, std::uint64_t piece_bytes = 0) {
  std::vector<Sample> out;
  r.snapshot([&](const recorder::LaneView&, std::span<const std::uint8_t> recs, std::uint64_t) {
    for (std::size_t off = 0; off < recs.size();) {
      // The reader hands 2.2 records (a 2.1 board's are rewritten): phased (ERRATUM E180).
      const Sample s = codec::decode(recs.data() + off, true);
      out.push_back(s);
      off += record::size_at(recs.data() + off);
    }
  }, piece_bytes);
  return out;
}

// Runs `body` in a forked child that first attaches to board `name`; returns the child's exit status
// (body's return value), or 128 + signal.
inline int in_child(const std::string& name, const std::function<int()>& body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    int rc = 100;
    if (kron::attach(name.c_str())) rc = body();
    std::fflush(nullptr);
    std::exit(rc);  // atexit retires the main thread's lane
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// One thread calling kron::trace(0, i) for i = 0 .. n - 1 in a child process attached to board `name`.
inline int trace_in_child(const std::string& name, std::uint64_t n) {
  return in_child(name, [n] {
    for (std::uint64_t i = 0; i < n; ++i) kron::trace(0, i);
    return 0;
  });
}

// Runs `threads` threads of `body(thread index)` in a child process attached to board `name` while this
// process drains it with `rec` (`each_pass`, when given, runs after every pass), then the final passes.
// Returns the child's wait status.
inline int drain_threads_in_child(const std::string& name, recorder::Recorder& rec, unsigned threads,
                                  const std::function<void(unsigned)>& body, const std::function<void()>& each_pass = {}) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    kron::attach(name.c_str());
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t) ts.emplace_back(body, t);
    for (auto& t : ts) t.join();
    std::exit(0);
  }
  int status = 0;
  for (;;) {
    rec.drain_once();
    if (each_pass) each_pass();
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
  }
  rec.drain_once(true);
  rec.drain_once(true);
  return status;
}

}  // namespace kron::testing
