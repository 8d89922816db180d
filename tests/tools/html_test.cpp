// kron rpt --html, the page (src/analysis/html.cpp, html_timeline.cpp, html_page.js): recordings written here
// (a named-scope recording of a compressor with thread names and context switches, an MPI job's rank files,
// a recording of switches only), the page's data read back, the grid that sums up what was left out
// (E420) checked by hand, and the page driven in headless Chromium (KRON_WITH_CHROMIUM): no console error,
// the timeline draws, sorting and zoom work, nothing overflows 1,280 pixels, the title names the program.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../analysis/fixtures.hpp"
#include "analysis/html.hpp"
#include "analysis/html_timeline.hpp"
#include "analysis/rpt.hpp"
#include "kron/board.hpp"
#include "kron/format/trace_file.hpp"
#include "support/mpi_records.hpp"

using namespace kron;
using namespace kron::testing;
namespace fs = std::filesystem;

namespace {

struct Result {
  int status;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Result sh(const fs::path& dir, const std::string& cmd) {
  const std::string line =
      "cd '" + dir.string() + "' && " + cmd + " >'" + (dir / ".out").string() + "' 2>'" + (dir / ".err").string() + "'";
  const int rc = std::system(line.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(dir / ".out"), slurp(dir / ".err")};
}

const std::string kron_bin = std::string(KRON_BINARY_DIR) + "/kron";

record::NameRecord name_record(record::NameKind kind, std::uint16_t id, std::uint32_t source, std::uint32_t thread,
                               const char* name, const char* file = "", std::uint32_t line = 0) {
  record::NameRecord nr{};
  nr.h.kind = record::RecordKind::Names;
  nr.h.size = sizeof nr;
  nr.name_kind = kind;
  nr.id = id;
  nr.source = source;
  nr.thread = thread;
  nr.line = line;
  std::snprintf(nr.name, sizeof nr.name, "%s", name);
  std::snprintf(nr.file, sizeof nr.file, "%s", file);
  return nr;
}

Sample scope(std::uint32_t source, std::uint32_t thread, std::uint64_t t, std::uint16_t id, bool begin,
             std::uint64_t value = 0) {
  Sample s;
  s.source = source;
  s.thread = thread;
  s.timestamp = t;
  s.data = record::named_data(id, value);
  s.flags = kFlagNamed | (begin ? kFlagScopeBegin : kFlagScopeEnd);
  return s;
}

record::SchedRecord sw(std::uint32_t source, std::uint32_t thread, std::uint64_t t, bool out, bool preempt = false) {
  record::SchedRecord r{};
  r.h.kind = record::RecordKind::SchedSwitch;
  r.h.size = sizeof r;
  r.h.flags = static_cast<std::uint8_t>((out ? record::kSchedOut : 0) | (preempt ? record::kSchedPreempt : 0));
  r.source = source;
  r.thread = thread;
  r.timestamp = t;
  return r;
}

constexpr std::uint32_t kSrc = 0x00000064;  // node 0, process 100
constexpr std::uint64_t kMs = 1'000'000;    // ticks of a 1 GHz clock

// A compressor's recording (1 GHz: ticks are ns): the main thread "kpigz" writes 4 blocks of 2 ms
// ("write_out"); two workers "compress" (tids 101, 102) each compress 6 blocks of 1.5 ms ("compress_block",
// value = the block) with a 1 ms "deflate" nested inside; each worker runs from a switch in at its block's
// begin to a switch out at its end (blocked), and was preempted for 0.25 ms inside every third block.
// Returns how many scopes it holds.
std::size_t write_compressor(const fs::path& p) {
  tracefile::FileHeader h = tracefile::make_header();
  h.clock_hz = 1'000'000'000;
  tracefile::set_program(h, "/usr/bin/kpigz -p 2 big.tar");
  std::vector<Sample> v;
  std::vector<record::SchedRecord> sws;
  std::size_t scopes = 0;
  for (std::uint64_t b = 0; b < 4; ++b, ++scopes) {
    v.push_back(scope(kSrc, 100, 1 * kMs + b * 3 * kMs, 3, true));
    v.push_back(scope(kSrc, 100, 3 * kMs + b * 3 * kMs, 3, false));
  }
  for (std::uint32_t th : {101u, 102u})
    for (std::uint64_t b = 0; b < 6; ++b, scopes += 2) {
      const std::uint64_t t = 2 * kMs * b + (th - 101) * kMs / 2 + kMs / 10;
      v.push_back(scope(kSrc, th, t, 1, true, b));
      v.push_back(scope(kSrc, th, t + kMs / 4, 2, true));
      v.push_back(scope(kSrc, th, t + kMs / 4 + kMs, 2, false));
      v.push_back(scope(kSrc, th, t + 3 * kMs / 2, 1, false));
      sws.push_back(sw(kSrc, th, t, false));
      if (b % 3 == 0) {
        sws.push_back(sw(kSrc, th, t + kMs / 2, true, true));
        sws.push_back(sw(kSrc, th, t + 3 * kMs / 4, false));
      }
      sws.push_back(sw(kSrc, th, t + 3 * kMs / 2, true));
    }
  std::stable_sort(v.begin(), v.end(), [](const Sample& a, const Sample& b) { return a.timestamp < b.timestamp; });
  std::stable_sort(sws.begin(), sws.end(), [](const auto& a, const auto& b) { return a.timestamp < b.timestamp; });
  tracefile::Writer w(p.string(), h);
  for (const Sample& s : v) w.append(s);
  w.append_sched(sws);
  h.passed_filter = v.size();
  using K = record::NameKind;
  const std::vector<record::NameRecord> names{name_record(K::Scope, 1, 0, 0, "compress_block", "kpigz.c", 120),
                                              name_record(K::Scope, 2, 0, 0, "deflate", "kpigz.c", 131),
                                              name_record(K::Scope, 3, 0, 0, "write_out", "kpigz.c", 88),
                                              name_record(K::Thread, 0, kSrc, 100, "kpigz"),
                                              name_record(K::Thread, 0, kSrc, 101, "compress"),
                                              name_record(K::Thread, 0, kSrc, 102, "compress")};
  w.finish(h, {}, names);
  return scopes;
}

// The page's timeline data: the JSON in <script type="application/json" id="kron-data">.
nlohmann::json page_data(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"kron-data\">";
  const auto a = page.find(open);
  if (a == std::string::npos) return nullptr;
  const auto b = page.find("</script>", a);
  return nlohmann::json::parse(page.substr(a + open.size(), b - a - open.size()));
}

class HtmlPage : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    scopes = write_compressor(dir / "kpigz.kron");
  }
  void TearDown() override { fs::remove_all(dir); }
  Result kron(const std::string& args) { return sh(dir, "'" + kron_bin + "' " + args); }
  fs::path dir;
  std::size_t scopes = 0;
};

}  // namespace

// The page of a named-scope recording with context switches: self-contained, titled by the program, a
// timeline element, durations in their unit, threads by name; its data holds every scope at its depth, every
// stretch of the switches, lanes grouped by process.
TEST_F(HtmlPage, NamedScopesWithSwitches) {
  const auto r = kron("rpt --html page.html kpigz.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string page = slurp(dir / "page.html");
  EXPECT_EQ(page.find("src="), std::string::npos) << "self-contained: no external resources";
  EXPECT_EQ(page.find("href="), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("url("), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  EXPECT_NE(page.find("<title>kpigz — kron rpt</title>"), std::string::npos);
  EXPECT_EQ(page.find("interval.info"), std::string::npos);
  EXPECT_NE(page.find("id=\"timeline\""), std::string::npos);
  EXPECT_NE(page.find(">1.50 ms</td>"), std::string::npos) << "compress_block's mean";
  EXPECT_NE(page.find(">9.00 ms</td>"), std::string::npos) << "compress_block's total on a worker: 6 x 1.5 ms";
  EXPECT_NE(page.find("compress/tid101"), std::string::npos) << "threads by name";
  EXPECT_NE(page.find("title=\"1500000 ticks\""), std::string::npos) << "ticks in the tooltip";
  const auto d = page_data(page);
  ASSERT_TRUE(d.is_object());
  ASSERT_EQ(d["lanes"].size(), 3u);
  EXPECT_EQ(d["lanes"][1]["label"], "compress (tid 101)");
  EXPECT_EQ(d["lanes"][0]["group"], "kpigz (pid 100)");
  // Bars: lane, depth, name, start (a step), dur, value; "deflate" one level inside "compress_block".
  const auto& bars = d["bars"];
  ASSERT_EQ(bars.size(), 6 * scopes);
  std::size_t deflates = 0;
  std::int64_t start = 0;
  for (std::size_t i = 0; i < bars.size(); i += 6) {
    const std::string name = d["names"][bars[i + 2].get<std::size_t>()][0];
    if (name == "deflate") {
      ++deflates;
      EXPECT_EQ(bars[i + 1], 1) << "deflate nested in compress_block";
      EXPECT_EQ(bars[i + 4], kMs);
    } else {
      EXPECT_EQ(bars[i + 1], 0) << name;
    }
    // In time order, each start a step from the one before: the 4th deflate (tid 102's 2nd block) begins at
    // 2.6 ms + 0.25 ms after the first sample (at 0.1 ms).
    start += bars[i + 3].get<std::int64_t>();
    if (name == "deflate" && deflates == 4) {
      EXPECT_EQ(start, 2'750'000);
    }
  }
  EXPECT_EQ(deflates, 12u);
  EXPECT_EQ(d["names"][bars[2].get<std::size_t>()][1], "kpigz.c:120");  // the first bar: compress_block at 0.1 ms
  // States: per worker 6 blocks; each block a running stretch, two more (preempted, running) in every
  // third; between blocks a blocked one: 6 + 2 * 2 + 5 = 15 per worker.
  EXPECT_EQ(d["states"].size(), 5u * 2 * 15);
  EXPECT_EQ(d["dropped"]["bars"], 0);
  EXPECT_TRUE(d["grid"].empty()) << "nothing left out: no grid";
  // The summary: on-CPU share per thread from the switches (9 ms - 0.5 ms of preemption over 9 + 2.5 ms).
  EXPECT_NE(page.find("74% on CPU"), std::string::npos);
}

// ERRATUM E420: past the limits, the longest bars are kept and every bar goes into the grid; the grid keeps
// every nanosecond of coverage (summed per depth it equals the bars' total), its column width the smallest
// power of two that fits the span in the columns, each column named by what covered most of it.
TEST_F(HtmlPage, GridSumsUpWhatWasLeftOut) {
  analysis::Merged in = analysis::open_inputs({(dir / "kpigz.kron").string()}, analysis::InputOptions{});
  analysis::Timeline tl(in);
  analysis::PageLimits lim;
  lim.bars = 5;
  lim.stretches = 4;
  lim.columns = 16;
  analysis::PageSink sink(lim);
  tl.walk(sink);
  const auto d = nlohmann::json::parse(sink.data_json());
  EXPECT_EQ(d["bars"].size(), 5u * 6);
  EXPECT_EQ(d["dropped"]["bars"], scopes - 5);
  std::vector<std::uint64_t> kept;  // the longest: the 4 write_out, then a compress_block
  for (std::size_t i = 0; i < d["bars"].size(); i += 6) kept.push_back(d["bars"][i + 4]);
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::uint64_t>{3 * kMs / 2, 2 * kMs, 2 * kMs, 2 * kMs, 2 * kMs}));
  // The span: from the first sample (0.1 ms) to the last switch out (2 ms * 5 + 0.5 ms + 0.1 ms + 1.5 ms =
  // 12.1 ms): 12 ms, 16 columns of 2^20 ns.
  EXPECT_EQ(d["span"], 12'000'000);
  EXPECT_EQ(d["col"], 1u << 20);
  std::map<std::pair<int, int>, double> covered;  // (lane, depth) -> ns
  for (std::size_t i = 0; i < d["grid"].size(); i += 5)
    covered[{d["grid"][i].get<int>(), d["grid"][i + 1].get<int>()}] += d["grid"][i + 3].get<double>();
  EXPECT_NEAR((covered[{0, 0}]), 4.0 * 2 * kMs, 4);
  EXPECT_NEAR((covered[{1, 0}]), 6.0 * 1.5 * kMs, 4);
  EXPECT_NEAR((covered[{1, 1}]), 6.0 * kMs, 4);
  EXPECT_NEAR((covered[{2, 1}]), 6.0 * kMs, 4);
  // Column 0 of the main thread (0 - 1.05 ms since the first sample): write_out from 0.9 ms only.
  for (std::size_t i = 0; i < d["grid"].size(); i += 5)
    if (d["grid"][i] == 0 && d["grid"][i + 2] == 0) {
      EXPECT_EQ(d["names"][d["grid"][i + 4].get<std::size_t>()][0], "write_out");
      EXPECT_NEAR(d["grid"][i + 3].get<double>(), (1 << 20) - 900'000, 1);
    }
  double running = 0;
  for (std::size_t i = 0; i < d["sgrid"].size(); i += 5) running += d["sgrid"][i + 2].get<double>();
  EXPECT_NEAR(running, 2 * (9 * kMs - 2 * kMs / 4), 8);
  EXPECT_EQ(d["states"].size(), 4u * 5);
}

// A merged MPI recording: a lane group per rank, each matched message an arrow between the ranks' lanes.
TEST_F(HtmlPage, MpiRanksAreLaneGroupsAndMessagesArrows) {
  using record::MpiCall;
  std::vector<std::string> files;
  for (std::uint32_t rank = 0; rank < 2; ++rank) {  // as tests/analysis/merge_test.cpp builds them
    const std::string p = (dir / ("run.rank-" + std::to_string(rank) + ".kron")).string();
    tracefile::FileHeader h = tracefile::make_header();
    h.clock_hz = 1'000'000'000;
    h.start_ticks = 1'000'000;
    h.node = rank;
    h.mpi_rank = rank;
    h.mpi_world_size = 2;
    tracefile::set_program(h, "./ring");
    tracefile::Writer w(p, h);
    const std::uint32_t src = board::source_id(rank, 100 + rank);
    w.append(scope(src, 100 + rank, 1'000'000, 1, true));
    w.append(scope(src, 100 + rank, 1'050'000, 1, false));
    const std::vector<record::MpiRecord> calls{
        rank == 0 ? kron::testing::mpi_call(0, MpiCall::Send, 0, 2, 1, 5, 1'010'000, 1'015'000, 64)
                  : kron::testing::mpi_call(1, MpiCall::Recv, 0, 2, 0, 5, 1'012'000, 1'020'000, 64)};
    w.append_mpi(calls);
    w.append_clock(std::vector<record::ClockOffsetRecord>{kron::testing::clock_offset(rank, 1'000'000, 1'000'000, 10),
                                                          kron::testing::clock_offset(rank, 1'040'000, 1'040'000, 10)});
    const std::vector<record::NameRecord> names{name_record(record::NameKind::Scope, 1, 0, 0, "step")};
    w.finish(h, {}, names);
    files.push_back(p);
  }
  ASSERT_EQ(sh(dir, "'" + kron_bin + "' merge -q -o merged.kron " + files[0] + " " + files[1]).status, 0);
  const auto r = kron("rpt --html mpi.html merged.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto d = page_data(slurp(dir / "mpi.html"));
  ASSERT_EQ(d["lanes"].size(), 2u);
  EXPECT_EQ(d["lanes"][0]["rank"], 0);
  EXPECT_EQ(d["lanes"][1]["rank"], 1);
  // The process as every output names it (ERRATUM E395); these files have no node entry: no host.
  EXPECT_EQ(d["lanes"][1]["group"], "rank 1 (pid 101)");
  ASSERT_EQ(d["arrows"].size(), 7u);  // from lane, t, to lane, t, bytes, tag, kind
  EXPECT_EQ(d["arrows"][0], 0);
  EXPECT_EQ(d["arrows"][2], 1);
  EXPECT_EQ(d["arrows"][4], 64);
  EXPECT_EQ(d["arrows"][6], 0) << "an MPI message";
  EXPECT_LT(d["arrows"][1].get<std::uint64_t>(), d["arrows"][3].get<std::uint64_t>());
}

// A recording of switches only (no probe in the program): the threads' states, from its first switch.
TEST_F(HtmlPage, SwitchesOnly) {
  {
    tracefile::FileHeader h = tracefile::make_header();
    h.clock_hz = 1'000'000'000;
    tracefile::set_program(h, "sleeper");
    tracefile::Writer w((dir / "sw.kron").string(), h);
    const std::vector<record::SchedRecord> sws{sw(kSrc, 100, 5 * kMs, false), sw(kSrc, 100, 6 * kMs, true),
                                               sw(kSrc, 100, 9 * kMs, false), sw(kSrc, 100, 10 * kMs, true, true),
                                               sw(kSrc, 100, 11 * kMs, false)};
    w.append_sched(sws);
    w.finish(h, {});
  }
  const auto r = kron("rpt --html sw.html sw.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string page = slurp(dir / "sw.html");
  EXPECT_NE(page.find("<title>sleeper — kron rpt</title>"), std::string::npos);
  const auto d = page_data(page);
  ASSERT_EQ(d["lanes"].size(), 1u);
  // running 0-1 ms, blocked 1-4, running 4-5, runnable 5-6 (from the first switch at 5 ms); lane, state, the
  // start's step from the one before, duration, CPU.
  const std::vector<std::uint64_t> want{0, 0, 0,       kMs, 0, 0, 2, kMs, 3 * kMs, 0,
                                        0, 0, 3 * kMs, kMs, 0, 0, 1, kMs, kMs,     0};
  EXPECT_EQ(d["states"].get<std::vector<std::uint64_t>>(), want);
  EXPECT_EQ(d["span"], 6 * kMs);
  EXPECT_NE(page.find("33% on CPU"), std::string::npos);
}

#ifdef KRON_CHROMIUM
namespace {
// What the test adds to a copy of the page (the page itself carries no test code): after the page's own
// load handler, it drives the page with real events and writes what it saw on <html data-t-*>.
const char* kDriver = R"JS(<script>
window.kronErrors = [];
window.addEventListener('error', function (e) { window.kronErrors.push(String(e.message)); });
window.addEventListener('load', function () { setTimeout(function () {
  var html = document.documentElement, set = function (k, v) { html.setAttribute('data-t-' + k, String(v)); };
  var tl = document.getElementById('timeline'), canvas = tl.querySelector('canvas');
  set('shapes', tl.getAttribute('data-shapes'));
  // Pixels that are not the lanes' background in the first lane's rows: the scopes were drawn.
  var ctx = canvas.getContext('2d'), dpr = window.devicePixelRatio || 1;
  var img = ctx.getImageData(200 * dpr, 40 * dpr, canvas.width - 200 * dpr, 40 * dpr).data, inked = 0;
  for (var i = 0; i < img.length; i += 4) if (img[i + 3] > 0 && !(img[i] > 240 && img[i + 1] > 240 && img[i + 2] > 240)) inked++;
  set('inked', inked);
  set('overflow', html.scrollWidth - window.innerWidth);
  set('width', window.innerWidth);
  // Sorting: the "total" column, twice (ascending, then descending).
  var th = document.querySelectorAll('#report th')[3], rows = function () {
    return Array.prototype.map.call(document.querySelectorAll('#report tbody tr'), function (r) {
      return parseFloat(r.cells[3].getAttribute('data-v')); });
  };
  th.click();
  var asc = rows(), sortedAsc = asc.every(function (v, i) { return i === 0 || asc[i - 1] <= v; });
  th.click();
  var desc = rows(), sortedDesc = desc.every(function (v, i) { return i === 0 || desc[i - 1] >= v; });
  set('sorted', sortedAsc && sortedDesc && asc[0] !== desc[0] ? 1 : 0);
  // Filtering by thread name.
  var f = document.getElementById('filter');
  f.value = 'tid102'; f.dispatchEvent(new Event('input'));
  set('shown', Array.prototype.filter.call(document.querySelectorAll('#report tbody tr'), function (r) { return !r.hidden; }).length);
  // Zoom: a key, then the wheel; each redraw (next frame, or 100 ms) narrows data-view.
  var view = function () { var v = tl.getAttribute('data-view').split(' '); return v[1] - v[0]; };
  var w0 = view();
  tl.focus();
  tl.dispatchEvent(new KeyboardEvent('keydown', { key: 'w', bubbles: true }));
  setTimeout(function () {
    var w1 = view(), r = canvas.getBoundingClientRect();
    tl.dispatchEvent(new WheelEvent('wheel', { deltaY: -300, clientX: r.left + 700, clientY: r.top + 50, bubbles: true, cancelable: true }));
    setTimeout(function () {
      set('zoom', w0 + ' ' + w1 + ' ' + view());
      set('errors', window.kronErrors.length);
      set('done', 1);
    }, 150);
  }, 150);
}, 0); });
</script>
)JS";

Result chromium(const fs::path& dir, const std::string& args) {
  return sh(dir, std::string("timeout 120 " KRON_CHROMIUM " --headless --no-sandbox --disable-gpu --no-first-run "
                             "--disable-background-networking --disable-component-update --disable-sync "
                             "--hide-scrollbars --user-data-dir='") +
                     (dir / "profile").string() + "' --enable-logging=stderr --v=0 " + args);
}
}  // namespace

TEST_F(HtmlPage, InHeadlessChromium) {
  ASSERT_EQ(kron("rpt --html page.html kpigz.kron").status, 0);
  std::string page = slurp(dir / "page.html");
  page.insert(page.rfind("</body>"), kDriver);
  write_text(dir / "driven.html", page);
  const auto b = chromium(dir, "--window-size=1280,900 --virtual-time-budget=5000 --dump-dom 'file://" +
                                   (dir / "driven.html").string() + "'");
  ASSERT_EQ(b.status, 0) << b.err;
  const auto attr = [&](const std::string& k) {
    const std::string key = "data-t-" + k + "=\"";
    const auto a = b.out.find(key);
    return a == std::string::npos ? std::string("?")
                                  : b.out.substr(a + key.size(), b.out.find('"', a + key.size()) - a - key.size());
  };
  EXPECT_NE(b.out.find("data-ok=\"1\""), std::string::npos) << b.out.substr(0, 300);
  ASSERT_EQ(attr("done"), "1") << b.err;
  EXPECT_EQ(attr("errors"), "0");
  EXPECT_EQ(b.err.find("Uncaught"), std::string::npos) << b.err;
  EXPECT_EQ(b.err.find("CONSOLE"), std::string::npos) << b.err;
  EXPECT_GT(std::stoul(attr("shapes")), 2 * scopes) << "every scope and stretch at least a pixel";
  EXPECT_GT(std::stoul(attr("inked")), 1000u) << "the timeline's first lane has ink";
  EXPECT_EQ(attr("width"), "1280");
  EXPECT_LE(std::stol(attr("overflow")), 0) << "no horizontal overflow at 1,280 pixels";
  EXPECT_EQ(attr("sorted"), "1");
  EXPECT_EQ(attr("shown"), "2") << "compress_block and deflate on tid 102: the filter kept nothing else";
  std::istringstream zoom(attr("zoom"));
  double w0 = 0, w1 = 0, w2 = 0;
  zoom >> w0 >> w1 >> w2;
  EXPECT_GT(w0, 0);
  EXPECT_LT(w1, w0 * 0.8) << attr("zoom");
  EXPECT_LT(w2, w1 * 0.9) << attr("zoom");
  // The screenshot (docs/walkthrough.md shows one): a PNG of the page at 1,280 pixels.
  const auto s = chromium(dir, "--window-size=1280,1500 --virtual-time-budget=5000 --screenshot='" +
                                   (dir / "page.png").string() + "' 'file://" + (dir / "page.html").string() + "'");
  ASSERT_EQ(s.status, 0) << s.err;
  const std::string png = slurp(dir / "page.png");
  ASSERT_GT(png.size(), 10'000u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  if (const char* keep = std::getenv("KRON_HTML_SCREENSHOT"))
    fs::copy_file(dir / "page.png", keep, fs::copy_options::overwrite_existing);
}
#endif  // KRON_CHROMIUM
