// kron merge RANK_FILES... -o OUT: the trace files of an MPI job's ranks (libkron_mpi) on one timeline:
// clocks aligned (offset and drift from the clock-offset records), happened-before violations removed by
// the controlled logical clock, samples merged in time order, streamed. The work is
// src/merge/merge.cpp; this prints what it did (text, or --json).
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "analysis/mpi_match.hpp"
#include "merge/clc.hpp"
#include "merge/merge.hpp"
#include "kron/core/text.hpp"
#include "kron/format/trace_file.hpp"
#include "tools/atomic_file.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {

struct Args {
  std::vector<std::string> inputs;
  std::string output;
  bool no_align = false, no_clc = false, json = false, quiet = false, salvage = false;
  double gamma = 0.99;
  int compress = 0;
  unsigned compress_threads = tracefile::default_compress_threads();
};

// ERRATUM E441: the ranks that did not reach MPI_Finalize, first to end first: which, how and when.
void print_early_ends(const merge::MergeReport& r) {
  std::vector<const merge::RankReport*> early;
  for (const auto& k : r.ranks)
    if (k.ended_early) early.push_back(&k);
  std::stable_sort(early.begin(), early.end(), [](auto* x, auto* y) { return x->end_s < y->end_s; });
  for (std::size_t i = 0; i < early.size(); ++i) {
    const merge::RankReport& k = *early[i];
    const std::string how = k.aborted      ? "called MPI_Abort"
                            : k.end_signal ? fmt::format("was killed by signal {}", k.end_signal)
                                           : std::string("ended");
    fmt::print(
        "rank {} {} before MPI_Finalize{}: ended by {:.6f} s, its last record at {:.6f} s; its {} samples and {} "
        "MPI calls up to then are merged\n",
        k.rank, how, i == 0 && early.size() > 1 ? " (the first to end)" : "", k.end_s, k.last_s, k.samples,
        k.mpi_records);
  }
}

int run(const Args& a, const std::string& command) {
  merge::MergeOptions o;
  o.align = !a.no_align;
  o.clc = !a.no_clc;
  o.gamma = a.gamma;
  o.compress_level = a.compress;
  o.compress_threads = a.compress_threads;
  o.program = command;
  o.salvage = a.salvage;
  std::error_code ec;
  for (const auto& p : a.inputs)
    if (std::filesystem::exists(a.output, ec) && std::filesystem::equivalent(p, a.output, ec))
      throw std::runtime_error("kron merge: the output " + a.output + " is one of the inputs");
  // Into a temporary file, renamed over OUT at the end: a damaged rank or a full disk leaves OUT as it was.
  merge::MergeReport r;
  write_named_file_atomically(a.output, [&](const std::string& tmp) { r = merge::merge_files(a.inputs, tmp, o); });
  const double ns_per_tick = r.clock_hz ? 1e9 / double(r.clock_hz) : 1.0;
  for (const auto& w : r.warnings) fmt::print(stderr, "kron merge: warning: {}\n", text::terminal_safe(w));
  if (a.json) {
    nlohmann::json j;
    j["output"] = text::utf8_safe(a.output);
    j["clock_hz"] = r.clock_hz;
    j["samples"] = r.samples;
    j["mpi_records"] = r.mpi_records;
    j["messages"] = r.messages;
    j["unmatched_sends"] = r.unmatched_sends;
    j["unmatched_recvs"] = r.unmatched_recvs;
    j["collectives"] = r.collectives;
    j["incomplete_collectives"] = r.incomplete_collectives;
    j["violations_found"] = r.violations_found;
    j["violations_left"] = r.violations_left;
    j["max_correction_ticks"] = r.max_correction;
    j["max_correction_ns"] = double(r.max_correction) * ns_per_tick;
    j["events_moved"] = r.events_moved;
    j["forced"] = r.forced;
    j["late"] = r.late;
    j["passed_filter"] = r.passed_filter;
    j["overruns"] = r.overruns;
    j["overwritten"] = r.overwritten;
    j["aligned"] = o.align;
    j["clc"] = o.clc;
    j["salvaged"] = nlohmann::json::array();
    for (const auto& f : r.salvaged) j["salvaged"].push_back(text::utf8_safe(f));
    j["warnings"] = nlohmann::json::array();
    for (const auto& w : r.warnings) j["warnings"].push_back(text::utf8_safe(w));
    j["ranks"] = nlohmann::json::array();
    for (const auto& k : r.ranks) {
      nlohmann::json rk{{"file", text::utf8_safe(k.path)},
                        {"rank", k.rank},
                        {"node", text::utf8_safe(k.node)},
                        {"samples", k.samples},
                        {"mpi_records", k.mpi_records},
                        {"offset_ns", k.offset_ns},
                        {"drift_ppm", k.drift_ppm},
                        {"drift_uncertainty_ppm", k.drift_uncertainty_ppm},
                        {"min_rtt_ticks", k.min_rtt},
                        {"max_rtt_ticks", k.max_rtt},
                        {"clock_hz", k.clock_hz},
                        {"start_ticks", k.start_ticks},
                        {"passed_filter", k.passed_filter},
                        {"overruns", k.overruns},
                        {"overwritten", k.overwritten},
                        {"ended_early", k.ended_early},
                        {"aborted", k.aborted},
                        {"end_signal", k.end_signal},
                        {"end_s", k.end_s},
                        {"last_record_s", k.last_s}};
      rk["measurements"] = nlohmann::json::array();
      for (const auto& p : k.points)
        rk["measurements"].push_back({{"local", p.local}, {"reference", p.reference}, {"rtt", p.rtt}});
      j["ranks"].push_back(std::move(rk));
    }
    fmt::print("{}\n", j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
    return kExitOk;
  }
  if (a.quiet) return kExitOk;
  fmt::print("kron merge: {} ranks, {} samples into {}\n", r.ranks.size(), r.samples, a.output);
  fmt::print("{:>5}  {:<16} {:>12} {:>8} {:>14} {:>18} {:>12}  {}\n", "rank", "node", "samples", "mpi", "offset us",
             "drift ppm", "min rtt us", "file");
  for (const auto& k : r.ranks) {
    const double tick_ns = k.clock_hz ? 1e9 / double(k.clock_hz) : 1.0;
    fmt::print("{:>5}  {:<16} {:>12} {:>8} {:>14.3f} {:>18} {:>12.3f}  {}\n", k.rank, text::utf8_safe(k.node),
               k.samples, k.mpi_records, k.offset_ns * 1e-3,
               fmt::format("{:.3f} +-{:.3f}", k.drift_ppm, k.drift_uncertainty_ppm), double(k.min_rtt) * tick_ns * 1e-3,
               text::utf8_safe(k.path));
  }
  fmt::print("alignment: {}\n", o.align
                                    ? "offset and drift from each rank's clock-offset measurements (piecewise linear)"
                                    : "none (--no-align: timestamps as recorded)");
  fmt::print("messages matched {}, unmatched sends {}, unmatched receives {}; collectives {} ({} incomplete)\n",
             r.messages, r.unmatched_sends, r.unmatched_recvs, r.collectives, r.incomplete_collectives);
  fmt::print(
      "happened-before violations: {} after alignment, {} left{}; largest correction {:.3f} us, {} events moved\n",
      r.violations_found, r.violations_left, o.clc ? "" : " (--no-clc: not corrected)",
      double(r.max_correction) * ns_per_tick * 1e-3, r.events_moved);
  fmt::print("accounting: passed filter {} = samples {} + overruns {} + overwritten {}{}\n", r.passed_filter, r.samples,
             r.overruns, r.overwritten,
             r.passed_filter == r.samples + r.overruns + r.overwritten ? "" : "  (does not add up)");
  if (r.late) fmt::print("{} samples out of time order (late in their rank's file)\n", r.late);
  print_early_ends(r);
  return kExitOk;
}

KRON_COMMAND("merge", "merge the trace files of an MPI job's ranks onto one timeline (clocks aligned, causality kept)",
             36, [](CLI::App& app) {
               auto a = std::make_shared<Args>();
               app.add_option("files", a->inputs, "the ranks' trace files (libkron_mpi: OUT.rank-N.kron)")->required();
               app.add_option("-o,--output", a->output, "merged trace file")->required();
               app.add_flag("--no-align", a->no_align, "keep each rank's timestamps as recorded (no clock alignment)");
               app.add_flag("--no-clc", a->no_clc, "count happened-before violations, do not correct them");
               app.add_option("--gamma", a->gamma,
                              "the controlled logical clock's amortization: intervals after a corrected event shrink "
                              "by at most this factor (0-1, default 0.99)")
                   ->check(CLI::Validator(
                       [](std::string& v) {  // ERRATUM E349: CLI::Range lets nan through
                         char* end = nullptr;
                         const double g = std::strtod(v.c_str(), &end);
                         return *end == '\0' && g >= 0.0 && g <= 1.0 ? std::string() : "not a number from 0 to 1";
                       },
                       "0-1"));
               app.add_flag("--salvage", a->salvage,
                            "merge rank files that were not closed (a rank killed): what they hold, marked salvaged");
               app.add_option("--compress", a->compress, "zstd level 1-19 for the merged file's records (0: none)")
                   ->check(CLI::Range(0, 19));
               app.add_option(
                      "--compress-threads", a->compress_threads,
                      "threads that compress for --compress (0: the merging thread); default half the CPUs, 1-4")
                   ->capture_default_str()
                   ->check(CLI::Range(0u, tracefile::kMaxCompressThreads));
               app.add_flag("--json", a->json,
                            "JSON output: per rank offset, drift, round trips; matching; violations");
               app.add_flag("-q,--quiet", a->quiet, "print nothing");
               return [=] {
                 std::string cmd = "kron merge";
                 for (const auto& f : a->inputs) cmd += " " + f;
                 cmd += " -o " + a->output;
                 if (a->salvage) cmd += " --salvage";  // the merged file says it was salvaged
                 return run(*a, cmd);
               };
             });

}  // namespace
}  // namespace kron::tools
