// kron info FILE [--json]: a trace file's header: format, clock rate, node, sample counts, overrun,
// overwritten and wait counts, lanes (pid, tid, samples each); whether the records are compressed
// (format 1.2) and how much.
#include <fmt/core.h>

#include <nlohmann/json.hpp>
#include <cstring>
#include <optional>

#include "kron/board.hpp"
#include "kron/core/text.hpp"
#include "kron/format/trace_file.hpp"
#include "analysis/summary.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {
struct Args {
  std::string file;
  bool json = false;
  bool salvage = false;
};
// The time base's source, as --json names it (docs/trace-format.md "Time base").
const char* time_source_key(const tracefile::FileHeader& h) {
  constexpr const char* kKeys[] = {"legacy", "nominal", "kernel", "anchors", "kernel-clock"};
  const auto s = static_cast<std::uint32_t>(tracefile::time_source(h));
  return s < tracefile::kTimeSources ? kKeys[s] : "unknown";
}

// The walk: one kron trace file, read to its end (analysis/summary.hpp).
analysis::FileSummary summarize(const Args& a, std::optional<analysis::Merged>& in,
                                std::optional<analysis::Timeline>& tl) {
  analysis::InputOptions io;
  io.format = analysis::InputFormat::Kron;
  io.salvage = a.salvage;
  in.emplace(analysis::open_inputs({a.file}, io));
  tl.emplace(*in);
  return analysis::summarize_file(*tl);
}

// A lane's or thread's MPI rank (ERRATUM E395): in JSON, null where the file does not say; in the table, "-".
nlohmann::json rank_json(const std::optional<std::uint32_t>& r) { return r ? nlohmann::json(*r) : nlohmann::json(); }
std::string rank_text(const std::optional<std::uint32_t>& r) {
  return fmt::format("{:>5} ", r ? std::to_string(*r) : std::string("-"));
}

void print_json(const Args& a, const analysis::FileSummary& fs) {
  const tracefile::Reader& r = *fs.file;
  const auto& h = r.header();
  nlohmann::json j;
  j["file"] = text::utf8_safe(a.file);  // ERRATUM E131: text is bytes
  j["format"] = fmt::format("{}.{}", h.major, h.minor);
  j["complete"] = r.complete();
  j["origin"] = fs.origin;
  j["clock_hz"] = h.clock_hz;
  j["clock"] = {{"rate_hz", tracefile::rate_hz(h)},
                {"source", time_source_key(h)},
                {"method", tracefile::time_source_text(h)},
                {"uncertainty_ppm", tracefile::rate_uncertainty_ppm(h)}};
  j["node"] = h.node;
  j["program"] = text::utf8_safe(tracefile::program(h));
  j["mode"] = (h.flags & tracefile::kFlagCircular) ? "circular" : "simple";
  j["policy"] = (h.flags & tracefile::kFlagWait) ? "wait" : "discard";
  j["filter"] = h.filter;
  j["samples"] = fs.trace + fs.resource;
  j["trace_samples"] = fs.trace;
  j["resource_samples"] = fs.resource;
  j["span_s"] = fs.span_s;
  j["overruns"] = h.overruns;
  j["overwritten"] = h.overwritten;
  j["passed_filter"] = h.passed_filter;
  j["waits"] = h.waits;
  j["wait_ticks"] = h.wait_ticks;
  j["dropped_tail_bytes"] = r.dropped_tail_bytes();
  j["compressed"] = r.compressed();
  j["records_bytes"] = h.records_bytes;
  if (fs.sized) j["records_raw_bytes"] = h.records_raw_bytes;
  if (r.compressed() && fs.sized) j["compression_ratio"] = fs.ratio;
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
    if (!merged) {  // ERRATUM E441: how the rank ended
      j["mpi"]["ended_early"] = (h.merge_flags & tracefile::kRankEndedEarly) != 0;
      j["mpi"]["aborted"] = (h.merge_flags & tracefile::kRankAborted) != 0;
      j["mpi"]["end_signal"] = h.end_signal;
    }
    for (const auto& n : r.names())
      if (n.name_kind == record::NameKind::Node && !merged)
        j["mpi"]["node"] = text::utf8_safe(std::string(n.name, strnlen(n.name, sizeof n.name)));
  }
  j["sched_switches"] = r.sched_switches().size();
  j["sched_threads"] = fs.sched_threads;
  j["switch_threads"] = nlohmann::json::array();
  for (std::size_t i = 0; i < fs.switch_threads.size(); ++i) {
    const auto& t = fs.switch_threads[i];
    j["switch_threads"].push_back(
        {{"pid", t.pid}, {"tid", t.tid}, {"switches", t.switches}, {"preempted", t.preempted}});
    if (fs.mpi) j["switch_threads"].back()["rank"] = rank_json(fs.switch_rank[i]);
    if (!fs.thread_name(t.tid).empty())
      j["switch_threads"].back()["thread_name"] = text::utf8_safe(fs.thread_name(t.tid));
  }
  j["snapshots"] = r.snapshot_count();  // 1.4: histogram and virtual counter snapshots
  j["stat_lost"] = h.stat_lost;
  j["stat_cells_lost"] = h.stat_cells_lost;
  j["thresholds_crossed"] = h.thresholds_crossed;
  j["counters"] = nlohmann::json::array();
  for (unsigned n = 0; n < kResourceCounters; ++n)
    j["counters"].push_back(text::utf8_safe(tracefile::counter_name(h, n)));
  j["lanes"] = nlohmann::json::array();
  for (std::size_t i = 0; i < r.lanes().size(); ++i) {
    const auto& l = r.lanes()[i];
    j["lanes"].push_back({{"pid", l.pid},
                          {"tid", l.tid},
                          {"samples", l.samples},
                          {"overruns", l.overruns},
                          {"overwritten", l.overwritten},
                          {"waits", l.waits},
                          {"wait_ticks", l.wait_ticks}});
    if (fs.mpi) j["lanes"].back()["rank"] = rank_json(fs.lane_rank[i]);  // ERRATUM E395
    if (!fs.thread_name(l.tid).empty()) j["lanes"].back()["thread_name"] = text::utf8_safe(fs.thread_name(l.tid));
  }
  j["lost"] = h.overruns + h.overwritten;
  j["lost_outside_lanes"] = {{"overruns", fs.other_overruns}, {"overwritten", fs.other_overwritten}};
  j["warnings"] = nlohmann::json::array();
  for (const auto& w : r.warnings()) j["warnings"].push_back(text::utf8_safe(w));
  fmt::print("{}\n", j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void print_text(const Args& a, const analysis::FileSummary& fs) {
  const tracefile::Reader& r = *fs.file;
  const auto& h = r.header();
  fmt::print("{}: kron trace {}.{}, {}, origin {}\n", a.file, h.major, h.minor,
             r.complete() ? "complete" : "NOT closed (recorder died)", fs.origin);
  if (!tracefile::program(h).empty()) fmt::print("program: {}\n", text::terminal_safe(tracefile::program(h)));
  fmt::print("clock {:.3f} Hz +-{:.3g} ppm: {}\n", tracefile::rate_hz(h), tracefile::rate_uncertainty_ppm(h),
             tracefile::time_source_text(h));
  fmt::print("clock {} Hz, node {}, {} buffer, {} on overrun, Filter Register 0x{:04x}\n", h.clock_hz, h.node,
             (h.flags & tracefile::kFlagCircular) ? "circular" : "simple",
             (h.flags & tracefile::kFlagWait) ? "wait" : "discard", h.filter);
  fmt::print("samples {} (trace {}, resource {}) over {:.6f} s\n", fs.trace + fs.resource, fs.trace, fs.resource,
             fs.span_s);
  if (r.complete())
    fmt::print(
        "passed filter {}, overruns {}, overwritten {}, waits {} ({:.3f} ms held){}\n", h.passed_filter, h.overruns,
        h.overwritten, h.waits, double(h.wait_ticks) * 1e3 / double(h.clock_hz),
        h.passed_filter == fs.trace + fs.resource + h.overruns + h.overwritten ? "" : "  (accounting does not add up)");
  if (r.complete() && h.overruns + h.overwritten)
    fmt::print(
        "LOST {} samples: {} overruns, {} overwritten{}\n", h.overruns + h.overwritten, h.overruns, h.overwritten,
        fs.other_overruns + fs.other_overwritten ? fmt::format(" ({} of them in no lane row: probes of threads that "
                                                               "found no free lane)",
                                                               fs.other_overruns + fs.other_overwritten)
                                                 : "");
  // Every record of the compressed area counts: samples, and the switches, snapshots and MPI records after them.
  const std::uint64_t records = fs.trace + fs.resource + r.sched_switches().size() + r.snapshot_count() +
                                r.mpi_records().size() + r.clock_offsets().size();
  if (r.compressed())
    fmt::print(
        "records zstd-compressed: {}\n",
        fs.sized ? fmt::format("{} bytes for {} ({:.2f}x, {:.2f} bytes a record)", h.records_bytes, h.records_raw_bytes,
                               fs.ratio, double(h.records_bytes) / double(std::max<std::uint64_t>(records, 1)))
                 : std::string("ratio unknown (file not closed)"));
  if (!r.sched_switches().empty())
    fmt::print("context switches {} of {} thread{} ({} switched out while runnable: preempted)\n",
               r.sched_switches().size(), fs.sched_threads, fs.sched_threads == 1 ? "" : "s", fs.preempted);
  if (h.minor >= 5 && h.mpi_world_size) {  // 1.5: MPI (libkron_mpi, kron merge)
    if (h.mpi_rank == tracefile::kMergedRank) {
      fmt::print(
          "MPI: {} ranks merged (kron merge), clocks {}, {} MPI calls; happened-before violations {} found, {} "
          "left{}\n",
          h.mpi_world_size, (h.merge_flags & tracefile::kMergeAligned) ? "aligned" : "NOT aligned",
          r.mpi_records().size(), h.violations_found, h.violations_left,
          (h.merge_flags & tracefile::kMergeClc)
              ? fmt::format(" (largest correction {:.3f} us)", double(h.max_correction) * 1e6 / double(h.clock_hz))
              : std::string(" (not corrected)"));
    } else {
      fmt::print("MPI: rank {} of {} on {}, {} MPI calls, {} clock-offset measurements{}\n", h.mpi_rank,
                 h.mpi_world_size, text::terminal_safe(fs.node), r.mpi_records().size(), r.clock_offsets().size(),
                 !(h.merge_flags & tracefile::kRankEndedEarly) ? std::string()
                 : (h.merge_flags & tracefile::kRankAborted)   ? std::string("; it called MPI_Abort")
                 : h.end_signal ? fmt::format("; killed by signal {} before MPI_Finalize", h.end_signal)
                                : std::string("; it ended before MPI_Finalize"));
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
    auto named = [&](const std::string& n) { return fs.thread_names.empty() ? std::string() : "  " + n; };
    // An MPI recording's lanes: their rank first (ERRATUM E395).
    const std::string no_rank = fs.mpi ? fmt::format("{:>5} ", "") : std::string();
    fmt::print("{}{:>8} {:>8} {:>12} {:>10} {:>11} {:>8}{}\n", fs.mpi ? fmt::format("{:>5} ", "rank") : "", "pid",
               "tid", "samples", "overruns", "overwritten", "waits", named("thread"));
    for (std::size_t i = 0; i < r.lanes().size(); ++i) {
      const auto& l = r.lanes()[i];
      fmt::print("{}{:>8} {:>8} {:>12} {:>10} {:>11} {:>8}{}\n", fs.mpi ? rank_text(fs.lane_rank[i]) : "", l.pid, l.tid,
                 l.samples, l.overruns, l.overwritten, l.waits, named(text::terminal_safe(fs.thread_name(l.tid))));
    }
    if (r.complete() && fs.other_overruns + fs.other_overwritten)
      fmt::print("{}{:>17} {:>12} {:>10} {:>11} {:>8}\n", no_rank, "(no lane)", 0, fs.other_overruns,
                 fs.other_overwritten, 0);
  }
  if (!fs.switch_threads.empty()) {  // kron record --sched: every thread that ran, by the kernel's name too
    fmt::print("threads that ran (context switches):\n{}{:>8} {:>8} {:>10} {:>10}  {}\n",
               fs.mpi ? fmt::format("{:>5} ", "rank") : "", "pid", "tid", "switches", "preempted", "thread");
    for (std::size_t i = 0; i < fs.switch_threads.size(); ++i) {
      const auto& t = fs.switch_threads[i];
      fmt::print("{}{:>8} {:>8} {:>10} {:>10}  {}\n", fs.mpi ? rank_text(fs.switch_rank[i]) : "", t.pid, t.tid,
                 t.switches, t.preempted, text::terminal_safe(fs.thread_name(t.tid)));
    }
  }
  for (const auto& w : r.warnings()) fmt::print(stderr, "kron: warning: {}\n", w);
}

int run(const Args& a) {
  std::optional<analysis::Merged> in;
  std::optional<analysis::Timeline> tl;
  const analysis::FileSummary fs = summarize(a, in, tl);
  if (a.json)
    print_json(a, fs);
  else
    print_text(a, fs);
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
