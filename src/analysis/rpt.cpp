// kron rpt: the text / JSON report of a Matcher (matcher.cpp). See rpt.hpp; the HTML page is in html.cpp.
#include "analysis/rpt.hpp"
#include "kron/core/text.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "kron/core/error.hpp"

namespace kron::analysis {

double ticks_to_us(double ticks, std::uint64_t clock_hz) { return ticks * 1e6 / static_cast<double>(clock_hz); }

// ---- Report --------------------------------------------------------------------------------------

Report make_report(const Matcher& m, bool summary) {
  Report r;
  r.samples = m.samples();
  r.resource_samples = m.resource_samples();
  r.matched_events = m.matched_events();
  r.other_events = m.other_events();
  std::vector<std::uint32_t> order(m.streams().size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const auto &x = m.streams()[a], &y = m.streams()[b];
    return x.key() < y.key();
  });
  const auto& ivs = m.info().intervals;
  for (unsigned i = 0; i < ivs.size(); ++i)
    for (unsigned p = 0; p < m.parts(i); ++p) {
      const std::string name = m.part_name(i, p);
      if (ivs[i].named) {  // a named scope: rows only where it happened (the recording's names list them all)
        bool seen = false;
        for (const auto st : order) seen = seen || m.stats(i, p, st).active();
        if (!seen) continue;
      }
      bool any = false;
      if (ivs[i].cls != 4)
        for (const auto st : order) {
          const Stats& s = m.stats(i, p, st);
          if (!s.active()) continue;
          any = true;
          r.rows.push_back(ReportRow{name, ivs[i].cls, i, p, stream_name(m.streams()[st]), &s, ivs[i].location});
        }
      if (ivs[i].cls == 4 || summary || !any)
        r.rows.push_back(ReportRow{name, ivs[i].cls, i, p, "all", &m.stats(i, p, Matcher::kAll), ivs[i].location});
    }
  return r;
}

namespace {
std::string fixed3(double v) { return fmt::format("{:.3f}", v); }
}  // namespace

std::string render_text(const Report& r, const TextOptions& opt) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "kron rpt: timestamp clock {} Hz; event number = low {} bits of the user data\n", r.clock_hz,
                 r.event_bits);
  if (opt.verbose)
    for (const auto& in : r.inputs) fmt::format_to(it, "input {} ({}): {} samples\n", in.path, in.format, in.samples);
  fmt::format_to(it, "samples {} (resource {}), interval events {}, other events {}", r.samples, r.resource_samples,
                 r.matched_events, r.other_events);
  if (r.out_of_order) fmt::format_to(it, ", {} out of time order", r.out_of_order);
  out += "\n";
  for (const auto& w : r.warnings) fmt::format_to(it, "warning: {}\n", w);
  out += "\n";
  std::size_t wn = 8, ws = 6;
  for (const auto& row : r.rows) {
    wn = std::max(wn, row.name.size());
    ws = std::max(ws, row.stream.size());
  }
  fmt::format_to(it, "{:<{}}  {:>5}  {:<{}}  {:>9}  {:<5}  {:>14}  {:>12}  {:>12}  {:>14}  {:>14}  {:>9}  {:>9}\n",
                 "interval", wn, "class", "stream", ws, "count", "unit", "total", "min", "max", "mean", "stddev",
                 "unm.start", "unm.end");
  for (const auto& row : r.rows) {
    const Stats& s = *row.stats;
    const bool n = s.count > 0;
    fmt::format_to(it, "{:<{}}  {:>5}  {:<{}}  {:>9}  {:<5}  {:>14}  {:>12}  {:>12}  {:>14}  {:>14}  {:>9}  {:>9}\n",
                   row.name, wn, row.cls, row.stream, ws, s.count, "ticks", s.total, n ? std::to_string(s.min) : "-",
                   n ? std::to_string(s.max) : "-", n ? fixed3(s.mean()) : "-", n ? fixed3(s.stddev()) : "-",
                   s.unmatched_starts, s.unmatched_ends);
    auto us = [&](double t) { return fixed3(ticks_to_us(t, r.clock_hz)); };
    fmt::format_to(it, "{:<{}}  {:>5}  {:<{}}  {:>9}  {:<5}  {:>14}  {:>12}  {:>12}  {:>14}  {:>14}\n", "", wn, "", "",
                   ws, "", "us", us(static_cast<double>(s.total)), n ? us(static_cast<double>(s.min)) : "-",
                   n ? us(static_cast<double>(s.max)) : "-", n ? us(s.mean()) : "-", n ? us(s.stddev()) : "-");
  }
  if (opt.histograms) {
    for (const auto& row : r.rows) {
      const Stats& s = *row.stats;
      if (!s.count || !s.hist) continue;
      fmt::format_to(it, "\nhistogram: {} [{}], {} intervals (ticks; us)\n", row.name, row.stream, s.count);
      std::uint64_t peak = 0;
      for (auto c : s.hist->counts) peak = std::max(peak, c);
      for (unsigned b = 0; b < Histogram::kBuckets; ++b) {
        const std::uint64_t c = s.hist->counts[b];
        if (!c) continue;
        const auto lo = Histogram::lower(b), hi = Histogram::upper(b);
        const auto bar = static_cast<std::size_t>((c * 40 + peak - 1) / peak);
        fmt::format_to(it, "  {:>12} - {:<12} {:>12} - {:<12} {:>9}  {}\n", lo, hi,
                       fixed3(ticks_to_us(static_cast<double>(lo), r.clock_hz)),
                       fixed3(ticks_to_us(static_cast<double>(hi), r.clock_hz)), c, std::string(bar, '#'));
      }
    }
  }
  return out;
}

std::string render_json(const Report& r, bool histograms) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["tool"] = "kron rpt";
  j["schema"] = 1;
  j["clock_hz"] = r.clock_hz;
  j["event_bits"] = r.event_bits;
  ordered_json inputs = ordered_json::array();
  for (const auto& in : r.inputs) inputs.push_back({{"file", text::utf8_safe(in.path)}, {"format", in.format}, {"samples", in.samples}});
  j["inputs"] = inputs;
  j["samples"] = r.samples;
  j["resource_samples"] = r.resource_samples;
  j["interval_events"] = r.matched_events;
  j["other_events"] = r.other_events;
  j["out_of_order"] = r.out_of_order;
  ordered_json warnings = ordered_json::array();
  for (const auto& w : r.warnings) warnings.push_back(text::utf8_safe(w));
  j["warnings"] = warnings;
  ordered_json rows = ordered_json::array();
  for (const auto& row : r.rows) {
    const Stats& s = *row.stats;
    const bool n = s.count > 0;
    auto us = [&](double t) { return ticks_to_us(t, r.clock_hz); };
    ordered_json o;
    o["name"] = text::utf8_safe(row.name);
    o["class"] = row.cls;
    if (!row.location.empty()) o["location"] = text::utf8_safe(row.location);
    o["stream"] = text::utf8_safe(row.stream);
    o["count"] = s.count;
    o["total"] = s.total;
    o["min"] = n ? ordered_json(s.min) : ordered_json(nullptr);
    o["max"] = n ? ordered_json(s.max) : ordered_json(nullptr);
    o["mean"] = n ? ordered_json(s.mean()) : ordered_json(nullptr);
    o["stddev"] = n ? ordered_json(s.stddev()) : ordered_json(nullptr);
    o["total_us"] = us(static_cast<double>(s.total));
    o["min_us"] = n ? ordered_json(us(static_cast<double>(s.min))) : ordered_json(nullptr);
    o["max_us"] = n ? ordered_json(us(static_cast<double>(s.max))) : ordered_json(nullptr);
    o["mean_us"] = n ? ordered_json(us(s.mean())) : ordered_json(nullptr);
    o["stddev_us"] = n ? ordered_json(us(s.stddev())) : ordered_json(nullptr);
    o["unmatched_starts"] = s.unmatched_starts;
    o["unmatched_ends"] = s.unmatched_ends;
    if (histograms) {
      ordered_json h = ordered_json::array();
      if (s.hist)
        for (unsigned b = 0; b < Histogram::kBuckets; ++b)
          if (s.hist->counts[b])
            h.push_back({{"lo", Histogram::lower(b)}, {"hi", Histogram::upper(b)}, {"count", s.hist->counts[b]}});
      o["histogram"] = h;
    }
    rows.push_back(o);
  }
  j["rows"] = rows;
  // Every string above is valid UTF-8 (E131); replace is the backstop that keeps dump() from throwing.
  return j.dump(1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace kron::analysis
