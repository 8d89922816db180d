// kron rpt --html: one self-contained page (no external file, font or script; it works from a file and as an
// e-mail attachment): a summary, the timeline, the report table and the histograms.
#pragma once
#include <string>

#include "analysis/hist.hpp"
#include "analysis/html_timeline.hpp"
#include "analysis/rpt.hpp"

namespace kron::analysis {

// The page of a report (rpt.hpp) and of the timeline the same walk gave (`tl`: html_timeline.hpp; null: no
// timeline). First a summary (the program, span, threads with their on-CPU share, the top scopes by total
// time, losses), then the timeline (id="timeline", drawn by the page's script from the data the sink kept),
// the table in human units (sortable, filtered by name or thread; ticks in each cell's tooltip), and an SVG
// histogram with labelled log axes and its p50, p90 and p99 per row that has intervals (the rows' Stats must
// hold histograms: RptOptions::histograms), small multiples where an interval runs on several threads.
// `latency` (trace format 1.4): the recording's kron::histogram snapshots, a chart per phase and of their
// total with a table of the phases. The page's script marks <html data-charts="N" data-ok="1"> once every
// chart has its bars and the timeline was drawn, for a headless browser test.
std::string render_html(const Report& r, const PageSink* tl, const SnapshotTotals* latency = nullptr);

// A duration in seconds in its unit with three significant digits ("812 ns", "12.3 µs", "1.23 ms", "5.58 s").
std::string human_duration(double seconds);

}  // namespace kron::analysis
