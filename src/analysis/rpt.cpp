// kron rpt: the text / JSON report of a Matcher (matcher.cpp). See rpt.hpp; the HTML page is in html.cpp.
#include "analysis/rpt.hpp"
#include "analysis/timeline.hpp"
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

std::string ReportRow::shown_stream() const {
  if (thread_name.empty()) return stream;
  const auto slash = stream.find('/');
  return thread_name + (slash == std::string::npos ? "" : stream.substr(slash));
}

Report report_rows(const Matcher& m, bool summary, const tracefile::NameTable* names) {
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
      unsigned any = 0;
      if (ivs[i].cls != 4)
        for (const auto st : order) {
          const Stats& s = m.stats(i, p, st);
          if (!s.active()) continue;
          ++any;
          const StreamKey& sk = m.streams()[st];
          r.rows.push_back(ReportRow{name, ivs[i].cls, i, p, stream_name(sk), &s, ivs[i].location,
                                     names && sk.by_thread ? std::string(names->thread(sk.source, sk.lane)) : ""});
        }
      // ERRATUM E144: -s adds "all" only where it differs from a row above (two streams or more).
      if (ivs[i].cls == 4 || (summary && any > 1) || !any)
        r.rows.push_back(ReportRow{name, ivs[i].cls, i, p, "all", &m.stats(i, p, Matcher::kAll), ivs[i].location, ""});
    }
  for (const auto& row : r.rows) r.has_cpu = r.has_cpu || row.stats->cpu_count;
  return r;
}

namespace {
// kron rpt's walk: the matcher fed in batches (the reader's and the matcher's loops stay tight), the
// snapshots merged when asked.
class ReportSink final : public TimelineSink {
 public:
  explicit ReportSink(const ReportOptions& o) : o_(o) {}
  Needs needs() const override {
    Needs n = Needs().in_batches().matched().cpu_time();
    if (o_.latency) n.tail.push_back(Part::SnapshotRecords);
    if (o_.also)
      for (const Part p : o_.also->needs().tail) n.tail.push_back(p);
    return n;
  }
  void begin(Timeline& tl) override {
    tl_ = &tl;
    if (o_.also) o_.also->begin(tl);
  }
  void interval(const Occurrence& o) override {
    if (o_.each) o_.each(o, *tl_->matcher());
    if (o_.also) o_.also->interval(o);
  }
  void snapshot_records(const Input& i, std::span<const std::uint8_t> records) override {
    latency.add(records);
    if (o_.also) o_.also->snapshot_records(i, records);
  }
  // The second sink's parts (html.hpp: PageSink).
  void samples(std::span<const Sample> b) override {
    also([&](TimelineSink& s) { s.samples(b); });
  }
  void samples_done() override {
    also([](TimelineSink& s) { s.samples_done(); });
  }
  void sched_thread(std::uint32_t src, std::uint32_t th) override {
    also([&](TimelineSink& s) { s.sched_thread(src, th); });
  }
  void sched_stretch(const SchedStretch& x) override {
    also([&](TimelineSink& s) { s.sched_stretch(x); });
  }
  void sched_switch(const record::SchedRecord& x) override {
    also([&](TimelineSink& s) { s.sched_switch(x); });
  }
  void snapshot(const SnapshotSeries& x) override {
    also([&](TimelineSink& s) { s.snapshot(x); });
  }
  void mpi_message(const record::MpiRecord& a, const record::MpiRecord& b) override {
    also([&](TimelineSink& s) { s.mpi_message(a, b); });
  }
  void mpi_call(const record::MpiRecord& x) override {
    also([&](TimelineSink& s) { s.mpi_call(x); });
  }
  void end() override {
    also([](TimelineSink& s) { s.end(); });
  }
  SnapshotSum latency;

 private:
  template <class F>
  void also(F&& f) {
    if (o_.also) f(*o_.also);
  }
  const ReportOptions& o_;
  Timeline* tl_ = nullptr;
};
}  // namespace

Report make_report(Timeline& tl, const ReportOptions& o) {
  ReportSink sink(o);
  tl.walk(sink);
  Report r = report_rows(*tl.matcher(), o.summary, &tl.names());
  // MPI recordings (trace format 1.5): every matched message a class-4 interval across ranks (E210), from
  // the MPI records the inputs read ahead when they were opened.
  const MpiCalls& mpi = tl.mpi();
  auto messages =
      std::make_shared<std::vector<MessageRow>>(message_rows(mpi.events, mpi.matching, tl.options().rpt.histograms));
  for (const auto& row : *messages) r.rows.push_back(ReportRow{row.name, 4, 0, 0, "all", &row.stats, "", ""});
  r.messages = std::move(messages);
  const Merged& in = tl.in();
  r.clock_hz = in.clock_hz();
  r.event_bits = tl.options().rpt.event_bits;
  r.out_of_order = in.out_of_order();
  for (const auto& i : in.inputs()) r.sched_switches += i->sched_switches().size();
  r.cpu_from_sched = tl.cpu_from_sched();
  r.warnings = in.warnings();
  for (const auto& i : in.inputs()) r.inputs.push_back({i->path(), name(i->format()), i->samples()});
  if (o.latency) r.latency = sink.latency.result();
  return r;
}

namespace {
std::string fixed3(double v) { return fmt::format("{:.3f}", v); }

// A duration in seconds with four significant digits and its unit: "812.0 ns", "12.35 us", "1.234 ms".
std::string human(double s) {
  const double a = std::fabs(s);
  if (a == 0) return "0";
  if (a < 1e-6) return fmt::format("{:.4g} ns", s * 1e9);
  if (a < 1e-3) return fmt::format("{:.4g} us", s * 1e6);
  if (a < 1) return fmt::format("{:.4g} ms", s * 1e3);
  if (a < 1000) return fmt::format("{:.4g} s", s);
  return fmt::format("{:.0f} s", s);
}

void out_cpu_note(const Report& r, std::back_insert_iterator<std::string> it) {
  if (r.cpu_from_sched)
    fmt::format_to(it, "(on-cpu: time on a CPU / wall time, from the recording's context switches)\n");
  else
    fmt::format_to(it, "(on-cpu: time on a CPU / wall time, over the occurrences whose two ends read the counter)\n");
}

// A name cut to `w` columns, its end shown by "~" when cut (the JSON and --wide keep it whole).
std::string shown_name(const ReportRow& row) { return text::terminal_safe(row.name); }
std::string shown_stream(const ReportRow& row) { return text::terminal_safe(row.shown_stream()); }
std::string fit(const std::string& t, std::size_t w) {
  if (t.size() <= w) return t;
  std::string c = t.substr(0, w - 1);
  while (!c.empty() && c.back() == ' ') c.pop_back();
  return c + "~";
}

// ERRATUM E144: the default table fits 100 columns: stream names cut to 19 (a live stream
// "0x0000abcd/tid12345" whole), interval names to what is left (22 at least), each duration in its own
// unit in 8 columns, no tick lines (--wide: every column, ticks and microseconds).
void render_narrow(const Report& r, std::back_insert_iterator<std::string> it) {
  // The stream column takes what its names need, up to 19; the interval names the rest of 100 columns
  // (at least 22): 52 columns of figures, 7 more for on-cpu.
  std::size_t wn = 8, ws = 6;
  // Names as recorded, escaped for a terminal (ERRATUM E346).
  for (const auto& row : r.rows) ws = std::max(ws, std::min<std::size_t>(shown_stream(row).size(), 19));
  const std::size_t name_max = 100 - 52 - (r.has_cpu ? 7 : 0) - ws;
  for (const auto& row : r.rows) wn = std::max(wn, std::min(shown_name(row).size(), name_max));
  const auto sec = [&](double ticks) { return ticks / static_cast<double>(r.clock_hz ? r.clock_hz : 1); };
  fmt::format_to(it, "{:<{}}  {:<{}} {:>8} {:>8} {:>8} {:>8} {:>8}{} {:>4}\n", "interval", wn, "stream", ws, "count",
                 "total", "mean", "min", "max", r.has_cpu ? fmt::format(" {:>6}", "on-cpu") : "", "unm.");
  for (const auto& row : r.rows) {
    const Stats& s = *row.stats;
    const bool n = s.count > 0;
    std::string cpu;
    if (r.has_cpu) cpu = s.cpu_count ? fmt::format(" {:>5.0f}%", 100 * s.cpu_share()) : fmt::format(" {:>6}", "-");
    fmt::format_to(it, "{:<{}}  {:<{}} {:>8} {:>8} {:>8} {:>8} {:>8}{} {:>4}\n", fit(shown_name(row), name_max), wn,
                   fit(shown_stream(row), 19), ws, s.count, n ? human(sec(static_cast<double>(s.total))) : "-",
                   n ? human(sec(s.mean())) : "-", n ? human(sec(static_cast<double>(s.min))) : "-",
                   n ? human(sec(static_cast<double>(s.max))) : "-", cpu, s.unmatched_starts + s.unmatched_ends);
  }
  fmt::format_to(it, "\n(total, mean, min, max: wall time; unm.: events without their pair; --wide: every column)\n");
  if (r.has_cpu) out_cpu_note(r, it);
}
}  // namespace

std::string render_text(const Report& r, const TextOptions& opt) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "kron rpt: timestamp clock {} Hz; event number = low {} bits of the user data\n", r.clock_hz,
                 r.event_bits);
  if (opt.verbose)
    for (const auto& in : r.inputs)
      fmt::format_to(it, "input {} ({}): {} samples\n", text::terminal_safe(in.path), in.format, in.samples);
  fmt::format_to(it, "samples {} (resource {}), interval events {}, other events {}", r.samples, r.resource_samples,
                 r.matched_events, r.other_events);
  if (r.out_of_order) fmt::format_to(it, ", {} out of time order", r.out_of_order);
  if (r.sched_switches) fmt::format_to(it, "; {} context switches", r.sched_switches);
  out += "\n";
  for (const auto& w : r.warnings) fmt::format_to(it, "warning: {}\n", text::terminal_safe(w));
  out += "\n";
  if (!opt.wide) {
    render_narrow(r, it);
  } else {
    std::size_t wn = 8, ws = 6;
    for (const auto& row : r.rows) {
      wn = std::max(wn, shown_name(row).size());
      ws = std::max(ws, shown_stream(row).size());
    }
    fmt::format_to(it, "{:<{}}  {:>5}  {:<{}}  {:>9}  {:<5}  {:>14}  {:>12}  {:>12}  {:>14}  {:>14}  {:>9}  {:>9}\n",
                   "interval", wn, "class", "stream", ws, "count", "unit", "total", "min", "max", "mean", "stddev",
                   "unm.start", "unm.end");
    for (const auto& row : r.rows) {
      const Stats& s = *row.stats;
      const bool n = s.count > 0;
      fmt::format_to(it, "{:<{}}  {:>5}  {:<{}}  {:>9}  {:<5}  {:>14}  {:>12}  {:>12}  {:>14}  {:>14}  {:>9}  {:>9}\n",
                     shown_name(row), wn, row.cls, shown_stream(row), ws, s.count, "ticks", s.total,
                     n ? std::to_string(s.min) : "-", n ? std::to_string(s.max) : "-", n ? fixed3(s.mean()) : "-",
                     n ? fixed3(s.stddev()) : "-", s.unmatched_starts, s.unmatched_ends);
      auto us = [&](double t) { return fixed3(ticks_to_us(t, r.clock_hz)); };
      fmt::format_to(it, "{:<{}}  {:>5}  {:<{}}  {:>9}  {:<5}  {:>14}  {:>12}  {:>12}  {:>14}  {:>14}\n", "", wn, "",
                     "", ws, "", "us", us(static_cast<double>(s.total)), n ? us(static_cast<double>(s.min)) : "-",
                     n ? us(static_cast<double>(s.max)) : "-", n ? us(s.mean()) : "-", n ? us(s.stddev()) : "-");
      if (s.cpu_count)
        fmt::format_to(it, "{:<{}}  {:>5}  {:<{}}  {:>9}  {:<5}  {:>14}  {:>12}  {:>12}  {:>14}  {:>14}\n", "", wn, "",
                       "", ws, s.cpu_count, "cpu", us(s.cpu_total), us(s.cpu_min), us(s.cpu_max),
                       us(s.cpu_total / static_cast<double>(s.cpu_count)), fmt::format("{:.1f}%", 100 * s.cpu_share()));
    }
  }
  if (opt.histograms) {
    for (const auto& row : r.rows) {
      const Stats& s = *row.stats;
      if (!s.count || !s.hist) continue;
      fmt::format_to(it, "\nhistogram: {} [{}], {} intervals (ticks; us)\n", shown_name(row), shown_stream(row),
                     s.count);
      std::uint64_t peak = 0;
      for (auto c : s.hist->counts) peak = std::max(peak, c);
      for (unsigned b = 0; b < Histogram::kBuckets; ++b) {
        const std::uint64_t c = s.hist->counts[b];
        if (!c) continue;
        const auto lo = Histogram::lower(b), hi = Histogram::upper(b);
        const std::uint64_t bar_max = opt.wide ? 40 : 30;  // 100 columns unless --wide
        const auto bar = static_cast<std::size_t>((c * bar_max + peak - 1) / peak);
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
  for (const auto& in : r.inputs)
    inputs.push_back({{"file", text::utf8_safe(in.path)}, {"format", in.format}, {"samples", in.samples}});
  j["inputs"] = inputs;
  j["samples"] = r.samples;
  j["resource_samples"] = r.resource_samples;
  j["interval_events"] = r.matched_events;
  j["other_events"] = r.other_events;
  j["out_of_order"] = r.out_of_order;
  if (r.sched_switches) j["sched_switches"] = r.sched_switches;
  if (r.has_cpu) j["cpu_source"] = r.cpu_from_sched ? "sched" : "counter";
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
    if (!row.thread_name.empty()) o["thread_name"] = text::utf8_safe(row.thread_name);
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
    if (s.cpu_count) {  // ERRATUM E140: on-CPU time, where the recording has it
      o["cpu_count"] = s.cpu_count;
      o["cpu_total_us"] = us(s.cpu_total);
      o["cpu_min_us"] = us(s.cpu_min);
      o["cpu_max_us"] = us(s.cpu_max);
      o["cpu_mean_us"] = us(s.cpu_total / static_cast<double>(s.cpu_count));
      o["cpu_share"] = s.cpu_share();
    }
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
