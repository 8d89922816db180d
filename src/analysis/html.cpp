// kron rpt --html: one self-contained page (no external file, font or script): the report table and, for
// every row that has intervals, its histogram drawn as inline SVG. A small inline script checks, once the
// page has loaded, that every chart has its bars and marks <html data-charts="N" data-ok="1"> so a
// headless browser test can tell a page that rendered from one that did not.
#include "analysis/html.hpp"
#include "kron/core/text.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "kron/core/stats.hpp"

namespace kron::analysis {

namespace {

std::string esc(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : text::utf8_safe(s)) switch (c) {  // ERRATUM E131: bytes that are not UTF-8 as \xNN
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  return o;
}

std::string num(double v) { return fmt::format("{:.3f}", v); }

// A bar chart of `buckets` buckets, count(b) values in bucket b of [lo(b), hi(b)] ticks: a bar per bucket from
// the first to the last non-empty one, so gaps show as gaps.
template <class Count, class Lo, class Hi>
std::string svg_bars(unsigned buckets, Count count, Lo lo, Hi hi, std::uint64_t clock_hz, const std::string& label,
                     std::string_view css_class, std::string_view fill, std::string_view caption) {
  unsigned first = buckets, last = 0;
  std::uint64_t peak = 0;
  for (unsigned b = 0; b < buckets; ++b)
    if (count(b)) {
      first = std::min(first, b);
      last = b;
      peak = std::max(peak, count(b));
    }
  if (first == buckets) return {};
  const unsigned n = last - first + 1;
  const double W = 640, H = 200, left = 56, right = 12, top = 12, bottom = 40;
  const double pw = W - left - right, ph = H - top - bottom, bw = pw / n;
  std::string o;
  auto it = std::back_inserter(o);
  fmt::format_to(it,
                 "<svg class=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                 "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n",
                 css_class, W, H, W, H, esc(label));
  fmt::format_to(it, "<title>{}</title>\n", esc(label));
  fmt::format_to(it, "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#444\"/>\n", left, top + ph, left + pw,
                 top + ph);
  fmt::format_to(it, "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#444\"/>\n", left, top, left, top + ph);
  fmt::format_to(it, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\">{}</text>\n", left - 4, top + 10,
                 peak);
  fmt::format_to(it, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\">0</text>\n", left - 4, top + ph);
  for (unsigned b = first; b <= last; ++b) {
    const std::uint64_t c = count(b);
    if (!c) continue;
    const double bh = ph * static_cast<double>(c) / static_cast<double>(peak);
    const double x = left + (b - first) * bw;
    fmt::format_to(it,
                   "<rect class=\"bar\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\">"
                   "<title>{} - {} ticks ({} - {} us): {}</title></rect>\n",
                   x + 0.5, top + ph - bh, std::max(1.0, bw - 1.0), bh, fill, lo(b), hi(b),
                   num(ticks_to_us(static_cast<double>(lo(b)), clock_hz)),
                   num(ticks_to_us(static_cast<double>(hi(b)), clock_hz)), c);
  }
  fmt::format_to(it, "<text x=\"{}\" y=\"{}\" font-size=\"11\">{} us</text>\n", left, top + ph + 16,
                 num(ticks_to_us(static_cast<double>(lo(first)), clock_hz)));
  fmt::format_to(it, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\">{} us</text>\n", left + pw,
                 top + ph + 16, num(ticks_to_us(static_cast<double>(hi(last)), clock_hz)));
  fmt::format_to(it, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">{}</text>\n", left + pw / 2,
                 top + ph + 32, caption);
  o += "</svg>\n";
  return o;
}

// An interval's durations (rpt's log-linear Histogram).
std::string svg_histogram(const Histogram& h, std::uint64_t clock_hz, const std::string& label) {
  return svg_bars(
      Histogram::kBuckets, [&](unsigned b) { return h.counts[b]; }, [](unsigned b) { return Histogram::lower(b); },
      [](unsigned b) { return Histogram::upper(b); }, clock_hz, label, "hist", "#3b6ea8",
      "interval duration (log-linear buckets)");
}

// A kron::histogram's total, a bar per bucket (stats::bucket_range).
std::string svg_latency(const analysis::LatencyHistogram& h, std::uint64_t clock_hz, const std::string& label) {
  return svg_bars(
      stats::kHistBuckets, [&](unsigned b) { return h.buckets[b]; },
      [](unsigned b) { return stats::bucket_range(b).lo; }, [](unsigned b) { return stats::bucket_range(b).hi; },
      clock_hz, label, "hist latency", "#2e8b57", "latency (004's compact float buckets, 6.25%)");
}

}  // namespace

std::string render_html(const Report& r, const std::string& title, const analysis::SnapshotTotals* latency) {
  std::string o;
  auto it = std::back_inserter(o);
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  fmt::format_to(it, "<title>{}</title>\n", esc(title));
  o += R"(<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #bbb; padding: 2px 6px; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #eef; }
tr.all td { font-weight: bold; }
section.chart { margin: 1em 0; }
section.chart h3 { font-size: 14px; margin: 0.2em 0; }
.bar:hover { fill: #e07b39; }
</style>
</head>
<body>
)";
  fmt::format_to(it, "<h1>{}</h1>\n", esc(title));
  fmt::format_to(it,
                 "<p>Timestamp clock {} Hz; event number = low {} bits of the user data. Samples {} (resource {}), "
                 "interval events {}, other events {}{}.</p>\n",
                 r.clock_hz, r.event_bits, r.samples, r.resource_samples, r.matched_events, r.other_events,
                 r.out_of_order ? fmt::format(", {} out of time order", r.out_of_order) : std::string());
  for (const auto& w : r.warnings)
    fmt::format_to(it, "<p class=\"warning\"><strong>Warning:</strong> {}</p>\n", esc(w));
  o += "<p>Inputs:";
  for (const auto& in : r.inputs)
    fmt::format_to(it, " <code>{}</code> ({}, {} samples)", esc(in.path), in.format, in.samples);
  o += "</p>\n<table id=\"report\">\n<thead><tr><th>interval</th><th>class</th><th>stream</th><th>count</th>"
       "<th>total (ticks)</th><th>min</th><th>max</th><th>mean</th><th>stddev</th>"
       "<th>total (us)</th><th>min (us)</th><th>max (us)</th><th>mean (us)</th><th>stddev (us)</th>"
       "<th>unmatched starts</th><th>unmatched ends</th></tr></thead>\n<tbody>\n";
  for (const auto& row : r.rows) {
    const Stats& s = *row.stats;
    const bool n = s.count > 0;
    auto us = [&](double t) { return num(ticks_to_us(t, r.clock_hz)); };
    auto opt = [&](bool ok, const std::string& v) { return ok ? v : std::string("-"); };
    fmt::format_to(it,
                   "<tr{}><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                   "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                   "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                   "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
                   row.stream == "all" ? " class=\"all\"" : "", esc(row.name), row.cls, esc(row.shown_stream()),
                   s.count, s.total, opt(n, std::to_string(s.min)), opt(n, std::to_string(s.max)),
                   opt(n, num(s.mean())), opt(n, num(s.stddev())), us(static_cast<double>(s.total)),
                   opt(n, us(static_cast<double>(s.min))), opt(n, us(static_cast<double>(s.max))), opt(n, us(s.mean())),
                   opt(n, us(s.stddev())), s.unmatched_starts, s.unmatched_ends);
  }
  o += "</tbody>\n</table>\n<h2>Histograms</h2>\n";
  unsigned charts = 0;
  for (const auto& row : r.rows) {
    const Stats& s = *row.stats;
    if (!s.count || !s.hist) continue;
    const std::string label = fmt::format("{} [{}]: {} intervals", row.name, row.shown_stream(), s.count);
    fmt::format_to(it, "<section class=\"chart\">\n<h3>{}</h3>\n{}</section>\n", esc(label),
                   svg_histogram(*s.hist, r.clock_hz, label));
    ++charts;
  }
  if (!charts) o += "<p>No interval occurred.</p>\n";
  if (latency && !latency->hists.empty()) {  // kron::histogram, per phase
    o += "<h2>Latency histograms (kron::histogram)</h2>\n";
    for (const auto& [hname, phases] : latency->hists) {
      const std::string& name =
          hname;  // (a lambda below uses it: structured bindings are not captured before C++20's P1091 in clang)
      analysis::LatencyHistogram total;
      o +=
          "<section class=\"chart\">\n<table class=\"phases\"><thead><tr><th>histogram</th><th>phase</th><th>count</th>"
          "<th>p50 (us)</th><th>p99 (us)</th><th>max (us)</th><th>mean (us)</th></tr></thead><tbody>\n";
      auto row = [&](const std::string& phase, const analysis::LatencyHistogram& h) {
        const analysis::LatencySummary s = analysis::summarize(h);
        auto us = [&](double t) { return num(ticks_to_us(t, r.clock_hz)); };
        fmt::format_to(it,
                       "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                       "<td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
                       esc(name), phase, s.count, us(static_cast<double>(s.p50)), us(static_cast<double>(s.p99)),
                       us(static_cast<double>(s.max)), us(s.mean));
      };
      for (const auto& [p, h] : phases) {
        row(std::to_string(p), h);
        total.add(h);
      }
      row("all", total);
      o += "</tbody></table>\n";
      const std::string label = fmt::format("{}: {} values", name, total.count());
      fmt::format_to(it, "<h3>{}</h3>\n{}</section>\n", esc(label), svg_latency(total, r.clock_hz, label));
      ++charts;
    }
  }
  fmt::format_to(it, R"(<script>
window.addEventListener('load', function () {{
  var svgs = document.querySelectorAll('svg.hist'), ok = svgs.length === {};
  svgs.forEach(function (s) {{
    var b = s.getBoundingClientRect();
    if (s.querySelectorAll('rect.bar').length === 0 || b.width <= 0 || b.height <= 0) ok = false;
  }});
  document.documentElement.setAttribute('data-charts', String(svgs.length));
  document.documentElement.setAttribute('data-ok', ok ? '1' : '0');
}});
</script>
</body>
</html>
)",
                 charts);
  return o;
}

}  // namespace kron::analysis
