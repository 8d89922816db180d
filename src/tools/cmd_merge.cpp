// kron merge RANK_FILES... -o OUT: the trace files of an MPI job's ranks (libkron_mpi) on one timeline:
// ranks on one clock left as they are, other clocks aligned (offset and drift from the clock-offset records),
// happened-before violations between clocks removed by the controlled logical clock, samples merged in time
// order, streamed. The work is
// src/merge/merge.cpp; this prints what it did (text, or --json).
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "analysis/mpi_match.hpp"
#include "merge/clc.hpp"
#include "merge/clocks.hpp"
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

// ---- --json: everything, every finding (docs/tools.md "kron merge --json") ----------------------------------
nlohmann::json findings_json(const merge::MergeReport& r) {
  using analysis::mpi_call_name;
  nlohmann::json j;
  j["unmatched_receives"] = nlohmann::json::array();
  for (const auto& u : r.unmatched_receives)
    j["unmatched_receives"].push_back({{"rank", u.rank},
                                       {"from", u.from},
                                       {"call", mpi_call_name(u.call)},
                                       {"comm", u.comm},
                                       {"tag", u.tag},
                                       {"begin_s", u.begin_s},
                                       {"end_s", u.end_s}});
  j["incomplete"] = nlohmann::json::array();
  for (const auto& c : r.incomplete)
    j["incomplete"].push_back({{"call", mpi_call_name(c.call)},
                               {"comm", c.comm},
                               {"comm_size", c.comm_size},
                               {"sequence", c.sequence},
                               {"ranks", c.ranks},
                               {"begin_s", c.begin_s}});
  j["violations"] = nlohmann::json::array();
  for (const auto& v : r.violations)
    j["violations"].push_back({{"kind", v.recording_fault ? "recording fault" : "not corrected"},
                               {"rank", v.rank},
                               {"call", mpi_call_name(v.call)},
                               {"end_s", v.end_s},
                               {"peer", v.peer},
                               {"peer_call", mpi_call_name(v.peer_call)},
                               {"peer_begin_s", v.begin_s},
                               {"comm", v.comm},
                               {"tag", v.tag}});
  return j;
}

nlohmann::json rank_json(const merge::RankReport& k) {
  nlohmann::json rk{{"file", text::utf8_safe(k.path)},
                    {"rank", k.rank},
                    {"node", text::utf8_safe(k.node)},
                    {"samples", k.samples},
                    {"mpi_records", k.mpi_records},
                    {"clock", merge::clock_kind_name(k.clock)},
                    {"clock_of_rank", k.clock_rank},
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
  for (const auto& p : k.measurements)
    rk["measurements"].push_back({{"time_s", p.time_s},
                                  {"local", p.local},
                                  {"reference", p.reference},
                                  {"rtt", p.rtt},
                                  {"offset_ns", p.offset_ns},
                                  {"rtt_ns", p.rtt_ns},
                                  {"used", p.used}});
  return rk;
}

void print_json(const merge::MergeReport& r, const merge::MergeOptions& o, const std::string& output) {
  const double ns_per_tick = r.clock_hz ? 1e9 / double(r.clock_hz) : 1.0;
  nlohmann::json j = findings_json(r);
  j["output"] = text::utf8_safe(output);
  j["clock_hz"] = r.clock_hz;
  j["samples"] = r.samples;
  j["mpi_records"] = r.mpi_records;
  j["messages"] = r.messages;
  j["unmatched_sends"] = r.unmatched_sends;
  j["unmatched_recvs"] = r.unmatched_recvs;
  j["collectives"] = r.collectives;
  j["incomplete_collectives"] = r.incomplete_collectives;
  j["clocks"] = r.clocks;
  j["violations_found"] = r.violations_found;
  j["violations_left"] = r.violations_left;
  j["recording_faults"] = r.recording_faults;
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
  for (const auto& k : r.ranks) j["ranks"].push_back(rank_json(k));
  fmt::print("{}\n", j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// ---- The text --------------------------------------------------------------------------------------------
constexpr std::size_t kNamed = 20;  // findings printed by name in the text; --json has all

std::string rank_list(const std::vector<std::uint32_t>& ranks) {
  std::string s;
  for (std::uint32_t r : ranks) s += (s.empty() ? "" : ",") + std::to_string(r);
  return s;
}

// "  ... and N more (--json lists all)" after the first kNamed of `n`.
void print_more(std::size_t n) {
  if (n > kNamed) fmt::print("  ... and {} more (--json lists all)\n", n - kNamed);
}

// The clocks (DECISION D10): each rank's table row, then how many ranks were mapped how.
void print_ranks(const merge::MergeReport& r, const merge::MergeOptions& o) {
  fmt::print("{:>5}  {:<16} {:>12} {:>8}  {:<14} {:>14} {:>18} {:>12}  {}\n", "rank", "node", "samples", "mpi", "clock",
             "offset us", "drift ppm", "min rtt us", "file");
  std::size_t exact = 0, measured = 0, start = 0;
  for (const auto& k : r.ranks) {
    const double tick_ns = k.clock_hz ? 1e9 / double(k.clock_hz) : 1.0;
    const bool mapped = k.clock == merge::ClockKind::Measured || k.clock == merge::ClockKind::StartTime;
    std::string clock = merge::clock_kind_name(k.clock);
    if (k.clock == merge::ClockKind::Exact || (k.clock == merge::ClockKind::Measured && k.clock_rank != k.rank))
      clock += fmt::format(" ={}", k.clock_rank);
    exact += k.clock == merge::ClockKind::Exact || k.clock == merge::ClockKind::Reference;
    measured += k.clock == merge::ClockKind::Measured;
    start += k.clock == merge::ClockKind::StartTime;
    fmt::print("{:>5}  {:<16} {:>12} {:>8}  {:<14} {:>14} {:>18} {:>12}  {}\n", k.rank, text::utf8_safe(k.node),
               k.samples, k.mpi_records, clock, mapped ? fmt::format("{:.3f}", k.offset_ns * 1e-3) : "-",
               mapped ? fmt::format("{:.3f} +-{:.3f}", k.drift_ppm, k.drift_uncertainty_ppm) : "-",
               k.min_rtt ? fmt::format("{:.3f}", double(k.min_rtt) * tick_ns * 1e-3) : "-", text::utf8_safe(k.path));
  }
  if (!o.align) {
    fmt::print("alignment: none (--no-align: timestamps as recorded); {} clock{}\n", r.clocks,
               r.clocks == 1 ? "" : "s");
    return;
  }
  std::string how =
      fmt::format("{} rank{} on the reference rank's clock (exact: not moved)", exact, exact == 1 ? "" : "s");
  if (measured)
    how += fmt::format(", {} measured (offset and drift from clock-offset measurements, piecewise linear)", measured);
  if (start) how += fmt::format(", {} placed by the files' start times (no measurement)", start);
  fmt::print("alignment: {}; {} clock{}\n", how, r.clocks, r.clocks == 1 ? "" : "s");
}

void print_findings(const merge::MergeReport& r) {
  using analysis::mpi_call_name;
  if (!r.unmatched_receives.empty()) fmt::print("unmatched receives: {}\n", r.unmatched_receives.size());
  for (std::size_t i = 0; i < r.unmatched_receives.size() && i < kNamed; ++i) {
    const auto& u = r.unmatched_receives[i];
    fmt::print("  rank {} {} from rank {}, comm {:#x}, tag {}, {:.6f}-{:.6f} s: no send matches it\n", u.rank,
               mpi_call_name(u.call), u.from, u.comm, u.tag, u.begin_s, u.end_s);
  }
  print_more(r.unmatched_receives.size());
  if (!r.incomplete.empty()) fmt::print("incomplete collectives: {}\n", r.incomplete.size());
  for (std::size_t i = 0; i < r.incomplete.size() && i < kNamed; ++i) {
    const auto& c = r.incomplete[i];
    fmt::print("  {} #{} on comm {:#x} at {:.6f} s: records of ranks {}, {} of {} members\n", mpi_call_name(c.call),
               c.sequence, c.comm, c.begin_s, rank_list(c.ranks), c.ranks.size(), c.comm_size);
  }
  print_more(r.incomplete.size());
  if (!r.violations.empty())
    fmt::print("violations left: {} ({} recording faults on one clock)\n", r.violations.size(), r.recording_faults);
  for (std::size_t i = 0; i < r.violations.size() && i < kNamed; ++i) {
    const auto& v = r.violations[i];
    fmt::print("  {}: rank {} {} ended at {:.6f} s, before rank {} {} began at {:.6f} s (comm {:#x}, tag {})\n",
               v.recording_fault ? "recording fault (one clock: not corrected)" : "not corrected", v.rank,
               mpi_call_name(v.call), v.end_s, v.peer, mpi_call_name(v.peer_call), v.begin_s, v.comm, v.tag);
  }
  print_more(r.violations.size());
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
    print_json(r, o, a.output);
    return kExitOk;
  }
  if (a.quiet) return kExitOk;
  fmt::print("kron merge: {} ranks, {} samples into {}\n", r.ranks.size(), r.samples, a.output);
  print_ranks(r, o);
  fmt::print("messages matched {}, unmatched sends {}, unmatched receives {}; collectives {} ({} incomplete)\n",
             r.messages, r.unmatched_sends, r.unmatched_recvs, r.collectives, r.incomplete_collectives);
  fmt::print(
      "happened-before violations: {} after alignment, {} left{}{}; largest correction {:.3f} us, {} events moved\n",
      r.violations_found, r.violations_left,
      r.recording_faults ? fmt::format(" ({} recording faults on one clock)", r.recording_faults) : "",
      o.clc ? "" : " (--no-clc: not corrected)", double(r.max_correction) * ns_per_tick * 1e-3, r.events_moved);
  print_findings(r);
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
                            "JSON output: per rank its clock and every measurement; matching; every unmatched "
                            "receive, incomplete collective and violation left");
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
