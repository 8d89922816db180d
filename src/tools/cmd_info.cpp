// kron info FILE [--json]: a trace file's header: format, clock rate, node, sample counts, overrun,
// overwritten and wait counts, lanes (pid, tid, samples each); whether the records are compressed
// (format 1.2) and how much.
#include <fmt/core.h>

#include <nlohmann/json.hpp>
#include <cstring>
#include <set>
#include <unordered_map>

#include "kron/board.hpp"
#include "kron/core/text.hpp"
#include "kron/format/trace_file.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {
struct Args {
  std::string file;
  bool json = false;
  bool salvage = false;
};
constexpr const char* kOrigins[] = {"live", "mk1", "mk2", "model"};

int run(const Args& a) {
  tracefile::Reader r(a.file, tracefile::ReadOptions{a.salvage});
  const auto& h = r.header();
  std::uint64_t trace = 0, resource = 0, first = 0, last = 0;
  Sample s;
  bool any = false;
  while (r.next(s)) {
    (s.is_resource() ? resource : trace)++;
    if (!any) first = s.timestamp, any = true;
    first = std::min(first, s.timestamp);
    last = std::max(last, s.timestamp);
  }
  const double span = any ? double(last - first) / double(h.clock_hz) : 0.0;
  // Scheduling switches (trace format 1.3, kron record --sched): not samples, counted apart.
  std::set<std::uint64_t> sched_threads;
  std::uint64_t preempted = 0;
  for (const auto& sw : r.sched_switches()) {
    sched_threads.insert(std::uint64_t{sw.source} << 32 | sw.thread);
    preempted += (sw.h.flags & record::kSchedPreempt) ? 1 : 0;
  }
  // Compression (1.2): the record area on disk against the records' own length (complete files only).
  const bool sized = r.complete() && h.records_raw_bytes;
  const double ratio = sized && h.records_bytes ? double(h.records_raw_bytes) / double(h.records_bytes) : 0.0;
  // Losses the lane rows do not hold (ERRATUM E142): a probe of a thread that found no free lane is an
  // overrun of the board, counted in the header's total but in no lane; so are the losses of lanes the
  // recorder did not see to their end. Shown as a row of their own, so that the rows add up to the header.
  // Thread names of the name section (1.3), by thread id (a lane row names its thread by pid and tid).
  std::unordered_map<std::uint32_t, std::string> thread_names;
  for (const auto& n : r.names())
    if (n.name_kind == record::NameKind::Thread) thread_names[n.thread] = std::string(n.name, strnlen(n.name, sizeof n.name));
  auto thread_name = [&](std::uint32_t tid) {
    const auto f = thread_names.find(tid);
    return f == thread_names.end() ? std::string() : f->second;
  };
  std::uint64_t lane_overruns = 0, lane_overwritten = 0;
  for (const auto& l : r.lanes()) lane_overruns += l.overruns, lane_overwritten += l.overwritten;
  const std::uint64_t other_overruns = h.overruns > lane_overruns ? h.overruns - lane_overruns : 0;
  const std::uint64_t other_overwritten = h.overwritten > lane_overwritten ? h.overwritten - lane_overwritten : 0;
  const char* origin = static_cast<unsigned>(h.origin) < 4 ? kOrigins[static_cast<unsigned>(h.origin)] : "unknown";
  if (a.json) {
    nlohmann::json j;
    j["file"] = text::utf8_safe(a.file);  // ERRATUM E131: text is bytes
    j["format"] = fmt::format("{}.{}", h.major, h.minor);
    j["complete"] = r.complete();
    j["origin"] = origin;
    j["clock_hz"] = h.clock_hz;
    j["node"] = h.node;
    j["program"] = text::utf8_safe(tracefile::program(h));
    j["mode"] = (h.flags & tracefile::kFlagCircular) ? "circular" : "simple";
    j["policy"] = (h.flags & tracefile::kFlagWait) ? "wait" : "discard";
    j["filter"] = h.filter;
    j["samples"] = trace + resource;
    j["trace_samples"] = trace;
    j["resource_samples"] = resource;
    j["span_s"] = span;
    j["overruns"] = h.overruns;
    j["overwritten"] = h.overwritten;
    j["passed_filter"] = h.passed_filter;
    j["waits"] = h.waits;
    j["wait_ticks"] = h.wait_ticks;
    j["dropped_tail_bytes"] = r.dropped_tail_bytes();
    j["compressed"] = r.compressed();
    j["records_bytes"] = h.records_bytes;
    if (sized) j["records_raw_bytes"] = h.records_raw_bytes;
    if (r.compressed() && sized) j["compression_ratio"] = ratio;
    j["late"] = h.late;
    if (h.minor >= 5 && h.mpi_world_size) {  // 1.5: an MPI rank's file, or a merged one
      const bool merged = h.mpi_rank == tracefile::kMergedRank;
      j["mpi"] = {{"rank", merged ? nlohmann::json(nullptr) : nlohmann::json(h.mpi_rank)},
                  {"world_size", h.mpi_world_size},
                  {"merged", merged},
                  {"mpi_records", r.mpi_records().size()},
                  {"clock_offsets", r.clock_offsets().size()},
                  {"aligned", (h.merge_flags & tracefile::kMergeAligned) != 0},
                  {"clc", (h.merge_flags & tracefile::kMergeClc) != 0},
                  {"violations_found", h.violations_found},
                  {"violations_left", h.violations_left},
                  {"max_correction_ticks", h.max_correction}};
      for (const auto& n : r.names())
        if (n.name_kind == record::NameKind::Node && !merged) j["mpi"]["node"] = text::utf8_safe(std::string(n.name, strnlen(n.name, sizeof n.name)));
    }
    j["sched_switches"] = r.sched_switches().size();
    j["sched_threads"] = sched_threads.size();
    j["snapshots"] = r.snapshot_count();  // 1.4 (issue 12): histogram and virtual counter snapshots
    j["stat_lost"] = h.stat_lost;
    j["stat_cells_lost"] = h.stat_cells_lost;
    j["thresholds_crossed"] = h.thresholds_crossed;
    j["counters"] = nlohmann::json::array();
    for (unsigned n = 0; n < kResourceCounters; ++n) j["counters"].push_back(text::utf8_safe(tracefile::counter_name(h, n)));
    j["lanes"] = nlohmann::json::array();
    for (const auto& l : r.lanes()) {
      j["lanes"].push_back({{"pid", l.pid}, {"tid", l.tid}, {"samples", l.samples}, {"overruns", l.overruns},
                            {"overwritten", l.overwritten}, {"waits", l.waits}, {"wait_ticks", l.wait_ticks}});
      if (!thread_name(l.tid).empty()) j["lanes"].back()["thread_name"] = text::utf8_safe(thread_name(l.tid));
    }
    j["lost"] = h.overruns + h.overwritten;
    j["lost_outside_lanes"] = {{"overruns", other_overruns}, {"overwritten", other_overwritten}};
    j["warnings"] = nlohmann::json::array();
    for (const auto& w : r.warnings()) j["warnings"].push_back(text::utf8_safe(w));
    fmt::print("{}\n", j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
    return kExitOk;
  }
  fmt::print("{}: kron trace {}.{}, {}, origin {}\n", a.file, h.major, h.minor, r.complete() ? "complete" : "NOT closed (recorder died)", origin);
  if (!tracefile::program(h).empty()) fmt::print("program: {}\n", text::terminal_safe(tracefile::program(h)));
  fmt::print("clock {} Hz, node {}, {} buffer, {} on overrun, Filter Register 0x{:04x}\n", h.clock_hz, h.node,
             (h.flags & tracefile::kFlagCircular) ? "circular" : "simple", (h.flags & tracefile::kFlagWait) ? "wait" : "discard",
             h.filter);
  fmt::print("samples {} (trace {}, resource {}) over {:.6f} s\n", trace + resource, trace, resource, span);
  if (r.complete())
    fmt::print("passed filter {}, overruns {}, overwritten {}, waits {} ({:.3f} ms held){}\n", h.passed_filter, h.overruns,
               h.overwritten, h.waits, double(h.wait_ticks) * 1e3 / double(h.clock_hz),
               h.passed_filter == trace + resource + h.overruns + h.overwritten ? "" : "  (accounting does not add up)");
  if (r.complete() && h.overruns + h.overwritten)
    fmt::print("LOST {} samples: {} overruns, {} overwritten{}\n", h.overruns + h.overwritten, h.overruns, h.overwritten,
               other_overruns + other_overwritten ? fmt::format(" ({} of them in no lane row: probes of threads that "
                                                                "found no free lane)", other_overruns + other_overwritten)
                                                  : "");
  if (r.compressed())
    fmt::print("records zstd-compressed: {}\n",
               sized ? fmt::format("{} bytes for {} ({:.2f}x, {:.2f} bytes a sample)", h.records_bytes,
                                   h.records_raw_bytes, ratio, double(h.records_bytes) / double(std::max<std::uint64_t>(trace + resource, 1)))
                     : std::string("ratio unknown (file not closed)"));
  if (!r.sched_switches().empty())
    fmt::print("context switches {} of {} thread{} ({} switched out while runnable: preempted)\n",
               r.sched_switches().size(), sched_threads.size(), sched_threads.size() == 1 ? "" : "s", preempted);
  if (h.minor >= 5 && h.mpi_world_size) {  // 1.5: MPI (libkron_mpi, kron merge)
    if (h.mpi_rank == tracefile::kMergedRank) {
      fmt::print("MPI: {} ranks merged (kron merge), clocks {}, {} MPI calls; happened-before violations {} found, {} left{}\n",
                 h.mpi_world_size, (h.merge_flags & tracefile::kMergeAligned) ? "aligned" : "NOT aligned", r.mpi_records().size(),
                 h.violations_found, h.violations_left,
                 (h.merge_flags & tracefile::kMergeClc)
                     ? fmt::format(" (largest correction {:.3f} us)", double(h.max_correction) * 1e6 / double(h.clock_hz))
                     : std::string(" (not corrected)"));
    } else {
      std::string node;
      for (const auto& n : r.names())
        if (n.name_kind == record::NameKind::Node) node = std::string(n.name, strnlen(n.name, sizeof n.name));
      fmt::print("MPI: rank {} of {} on {}, {} MPI calls, {} clock-offset measurements\n", h.mpi_rank, h.mpi_world_size,
                 text::terminal_safe(node), r.mpi_records().size(), r.clock_offsets().size());
    }
  }
  if (r.snapshot_count())
    fmt::print("histogram and virtual counter snapshots {} (kron hist){}\n", r.snapshot_count(),
               h.thresholds_crossed ? fmt::format("; thresholds crossed {}", h.thresholds_crossed) : std::string());
  if (h.late)
    fmt::print("{} samples written late, after a sample with a later timestamp (docs/trace-format.md \"Time order\")\n",
               h.late);
  if (r.dropped_tail_bytes())
    fmt::print("dropped {} bytes of a {} cut short\n", r.dropped_tail_bytes(), r.compressed() ? "chunk" : "record");
  for (unsigned n = 0; n < kResourceCounters; ++n)
    if (!tracefile::counter_name(h, n).empty())
      fmt::print("counter {:>2}: {}\n", n, text::terminal_safe(tracefile::counter_name(h, n)));
  if (!r.lanes().empty()) {
    // The thread column only where the recording named threads (no trailing blanks otherwise).
    auto named = [&](const std::string& n) { return thread_names.empty() ? std::string() : "  " + n; };
    fmt::print("{:>8} {:>8} {:>12} {:>10} {:>11} {:>8}{}\n", "pid", "tid", "samples", "overruns", "overwritten",
               "waits", named("thread"));
    for (const auto& l : r.lanes())
      fmt::print("{:>8} {:>8} {:>12} {:>10} {:>11} {:>8}{}\n", l.pid, l.tid, l.samples, l.overruns, l.overwritten,
                 l.waits, named(text::terminal_safe(thread_name(l.tid))));
    if (r.complete() && other_overruns + other_overwritten)
      fmt::print("{:>17} {:>12} {:>10} {:>11} {:>8}\n", "(no lane)", 0, other_overruns, other_overwritten, 0);
  }
  for (const auto& w : r.warnings()) fmt::print(stderr, "kron: warning: {}\n", w);
  return kExitOk;
}
KRON_COMMAND("info", "show a trace file's header, counts and lanes", 37, [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("file", a->file, "kron trace file")->required();
  app.add_flag("--json", a->json, "JSON output");
  app.add_flag("--salvage", a->salvage,
               "read a damaged file for what it holds: unknown record kinds skipped and a record count that differs "
               "from the header's are warnings with counts, not errors (the counts shown are what was read)");
  return [a] { return run(*a); };
});
}  // namespace
}  // namespace kron::tools
