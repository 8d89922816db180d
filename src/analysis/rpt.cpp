// kron rpt: the text / JSON report of a Matcher (matcher.cpp). See rpt.hpp; the HTML page is in html.cpp.
#include "analysis/rpt.hpp"
#include "analysis/timeline.hpp"
#include "kron/core/text.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

#include "kron/board.hpp"
#include "kron/core/error.hpp"

namespace kron::analysis {

double ticks_to_us(double ticks, std::uint64_t clock_hz) { return ticks * 1e6 / static_cast<double>(clock_hz); }

// ---- Report --------------------------------------------------------------------------------------

std::string ReportRow::shown_stream() const {
  if (thread_name.empty()) return stream;
  const auto slash = stream.find('/');
  return (rank ? fmt::format("rank {} ", *rank) : std::string()) + thread_name +
         (slash == std::string::npos ? "" : stream.substr(slash));
}

Report report_rows(const Matcher& m, bool summary, const tracefile::NameTable* names, const Ranks* ranks) {
  Report r;
  r.samples = m.samples();
  r.resource_samples = m.resource_samples();
  r.matched_events = m.matched_events();
  r.other_events = m.other_events();
  // ERRATUM E411: one order whatever the run (rpt.hpp): streams by thread name (named ones first), then key.
  std::vector<std::string> tnames(m.streams().size());
  for (std::size_t k = 0; k < tnames.size(); ++k) {
    const StreamKey& sk = m.streams()[k];
    if (names && sk.by_thread) tnames[k] = std::string(names->thread(sk.source, sk.lane));
  }
  std::vector<std::optional<std::uint32_t>> rank(m.streams().size());  // ERRATUM E395: an MPI rank's streams
  if (ranks)
    for (std::size_t k = 0; k < rank.size(); ++k)
      if (const auto rk = ranks->of(m.streams()[k].source)) rank[k] = rk->rank;
  std::vector<std::uint32_t> order(m.streams().size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (rank[a] != rank[b]) return rank[a] < rank[b];  // no rank (nullopt) first: only in files of mixed origin
    if (tnames[a].empty() != tnames[b].empty()) return !tnames[a].empty();
    if (tnames[a] != tnames[b]) return tnames[a] < tnames[b];
    return m.streams()[a].key() < m.streams()[b].key();
  });
  const auto& ivs = m.info().intervals;
  std::vector<unsigned> iv_order(ivs.size());
  std::iota(iv_order.begin(), iv_order.end(), 0u);
  std::stable_sort(iv_order.begin(), iv_order.end(), [&](unsigned a, unsigned b) {
    if (ivs[a].named != ivs[b].named) return !ivs[a].named;  // interval.info's first, in its order
    return ivs[a].named && m.part_name(a, 0) < m.part_name(b, 0);
  });
  for (const auto& iv : ivs) r.event_numbers = r.event_numbers || !iv.named;
  for (const unsigned i : iv_order)
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
          r.rows.push_back(
              ReportRow{name, ivs[i].cls, i, p, stream_name(sk, ranks), &s, ivs[i].location, tnames[st], rank[st]});
        }
      // ERRATUM E144: -s adds "all" only where it differs from a row above (two streams or more).
      if (ivs[i].cls == 4 || (summary && any > 1) || !any)
        r.rows.push_back(ReportRow{name, ivs[i].cls, i, p, "all", &m.stats(i, p, Matcher::kAll), ivs[i].location, ""});
    }
  for (const auto& row : r.rows) r.has_cpu = r.has_cpu || row.stats->cpu_count;
  r.loss_samples = m.loss_samples();
  r.lossy = r.loss_samples > 0;
  for (const auto& row : r.rows) r.lossy = r.lossy || row.stats->cut;
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
    const Matcher& m = *tl_->matcher();
    // ERRATUM E411: time in outermost named scopes, as the matcher paired them (DECISION D20: a scope cut
    // by a loss is no occurrence, so its time is never counted).
    if (m.info().intervals[o.interval].named && m.open_scopes(o.stream) == 0) {
      const StreamKey& sk = m.streams()[o.stream];
      if (sk.by_thread) acc[thread_key(sk.source, sk.lane)].in_scopes += o.duration;
    }
    if (o_.each) o_.each(o, m);
    if (o_.also) o_.also->interval(o);
  }
  void snapshot_records(const Input& i, std::span<const std::uint8_t> records) override {
    latency.add(records);
    if (o_.also) o_.also->snapshot_records(i, records);
  }
  // The thread summary's part of the samples (ERRATUM E411): each thread's span (its time in outermost
  // named scopes comes from the matcher: interval() above). Runs of one thread are the common case: one
  // lookup a run. Then the second sink's (html.hpp: PageSink), as the other parts below.
  void samples(std::span<const Sample> batch) override {
    for (const Sample& s : batch) {
      if (!s.thread) continue;  // a classic recording's CPU streams: no threads
      const std::uint64_t key = thread_key(s.source, s.thread);
      if (!cur_ || key != cur_key_) cur_ = &acc[key], cur_key_ = key;
      Acc& a = *cur_;
      if (!a.samples++) a.first = s.timestamp;
      a.last = s.timestamp;
    }
    also([&](TimelineSink& s) { s.samples(batch); });
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
  struct Acc {
    std::uint64_t first = 0, last = 0, samples = 0, in_scopes = 0;
  };
  std::unordered_map<std::uint64_t, Acc> acc;  // thread_key(source, thread) -> its figures
  SnapshotSum latency;

 private:
  template <class F>
  void also(F&& f) {
    if (o_.also) f(*o_.also);
  }
  const ReportOptions& o_;
  Timeline* tl_ = nullptr;
  Acc* cur_ = nullptr;
  std::uint64_t cur_key_ = 0;
};

// The thread summary (ERRATUM E411): the samples' figures, every thread's switches and running stretches,
// and each thread's named scope of the largest total.
std::vector<ThreadSummary> thread_summary(Timeline& tl, const std::unordered_map<std::uint64_t, ReportSink::Acc>& acc) {
  std::map<std::uint64_t, ThreadSummary> ts;
  auto at = [&](std::uint64_t key) -> ThreadSummary& {
    ThreadSummary& t = ts[key];
    t.source = static_cast<std::uint32_t>(key >> 32);
    t.tid = static_cast<std::uint32_t>(key);
    return t;
  };
  for (const auto& [key, a] : acc) {
    ThreadSummary& t = at(key);
    t.first = a.first, t.last = a.last, t.samples = a.samples, t.in_scopes = a.in_scopes;
  }
  for (const auto& input : tl.in().inputs())
    for (const auto& sw : input->sched_switches()) {
      ThreadSummary& t = at(thread_key(sw.source, sw.thread));
      if (!t.samples && !t.switches) t.first = t.last = sw.timestamp;
      t.first = std::min(t.first, sw.timestamp);
      t.last = std::max(t.last, sw.timestamp);
      ++t.switches;
      if (!t.on_cpu) t.on_cpu = 0;
    }
  for_each_sched_stretch(
      tl.in(), 0, [](std::uint32_t, std::uint32_t) {},
      [&](const SchedStretch& x) {
        if (std::string_view(x.state) == "running") *at(thread_key(x.source, x.thread)).on_cpu += x.end - x.begin;
      });
  if (const Matcher* m = tl.matcher()) {
    const auto& ivs = m->info().intervals;
    for (unsigned i = 0; i < ivs.size(); ++i)
      if (ivs[i].named)
        for (std::uint32_t st = 0; st < m->streams().size(); ++st) {
          const StreamKey& sk = m->streams()[st];
          const auto f = ts.find(thread_key(sk.source, sk.lane));
          if (!sk.by_thread || f == ts.end()) continue;
          const std::uint64_t total = m->stats(i, 0, st).total;
          if (total > f->second.top_total) f->second.top_total = total, f->second.top_scope = m->part_name(i, 0);
        }
  }
  std::vector<ThreadSummary> out;
  for (auto& [key, t] : ts) {
    t.thread_name = std::string(tl.names().thread(t.source, t.tid));
    t.rank = tl.rank(t.source);
    out.push_back(std::move(t));
  }
  std::stable_sort(out.begin(), out.end(), [](const ThreadSummary& x, const ThreadSummary& y) {
    if (x.rank != y.rank) return x.rank < y.rank;  // an MPI recording's threads by rank (ERRATUM E395)
    if (x.thread_name.empty() != y.thread_name.empty()) return !x.thread_name.empty();
    return x.thread_name < y.thread_name;  // then (source, tid): the map's order
  });
  return out;
}
}  // namespace

Report make_report(Timeline& tl, const ReportOptions& o) {
  ReportSink sink(o);
  tl.walk(sink);
  Report r = report_rows(*tl.matcher(), o.summary, &tl.names(), &tl.ranks());
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
  r.threads = thread_summary(tl, sink.acc);
  return r;
}

namespace {
std::string fixed3(double v) { return fmt::format("{:.3f}", v); }

std::string human(double s) { return human_seconds(s); }

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

// "rank R " at the start of an MPI rank's stream name (ERRATUM E395), "" otherwise.
std::string rank_part(const ReportRow& row) { return row.rank ? fmt::format("rank {} ", *row.rank) : std::string(); }

// A stream name cut to `w` columns, never its thread or CPU number, nor an MPI rank's "rank R " that begins
// it: "compress wor~/tid4211" (ERRATUM E411), "rank 2 mpi_de~/tid4211" (E395).
std::string fit_stream(const std::string& t, std::size_t w, const std::string& rank) {
  if (t.size() <= w) return t;
  const std::size_t slash = t.rfind('/');
  if (slash == std::string::npos || slash == 0) return fit(t, w);
  const std::string id = t.substr(slash);
  if (w < rank.size() + id.size() + 2) return rank + id;  // the column is at least this wide (render_narrow)
  std::string c = t.substr(0, w - id.size() - 1);
  while (!c.empty() && c.back() == ' ') c.pop_back();
  return c + "~" + id;
}

// ERRATUM E144, E411: the default table fits `columns` (the terminal's, else 100): each duration in its own
// unit in 8 columns, no tick lines (--wide: every column, ticks and microseconds). The stream column shows
// its names whole where they fit, and never cuts a thread or CPU number; interval names take the rest (22
// at least) and are cut at their end.
// DECISION D25: the cut column, only in a report of a recording that lost samples: the count of cut
// occurrences, then "*" where the row's stream lost samples while it could have been open (Stats::lossy).
std::string cut_cell(const Report& r, const Stats& s, unsigned width) {
  if (!r.lossy) return "";
  return fmt::format(" {:>{}}{}", s.cut, width, s.lossy ? "*" : " ");
}
void out_loss_note(const Report& r, std::back_insert_iterator<std::string> it) {
  if (!r.lossy) return;
  fmt::format_to(it,
                 "(cut: occurrences cut by lost samples, never timed; *: its thread lost samples while it could\n"
                 " have been open, count and total may miss occurrences; {} samples followed a loss)\n",
                 r.loss_samples);
}

void render_narrow(const Report& r, std::size_t columns, std::back_insert_iterator<std::string> it) {
  const std::size_t fixed = 52 + (r.has_cpu ? 7 : 0) + (r.lossy ? 6 : 0);  // the figures and the separators
  const std::size_t avail = columns > fixed + 30 ? columns - fixed : 30;
  std::size_t need_n = 8, need_s = 6, min_s = 6;
  // Names as recorded, escaped for a terminal (ERRATUM E346).
  for (const auto& row : r.rows) {
    const std::string st = shown_stream(row);
    need_n = std::max(need_n, shown_name(row).size());
    need_s = std::max(need_s, st.size());
    const std::size_t slash = st.rfind('/'), keep = rank_part(row).size();
    if (slash != std::string::npos) min_s = std::max(min_s, std::min(st.size(), keep + st.size() - slash + 4));
  }
  std::size_t ws = std::min(need_s, std::max(min_s, avail - std::min(need_n, std::max<std::size_t>(22, avail / 2))));
  const std::size_t wn = std::max<std::size_t>(8, std::min(need_n, avail - std::min(avail - 8, ws)));
  if (wn == need_n) ws = std::min(need_s, std::max(ws, avail - wn));
  const auto sec = [&](double ticks) { return ticks / static_cast<double>(r.clock_hz ? r.clock_hz : 1); };
  fmt::format_to(it, "{:<{}}  {:<{}} {:>8} {:>8} {:>8} {:>8} {:>8}{} {:>4}{}\n", "interval", wn, "stream", ws, "count",
                 "total", "mean", "min", "max", r.has_cpu ? fmt::format(" {:>6}", "on-cpu") : "", "unm.",
                 r.lossy ? fmt::format(" {:>4} ", "cut") : "");
  for (const auto& row : r.rows) {
    const Stats& s = *row.stats;
    const bool n = s.count > 0;
    std::string cpu;
    if (r.has_cpu) cpu = s.cpu_count ? fmt::format(" {:>5.0f}%", 100 * s.cpu_share()) : fmt::format(" {:>6}", "-");
    fmt::format_to(it, "{:<{}}  {:<{}} {:>8} {:>8} {:>8} {:>8} {:>8}{} {:>4}{}\n", fit(shown_name(row), wn), wn,
                   fit_stream(shown_stream(row), ws, rank_part(row)), ws, s.count,
                   n ? human(sec(static_cast<double>(s.total))) : "-", n ? human(sec(s.mean())) : "-",
                   n ? human(sec(static_cast<double>(s.min))) : "-", n ? human(sec(static_cast<double>(s.max))) : "-",
                   cpu, s.unmatched_starts + s.unmatched_ends, cut_cell(r, s, 4));
  }
  fmt::format_to(it, "\n(total, mean, min, max: wall time; unm.: events without their pair; --wide: every column)\n");
  if (r.has_cpu) out_cpu_note(r, it);
  out_loss_note(r, it);
}

// What an empty table means, and what gives one rows (ERRATUM E411).
void out_no_rows(const Report& r, std::back_insert_iterator<std::string> it) {
  if (r.samples == 0 && r.sched_switches)
    fmt::format_to(it,
                   "No intervals: the recording holds context switches only (a program without probes,\nrecorded "
                   "with --sched); the threads below show where it ran. Named scopes in the program\ngive "
                   "intervals (docs/tools.md \"Named probes in a program\").\n");
  else if (r.samples == 0)
    fmt::format_to(it, "No intervals: the input holds no samples.\n");
  else if (!r.event_numbers)
    fmt::format_to(it,
                   "No intervals: the samples carry no named scopes and no interval.info was found\n(-f FILE; "
                   "docs/tools.md \"kron rpt\").\n");
  else
    fmt::format_to(it,
                   "No intervals: none of interval.info's events occurred (event number = the low {} bits of the "
                   "user data; -e sets it).\n",
                   r.event_bits);
}

// The thread summary (ERRATUM E411): span, on-CPU time, time in named scopes, the top scope.
void out_threads(const Report& r, std::size_t columns, std::back_insert_iterator<std::string> it) {
  if (r.threads.empty()) return;
  const auto sec = [&](std::uint64_t ticks) {
    return human(static_cast<double>(ticks) / static_cast<double>(r.clock_hz ? r.clock_hz : 1));
  };
  std::size_t wn = 6;
  bool ranks = false;  // an MPI recording: a rank column first (ERRATUM E395)
  for (const auto& t : r.threads) {
    wn = std::max(wn, std::min<std::size_t>(text::terminal_safe(t.thread_name).size(), 24));
    ranks = ranks || t.rank;
  }
  const auto rank_col = [&](const ThreadSummary* t) {
    if (!ranks) return std::string();
    return fmt::format("{:>5} ", !t ? std::string("rank") : t->rank ? std::to_string(*t->rank) : std::string("-"));
  };
  fmt::format_to(it, "\nthreads:\n{}{:<{}} {:>8} {:>8} {:>9} {:>9} {:>9}  {}\n", rank_col(nullptr), "thread", wn, "pid",
                 "tid", "span", "on-cpu", "in scopes", "top scope");
  for (const auto& t : r.threads) {
    const std::uint64_t span = t.last - t.first;
    std::string top = "-";
    if (!t.top_scope.empty())
      top = span ? fmt::format(" ({:.0f}%)", 100.0 * static_cast<double>(t.top_total) / static_cast<double>(span)) : "";
    const std::size_t used = wn + 50 + (ranks ? 6 : 0);
    const std::size_t room = columns > used + top.size() + 8 ? columns - used - top.size() : 8;
    top = fit(text::terminal_safe(t.top_scope), room) + top;  // the table fits `columns`, as the one above
    fmt::format_to(it, "{}{:<{}} {:>8} {:>8} {:>9} {:>9} {:>9}  {}\n", rank_col(&t),
                   fit(text::terminal_safe(t.thread_name), wn), wn, board::source_pid(t.source), t.tid, sec(span),
                   t.on_cpu ? sec(*t.on_cpu) : "-", t.top_scope.empty() ? "-" : sec(t.in_scopes), top);
  }
  fmt::format_to(it,
                 "(span: first to last sample or switch; on-cpu: from --sched's switches;\n in scopes: in "
                 "outermost named scopes)\n");
}
}  // namespace

void sort_rows(std::vector<ReportRow>& rows, std::string_view key) {
  using Key = std::function<double(const ReportRow&)>;
  Key figure;
  if (key == "count") figure = [](const ReportRow& x) { return static_cast<double>(x.stats->count); };
  if (key == "total") figure = [](const ReportRow& x) { return static_cast<double>(x.stats->total); };
  if (key == "mean") figure = [](const ReportRow& x) { return x.stats->count ? x.stats->mean() : -1.0; };
  if (key == "min") figure = [](const ReportRow& x) { return x.stats->count ? double(x.stats->min) : -1.0; };
  if (key == "max") figure = [](const ReportRow& x) { return x.stats->count ? double(x.stats->max) : -1.0; };
  if (key == "cpu") figure = [](const ReportRow& x) { return x.stats->cpu_count ? x.stats->cpu_share() : -1.0; };
  if (key == "unm")
    figure = [](const ReportRow& x) {
      return static_cast<double>(x.stats->unmatched_starts + x.stats->unmatched_ends);
    };
  if (figure) {
    std::stable_sort(rows.begin(), rows.end(),
                     [&](const ReportRow& a, const ReportRow& b) { return figure(a) > figure(b); });
  } else if (key == "stream") {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const ReportRow& a, const ReportRow& b) { return a.shown_stream() < b.shown_stream(); });
  } else if (key != "name") {  // "name": make_report's order already
    throw std::invalid_argument("--sort " + std::string(key) +
                                ": not a column (name, stream, count, total, mean, min, max, cpu, unm)");
  }
}

std::string render_text(const Report& r, const TextOptions& opt) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "kron rpt: timestamp clock {} Hz", r.clock_hz);
  if (r.event_numbers) fmt::format_to(it, "; event number = low {} bits of the user data", r.event_bits);
  out += "\n";
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
  if (r.rows.empty()) {
    out_no_rows(r, it);
  } else if (!opt.wide) {
    render_narrow(r, opt.columns, it);
  } else {
    std::size_t wn = 8, ws = 6;
    for (const auto& row : r.rows) {
      wn = std::max(wn, shown_name(row).size());
      ws = std::max(ws, shown_stream(row).size());
    }
    fmt::format_to(it, "{:<{}}  {:>5}  {:<{}}  {:>9}  {:<5}  {:>14}  {:>12}  {:>12}  {:>14}  {:>14}  {:>9}  {:>9}{}\n",
                   "interval", wn, "class", "stream", ws, "count", "unit", "total", "min", "max", "mean", "stddev",
                   "unm.start", "unm.end", r.lossy ? fmt::format("  {:>9} ", "cut") : "");
    for (const auto& row : r.rows) {
      const Stats& s = *row.stats;
      const bool n = s.count > 0;
      fmt::format_to(it,
                     "{:<{}}  {:>5}  {:<{}}  {:>9}  {:<5}  {:>14}  {:>12}  {:>12}  {:>14}  {:>14}  {:>9}  {:>9}{}\n",
                     shown_name(row), wn, row.cls, shown_stream(row), ws, s.count, "ticks", s.total,
                     n ? std::to_string(s.min) : "-", n ? std::to_string(s.max) : "-", n ? fixed3(s.mean()) : "-",
                     n ? fixed3(s.stddev()) : "-", s.unmatched_starts, s.unmatched_ends, cut_cell(r, s, 10));
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
  if (opt.wide && !r.rows.empty()) {
    if (r.lossy) out += "\n";
    out_loss_note(r, it);
  }
  out_threads(r, opt.wide ? std::size_t{1000} : opt.columns, it);
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
  bool ranks = false;  // an MPI recording's report: schema 2, the "rank" keys (ERRATUM E395)
  for (const auto& row : r.rows) ranks = ranks || row.rank;
  for (const auto& t : r.threads) ranks = ranks || t.rank;
  j["schema"] = ranks ? 2 : 1;
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
  if (r.lossy) j["loss_samples"] = r.loss_samples;  // DECISION D25: a recording that lost samples
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
    if (row.rank) o["rank"] = *row.rank;  // an MPI rank's stream (ERRATUM E395)
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
    if (r.lossy) {  // DECISION D25
      o["cut"] = s.cut;
      o["lossy"] = s.lossy;
    }
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
  if (!r.threads.empty()) {  // the thread summary (docs/rpt-json.md)
    ordered_json threads = ordered_json::array();
    for (const auto& t : r.threads) {
      auto us = [&](std::uint64_t ticks) { return ticks_to_us(static_cast<double>(ticks), r.clock_hz); };
      ordered_json o;
      o["source"] = fmt::format("0x{:08x}", t.source);
      o["pid"] = board::source_pid(t.source);
      o["tid"] = t.tid;
      if (t.rank) o["rank"] = *t.rank;
      if (!t.thread_name.empty()) o["thread_name"] = text::utf8_safe(t.thread_name);
      o["samples"] = t.samples;
      o["switches"] = t.switches;
      o["span_us"] = us(t.last - t.first);
      o["on_cpu_us"] = t.on_cpu ? ordered_json(us(*t.on_cpu)) : ordered_json(nullptr);
      o["in_scopes_us"] = us(t.in_scopes);
      o["top_scope"] = t.top_scope.empty() ? ordered_json(nullptr) : ordered_json(text::utf8_safe(t.top_scope));
      o["top_scope_us"] = us(t.top_total);
      threads.push_back(o);
    }
    j["threads"] = threads;
  }
  // Every string above is valid UTF-8 (E131); replace is the backstop that keeps dump() from throwing.
  return j.dump(1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace kron::analysis
