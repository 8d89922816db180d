// kron rpt --html (html.hpp): one self-contained page. The summary, the table and the histograms are written
// here as HTML and inline SVG (they read without the script); the timeline is drawn by the page's script
// (html_page.js, embedded at build time with html_page.css) from the JSON the timeline sink wrote
// (html_timeline.cpp). The script also makes the table sortable and filterable and, once the page has
// loaded, checks that every chart has its bars and the timeline drew, marking <html data-charts="N"
// data-ok="1"> so a headless browser test can tell a page that rendered from one that did not.
#include "analysis/html.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "analysis/html_page_resources.hpp"  // generated: kPageScript, kPageStyle
#include "kron/core/stats.hpp"
#include "kron/core/text.hpp"

namespace kron::analysis {

std::string human_duration(double s) {
  const double a = std::fabs(s);
  if (a == 0) return "0";
  const auto sig = [](double v, const char* unit) {  // three significant digits, no trailing zeros past them
    const int dec = v >= 100 ? 0 : v >= 10 ? 1 : 2;
    return fmt::format("{:.{}f} {}", v, dec, unit);
  };
  if (a < 1e-6) return sig(s * 1e9, "ns");
  if (a < 1e-3) return sig(s * 1e6, "µs");
  if (a < 1) return sig(s * 1e3, "ms");
  if (a < 1000) return sig(s, "s");
  return fmt::format("{:.0f} s", s);
}

namespace {

// An axis label: a round duration without trailing zeros ("1 µs", "20 ms", "500 ns").
std::string axis_label(double s) {
  const auto g = [](double v, const char* unit) { return fmt::format("{:.3g} {}", v, unit); };
  if (s < 1e-6) return g(s * 1e9, "ns");
  if (s < 1e-3) return g(s * 1e6, "µs");
  if (s < 1) return g(s * 1e3, "ms");
  return g(s, "s");
}

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

struct Page {
  explicit Page(const Report& rep) : r(rep) {}
  const Report& r;
  std::string o;
  std::back_insert_iterator<std::string> it{o};
  double sec(double ticks) const { return ticks / static_cast<double>(r.clock_hz ? r.clock_hz : 1); }
  std::string dur(double ticks) const { return human_duration(sec(ticks)); }
};

// ---- Histograms: log time axis, linear counts, p50 / p90 / p99 marked ---------------------------------

struct Bucket {
  std::uint64_t lo, hi, count;  // ticks, inclusive
};
struct Marks {
  std::uint64_t p50, p90, p99;
};
struct ChartSize {
  double w, h;
};

// The value at quantile q by nearest rank: the upper bound of its bucket, clamped to [min, max] (as E184).
std::uint64_t quantile(const std::vector<Bucket>& bs, double q, std::uint64_t min, std::uint64_t max) {
  std::uint64_t n = 0, seen = 0;
  for (const auto& b : bs) n += b.count;
  const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n))));
  for (const auto& b : bs)
    if ((seen += b.count) >= rank) return std::clamp(b.hi, min, std::max(min, max));
  return max;
}

// Decade ticks of a log axis over [lo, hi] seconds, with 2 and 5 between when it spans less than two decades.
std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> t;
  const bool fine = std::log10(hi / lo) < 2;
  for (double d = std::pow(10.0, std::floor(std::log10(lo))); d <= hi * 1.0001; d *= 10)
    for (double m : {1.0, 2.0, 5.0})
      if ((m == 1.0 || fine) && d * m >= lo * 0.9999 && d * m <= hi * 1.0001) t.push_back(d * m);
  return t;
}

void svg_chart(Page& p, const std::vector<Bucket>& bs, const Marks& mk, ChartSize sz, const std::string& label,
               std::string_view css_class, std::string_view fill) {
  std::uint64_t peak = 0;
  for (const auto& b : bs) peak = std::max(peak, b.count);
  const double left = 44, right = 10, top = 18, bottom = 30, pw = sz.w - left - right, ph = sz.h - top - bottom;
  // The axis: from the first bucket's lower bound to the last one's upper, in seconds (0 ticks drawn at 1 tick).
  const double x0 = p.sec(static_cast<double>(std::max<std::uint64_t>(1, bs.front().lo)));
  const double x1 = std::max(x0 * 1.5, p.sec(static_cast<double>(bs.back().hi) + 1));
  const double l0 = std::log10(x0), span = std::log10(x1) - l0;
  auto x = [&](double ticks) {
    return left + pw * std::clamp((std::log10(std::max(p.sec(ticks), x0)) - l0) / span, 0.0, 1.0);
  };
  fmt::format_to(
      p.it,
      "<svg class=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"{}\"><title>{}</title>\n",
      css_class, sz.w, sz.h, sz.w, sz.h, esc(label), esc(label));
  for (const double t : log_ticks(x0, x1)) {
    const double tx = left + pw * (std::log10(t) - l0) / span;
    fmt::format_to(p.it,
                   "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
                   "<text class=\"ax\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                   tx, top, top + ph, top + ph + 13, axis_label(t));
  }
  for (const double f : {0.0, 0.5, 1.0})
    fmt::format_to(p.it, "<text class=\"ax\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 4,
                   top + ph - f * ph + 4, static_cast<std::uint64_t>(std::llround(f * static_cast<double>(peak))));
  fmt::format_to(p.it, "<path class=\"axis\" d=\"M{0} {1}V{2}H{3}\"/>\n", left, top, top + ph, left + pw);
  for (const auto& b : bs) {
    if (!b.count) continue;
    const double bx = x(static_cast<double>(b.lo)), bw = std::max(1.0, x(static_cast<double>(b.hi) + 1) - bx - 0.5);
    const double bh = std::max(1.0, ph * static_cast<double>(b.count) / static_cast<double>(peak));
    fmt::format_to(p.it,
                   "<rect class=\"bar\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\">"
                   "<title>{} – {} ({} – {} ticks): {}</title></rect>\n",
                   bx, top + ph - bh, bw, bh, fill, p.dur(static_cast<double>(b.lo)), p.dur(static_cast<double>(b.hi)),
                   b.lo, b.hi, b.count);
  }
  // The marks: dashed lines, named at three heights inside the plot (they may fall on one line), their values
  // in the top right corner.
  const std::pair<const char*, std::uint64_t> marks[] = {{"p50", mk.p50}, {"p90", mk.p90}, {"p99", mk.p99}};
  for (std::size_t i = 0; i < 3; ++i) {
    const double mx = x(static_cast<double>(marks[i].second));
    const bool at_right = mx > left + pw * 0.8;
    fmt::format_to(
        p.it,
        "<line class=\"mark\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"><title>{3} {4}</title></line>"
        "<text class=\"mk\" x=\"{5:.1f}\" y=\"{6}\" text-anchor=\"{7}\">{3}</text>\n",
        mx, top, top + ph, marks[i].first, p.dur(static_cast<double>(marks[i].second)), at_right ? mx - 2 : mx + 2,
        top + 10 + 11 * static_cast<double>(i), at_right ? "end" : "start");
  }
  fmt::format_to(p.it, "<text class=\"mk\" x=\"{}\" y=\"{}\" text-anchor=\"end\">p50 {} · p90 {} · p99 {}</text>\n",
                 left + pw, top - 6, p.dur(static_cast<double>(mk.p50)), p.dur(static_cast<double>(mk.p90)),
                 p.dur(static_cast<double>(mk.p99)));
  p.o += "</svg>\n";
}

std::vector<Bucket> buckets_of(const Histogram& h) {
  std::vector<Bucket> bs;
  unsigned first = Histogram::kBuckets, last = 0;
  for (unsigned b = 0; b < Histogram::kBuckets; ++b)
    if (h.counts[b]) first = std::min(first, b), last = b;
  for (unsigned b = first; b <= last && first < Histogram::kBuckets; ++b)
    bs.push_back({Histogram::lower(b), Histogram::upper(b), h.counts[b]});
  return bs;
}

std::vector<Bucket> buckets_of(const LatencyHistogram& h) {
  std::vector<Bucket> bs;
  for (unsigned b = 0; b < stats::kHistBuckets; ++b)
    if (h.buckets[b]) bs.push_back({stats::bucket_range(b).lo, stats::bucket_range(b).hi, h.buckets[b]});
  return bs;
}

// An interval's charts: one per row (thread, and "all"), small multiples side by side when there are several.
unsigned interval_charts(Page& p) {
  std::map<std::string, std::vector<const ReportRow*>> by_name;
  std::vector<std::string> order;
  for (const auto& row : p.r.rows) {
    if (!row.stats->count || !row.stats->hist) continue;
    auto& v = by_name[row.name];
    if (v.empty()) order.push_back(row.name);
    v.push_back(&row);
  }
  unsigned charts = 0;
  for (const auto& name : order) {
    const auto& rows = by_name[name];
    fmt::format_to(p.it, "<section class=\"chart\">\n<h3>{}</h3>\n<div class=\"multiples\">\n", esc(name));
    const ChartSize sz = rows.size() > 1 ? ChartSize{400, 150} : ChartSize{620, 190};
    for (const ReportRow* row : rows) {
      const Stats& s = *row->stats;
      const std::vector<Bucket> bs = buckets_of(*s.hist);
      const Marks mk{quantile(bs, 0.5, s.min, s.max), quantile(bs, 0.9, s.min, s.max),
                     quantile(bs, 0.99, s.min, s.max)};
      const std::string label = fmt::format("{} [{}]: {} intervals", row->name, row->shown_stream(), s.count);
      fmt::format_to(p.it, "<figure><figcaption>{}: {} × mean {}</figcaption>\n", esc(row->shown_stream()), s.count,
                     p.dur(s.mean()));
      svg_chart(p, bs, mk, sz, label, "hist", "#3b6ea8");
      p.o += "</figure>\n";
      ++charts;
    }
    p.o += "</div>\n</section>\n";
  }
  if (!charts) p.o += "<p>No interval occurred.</p>\n";
  return charts;
}

// The kron::histogram snapshots (trace format 1.4): per histogram a table of its phases and a chart per
// phase (small multiples) and of the total.
unsigned latency_charts(Page& p, const SnapshotTotals& latency) {
  if (latency.hists.empty()) return 0;
  unsigned charts = 0;
  p.o += "<h2>Latency histograms (kron::histogram)</h2>\n";
  for (const auto& [hist_name, phases] : latency.hists) {
    const std::string& name = hist_name;  // a plain reference: lambdas may not capture a structured binding (clang)
    LatencyHistogram total;
    p.o +=
        "<section class=\"chart\">\n<table class=\"phases\"><thead><tr><th>histogram</th><th>phase</th>"
        "<th>count</th><th>p50</th><th>p90</th><th>p99</th><th>max</th><th>mean</th></tr></thead><tbody>\n";
    auto row = [&](const std::string& phase, const LatencyHistogram& h) {
      const LatencySummary s = summarize(h);
      fmt::format_to(p.it,
                     "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                     "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
                     esc(name), phase, s.count, p.dur(static_cast<double>(s.p50)), p.dur(static_cast<double>(s.p90)),
                     p.dur(static_cast<double>(s.p99)), p.dur(static_cast<double>(s.max)), p.dur(s.mean));
    };
    for (const auto& [ph, h] : phases) {
      row(std::to_string(ph), h);
      total.add(h);
    }
    row("all", total);
    p.o += "</tbody></table>\n<div class=\"multiples\">\n";
    auto chart = [&](const std::string& what, const LatencyHistogram& h, ChartSize sz) {
      const LatencySummary s = summarize(h);
      if (!s.count) return;
      const std::string label = fmt::format("{} ({}): {} values", name, what, s.count);
      fmt::format_to(p.it, "<figure><figcaption>{}</figcaption>\n", esc(label));
      svg_chart(p, buckets_of(h), Marks{s.p50, s.p90, s.p99}, sz, label, "hist latency", "#2e8b57");
      p.o += "</figure>\n";
      ++charts;
    };
    chart("all phases", total, ChartSize{620, 190});
    if (phases.size() > 1)
      for (const auto& [ph, h] : phases) chart(fmt::format("phase {}", ph), h, ChartSize{400, 150});
    p.o += "</div>\n</section>\n";
  }
  return charts;
}

// ---- Summary and table ---------------------------------------------------------------------------------

void summary(Page& p, const PageSink* tl) {
  const Report& r = p.r;
  p.o += "<section id=\"summary\">\n<div class=\"cards\">\n";
  auto card = [&](const std::string& k, const std::string& v) {
    fmt::format_to(p.it, "<div class=\"card\"><div class=\"k\">{}</div><div class=\"v\">{}</div></div>\n", esc(k),
                   esc(v));
  };
  if (tl) card("span", human_duration(static_cast<double>(tl->span_ns()) * 1e-9));
  card("samples", fmt::format("{}", r.samples));
  if (tl) card("threads", fmt::format("{}", tl->lanes().size()));
  std::uint64_t intervals = 0;
  for (const auto& row : r.rows)
    if (row.stream != "all" || row.cls == 4) intervals += row.stats->count;
  card("scopes and intervals", fmt::format("{}", intervals));
  if (r.sched_switches) card("context switches", fmt::format("{}", r.sched_switches));
  const std::uint64_t lost = tl ? tl->lost_samples() : 0;
  card("lost", lost || !r.warnings.empty() ? fmt::format("{} samples", lost) : std::string("nothing"));
  if (r.lossy) {  // DECISION D25
    std::uint64_t cut = 0;
    for (const auto& row : r.rows)
      if (row.stream != "all" || row.cls == 4) cut += row.stats->cut;
    card("cut by losses", fmt::format("{} occurrences", cut));
  }
  p.o += "</div>\n<div class=\"cols\">\n";
  // The top scopes by total time (summed over threads), with their share of the largest.
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> by_name;  // total ticks, count (no messages)
  for (const auto& row : r.rows)
    if (row.stream != "all" && row.cls != 4) {
      by_name[row.name].first += row.stats->total;
      by_name[row.name].second += row.stats->count;
    }
  std::vector<std::pair<std::string, std::pair<std::uint64_t, std::uint64_t>>> top(by_name.begin(), by_name.end());
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  if (top.size() > 8) top.resize(8);
  p.o += "<div><h3>Top scopes by total time</h3>\n<table class=\"top\">\n";
  for (const auto& [name, tc] : top) {
    const double share =
        top.front().second.first ? static_cast<double>(tc.first) / static_cast<double>(top.front().second.first) : 0;
    fmt::format_to(p.it,
                   "<tr><td class=\"nm\" title=\"{0}\">{0}</td><td class=\"n\">{1}</td><td class=\"n\">{2}×</td>"
                   "<td><span class=\"meter\" style=\"width:{3:.0f}px\"></span></td></tr>\n",
                   esc(name), p.dur(static_cast<double>(tc.first)), tc.second, 120 * share);
  }
  if (top.empty()) p.o += "<tr><td>no scope or interval</td></tr>\n";
  p.o += "</table></div>\n";
  if (tl && !tl->lanes().empty()) {
    p.o += "<div><h3>Threads</h3>\n<table class=\"top\">\n";
    for (const auto& l : tl->lanes()) {
      const std::uint64_t known = l.running + l.waiting + l.preempted;
      const double on = known ? static_cast<double>(l.running) / static_cast<double>(known) : -1;
      fmt::format_to(
          p.it, "<tr><td class=\"nm\" title=\"{0} — {1}\">{1}</td><td class=\"n\">{2}</td><td>{3}</td></tr>\n",
          esc(l.group), esc(l.label), on < 0 ? std::string("–") : fmt::format("{:.0f}% on CPU", 100 * on),
          on < 0 ? std::string() : fmt::format("<span class=\"meter cpu\" style=\"width:{:.0f}px\"></span>", 100 * on));
    }
    p.o += "</table></div>\n";
  }
  p.o += "</div>\n";
  for (const auto& w : r.warnings)
    fmt::format_to(p.it, "<p class=\"warning\"><strong>Warning:</strong> {}</p>\n", esc(w));
  p.o += "</section>\n";
}

void table(Page& p) {
  const Report& r = p.r;
  p.o +=
      "<h2>Scopes and intervals</h2>\n<p class=\"tools\"><input id=\"filter\" type=\"search\" "
      "placeholder=\"filter by name or thread\" aria-label=\"filter\"> <span class=\"hint\">click a column to sort; "
      "hover a cell for ticks and details</span></p>\n<table id=\"report\">\n<thead><tr>"
      "<th class=\"s\">interval</th><th class=\"s\">thread</th><th>count</th><th>total</th><th>mean</th>"
      "<th>p50</th><th>p99</th><th>max</th>";
  if (r.has_cpu) p.o += "<th>on CPU</th>";
  p.o += "<th title=\"starts and ends without their pair\">unpaired</th>";
  // DECISION D25: a recording that lost samples: the cut column, "*" on the rows whose thread lost samples
  // while they could have been open.
  if (r.lossy)
    p.o +=
        "<th title=\"occurrences cut by lost samples, never timed; *: the thread lost samples while this "
        "could have been open (count and total may miss occurrences)\">cut</th>";
  p.o += "</tr></thead>\n<tbody>\n";
  for (const auto& row : r.rows) {
    const Stats& s = *row.stats;
    const bool n = s.count > 0;
    std::vector<Bucket> bs;
    if (n && s.hist) bs = buckets_of(*s.hist);
    auto cell = [&](bool ok, double ticks, std::string_view tip) {
      if (!ok) return std::string("<td class=\"n\" data-v=\"-1\">–</td>");
      return fmt::format("<td class=\"n\" data-v=\"{}\" title=\"{:.0f} ticks{}\">{}</td>", ticks, ticks, tip,
                         p.dur(ticks));
    };
    const std::string tip =
        fmt::format("{}{}class {}; min {}; stddev {}", row.location.empty() ? "" : esc(row.location),
                    row.location.empty() ? "" : "; ", row.cls, n ? p.dur(static_cast<double>(s.min)) : "–",
                    n ? p.dur(s.stddev()) : "–");
    fmt::format_to(p.it, "<tr{}><td class=\"nm\" title=\"{}\">{}</td><td class=\"nm\" title=\"{}\">{}</td>",
                   row.stream == "all" ? " class=\"all\"" : "", tip, esc(row.name), esc(row.stream),
                   esc(row.shown_stream()));
    fmt::format_to(p.it, "<td class=\"n\" data-v=\"{0}\">{0}</td>", s.count);
    p.o += cell(n, static_cast<double>(s.total), "");
    p.o += cell(n, s.mean(), "");
    p.o += cell(n && !bs.empty(), static_cast<double>(bs.empty() ? 0 : quantile(bs, 0.5, s.min, s.max)),
                " (bucket bound)");
    p.o += cell(n && !bs.empty(), static_cast<double>(bs.empty() ? 0 : quantile(bs, 0.99, s.min, s.max)),
                " (bucket bound)");
    p.o += cell(n, static_cast<double>(s.max), "");
    if (r.has_cpu)
      p.o += s.cpu_count
                 ? fmt::format("<td class=\"n\" data-v=\"{0:.4f}\">{1:.0f}%</td>", s.cpu_share(), 100 * s.cpu_share())
                 : std::string("<td class=\"n\" data-v=\"-1\">–</td>");
    fmt::format_to(p.it, "<td class=\"n\" data-v=\"{0}\" title=\"{1} starts, {2} ends\">{0}</td>",
                   s.unmatched_starts + s.unmatched_ends, s.unmatched_starts, s.unmatched_ends);
    if (r.lossy)
      fmt::format_to(p.it, "<td class=\"n\" data-v=\"{0}\" title=\"{1}\">{0}{2}</td>", s.cut,
                     s.lossy ? "its thread lost samples while this could have been open" : "no loss while open",
                     s.lossy ? "*" : "");
    p.o += "</tr>\n";
  }
  p.o += "</tbody>\n</table>\n";
}

// The page's title: the recorded program (its command line's first word), else the first input's name.
std::string page_title(const Report& r, const PageSink* tl) {
  std::string prog = tl ? tl->program() : std::string();
  if (const auto sp = prog.find(' '); sp != std::string::npos) prog.resize(sp);
  if (const auto sl = prog.rfind('/'); sl != std::string::npos) prog.erase(0, sl + 1);
  if (prog == "kron" && tl && !tl->lanes().empty()) {  // kron merge's file: the ranks' process, by its name
    prog = tl->lanes().front().process;
    if (prog.empty()) prog = "kron merge";
  }
  if (prog.empty() && !r.inputs.empty()) {
    prog = r.inputs.front().path;
    if (const auto sl = prog.rfind('/'); sl != std::string::npos) prog.erase(0, sl + 1);
  }
  return prog.empty() ? std::string("kron rpt") : prog + " — kron rpt";
}

}  // namespace

std::string render_html(const Report& r, const PageSink* tl, const SnapshotTotals* latency) {
  Page p{r};
  const std::string title = page_title(r, tl);
  fmt::format_to(p.it,
                 "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n"
                 "<style>\n{}</style>\n</head>\n<body>\n<header><h1>{}</h1>\n<p class=\"sub\">",
                 esc(title), kPageStyle, esc(title));
  if (tl && !tl->program().empty()) fmt::format_to(p.it, "<code>{}</code> · ", esc(tl->program()));
  for (const auto& in : r.inputs)
    fmt::format_to(p.it, "<code>{}</code> ({}, {} samples) · ", esc(in.path), in.format, in.samples);
  fmt::format_to(
      p.it,
      "clock {} Hz · event number: low {} bits of the user data · interval events {}, other events {}{}</p>\n"
      "</header>\n",
      r.clock_hz, r.event_bits, r.matched_events, r.other_events,
      r.out_of_order ? fmt::format(", {} out of time order", r.out_of_order) : std::string());
  summary(p, tl);
  if (tl) {
    p.o +=
        "<h2>Timeline</h2>\n<div id=\"timeline\" tabindex=\"0\" aria-label=\"timeline: wheel or W/S to zoom, drag or "
        "A/D to pan, 0 to reset\"><canvas></canvas><div class=\"tip\" hidden></div></div>\n"
        "<p class=\"legend\" id=\"legend\"></p>\n";
  }
  table(p);
  p.o +=
      "<h2>Histograms</h2>\n<p class=\"hint\">Durations on a log axis; the dashed lines mark p50, p90 and p99 "
      "(the upper bound of the bucket holding them).</p>\n";
  unsigned charts = interval_charts(p);
  if (latency) charts += latency_charts(p, *latency);
  fmt::format_to(p.it, "<script type=\"application/json\" id=\"kron-data\">{}</script>\n",
                 tl ? tl->data_json() : std::string("null"));
  fmt::format_to(p.it, "<script>\nvar KRON_CHARTS = {};\n{}</script>\n</body>\n</html>\n", charts, kPageScript);
  return p.o;
}

}  // namespace kron::analysis
