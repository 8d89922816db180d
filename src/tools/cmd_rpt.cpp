// kron rpt: 003 mk_rpt. The work is in src/analysis/: one walk of the timeline (timeline.hpp) into the
// report (rpt.cpp: make_report; matcher.cpp), printed as text, JSON or HTML (html.cpp).
#include <fmt/core.h>

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>
#include <span>
#include <vector>

#include "analysis/html.hpp"
#include "analysis/interval_info.hpp"
#include "analysis/rpt.hpp"
#include "analysis/timeline.hpp"
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
  std::string sort = "name";  // --sort COLUMN (analysis::sort_rows)
  std::string info_file;      // -f; none: interval.info when it exists (named scopes need none)
  unsigned event_bits = 32;
  std::string html;
  std::vector<unsigned> phases;  // --phase P: only the samples of these phases (trace format 1.4)
};

// The table's width: the terminal's when standard output is one, else 100 (a file, a pipe: the same every time).
std::size_t terminal_columns() {
  winsize w{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 60) return w.ws_col;
  return 100;
}

int run(const Args& a) {
  // Named scopes are paired without interval.info (which stays for event numbers, 003's workflow): without
  // -f, interval.info is read when there is one.
  analysis::IntervalInfo info;
  info.path = "interval.info";
  if (!a.info_file.empty() || ::access("interval.info", F_OK) == 0)
    info = analysis::load_interval_info(a.info_file.empty() ? "interval.info" : a.info_file);
  analysis::Merged in = a.in.open();
  analysis::TimelineOptions to;
  to.info = &info;
  to.rpt.event_bits = a.event_bits;
  to.rpt.histograms = a.histograms || !a.html.empty();
  to.phases = a.phases;  // --phase: the other samples never reach the matcher
  to.batch = 256;
  analysis::Timeline tl(in, to);
  const std::uint64_t clock = in.clock_hz();

  // -n: every occurrence as it completes, in time order (printed while reading: each line is final).
  std::string buf;
  auto flush = [&] {
    if (!buf.empty()) std::fwrite(buf.data(), 1, buf.size(), stdout);
    buf.clear();
  };
  analysis::ReportOptions ro;
  ro.summary = a.summary;
  ro.latency = !a.html.empty();
  analysis::PageSink page_sink;  // --html: the page's timeline, from the same walk
  if (!a.html.empty()) ro.also = &page_sink;
  const std::size_t ws = tl.ranks().any() ? 31 : 24;  // -n's stream column: an MPI rank's begins "rank R " (E395)
  if (a.chronological && !a.json) {
    buf += fmt::format("{:>16}  {:>14}  {:>14}  {:<{}}  {}\n", "end (us)", "ticks", "us", "stream", ws, "interval");
    ro.each = [&](const analysis::Occurrence& o, const analysis::Matcher& m) {
      const std::string stream =
          m.info().intervals[o.interval].cls == 4 ? "all" : tl.stream_name(m.streams()[o.stream]);
      fmt::format_to(std::back_inserter(buf), "{:>16.3f}  {:>14}  {:>14.3f}  {:<{}}  {}\n",
                     analysis::ticks_to_us(static_cast<double>(o.end), clock), o.duration,
                     analysis::ticks_to_us(static_cast<double>(o.duration), clock), text::terminal_safe(stream), ws,
                     text::terminal_safe(m.part_name(o.interval, o.part)));
      if (buf.size() >= (1 << 20)) flush();
    };
  }
  analysis::Report r;
  try {
    r = analysis::make_report(tl, ro);
  } catch (...) {
    flush();
    throw;
  }
  if (!buf.empty()) buf += '\n';
  flush();
  analysis::sort_rows(r.rows, a.sort);
  if (!a.html.empty()) {
    const std::string page = analysis::render_html(r, &page_sink, &r.latency);
    write_file_atomically(a.html, [&](std::FILE* f) {
      if (std::fwrite(page.data(), 1, page.size(), f) != page.size())
        throw std::runtime_error(a.html + ": write failed");
    });
  }
  const std::string text =
      a.json ? analysis::render_json(r, a.histograms)
             : analysis::render_text(r, {a.verbose, a.histograms && !a.chronological, a.wide, terminal_columns()});
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (a.verbose && !a.html.empty() && !a.json) fmt::print("wrote {}\n", a.html);
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailed;
}

KRON_COMMAND("rpt",
             "where the time goes: named scopes and interval.info's intervals per thread (count, total, mean, min, "
             "max, on-CPU share), a summary per thread (003 mk_rpt)",
             41, [](CLI::App& app) {
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
               app.add_option("--sort", a->sort,
                              "order the rows by a column: name (the default: a stable order), stream, or largest "
                              "first count, total, mean, min, max, cpu, unm")
                   ->check(CLI::IsMember(
                       std::vector<std::string>(std::begin(analysis::kSortKeys), std::end(analysis::kSortKeys))));
               app.add_flag("--json", a->json, "print the report as one JSON document (docs/rpt-json.md)");
               app.add_option("--html", a->html,
                              "also write a self-contained HTML page: summary, timeline, table and histograms");
               app.add_option("--phase", a->phases,
                              "only the samples of phase P (kron::phase, trace format 1.4; repeat for several): "
                              "the report of one phase")
                   ->allow_extra_args(false)  // one value an occurrence: the input files follow
                   ->check(CLI::Range(0u, 65535u));
               return [a] { return run(*a); };
             });

}  // namespace
}  // namespace kron::tools
