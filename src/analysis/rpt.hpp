// kron rpt (003 mk_rpt): the report of a Matcher (matcher.hpp): for every interval and stream, count,
// total, minimum, maximum, mean and standard deviation of its durations, as text or JSON. The HTML page
// is html.hpp.
//
// Source: 003 section 3.5 "Using mk_rpt" (options -v -f -h -e -s -n -d).
// Decisions (docs/errata.md): E41 the statistics of the "condensed report" (microseconds from the
// clock); E42 histograms (-h), -n lists each occurrence in time order instead, -s adds a row "all" per
// interval; E46 class 4 is reported as "all"; E48 a stream's name (source and CPU, or thread).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/hist.hpp"
#include "analysis/matcher.hpp"
#include "analysis/mpi_match.hpp"

namespace kron::analysis {

class Timeline;
class TimelineSink;

struct ReportRow {
  std::string name;
  unsigned cls;
  unsigned interval, part;
  std::string stream;  // "SOURCE/cpuN", "rank R SOURCE/tidN" (an MPI rank's, ERRATUM E395) or "all"
  const Stats* stats;
  std::string location;     // a named scope's site, "file:line function" ("" otherwise)
  std::string thread_name;  // the stream's thread's name when the recording has it (kron::thread_name, comm)
  std::optional<std::uint32_t> rank = {};  // the MPI rank of the stream's process (ERRATUM E395)
  // What the text and HTML reports show for the stream: "NAME/tidN" for a named thread ("rank R NAME/tidN" for
  // an MPI rank's), else `stream`.
  std::string shown_stream() const;
};

// One thread of a live recording (kron rpt's thread summary, ERRATUM E411): its samples' and switches' span,
// its time on a CPU (the recording's context switches: kron record --sched), its time inside named scopes
// (outermost scopes only: a nested scope is inside its parent's time) and the named scope it spent the
// most time in. Times in ticks of the report's clock.
struct ThreadSummary {
  std::uint32_t source = 0, tid = 0;
  std::optional<std::uint32_t> rank;  // the MPI rank of its process (ERRATUM E395)
  std::string thread_name;            // "" when the recording has none
  std::uint64_t first = 0, last = 0;  // its earliest and latest sample or switch
  std::uint64_t samples = 0, switches = 0;
  std::optional<std::uint64_t> on_cpu;  // running stretches (--sched); none without switches
  std::uint64_t in_scopes = 0;
  std::string top_scope;  // "" when no named scope ran on it
  std::uint64_t top_total = 0;
};

struct InputSummary {
  std::string path, format;
  std::uint64_t samples;
};

struct Report {
  std::uint64_t clock_hz = 0;
  unsigned event_bits = 32;
  std::vector<InputSummary> inputs;
  std::uint64_t samples = 0, resource_samples = 0, matched_events = 0, other_events = 0, out_of_order = 0;
  std::vector<ReportRow> rows;
  bool has_cpu = false;         // some row has on-CPU time (RptOptions::cpu_counter, or the switches: cpu_from_sched)
  bool cpu_from_sched = false;  // on-CPU time from the scheduling switches (ERRATUM E157)
  std::uint64_t sched_switches = 0;   // context switches in the inputs (kron record --sched)
  std::vector<std::string> warnings;  // Merged::warnings()
  // What the rows of an MPI recording's messages point into (E210); shared, so a copy keeps them.
  std::shared_ptr<const std::vector<MessageRow>> messages;
  SnapshotTotals latency;      // the recordings' histogram snapshots (ReportOptions::latency)
  bool event_numbers = false;  // some interval is interval.info's (event numbers: the low event_bits of the data)
  std::vector<ThreadSummary> threads;  // live recordings' threads, by name then id (make_report)
  // DECISION D25: samples that carried a loss flag (D20); when some did (or a row has cut occurrences), the
  // reports show the cut column and mark the rows whose stream lost samples while they could have been open.
  std::uint64_t loss_samples = 0;
  bool lossy = false;
};

// The rows of a matcher's intervals (named scopes, interval.info), with its counts; `names` gives the rows
// their threads' names, `ranks` their MPI ranks. The building block of make_report below. Rows come in one order
// whatever the run (ERRATUM E411): interval.info's intervals in the file's order, then named scopes by name;
// within one, its streams by MPI rank (E395), thread name, then source and thread or CPU number; "all" last.
Report report_rows(const Matcher& m, bool summary, const tracefile::NameTable* names = nullptr,
                   const Ranks* ranks = nullptr);

struct ReportOptions {
  bool summary = false;  // -s: a row "all" across streams where an interval ran on several
  bool latency = false;  // also merge the histogram snapshots (Report::latency, for the HTML page)
  // Called with each occurrence as it completes, in time order (kron rpt -n); may be empty.
  std::function<void(const Occurrence&, const Matcher&)> each;
  // A second sink fed by the same walk (the HTML page's timeline, html.hpp: PageSink); may be null. Its
  // needs() add tail parts; it is walked in batches, with the matcher.
  TimelineSink* also = nullptr;
};
// The whole report of a timeline: one walk (the matcher fed in batches, on-CPU time from the switches
// read ahead, E157, or a cpu counter), the interval rows, an MPI recording's message rows (E210), the
// inputs, counts and warnings. Throws what the inputs throw (InputError naming the file).
Report make_report(Timeline& tl, const ReportOptions& o);

double ticks_to_us(double ticks, std::uint64_t clock_hz);

// kron rpt --sort KEY: the rows by one column, largest first for the figures (count, total, mean, min, max,
// cpu: the on-CPU share, unm.); name and stream alphabetical. Ties keep make_report's order, which is also
// KEY "name"'s. Throws std::invalid_argument for another key.
inline constexpr std::string_view kSortKeys[] = {"name", "stream", "count", "total", "mean",
                                                 "min",  "max",    "cpu",   "unm"};
void sort_rows(std::vector<ReportRow>& rows, std::string_view key);

struct TextOptions {
  bool verbose = false;       // -v
  bool histograms = false;    // -h
  bool wide = false;          // --wide: every column, ticks and microseconds (else `columns`)
  std::size_t columns = 100;  // the table's width: the terminal's (kron rpt), else 100
};
std::string render_text(const Report& r, const TextOptions& opt);
// One JSON document (docs/rpt-json.md).
std::string render_json(const Report& r, bool histograms);

}  // namespace kron::analysis
