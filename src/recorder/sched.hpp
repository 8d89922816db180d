// kron record --sched: the context switches of the recorded program's threads, from Linux perf_event
// (PERF_RECORD_SWITCH: perf_event_attr.context_switch on a software dummy event, one per CPU, inherited by
// every thread and child the program makes), as record::SchedRecord in the board's clock.
//
// ERRATUM E146. How a switch gets its timestamp: perf stamps it with CLOCK_MONOTONIC (use_clockid); the
// recorder reads the board clock and CLOCK_MONOTONIC side by side when it opens the events and converts
// with the board's calibrated rate (for a CLOCK_MONOTONIC board the two are the same clock). A TSC board
// drifts from CLOCK_MONOTONIC by the calibration's error: parts per million, well under a microsecond
// in a second's run. Switches the kernel could not hand over (its ring full: PERF_RECORD_LOST) are
// counted in lost(), never silently dropped.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kron/core/record.hpp"

namespace kron::recorder {

class SchedRecorder {
 public:
  // Opens the events for process `pid` (not yet exec'd: enable_on_exec starts them at its exec) on every
  // CPU. Board clock: ticks = board_ticks0 + (CLOCK_MONOTONIC ns - mono_ns0) * clock_hz / 1e9. Returns null
  // and says why in *why when perf_event_open or mmap is refused (perf_event_paranoid, seccomp, no perf).
  static std::unique_ptr<SchedRecorder> open(pid_t pid, std::uint32_t node, std::uint64_t clock_hz,
                                             std::uint64_t board_ticks0, std::uint64_t mono_ns0, std::string* why);
  ~SchedRecorder();
  SchedRecorder(const SchedRecorder&) = delete;
  SchedRecorder& operator=(const SchedRecorder&) = delete;

  // Takes what the kernel has written since the last call (cheap when nothing came).
  void poll();
  // Every switch taken so far, sorted by timestamp (equal ones keep their order); call after a last poll().
  std::vector<record::SchedRecord> take_sorted();
  std::uint64_t lost() const { return lost_; }
  std::uint64_t switches() const { return out_.size(); }

 private:
  struct Ring {
    int fd = -1;
    void* base = nullptr;
    std::uint32_t cpu = 0;
  };
  SchedRecorder() = default;
  std::vector<Ring> rings_;
  std::size_t data_bytes_ = 0, map_bytes_ = 0;
  std::uint32_t node_ = 0;
  double ticks_per_ns_ = 1;
  std::uint64_t ticks0_ = 0, mono0_ = 0;
  std::vector<record::SchedRecord> out_;
  std::uint64_t lost_ = 0;
};

}  // namespace kron::recorder
