// kron record --sched: the context switches of the recorded program's threads, from Linux perf_event
// (PERF_RECORD_SWITCH: perf_event_attr.context_switch on a software dummy event, one per CPU, inherited by
// every thread and child the program makes), as record::SchedRecord in the board's clock.
//
// ERRATUM E146, E305. How a switch gets its timestamp: perf stamps it with the clock of the recording's time
// base (kron/format/time_base.hpp): perf's own clock, sched_clock, where the kernel gives its TSC
// conversion (TimeSource::Kernel: the switch converts back to the very tick it was taken at);
// CLOCK_MONOTONIC_RAW for anchors (use_clockid; converted between the start and end anchors);
// CLOCK_MONOTONIC for a board without the TSC (the same clock). The conversion happens once, here, when
// the switches are taken: every tool then compares them with the probes' ticks as they are. Switches the
// kernel could not hand over (its ring full: PERF_RECORD_LOST) are counted in lost(), never silently
// dropped.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kron/core/record.hpp"
#include "kron/format/trace_file.hpp"

namespace kron::recorder {

class SchedRecorder {
 public:
  // Opens the events for process `pid` (not yet exec'd: enable_on_exec starts them at its exec) on every
  // CPU, stamped with the clock of `source`. Returns null and says why in *why when perf_event_open or mmap
  // is refused (perf_event_paranoid, seccomp, no perf).
  static std::unique_ptr<SchedRecorder> open(pid_t pid, std::uint32_t node, tracefile::TimeSource source,
                                             std::string* why);
  ~SchedRecorder();
  SchedRecorder(const SchedRecorder&) = delete;
  SchedRecorder& operator=(const SchedRecorder&) = delete;

  // Takes what the kernel has written since the last call (cheap when nothing came).
  void poll();
  // Every switch taken so far, its time converted to ticks by the file's time base (its end anchor taken:
  // tracefile::kernel_ns_to_ticks), sorted by timestamp (equal ones keep their order); after a last poll().
  std::vector<record::SchedRecord> take_sorted(const tracefile::FileHeader& time_base);
  // The kernel's name (comm) of each thread that switched, as name-table Thread entries (name and function
  // both the comm: ERRATUM E410): the last name a PERF_RECORD_COMM gave it, else the name of the thread it
  // was forked from, else /proc/PID/task/TID/comm read at its first switch. Threads of no known name are
  // left out. Ordered by (pid, tid).
  std::vector<record::NameRecord> thread_names() const;
  // A thread's name known beforehand (the program's own: the name it is exec'd under), taken where neither
  // perf nor /proc gives one.
  void note_comm(std::uint32_t pid, std::uint32_t tid, const std::string& comm);
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
  void read_proc_comm(std::uint32_t pid, std::uint32_t tid);
  std::vector<record::SchedRecord> out_;
  std::unordered_set<std::uint64_t> seen_;                   // (pid << 32 | tid) of every thread that switched
  std::unordered_map<std::uint64_t, std::string> comm_;      // its kernel name
  std::unordered_map<std::uint64_t, std::string> fallback_;  // note_comm()'s
  std::unordered_map<std::uint64_t, std::uint64_t> parent_;  // the thread it was forked from
  std::uint64_t lost_ = 0;
};

}  // namespace kron::recorder
