// kron rpt: 003 mk_rpt. The work is in src/analysis/ (matcher.cpp, rpt.cpp, html.cpp).
#include <fmt/core.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <span>
#include <vector>

#include "analysis/export.hpp"
#include "analysis/html.hpp"
#include "analysis/interval_info.hpp"
#include "analysis/merge.hpp"
#include "analysis/rpt.hpp"
#include "kron/core/text.hpp"
#include "tools/atomic_file.hpp"
#include "tools/command.hpp"
#include "tools/input_options.hpp"

namespace kron::tools {
namespace {

struct Args {
  InputArgs in;
  bool verbose = false, histograms = false, summary = false, chronological = false, dbl = false, json = false;
  bool wide = false;
  std::string info_file;  // -f; none: interval.info when it exists (named scopes need none)
  unsigned event_bits = 32;
  std::string html;
  std::vector<unsigned> phases;  // --phase P (issue 12): only the samples of these phases (trace format 1.4)
};

// The scheduling switches of a kron trace file, read ahead: they follow the samples in the file, and the
// matcher needs them as it meets each interval. One extra pass over the file, only when its header counts
// some (kron record --sched).
std::vector<record::SchedRecord> sched_ahead(const std::string& path, bool salvage) {
  tracefile::ReadOptions ro;
  ro.salvage = salvage;  // --salvage reads ahead as it reads the samples
  tracefile::Reader r(path, ro);
  if (r.header().sched_switches == 0) return {};
  std::vector<Sample> batch(4096);
  while (r.next_batch(batch) != 0) {
  }
  return r.sched_switches();
}

int run(const Args& a) {
  // Named scopes are paired without interval.info (which stays for event numbers, 003's workflow): without
  // -f, interval.info is read when there is one.
  analysis::IntervalInfo info;
  info.path = "interval.info";
  if (!a.info_file.empty() || ::access("interval.info", F_OK) == 0)
    info = analysis::load_interval_info(a.info_file.empty() ? "interval.info" : a.info_file);
  analysis::Merged in = a.in.open();
  analysis::RptOptions ro;
  ro.event_bits = a.event_bits;
  ro.histograms = a.histograms || !a.html.empty();
  const std::uint64_t clock = in.clock_hz();
  // On-CPU time per interval: from the recording's scheduling switches (kron record --sched, exact to the
  // switch, ERRATUM E157), else where a counter counted it (kron record --counter N=task-clock or oncpu).
  // Only one input is taken: inputs merged from several recordings may wire their counters differently.
  std::vector<record::SchedRecord> switches;
  if (in.inputs().size() == 1 && in.inputs()[0]->format() == analysis::InputFormat::Kron &&
      in.inputs()[0]->path() != "-")
    switches = sched_ahead(in.inputs()[0]->path(), a.in.salvage);
  const analysis::OnCpuTimeline timeline(switches);
  if (!timeline.empty()) {
    ro.cpu_scale = 1.0;  // ticks of the timestamp clock
  } else if (in.inputs().size() == 1) {
    std::vector<std::string> names;
    for (unsigned n = 0; n < kResourceCounters; ++n) names.push_back(in.inputs()[0]->counter_name(n));
    const analysis::CpuCounter cc = analysis::find_cpu_counter(names, clock);
    ro.cpu_counter = cc.counter;
    ro.cpu_scale = cc.scale;
  }
  analysis::Matcher m(info, ro, in.ts_mask(), &in.names());
  if (!timeline.empty()) m.set_timeline(&timeline);

  // -n: every occurrence as it completes, in time order (printed while reading: each line is final).
  std::string buf;
  auto flush = [&] {
    if (!buf.empty()) std::fwrite(buf.data(), 1, buf.size(), stdout);
    buf.clear();
  };
  if (a.chronological && !a.json) {
    buf += fmt::format("{:>16}  {:>14}  {:>14}  {:<24}  {}\n", "end (us)", "ticks", "us", "stream", "interval");
    m.on_interval = [&](const analysis::Occurrence& o) {
      const std::string stream =
          m.info().intervals[o.interval].cls == 4 ? "all" : analysis::stream_name(m.streams()[o.stream]);
      fmt::format_to(std::back_inserter(buf), "{:>16.3f}  {:>14}  {:>14.3f}  {:<24}  {}\n",
                     analysis::ticks_to_us(static_cast<double>(o.end), clock), o.duration,
                     analysis::ticks_to_us(static_cast<double>(o.duration), clock), text::terminal_safe(stream),
                     text::terminal_safe(m.part_name(o.interval, o.part)));
      if (buf.size() >= (1 << 20)) flush();
    };
  }
  std::vector<Sample> batch(256);  // a batch at a time: the reader's and the matcher's loops stay tight
  try {
    while (std::size_t n = in.next_batch(batch)) {
      if (!a.phases.empty()) {  // the report of some phases only: the other samples never reach the matcher
        std::size_t k = 0;
        for (std::size_t i = 0; i < n; ++i)
          if (std::find(a.phases.begin(), a.phases.end(), batch[i].phase) != a.phases.end()) {
            if (k != i) batch[k] = batch[i];
            ++k;
          }
        n = k;
      }
      m.feed_batch(std::span(batch.data(), n));
    }
  } catch (...) {
    flush();
    throw;
  }
  m.finish();
  if (!buf.empty()) buf += '\n';
  flush();

  analysis::Report r = analysis::make_report(m, a.summary, &in.names());
  // MPI recordings (trace format 1.5): every matched message a class-4 interval across ranks (E210), from
  // the MPI records the inputs read ahead when they were opened (no second pass over the files).
  const analysis::MpiCalls mpi = analysis::mpi_calls(in);
  const std::vector<analysis::MessageRow> messages = analysis::message_rows(mpi.events, mpi.matching, ro.histograms);
  for (const auto& row : messages) r.rows.push_back(analysis::ReportRow{row.name, 4, 0, 0, "all", &row.stats, "", ""});
  r.clock_hz = clock;
  r.event_bits = a.event_bits;
  r.out_of_order = in.out_of_order();
  for (const auto& i : in.inputs()) r.sched_switches += i->sched_switches().size();
  r.cpu_from_sched = !timeline.empty();
  r.warnings = in.warnings();
  for (const auto& i : in.inputs()) r.inputs.push_back({i->path(), analysis::name(i->format()), i->samples()});
  if (!a.html.empty()) {
    hist::Merger latency;  // issue 12: the recordings' histogram snapshots (read with the samples)
    for (const auto& i : in.inputs()) latency.add(i->snapshots());
    const hist::Merged lat = latency.result();
    const std::string page = analysis::render_html(r, "kron rpt: " + info.path, &lat);
    write_file_atomically(a.html, [&](std::FILE* f) {
      if (std::fwrite(page.data(), 1, page.size(), f) != page.size()) throw std::runtime_error(a.html + ": write failed");
    });
  }
  const std::string text =
      a.json ? analysis::render_json(r, a.histograms)
             : analysis::render_text(r, {a.verbose, a.histograms && !a.chronological, a.wide});
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (a.verbose && !a.html.empty() && !a.json) fmt::print("wrote {}\n", a.html);
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailed;
}

KRON_COMMAND("rpt", "interval report from interval.info: count, total, min, max, mean, stddev (003 mk_rpt)", 41,
             [](CLI::App& app) {
               auto a = std::make_shared<Args>();
               app.set_help_flag("--help", "print this help");  // -h is mk_rpt's histogram option
               a->in.add(app);
               app.add_flag("-v", a->verbose, "verbose: the inputs and their sample counts");
               app.add_option("-f", a->info_file,
                              "interval description file (default interval.info when present; named scopes need none)");
               app.add_flag("-h", a->histograms, "histograms of the interval durations");
               app.add_option("-e", a->event_bits,
                              "event size: the event number is the low VALUE bits of the user data (1-64, default 32)")
                   ->check(CLI::Range(1, 64));
               app.add_flag("-s", a->summary, "add a summary row across all processors (stream \"all\")");
               app.add_flag("-n", a->chronological,
                            "do not sort: list every interval occurrence in chronological order (instead of the "
                            "sorted histogram)");
               app.add_flag("-d", a->dbl, "64-bit timestamp arithmetic (always on in kron; accepted for mk_rpt)");
               app.add_flag("--wide", a->wide,
                            "every column (class, stddev, unmatched starts and ends, ticks and us lines); the default "
                            "fits 100 columns");
               app.add_flag("--json", a->json, "print the report as one JSON document (docs/rpt-json.md)");
               app.add_option("--html", a->html, "also write a self-contained HTML page with SVG histograms");
               app.add_option("--phase", a->phases,
                              "only the samples of phase P (kron::phase, trace format 1.4; repeat for several): "
                              "the report of one phase")
                   ->allow_extra_args(false)  // one value an occurrence: the input files follow
                   ->check(CLI::Range(0u, 65535u));
               return [a] { return run(*a); };
             });

}  // namespace
}  // namespace kron::tools
