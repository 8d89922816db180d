// kron rpt --html: one self-contained page (no external file, font or script) of a report (rpt.hpp).
#pragma once
#include <string>

#include "analysis/hist.hpp"
#include "analysis/rpt.hpp"

namespace kron::analysis {

// The report table and an SVG histogram per interval row that has intervals (the rows' Stats must
// hold histograms: RptOptions::histograms). An inline script marks <html data-charts="N" data-ok="1">
// once every chart has its bars, for a headless browser test.
// `latency` (trace format 1.4): the recording's kron::histogram snapshots, each drawn as an SVG
// chart of its total with a table of its phases (count, p50, p99, max, mean).
std::string render_html(const Report& r, const std::string& title, const analysis::SnapshotTotals* latency = nullptr);

}  // namespace kron::analysis
