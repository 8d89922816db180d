// kron top's frame as lines (the plain frame and the full screen draw the same ones) and as JSON.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "kron/core/text.hpp"
#include "top/model.hpp"

namespace kron::top {
namespace {

// A recorded name made safe for a terminal (control characters escaped) and cut to `w` columns.
std::string fit(std::string_view name, std::size_t w) {
  std::string s = text::terminal_safe(name);
  if (s.size() > w) s = w ? s.substr(0, w - 1) + "~" : std::string();
  return s;
}

// 1234567 -> "1.23M": rates and counts in six columns.
std::string human(double v) {
  if (v < 1e4) return fmt::format("{:.0f}", v);
  if (v < 1e6) return fmt::format("{:.1f}k", v / 1e3);
  if (v < 1e9) return fmt::format("{:.2f}M", v / 1e6);
  return fmt::format("{:.2f}G", v / 1e9);
}

// Microseconds in eight columns: 0.123, 12.3, 12345.
std::string micros(double us) {
  if (us < 10) return fmt::format("{:.3f}", us);
  if (us < 1000) return fmt::format("{:.1f}", us);
  return fmt::format("{:.0f}", us);
}

struct Lines {
  std::vector<Line> out;
  unsigned width;
  void add(std::string text, Attr a = Attr::Plain) {
    if (text.size() > width) text.resize(width);
    out.push_back(Line{Span{std::move(text), a}});
  }
  void add(Line l) {
    // Cut the spans to the width.
    std::size_t used = 0;
    Line cut;
    for (auto& s : l) {
      if (used >= width) break;
      if (used + s.text.size() > width) s.text.resize(width - used);
      used += s.text.size();
      cut.push_back(std::move(s));
    }
    out.push_back(std::move(cut));
  }
};

// At most `cap` rows of a table of `n` (0: all); says how many are left out.
template <class F>
void rows(Lines& L, std::size_t n, std::size_t cap, F&& row) {
  const std::size_t shown = cap && n > cap ? cap - 1 : n;
  for (std::size_t i = 0; i < shown; ++i) row(i);
  if (shown < n) L.add(fmt::format("  ... {} more", n - shown));
}

void header_lines(Lines& L, const Frame& f) {
  const Header& h = f.header;
  L.add(fmt::format("kron top - {}  board {}{}  {:.1f} s",
                    fit(h.program, std::max(20u, L.width > 60 ? L.width - 60 : 20u)), fit(h.board, 40),
                    h.read_only ? " (read-only)" : "", h.elapsed_s),
        Attr::Title);
  Line l{Span{fmt::format("fill {:.1f}%  drain {}/s  samples {}/s  lost ", 100.0 * h.fill, human(h.drain_rate),
                          human(h.sample_rate))}};
  // The loss rate stands out whenever samples are being lost now (kron record says LOST at the end).
  l.push_back(Span{fmt::format("{} ({}/s)", h.lost, human(h.loss_rate)), h.loss_rate > 0 ? Attr::Alert : Attr::Plain});
  if (h.read_only)
    l.push_back(Span{h.drainer_pid ? fmt::format("  drained by pid {}", h.drainer_pid) : "  no drainer"});
  L.add(std::move(l));
  for (const auto& n : f.notes) L.add(fit(n, L.width), Attr::Bold);
}

}  // namespace

std::vector<Line> layout(const Frame& f, unsigned width, unsigned max_rows) {
  Lines L{{}, std::max(width, 40u)};
  header_lines(L, f);
  // Each table gets an equal share of the rows left when the screen is short (0: no limit).
  const std::size_t fixed = L.out.size() + 5 * 2;
  const std::size_t cap = max_rows ? std::max<std::size_t>(2, (max_rows > fixed ? max_rows - fixed : 0) / 4) : 0;
  const bool ranks = std::any_of(f.threads.begin(), f.threads.end(), [](const ThreadRow& t) { return t.node; });
  const unsigned namew = std::max(12u, L.width > 80 ? L.width - 80 : 12u);  // the histograms' row fits

  L.add("");
  L.add(fmt::format("{:>8} {:>5} {:>7} {:>9}  {}", "pid", ranks ? "rank" : "node", "threads", "samples/s", "program"),
        Attr::Bold);
  rows(L, f.processes.size(), cap, [&](std::size_t i) {
    const ProcessRow& p = f.processes[i];
    L.add(fmt::format("{:>8} {:>5} {:>7} {:>9}  {}{}", p.pid, p.node, p.threads, human(p.sample_rate),
                      fit(p.program, L.width > 40 ? L.width - 40 : 8), p.ended ? " (ended)" : ""));
  });

  L.add("");
  L.add(fmt::format("{:>8} {:>8} {:>5} {:>5} {:>9} {:>6} {:<8} {}", "pid", "tid", ranks ? "rank" : "node", "phase",
                    "samples/s", f.sched ? "on-cpu" : "", "state", "thread"),
        Attr::Bold);
  rows(L, f.threads.size(), cap, [&](std::size_t i) {
    const ThreadRow& t = f.threads[i];
    const std::string cpu = !f.sched ? "" : t.oncpu < 0 ? "-" : fmt::format("{:.0f}%", 100.0 * t.oncpu);
    L.add(fmt::format("{:>8} {:>8} {:>5} {:>5} {:>9} {:>6} {:<8} {}", t.pid, t.tid, t.node, t.phase,
                      human(t.sample_rate), cpu, t.state, fit(t.name, namew)));
  });

  L.add("");
  L.add(fmt::format("scopes ({}), sorted by {}{}", f.totals ? "whole watch" : "last refresh", sort_name(f.sort),
                    f.filter.empty() ? "" : ", filter \"" + fit(f.filter, 30) + "\""),
        Attr::Title);
  L.add(fmt::format("{:<{}} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}", "scope", namew, "count/s", "count", "mean us",
                    "p50 us", "p99 us", "max us"),
        Attr::Bold);
  rows(L, f.scopes.size(), cap, [&](std::size_t i) {
    const ScopeRow& s = f.scopes[i];
    L.add(fmt::format("{:<{}} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}", fit(s.name, namew), namew, human(s.rate),
                      human(double(s.count)), micros(s.mean_us), micros(s.p50_us), micros(s.p99_us), micros(s.max_us)));
  });
  if (f.scopes.empty()) L.add("  (no named scopes yet)");

  L.add("");
  if (!f.has_stats) {
    L.add("histograms and virtual counters: none (the board's format has no statistics area: 2.2 and later)");
    return std::move(L.out);
  }
  L.add(fmt::format("{:<{}} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9}  {}", "histogram", namew, "phase", "count", "/s",
                    "p50 us", "p99 us", "p99.9 us", "buckets"),
        Attr::Bold);
  rows(L, f.hists.size(), cap, [&](std::size_t i) {
    const HistRow& h = f.hists[i];
    L.add(fmt::format("{:<{}} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9}  [{}]", fit(h.name, namew), namew, h.phase,
                      human(double(h.count)), human(h.rate), micros(h.p50_us), micros(h.p99_us), micros(h.p999_us),
                      h.bars));
  });
  if (f.hists.empty()) L.add("  (no histograms yet)");
  L.add(fmt::format("{:>16} {:>12} {:>9}", "virtual counter", "value", "/s"), Attr::Bold);
  rows(L, f.counters.size(), cap, [&](std::size_t i) {
    const CounterRow& c = f.counters[i];
    L.add(fmt::format("{:>16} {:>12} {:>9}", c.index, c.value, human(c.rate)));
  });
  return std::move(L.out);
}

std::string plain_text(const std::vector<Line>& lines) {
  std::string out;
  for (const Line& l : lines) {
    std::string t;
    for (const Span& s : l) t += s.text;
    while (!t.empty() && t.back() == ' ') t.pop_back();
    out += t + "\n";
  }
  return out;
}

std::string to_json(const Frame& f) {
  using nlohmann::json;
  const Header& h = f.header;
  json j = {{"format", "kron-top"},
            {"version", 1},
            {"program", h.program},
            {"board", h.board},
            {"read_only", h.read_only},
            {"elapsed_s", h.elapsed_s},
            {"interval_s", h.interval_s},
            {"fill", h.fill},
            {"drain_per_s", h.drain_rate},
            {"samples_per_s", h.sample_rate},
            {"passed", h.passed},
            {"lost", h.lost},
            {"lost_per_s", h.loss_rate},
            {"drainer_pid", h.drainer_pid},
            {"notes", f.notes},
            {"scopes_over", f.totals ? "watch" : "refresh"},
            {"sort", sort_name(f.sort)},
            {"filter", f.filter}};
  json& ps = j["processes"] = json::array();
  for (const auto& p : f.processes)
    ps.push_back({{"pid", p.pid},
                  {"node", p.node},
                  {"program", p.program},
                  {"threads", p.threads},
                  {"samples_per_s", p.sample_rate},
                  {"ended", p.ended}});
  json& ts = j["threads"] = json::array();
  for (const auto& t : f.threads) {
    json o = {{"pid", t.pid},
              {"tid", t.tid},
              {"node", t.node},
              {"phase", t.phase},
              {"name", t.name},
              {"state", t.state},
              {"samples_per_s", t.sample_rate}};
    if (f.sched) o["oncpu"] = t.oncpu < 0 ? json(nullptr) : json(t.oncpu);
    ts.push_back(std::move(o));
  }
  json& ss = j["scopes"] = json::array();
  for (const auto& s : f.scopes)
    ss.push_back({{"name", s.name},
                  {"count", s.count},
                  {"per_s", s.rate},
                  {"mean_us", s.mean_us},
                  {"p50_us", s.p50_us},
                  {"p99_us", s.p99_us},
                  {"max_us", s.max_us}});
  json& hs = j["histograms"] = json::array();
  for (const auto& x : f.hists)
    hs.push_back({{"name", x.name},
                  {"phase", x.phase},
                  {"count", x.count},
                  {"per_s", x.rate},
                  {"p50_us", x.p50_us},
                  {"p99_us", x.p99_us},
                  {"p99.9_us", x.p999_us}});
  json& cs = j["counters"] = json::array();
  for (const auto& c : f.counters) cs.push_back({{"index", c.index}, {"value", c.value}, {"per_s", c.rate}});
  // Recorded names are untrusted bytes: invalid UTF-8 is replaced, never an exception.
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace kron::top
