// The `kron expand`, `kron rpt` and `kron export` commands end to end: golden output (003 section 3.5's
// options), bad input (exit 2, file and offset or FILE:LINE:COLUMN, nothing wrong printed), the JSON
// and Perfetto exports read back with nlohmann-json, and the HTML report in headless Chromium.
// Golden files: tests/tools/golden/; regenerate with KRON_UPDATE_GOLDEN=1 (then review the diff).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "../analysis/fixtures.hpp"
#include "kron/core/stats.hpp"
#include "support/perfetto_read.hpp"

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

// Runs a shell command line in `dir`; stdout and stderr captured separately.
Result sh(const fs::path& dir, const std::string& cmd) {
  const std::string line = "cd '" + dir.string() + "' && " + cmd + " >'" + (dir / ".out").string() + "' 2>'" +
                           (dir / ".err").string() + "'";
  const int rc = std::system(line.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(dir / ".out"), slurp(dir / ".err")};
}

const std::string kron_bin = std::string(KRON_BINARY_DIR) + "/kron";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
  return s;
}

void golden(const std::string& name, const std::string& got, const fs::path& dir) {
  const std::string text = replace_all(got, dir.string(), "$DIR");
  const fs::path file = fs::path(KRON_SOURCE_DIR) / "tests/tools/golden" / (name + ".txt");
  if (std::getenv("KRON_UPDATE_GOLDEN")) {
    std::ofstream(file, std::ios::binary) << text;
    return;
  }
  ASSERT_TRUE(fs::exists(file)) << file;
  EXPECT_EQ(text, slurp(file)) << "golden " << file << " differs (KRON_UPDATE_GOLDEN=1 regenerates it)";
}

class Tools : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    write_kron(dir / "t.kron", hand_checked());
    write_text(dir / "interval.info", kIntervalInfo);
    std::vector<Sample> raw = hand_checked();
    write_bytes(dir / "mk.dat", encode_stream(classic::Chip::Mk2, raw));
    write_bytes(dir / "mk1.dat", encode_stream(classic::Chip::Mk1, raw));
  }
  void TearDown() override { fs::remove_all(dir); }
  Result kron(const std::string& args) { return sh(dir, "'" + kron_bin + "' " + args); }
  fs::path dir;
};

}  // namespace

// 003 mk_expand defaults: header, timestamp, source ID and user data in hexadecimal; -h a heading.
TEST_F(Tools, ExpandGoldenDefault) {
  const auto r = kron("expand -h t.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  golden("expand_default", r.out, dir);
}

// -c counters, -x header bits, -r/-s/-t/-u radixes (003 "Using mk_expand"), on a raw MultiKron II stream
// read from 003's default file name mk.dat.
TEST_F(Tools, ExpandGoldenAllOptionsMk2) {
  const auto r = kron("expand --input-format mk2 -h -c -x -rd -sd -td -ud");
  ASSERT_EQ(r.status, 0) << r.err;
  golden("expand_mk2_all_options", r.out, dir);
}

// -e elapsed time, octal timestamp, a raw MultiKron stream.
TEST_F(Tools, ExpandGoldenElapsedOctalMk1) {
  const auto r = kron("expand --input-format mk1 -h -e -to -x -c -r x mk1.dat");
  ASSERT_EQ(r.status, 0) << r.err;
  golden("expand_mk1_elapsed_octal", r.out, dir);
}

TEST_F(Tools, RptGoldenDefault) {
  const auto r = kron("rpt t.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  golden("rpt_default", r.out, dir);
}

// --wide: every column, a ticks line and a microseconds line per row (the default fits 100 columns, E144).
TEST_F(Tools, RptGoldenWide) {
  const auto r = kron("rpt --wide t.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  golden("rpt_wide", r.out, dir);
}

// The default table fits 100 columns, whatever the names (cut with "~", E144).
TEST_F(Tools, RptDefaultFits100Columns) {
  write_text(dir / "long.info", "1 10 20 \"a very long interval name that goes on and on\"\n");
  for (const char* args : {"rpt t.kron", "rpt -s -h t.kron", "rpt -f long.info -s t.kron"}) {
    const auto r = kron(args);
    ASSERT_EQ(r.status, 0) << r.err;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) EXPECT_LE(line.size(), 100u) << args << ": " << line;
  }
  const auto r = kron("rpt -f long.info t.kron");
  EXPECT_NE(r.out.find("a very long interval name that g~"), std::string::npos) << r.out;
}

TEST_F(Tools, RptGoldenSummaryHistogramsVerbose) {
  write_text(dir / "other.info", kIntervalInfo);
  const auto r = kron("rpt -v -s -h -d -f other.info --input-format mk2 mk.dat");
  ASSERT_EQ(r.status, 0) << r.err;
  golden("rpt_summary_histograms", r.out, dir);
}

TEST_F(Tools, RptGoldenChronological) {
  const auto r = kron("rpt -n t.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  golden("rpt_chronological", r.out, dir);
}

// The same trace as a kron file, a MultiKron II stream and a MultiKron stream gives the same report.
TEST_F(Tools, RptSameReportFromEveryFormat) {
  const auto a = kron("rpt --json t.kron"), b = kron("rpt --json --input-format mk2 mk.dat"),
             c = kron("rpt --json --input-format mk1 mk1.dat");
  ASSERT_EQ(a.status, 0);
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out), jc = nlohmann::json::parse(c.out);
  EXPECT_EQ(ja["rows"], jb["rows"]);
  EXPECT_EQ(ja["rows"], jc["rows"]);
  EXPECT_EQ(ja["samples"], jc["samples"]);
}

TEST_F(Tools, RptJsonReadBack) {
  const auto r = kron("rpt --json -s t.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["clock_hz"], 10'000'000);
  bool seen = false;
  for (const auto& row : j["rows"])
    if (row["name"] == "whole program" && row["stream"] == "all") {
      seen = true;
      EXPECT_EQ(row["count"], 3);
      EXPECT_EQ(row["total"], 900);
      EXPECT_NEAR(row["total_us"].get<double>(), 90.0, 1e-9);
      EXPECT_EQ(row["unmatched_starts"], 1);
      EXPECT_EQ(row["unmatched_ends"], 1);
    }
  EXPECT_TRUE(seen);
}

// Malformed interval.info: FILE:LINE:COLUMN and what was expected, exit 2, nothing on stdout.
TEST_F(Tools, RptMalformedIntervalInfo) {
  write_text(dir / "interval.info", "1 10 20 \"ok\"\n# fine\n2 81 82 \"then\" \"else\"\n");
  const auto r = kron("rpt t.kron");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("interval.info:3:9: expected the second end event number"), std::string::npos) << r.err;
  fs::remove(dir / "interval.info");
  const auto m = kron("rpt -f interval.info t.kron");  // asked for and missing: an error
  EXPECT_EQ(m.status, 2);
  EXPECT_NE(m.err.find("interval.info"), std::string::npos) << m.err;
  // Not asked for and not there: named scopes need none (this file has none: no rows, exit 0).
  const auto n = kron("rpt t.kron");
  EXPECT_EQ(n.status, 0) << n.err;
  EXPECT_NE(n.out.find("samples "), std::string::npos) << n.out;
}

// A truncated or corrupted input: exit 2, file and offset named; expand printed only the samples before
// it, each exactly as from the whole file; rpt printed nothing; export left no file behind.
TEST_F(Tools, TruncatedInputPrintsNothingWrong) {
  auto bytes = encode_stream(classic::Chip::Mk2, hand_checked());
  const auto whole = kron("expand --input-format mk2 mk.dat");
  ASSERT_EQ(whole.status, 0);
  // Cut in the middle of sample 10 (samples: one trace, one resource (84 bytes), then traces).
  const std::size_t cut = 20 + 84 + 8 * 20 + 7;
  bytes.resize(cut);
  write_bytes(dir / "cut.dat", bytes);
  const auto r = kron("expand --input-format mk2 cut.dat");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cut.dat: offset 264: mk2 sample cut short"), std::string::npos) << r.err;
  std::size_t nl = 0, pos = 0;
  for (unsigned i = 0; i < 10; ++i) pos = whole.out.find('\n', pos) + 1, ++nl;
  EXPECT_EQ(r.out, whole.out.substr(0, pos));
  const auto rp = kron("rpt --input-format mk2 cut.dat");
  EXPECT_EQ(rp.status, 2);
  EXPECT_EQ(rp.out, "");
  const auto ex = kron("export --input-format mk2 -o out.json cut.dat");
  EXPECT_EQ(ex.status, 2);
  EXPECT_FALSE(fs::exists(dir / "out.json"));
  // A corrupted header byte in the middle.
  bytes = encode_stream(classic::Chip::Mk2, hand_checked());
  bytes[20 + 84 + 20 * 3] = 0x00;
  write_bytes(dir / "bad.dat", bytes);
  const auto b = kron("expand --input-format mk2 bad.dat");
  EXPECT_EQ(b.status, 2);
  EXPECT_NE(b.err.find("bad.dat: offset 164: byte 0x00 does not start a mk2 sample"), std::string::npos) << b.err;
  EXPECT_EQ(std::count(b.out.begin(), b.out.end(), '\n'), 5);
}

TEST_F(Tools, UsageErrorsExitTwo) {
  EXPECT_EQ(kron("expand -r z t.kron").status, 2);
  EXPECT_EQ(kron("rpt -e 0 t.kron").status, 2);
  EXPECT_EQ(kron("rpt -e 65 t.kron").status, 2);
  EXPECT_EQ(kron("export --format svg -o x t.kron").status, 2);
  EXPECT_EQ(kron("expand mk.dat").status, 2);  // a raw stream needs --input-format
}

// The Perfetto trace (kron export's default format) read back by a decoder of the protobuf wire format
// (tests/support/perfetto_read.hpp): a slice per interval occurrence with its duration, the sixteen counters
// of the resource sample as one counter event, the named event as an instant, a track per source and cpu.
TEST_F(Tools, ExportPerfettoReadBack) {
  const auto r = kron("export --compress 0 -o t.pftrace t.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  namespace pf = kron::testing::perfetto;
  const pf::Trace t = pf::read(slurp(dir / "t.pftrace"));
  const std::vector<pf::Slice> sl = pf::slices(t);
  EXPECT_EQ(sl.size(), 3u + 2 + 2 + 2 + 3 + 2 + 3);  // classes 1-4 occurrences of the hand-checked trace
  bool whole = false;
  for (const auto& x : sl) {
    EXPECT_LE(x.start, x.end) << x.name;
    if (x.name == "whole program" && x.end - x.start == 30'000) whole = true;  // 10@100 -> 20@400: 30 us
  }
  EXPECT_TRUE(whole);
  unsigned counters = 0, instants = 0;
  for (const auto& e : t.events) {
    if (e.type == pf::kCounter) {
      ++counters;
      EXPECT_GE(e.counter, 1000);  // counter 0 of the resource sample: 1000
      EXPECT_EQ(e.extra_counters.size(), 15u);
      for (std::size_t c = 0; c < e.extra_counters.size(); ++c) EXPECT_EQ(e.extra_counters[c], 1001 + std::int64_t(c));
    }
    if (e.type == pf::kInstant && e.name == "event 5") ++instants;
  }
  EXPECT_EQ(counters, 1u);  // one resource sample, its sixteen counters as one event
  EXPECT_EQ(instants, 1u);
  // A process track per source, in it a track per cpu (a classic recording's cpus are plain tracks), and the
  // slices on interval tracks inside those.
  std::set<std::uint64_t> processes;
  for (const auto& [uuid, tr] : t.tracks)
    if (tr.pid >= 0 && tr.tid < 0) processes.insert(uuid);
  EXPECT_EQ(processes.size(), 2u);  // two sources
  std::set<std::uint64_t> cpus;
  for (const auto& x : sl) {
    std::uint64_t u = x.track;
    while (t.tracks.count(u) && !processes.count(t.tracks.at(u).parent) && t.tracks.at(u).parent) u = t.tracks.at(u).parent;
    ASSERT_TRUE(t.tracks.count(u) && processes.count(t.tracks.at(u).parent)) << x.name << " is in no process";
    cpus.insert(u);
  }
  EXPECT_EQ(cpus.size(), 2u) << "two cpus";
}

// Chrome Trace Event JSON read back: slices per interval occurrence, counters, instants, tracks.
TEST_F(Tools, ExportChromeJsonReadBack) {
  const auto r = kron("export --format chrome-json -o t.json t.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(dir / "t.json"));
  ASSERT_TRUE(j["traceEvents"].is_array());
  unsigned x = 0, b = 0, e = 0, c = 0, i = 0, meta = 0;
  bool first_whole = false;
  for (const auto& ev : j["traceEvents"]) {
    const std::string ph = ev["ph"];
    ASSERT_TRUE(ev.contains("pid") && ev.contains("tid")) << ev;
    if (ph == "X") {
      ++x;
      if (ev["name"] == "whole program" && ev["pid"] == kSrcA && ev["ts"].get<double>() == 5.0) {
        first_whole = true;  // 10@100 -> 20@400, times from the first sample (50): 5 us, 30 us
        EXPECT_DOUBLE_EQ(ev["dur"].get<double>(), 30.0);
        EXPECT_EQ(ev["tid"], 0);
      }
    } else if (ph == "b") {
      ++b;
    } else if (ph == "e") {
      ++e;
    } else if (ph == "C") {
      ++c;
      EXPECT_EQ(ev["args"]["value"].get<std::uint64_t>() >= 1000, true);
    } else if (ph == "i") {
      ++i;
      EXPECT_EQ(ev["name"], "event 5");
    } else if (ph == "M") {
      ++meta;
    }
  }
  EXPECT_EQ(x, 3u + 2 + 2 + 2 + 3 + 2);  // classes 1-3 occurrences of the hand-checked trace
  EXPECT_EQ(b, 3u);                       // class 4
  EXPECT_EQ(e, 3u);
  EXPECT_EQ(c, 16u);                      // one resource sample, sixteen counter tracks
  EXPECT_EQ(i, 1u);                       // event 5; all others are interval events
  EXPECT_EQ(meta, 4u);                    // two processes (sources), two threads (cpus)
  EXPECT_TRUE(first_whole);
}

TEST_F(Tools, ExportCsvOneRowPerSample) {
  const auto r = kron("export --format csv -o t.csv t.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream in(slurp(dir / "t.csv"));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("type,cpu,source,thread,group,flags,timestamp,time_us,data,c0,", 0), 0u);
  std::size_t rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    // The record's fields, the counters, the phase, then kind, name, value, thread name and rank.
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), 8 + 16 + 1 + 5) << line;
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    f.resize(31);
    EXPECT_EQ(f[25], "0") << line;  // a file without phases
    EXPECT_EQ(f[26], rows == 2 ? "counter" : "instant") << line;
    EXPECT_EQ(f[27], "") << line;     // no named probe
    EXPECT_EQ(f[28], f[8]) << line;   // the value of an unnamed sample: its data word
    EXPECT_EQ(f[30], "") << line;     // not an MPI recording
    if (rows == 2) {
      EXPECT_EQ(line.rfind("resource,0,0x00010001,0,,0,60,1.0000,99,1000,1001,", 0), 0u) << line;
    }
  }
  EXPECT_EQ(rows, hand_checked().size());
}

// The HTML report: self-contained, one SVG chart per report row that has intervals (the JSON report of
// the same options says which rows those are).
std::size_t count_charts(const std::string& page) {
  std::size_t n = 0;
  for (std::size_t p = 0; (p = page.find("<svg class=\"hist\"", p)) != std::string::npos; ++p) ++n;
  return n;
}
TEST_F(Tools, HtmlReportIsSelfContainedWithOneChartPerRow) {
  const auto r = kron("rpt -s --html report.html t.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(fs::exists(dir / "report.html"));
  const std::string page = slurp(dir / "report.html");
  EXPECT_EQ(page.find("src="), std::string::npos) << "self-contained: no external resources";
  EXPECT_EQ(page.find("href="), std::string::npos);
  const auto j = nlohmann::json::parse(kron("rpt -s --json t.kron").out);
  std::size_t rows_with_intervals = 0;
  for (const auto& row : j["rows"]) rows_with_intervals += row["count"].get<unsigned>() > 0;
  EXPECT_EQ(count_charts(page), rows_with_intervals);
  EXPECT_EQ(count_charts(page), 9u);  // -s: "all" only over two streams or more (E144)
}

#ifdef KRON_CHROMIUM
// The same page in headless Chromium (KRON_WITH_CHROMIUM): it loads without script errors and the page's
// own script marks data-ok after checking every SVG has bars and a size.
TEST_F(Tools, HtmlReportInHeadlessChromium) {
  const auto r = kron("rpt -s --html report.html t.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::size_t svgs = count_charts(slurp(dir / "report.html"));
  ASSERT_GT(svgs, 0u);
  const auto b = sh(dir, std::string("timeout 120 " KRON_CHROMIUM " --headless --no-sandbox --disable-gpu --no-first-run "
                                     "--disable-background-networking --disable-component-update --disable-sync "
                                     "--user-data-dir='") + (dir / "profile").string() + "' --enable-logging=stderr --v=0 "
                         "--virtual-time-budget=5000 --dump-dom 'file://" + (dir / "report.html").string() + "'");
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out.find("data-ok=\"1\""), std::string::npos) << b.out.substr(0, 300);
  EXPECT_NE(b.out.find("data-charts=\"" + std::to_string(svgs) + "\""), std::string::npos);
  EXPECT_NE(b.out.find("<rect class=\"bar\""), std::string::npos);
  EXPECT_EQ(b.err.find("Uncaught"), std::string::npos) << b.err;
  EXPECT_EQ(b.err.find("CONSOLE"), std::string::npos) << b.err;
}

// kron::histogram snapshots (trace format 1.4) drawn as SVG charts with their phase table, in the
// same page, checked by the same page script in headless Chromium.
TEST_F(Tools, HtmlLatencyHistogramsInHeadlessChromium) {
  {
    auto h = tracefile::make_header();
    h.clock_hz = 10'000'000;
    tracefile::Writer w((dir / "lat.kron").string(), h);
    for (const auto& s : hand_checked()) w.append(s);
    for (std::uint16_t phase = 1; phase <= 2; ++phase) {
      std::vector<std::uint8_t> rec(sizeof(stats::HistSnapshotRecord));
      stats::HistSnapshotRecord r{};
      r.h.kind = record::RecordKind::HistSnapshot;
      r.h.phase = phase;
      r.source = 1, r.thread = 7, r.hist = 1, r.timestamp = 1000;
      std::snprintf(r.name, sizeof r.name, "get");
      r.min = 40, r.max = 4000 * phase;
      for (std::uint64_t b : {stats::bucket_of(40), stats::bucket_of(400), stats::bucket_of(4000ull * phase)}) {
        const stats::HistEntry e{b, std::uint64_t{10} * phase};
        const auto* p = reinterpret_cast<const std::uint8_t*>(&e);
        rec.insert(rec.end(), p, p + sizeof e);
        ++r.entries;
        r.sum += 10 * phase * stats::bucket_range(static_cast<unsigned>(b)).lo;
      }
      r.h.size = static_cast<std::uint16_t>(rec.size());
      std::memcpy(rec.data(), &r, sizeof r);
      w.append_snapshots(rec, 1);
    }
    w.finish(h, {});
  }
  const auto r = kron("rpt -s --html lat.html lat.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string page = slurp(dir / "lat.html");
  EXPECT_NE(page.find("<svg class=\"hist latency\""), std::string::npos);
  EXPECT_NE(page.find("<td>get</td><td>2</td><td class=\"n\">60</td>"), std::string::npos);  // phase 2: 3 buckets of 20
  EXPECT_NE(page.find("<td>get</td><td>all</td><td class=\"n\">90</td>"), std::string::npos);
  std::size_t svgs = count_charts(page);  // the intervals' charts, and the latency charts: total and per phase
  for (std::size_t p = 0; (p = page.find("<svg class=\"hist latency\"", p)) != std::string::npos; ++p) ++svgs;
  EXPECT_EQ(svgs, count_charts(page) + 3);
  const auto b = sh(dir, std::string("timeout 120 " KRON_CHROMIUM " --headless --no-sandbox --disable-gpu --no-first-run "
                                     "--disable-background-networking --disable-component-update --disable-sync "
                                     "--user-data-dir='") + (dir / "profile2").string() + "' --enable-logging=stderr --v=0 "
                         "--virtual-time-budget=5000 --dump-dom 'file://" + (dir / "lat.html").string() + "'");
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out.find("data-ok=\"1\""), std::string::npos) << b.out.substr(0, 300);
  EXPECT_NE(b.out.find("data-charts=\"" + std::to_string(svgs) + "\""), std::string::npos);
  EXPECT_NE(b.out.find("hist latency"), std::string::npos);
  EXPECT_EQ(b.err.find("Uncaught"), std::string::npos) << b.err;
}
#endif  // KRON_CHROMIUM

// Nothing lost goes uncounted: a recording that was not closed (the recorder killed mid-record) is read
// to its last whole record and the dropped bytes are reported; a closed one that lost samples says so.
TEST_F(Tools, IncompleteAndLossyRecordingsAreReported) {
  {
    auto h = tracefile::make_header();
    h.clock_hz = 10'000'000;
    tracefile::Writer w((dir / "cut.kron").string(), h);
    for (const auto& s : hand_checked()) w.append(s);
  }  // no finish(): the file stays marked incomplete
  fs::resize_file(dir / "cut.kron", fs::file_size(dir / "cut.kron") - 12);  // cut the last record
  const auto r = kron("rpt --json cut.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["samples"], hand_checked().size() - 1);
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_NE(j["warnings"][0].get<std::string>().find("not closed"), std::string::npos);
  EXPECT_NE(j["warnings"][0].get<std::string>().find("20 trailing bytes"), std::string::npos);
  const auto e = kron("expand cut.kron");
  EXPECT_EQ(e.status, 0);
  EXPECT_NE(e.err.find("kron: warning: cut.kron: the recording was not closed"), std::string::npos) << e.err;

  auto h = tracefile::make_header();
  h.clock_hz = 10'000'000;
  tracefile::Writer w((dir / "lossy.kron").string(), h);
  for (const auto& s : hand_checked()) w.append(s);
  h.overruns = 5;
  h.overwritten = 2;
  w.finish(h, {});
  const auto l = kron("rpt lossy.kron");
  ASSERT_EQ(l.status, 0) << l.err;
  EXPECT_NE(l.out.find("warning: lossy.kron: the recorder lost 7 samples before they reached the file (5 overruns, "
                       "2 overwritten in circular mode)"),
            std::string::npos)
      << l.out;
}

// A circular board's overwritten samples are counted in the lanes that lost them (003 2.7): kron info puts
// them in their threads' rows, and only what no lane row holds in the "(no lane)" row.
TEST_F(Tools, InfoCountsOverwrittenSamplesInTheirLanes) {
  auto h = tracefile::make_header();
  h.clock_hz = 10'000'000;
  tracefile::Writer w((dir / "circ.kron").string(), h);
  for (const auto& s : hand_checked()) w.append(s);
  const std::uint64_t kept = hand_checked().size();
  const tracefile::LaneEntry lanes[] = {{7, 70, kept, 0, 300, 0, 0}, {7, 71, 0, 4, 200, 0, 0}};
  h.overruns = 4 + 1;  // one overrun of a thread that found no lane
  h.overwritten = 500;
  h.passed_filter = kept + h.overruns + h.overwritten;
  w.finish(h, lanes);
  const auto t = kron("info circ.kron");
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("LOST 505 samples: 5 overruns, 500 overwritten (1 of them in no lane row"), std::string::npos)
      << t.out;
  const auto r = kron("info --json circ.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["lost_outside_lanes"]["overwritten"], 0u);
  EXPECT_EQ(j["lost_outside_lanes"]["overruns"], 1u);
  std::uint64_t rows = 0;
  for (const auto& l : j["lanes"]) rows += l["overwritten"].get<std::uint64_t>();
  EXPECT_EQ(rows, 500u);
}

// ---- Hardening: hostile inputs and outputs (ERRATA E128-E131) ------------------------------------------

// Row 5: a symlink planted at OUT.tmp.PID made `kron export -o OUT` write through it. The shell execs
// kron, so $$ is kron's pid: the name the old code would have used.
TEST_F(Tools, ExportNeverWritesThroughAPlantedSymlink) {
  write_text(dir / "victim", "precious\n");
  const auto r = sh(dir, "ln -s victim out.json.tmp.$$ && exec '" + kron_bin + "' export --format chrome-json -o out.json t.kron");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(dir / "victim"), "precious\n");
  EXPECT_NO_THROW(nlohmann::json::parse(slurp(dir / "out.json")));
  int tmp = 0;  // no temporary file left behind: only the planted symlink
  for (const auto& e : fs::directory_iterator(dir)) tmp += e.path().filename().string().starts_with("out.json.tmp.");
  EXPECT_EQ(tmp, 1);
}

// Row 10: a program name, counter name and path that are not UTF-8 made info --json and rpt --json
// exit 1 (nlohmann type_error 316) and the Perfetto export write invalid UTF-8. Now \xNN (E131).
TEST_F(Tools, TextThatIsNotUtf8IsEscapedInJson) {
  {
    auto h = tracefile::make_header();
    h.clock_hz = 10'000'000;
    tracefile::set_program(h, "./prog\xff\xfe --name=caf\xc3\xa9");
    tracefile::set_counter_name(h, 1, "ctr\x80");
    tracefile::Writer w((dir / "t\xff.kron").string(), h);
    for (const auto& s : hand_checked()) w.append(s);
    w.finish(h, {});
  }
  const auto i = kron("info --json 't\xff.kron'");
  ASSERT_EQ(i.status, 0) << i.err;
  const auto ji = nlohmann::json::parse(i.out);  // throws on invalid UTF-8
  EXPECT_EQ(ji["program"], "./prog\\xff\\xfe --name=caf\xc3\xa9");  // valid UTF-8 kept as it is
  EXPECT_EQ(ji["file"], "t\\xff.kron");
  EXPECT_EQ(ji["counters"][1], "ctr\\x80");
  const auto r = kron("rpt --json 't\xff.kron'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["inputs"][0]["file"], "t\\xff.kron");
  const auto e = kron("export --format chrome-json -o out.json 't\xff.kron'");
  ASSERT_EQ(e.status, 0) << e.err;
  const auto je = nlohmann::json::parse(slurp(dir / "out.json"));
  EXPECT_EQ(je["otherData"]["inputs"][0], "t\\xff.kron");
  bool counter = false;
  for (const auto& ev : je["traceEvents"]) counter |= ev["name"] == "counter 1 (ctr\\x80)";
  EXPECT_TRUE(counter);
}

// Rows 8 and item 6 at the tools: a damaged file is an error (exit 2), --salvage reads it with warnings.
TEST_F(Tools, DamagedTraceIsAnErrorOrSalvaged) {
  auto b = slurp(dir / "t.kron");
  b[sizeof(tracefile::FileHeader)] = 7;  // the first record's kind (after the 1088-byte header)
  write_text(dir / "k.kron", b);
  const auto e = kron("expand k.kron");
  EXPECT_EQ(e.status, 2);
  EXPECT_NE(e.err.find("k.kron: offset 1088: record kind 7 is not a Trace (1) or Resource (2) record"),
            std::string::npos) << e.err;
  const auto s = kron("rpt --json --salvage k.kron");
  ASSERT_EQ(s.status, 0) << s.err;
  const auto j = nlohmann::json::parse(s.out);
  EXPECT_EQ(j["samples"], hand_checked().size() - 1);
  ASSERT_EQ(j["warnings"].size(), 2u) << s.out;
  const auto i = kron("info --salvage k.kron");
  EXPECT_EQ(i.status, 0) << i.err;
  EXPECT_NE(i.err.find("warning: k.kron: 1 records of unknown kinds skipped"), std::string::npos) << i.err;
  EXPECT_EQ(kron("info k.kron").status, 2);
}

// Row 11 and row 7: unbounded or blocking inputs are refused at once, naming the limit or what they are.
TEST_F(Tools, UnboundedInputsAreRefused) {
  struct Case {
    std::string args, message;
  };
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  write_text(dir / "long.info", std::string(5000, '#') + "\n");
  const Case cases[] = {
      {"rpt -f /dev/zero t.kron", "/dev/zero: offset 0: not a regular file (a character device)"},
      {"rpt -f . t.kron", ".: offset 0: not a regular file (a directory)"},
      {"rpt -f fifo t.kron", "fifo: offset 0: not a regular file (a FIFO"},
      {"rpt -f long.info t.kron", "long.info:1: line is longer than 4096 bytes (the limit for a interval description file)"},
      {"expand fifo", "not a regular file (a FIFO"},
      {"expand --input-format mk2 - </dev/zero", "<stdin>: offset 0: byte 0x00 does not start a mk2 sample"},
      {"sim /dev/zero", "not a regular file (a character device)"},
      {"sim - </dev/zero", "<stdin>:1: line is longer than 4096 bytes (the limit for a simulator script)"},
      {"rdsample --pci-memory /dev/zero", "/dev/zero: offset 0: not a regular file (a character device)"},
  };
  for (const auto& c : cases) {
    const auto r = sh(dir, "timeout 20 '" + kron_bin + "' " + c.args);
    EXPECT_EQ(r.status, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
  }
}

// Row 6: two `kron record -o same.trace` at once both exited 0 with their records interleaved in one
// file. The second is refused (exit 1) before it runs its program; the first's file is whole. (Kept here
// rather than in tests/recorder/ because the lock is the trace Writer's, E129.) Readiness is the lock
// itself (flock -n fails while the first holds it), not a sleep.
TEST_F(Tools, SecondRecordingToTheSameFileIsRefused) {
  const std::string k = "'" + kron_bin + "'";
  const auto r = sh(dir, "{ (" + k + " record -q -o same.trace -- sleep 2 >first.log 2>&1; echo rc=$? >>first.log) & " +
                             "for i in $(seq 200); do [ -e same.trace ] && ! flock -n same.trace true && break; sleep 0.05; " +
                             "done; " + k + " record -q -o same.trace -- echo second; rc=$?; wait; (exit $rc); }");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("same.trace: another kron is writing this trace file"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("second"), std::string::npos) << r.out;  // its program never ran
  EXPECT_NE(slurp(dir / "first.log").find("rc=0"), std::string::npos) << slurp(dir / "first.log");
  const auto i = kron("info --json same.trace");
  ASSERT_EQ(i.status, 0) << i.err;
  EXPECT_EQ(nlohmann::json::parse(i.out)["program"], "sleep 2");
}
