// What kron info and kron hist say of a trace file, computed by one walk of its timeline (timeline.hpp):
// the samples counted, the switches, the compression, the losses the lane rows do not hold, the thread
// names; the histogram snapshots merged. The tools only print.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/hist.hpp"
#include "analysis/timeline.hpp"
#include "kron/format/trace_file.hpp"

namespace kron::analysis {

struct FileSummary {
  const tracefile::Reader* file = nullptr;         // the walked input's reader: header, lanes, names, warnings
  std::uint64_t trace = 0, resource = 0;           // samples read
  std::uint64_t first = 0, last = 0;               // their earliest and latest timestamps
  double span_s = 0;                               // last - first, in seconds of the file's clock
  std::uint64_t sched_threads = 0, preempted = 0;  // threads with switches; switches out while runnable
  struct SwitchThread {
    std::uint32_t pid = 0, tid = 0;
    std::uint64_t switches = 0, preempted = 0;
  };
  std::vector<SwitchThread> switch_threads;  // every thread with switches, by (pid, tid)
  // Compression (1.2): the record area on disk against the records' own length (complete files only).
  bool sized = false;
  double ratio = 0;
  // Losses the lane rows do not hold (ERRATUM E142): a probe of a thread that found no free lane is an
  // overrun of the board, counted in the header's total but in no lane; so are the losses of lanes the
  // recorder did not see to their end. Shown as a row of their own, so that the rows add up to the header.
  std::uint64_t other_overruns = 0, other_overwritten = 0;
  // Name section (1.3), by thread id: what the probes named, else the kernel's name (kron record --sched).
  std::unordered_map<std::uint32_t, std::string> thread_names;
  std::string node;  // an MPI rank's node name (1.5), "" when none
  // An MPI recording (1.5: a rank's file, or a merged one): the rank of each lane of the file's lane table and
  // of each switch_threads entry (ERRATUM E395: a rank's file, its rank; a merged file, the rank whose Node
  // entry names the pid); empty otherwise.
  bool mpi = false;
  std::vector<std::optional<std::uint32_t>> lane_rank, switch_rank;
  const char* origin = "unknown";
  std::string thread_name(std::uint32_t tid) const {
    const auto f = thread_names.find(tid);
    return f == thread_names.end() ? std::string() : f->second;
  }
};
// The summary of a timeline over one kron trace file. Throws what reading it throws.
FileSummary summarize_file(Timeline& tl);

// Every input's histogram and virtual counter snapshots (trace format 1.4), merged (kron hist).
SnapshotTotals merged_snapshots(Timeline& tl);

}  // namespace kron::analysis
