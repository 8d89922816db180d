// Named scopes in the analysis tools: the matcher pairs them by itself (no interval.info; ERRATUM E152:
// nesting, recursion, unmatched ends and starts), the trace file carries their names (1.3 name section),
// and the Perfetto export keeps every child inside its parent (ERRATUM E153) with names and values in
// the slices' arguments and the threads' names on their tracks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "analysis/timeline.hpp"
#include "exports/exports.hpp"
#include "analysis/input.hpp"
#include "analysis/matcher.hpp"
#include "analysis/rpt.hpp"
#include "fixtures.hpp"
#include "kron/board.hpp"
#include "support/perfetto_read.hpp"

namespace kron::analysis {
namespace {
namespace fs = std::filesystem;
using record::NameKind;
using record::NameRecord;

constexpr std::uint32_t kPid = 4242;
constexpr std::uint32_t kSrc = board::source_id(0, kPid);

NameRecord site(std::uint16_t id, NameKind k, const char* name, std::uint32_t line) {
  NameRecord r{};
  r.h = {record::RecordKind::Names, sizeof(NameRecord), 0, 0, 0};
  r.name_kind = k;
  r.id = id;
  r.source = kSrc;
  r.thread = kPid;
  r.line = line;
  std::snprintf(r.name, sizeof r.name, "%s", name);
  std::snprintf(r.function, sizeof r.function, "%s", "work");
  std::snprintf(r.file, sizeof r.file, "%s", "src/work.cpp");
  return r;
}
NameRecord thread(std::uint32_t tid, const char* name) {
  NameRecord r = site(0, NameKind::Thread, name, 0);
  r.id = 0;
  r.thread = tid;
  r.function[0] = r.file[0] = 0;
  return r;
}

Sample named(std::uint64_t t, std::uint32_t tid, std::uint16_t id, std::uint8_t what, std::uint64_t value = 0) {
  Sample s;
  s.timestamp = t;
  s.source = kSrc;
  s.thread = tid;
  s.group = 0;
  s.flags = static_cast<std::uint8_t>(kFlagNamed | what);
  s.data = record::named_data(id, value);
  return s;
}
Sample begin(std::uint64_t t, std::uint32_t tid, std::uint16_t id, std::uint64_t v = 0) { return named(t, tid, id, kFlagScopeBegin, v); }
Sample end(std::uint64_t t, std::uint32_t tid, std::uint16_t id, std::uint64_t v = 0) { return named(t, tid, id, kFlagScopeEnd, v); }

const ReportRow* row(const Report& r, const std::string& name, const std::string& stream_part) {
  for (const auto& x : r.rows)
    if (x.name == name && x.stream.find(stream_part) != std::string::npos) return &x;
  return nullptr;
}

TEST(NamedScopes, MatcherPairsNestedAndRecursiveScopesWithoutIntervalInfo) {
  tracefile::NameTable names;
  names.add(site(1, NameKind::Scope, "outer", 10));
  names.add(site(2, NameKind::Scope, "inner", 20));
  names.add(site(3, NameKind::Event, "bytes", 30));
  names.add(site(4, NameKind::Scope, "outer", 40));  // a second site of the same name: one row
  const std::vector<Sample> v = {
      begin(100, 7, 1), begin(110, 7, 2), end(130, 7, 2),  // inner 20 inside outer
      named(135, 7, 3, 0, 99),                             // an event: no interval
      begin(140, 7, 2), begin(150, 7, 2), end(160, 7, 2), end(190, 7, 2),  // inner recursing: 10, then 50
      end(200, 7, 1),                                      // outer 100
      begin(300, 8, 4), end(340, 8, 4),                    // outer (site 4) on thread 8: 40
      end(400, 8, 2),                                      // an end never begun: unmatched end
      begin(500, 8, 1), begin(510, 8, 2), end(520, 8, 1),  // inner left open inside outer: unmatched start
      begin(600, 8, 9), end(610, 8, 9),                    // an id the names do not hold: "#unnamed"
  };
  IntervalInfo none;
  Matcher m(none, {}, ~std::uint64_t{0}, &names);
  std::vector<Occurrence> occ;
  m.on_interval = [&](const Occurrence& o) { occ.push_back(o); };
  for (const auto& s : v) m.feed(s);
  m.finish();
  const Report r = report_rows(m, true);
  const ReportRow* outer7 = row(r, "outer", "tid7");
  const ReportRow* outer_all = row(r, "outer", "all");
  const ReportRow* inner7 = row(r, "inner", "tid7");
  const ReportRow* inner8 = row(r, "inner", "tid8");
  const ReportRow* unnamed = row(r, "#unnamed", "tid8");
  ASSERT_TRUE(outer7 && outer_all && inner7 && inner8 && unnamed);
  EXPECT_EQ(outer7->stats->count, 1u);
  EXPECT_EQ(outer7->stats->total, 100u);
  EXPECT_EQ(outer_all->stats->count, 3u);  // 100 (tid 7), 40 and 20 (tid 8)
  EXPECT_EQ(outer_all->stats->total, 160u);
  EXPECT_EQ(inner7->stats->count, 3u);
  EXPECT_EQ(inner7->stats->total, 20u + 10u + 50u);
  EXPECT_EQ(inner7->stats->min, 10u);
  EXPECT_EQ(inner8->stats->unmatched_ends, 1u);
  EXPECT_EQ(inner8->stats->unmatched_starts, 1u);
  EXPECT_EQ(unnamed->stats->count, 1u);
  EXPECT_EQ(outer7->location, "src/work.cpp:10 work");
  EXPECT_EQ(m.other_events(), 1u);  // the event
  // Occurrences carry the begin's value and the site's id.
  ASSERT_FALSE(occ.empty());
  EXPECT_EQ(occ.front().name_id, 2);
}

// ERRATUM E152: an end whose scope is not open is an unmatched end even while another scope is open,
// and it leaves that scope open for its own end.
TEST(NamedScopes, AnEndOfAScopeNeverBegunLeavesTheOpenScopeAlone) {
  tracefile::NameTable names;
  names.add(site(1, NameKind::Scope, "outer", 10));
  names.add(site(2, NameKind::Scope, "inner", 20));
  IntervalInfo none;
  Matcher m(none, {}, ~std::uint64_t{0}, &names);
  for (const Sample& s : {begin(100, 7, 1), end(110, 7, 2), end(150, 7, 1)}) m.feed(s);
  m.finish();
  const Report r = report_rows(m, true);
  const ReportRow* outer = row(r, "outer", "tid7");
  const ReportRow* inner = row(r, "inner", "tid7");
  ASSERT_TRUE(outer && inner);
  EXPECT_EQ(outer->stats->count, 1u);
  EXPECT_EQ(outer->stats->total, 50u);
  EXPECT_EQ(outer->stats->unmatched_ends, 0u);
  EXPECT_EQ(inner->stats->count, 0u);
  EXPECT_EQ(inner->stats->unmatched_ends, 1u);
}

TEST(NamedScopes, NamedSamplesNeverMatchIntervalInfoEvents) {
  const auto info = parse_interval_info("1 1 2 \"numbered\"\n", "interval.info");
  tracefile::NameTable names;
  names.add(site(1, NameKind::Scope, "s", 1));
  Matcher m(info, {}, ~std::uint64_t{0}, &names);
  // data = id 1 << 48 | value 1 / 2: the low 32 bits are interval.info's events 1 and 2.
  m.feed(begin(10, 1, 1, 1));
  m.feed(end(20, 1, 1, 2));
  m.finish();
  EXPECT_EQ(m.stats(0, 0, Matcher::kAll).count, 0u);
  EXPECT_EQ(m.stats(1, 0, Matcher::kAll).count, 1u);
}

TEST(NamedScopes, TraceFileCarriesTheNameSection) {
  const auto dir = testing::temp_dir("names");
  auto h = tracefile::make_header();
  h.clock_hz = 1'000'000'000;
  h.names_lost = 3;
  {
    tracefile::Writer w((dir / "n.kron").string(), h);
    w.append(begin(1, 7, 1));
    w.append(end(2, 7, 1));
    const NameRecord names[] = {site(1, NameKind::Scope, "outer", 10), thread(7, "worker")};
    w.finish(h, {}, names);
  }
  tracefile::Reader r((dir / "n.kron").string());
  EXPECT_EQ(r.header().minor, tracefile::kMinor);  // the current minor (1.3 added the name section)
  EXPECT_EQ(r.header().names_lost, 3u);
  const auto w = r.warnings();  // what kron info and every tool print: a lost name is never silent
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("3 names found no room"), std::string::npos) << w[0];
  ASSERT_EQ(r.names().size(), 2u);
  EXPECT_STREQ(r.names()[0].name, "outer");
  EXPECT_STREQ(r.names()[1].name, "worker");
  Sample s;
  ASSERT_TRUE(r.next(s));
  EXPECT_EQ(s.flags, kFlagNamed | kFlagScopeBegin);
  EXPECT_EQ(record::name_id_of(s.data), 1);
}

TEST(NamedScopes, DamagedNameRecordIsAnErrorAtItsOffset) {
  const auto dir = testing::temp_dir("names-bad");
  auto h = tracefile::make_header();
  h.clock_hz = 1'000'000'000;
  const auto path = (dir / "n.kron").string();
  {
    tracefile::Writer w(path, h);
    w.append(begin(1, 7, 1));
    const NameRecord names[] = {site(1, NameKind::Scope, "outer", 10), site(2, NameKind::Scope, "x", 1)};
    w.finish(h, {}, names);
  }
  tracefile::FileHeader fh;
  {
    std::FILE* f = std::fopen(path.c_str(), "r+b");
    ASSERT_TRUE(f);
    ASSERT_EQ(std::fread(&fh, sizeof fh, 1, f), 1u);
    const std::uint64_t at = fh.names_offset + sizeof(NameRecord) + offsetof(NameRecord, name);
    std::fseek(f, static_cast<long>(at), SEEK_SET);
    const std::string all_a(record::kNameBytes, 'A');  // no terminating NUL
    std::fwrite(all_a.data(), 1, all_a.size(), f);
    std::fclose(f);
  }
  try {
    tracefile::Reader r(path);
    FAIL() << "a name without its NUL was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(fh.names_offset + sizeof(NameRecord))), std::string::npos) << what;
    EXPECT_NE(what.find("not terminated"), std::string::npos) << what;
  }
}

// 200 times outer > middle > inner on one thread, ends within a tick of each other, then a named event; on a
// clock whose ticks are no whole number of nanoseconds (a TSC-like rate, prime).
std::string nested_scopes_file(const fs::path& dir) {
  const std::uint64_t hz = 2'994'999'991;  // a TSC-like rate, prime
  std::vector<Sample> v;
  std::uint64_t t = 1'000'003;
  for (std::uint64_t k = 0; k < 200; ++k) {  // outer > middle > inner, ends within a tick of each other
    v.push_back(begin(t, 7, 1, k));
    v.push_back(begin(t + 1, 7, 2));
    v.push_back(begin(t + 2, 7, 3));
    t += 3 + (k * 7919) % 1013;
    v.push_back(end(t, 7, 3));
    v.push_back(end(t + 1, 7, 2));
    v.push_back(end(t + 1, 7, 1, k));  // ends on the same tick as its child
    t += 5 + k % 3;
  }
  v.push_back(named(t, 7, 4, 0, static_cast<std::uint64_t>(-1234)));  // a named event: an instant, signed (D30)
  auto h = tracefile::make_header();
  h.clock_hz = hz;
  const auto path = (dir / "n.kron").string();
  {
    tracefile::Writer w(path, h);
    for (const auto& s : v) w.append(s);
    const NameRecord names[] = {site(1, NameKind::Scope, "outer", 10),
                                site(2, NameKind::Scope, "middle", 20),
                                site(3, NameKind::Scope, "inner", 30),
                                site(4, NameKind::Event, "bytes out", 40),
                                thread(7, "compress 0"),
                                thread(kPid, "kcompress")};
    w.finish(h, {}, names);
  }
  return path;
}

// ERRATUM E153, the Chrome JSON export. A clock whose ticks are no whole number of nanoseconds: converting
// start and duration separately (each rounded) put children 0.1 ns past their parents' ends.
TEST(NamedScopes, ChromeJsonExportKeepsEveryChildInsideItsParent) {
  const auto dir = testing::temp_dir("nest");
  const std::string path = nested_scopes_file(dir);
  Merged in = open_inputs({path}, {});
  const auto out = (dir / "n.json").string();
  std::FILE* f = std::fopen(out.c_str(), "wb");
  ASSERT_TRUE(f);
  Timeline tl(in);
  const exports::ExportStats st = exports::export_chrome_json(tl, f);
  std::fclose(f);
  EXPECT_EQ(st.slices, 600u);
  std::ifstream is(out);
  const auto j = nlohmann::json::parse(is);
  struct Slice {
    std::int64_t start, end;
    std::string name;
  };
  std::vector<Slice> slices;
  std::map<std::string, std::string> thread_names, process_names;
  bool instant = false;
  for (const auto& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "X") {
      const auto s = static_cast<std::int64_t>(std::llround(e["ts"].get<double>() * 1000));
      const auto d = static_cast<std::int64_t>(std::llround(e["dur"].get<double>() * 1000));
      slices.push_back({s, s + d, e["name"]});
      if (e["name"] == "outer") {
        EXPECT_TRUE(e["args"].contains("value"));
        EXPECT_EQ(e["args"]["location"], "src/work.cpp:10 work");
      }
    } else if (ph == "M" && e["name"] == "thread_name") {
      thread_names[std::to_string(e["tid"].get<std::uint64_t>())] = e["args"]["name"];
    } else if (ph == "M" && e["name"] == "process_name") {
      process_names[std::to_string(e["pid"].get<std::uint64_t>())] = e["args"]["name"];
    } else if (ph == "i") {
      instant = true;
      EXPECT_EQ(e["name"], "bytes out");
      EXPECT_EQ(e["args"]["value"], -1234);  // DECISION D30
    }
  }
  EXPECT_TRUE(instant);
  EXPECT_EQ(thread_names["7"], "compress 0 (tid 7)");
  EXPECT_EQ(process_names[std::to_string(kSrc)], "kcompress (pid 4242)");
  ASSERT_EQ(slices.size(), 600u);
  // Every slice inside the one that encloses it: sorted by start (longest first), a stack of open slices.
  std::sort(slices.begin(), slices.end(),
            [](const Slice& a, const Slice& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
  std::vector<Slice> stack;
  std::size_t nested = 0, outside = 0;
  for (const auto& s : slices) {
    while (!stack.empty() && stack.back().end <= s.start) stack.pop_back();
    if (!stack.empty()) {
      ++nested;
      if (s.end > stack.back().end) ++outside;
    }
    stack.push_back(s);
  }
  EXPECT_EQ(nested, 400u);
  EXPECT_EQ(outside, 0u);
}

// ERRATUM E153, the Perfetto export (what kron export writes by default), read back by a decoder of the
// protobuf wire format (tests/support/perfetto_read.hpp): 600 slices, each child inside its parent on the
// thread's track, names and values in the slices, the event an instant with its value, the thread's track
// named with its tid.
TEST(NamedScopes, PerfettoExportKeepsEveryChildInsideItsParent) {
  const auto dir = testing::temp_dir("nest-pf");
  const std::string path = nested_scopes_file(dir);
  Merged in = open_inputs({path}, {});
  const auto out = (dir / "n.pftrace").string();
  std::FILE* f = std::fopen(out.c_str(), "wb");
  ASSERT_TRUE(f);
  Timeline tl(in);
  exports::PerfettoOptions po;
  po.deflate_level = 0;  // packets as they are, for the decoder
  const exports::ExportStats st = exports::export_perfetto(tl, f, po);
  std::fclose(f);
  EXPECT_EQ(st.slices, 600u);
  std::ifstream is(out, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
  namespace pf = kron::testing::perfetto;
  const pf::Trace t = pf::read(bytes);
  const std::vector<pf::Slice> sl = pf::slices(t);
  ASSERT_EQ(sl.size(), 600u);
  std::map<std::string, unsigned> depth_of{{"outer", 0}, {"middle", 1}, {"inner", 2}};
  std::uint64_t value = 0;
  for (const auto& x : sl) {
    ASSERT_TRUE(depth_of.count(x.name)) << x.name;
    EXPECT_EQ(x.depth, depth_of[x.name]) << x.name << " at " << x.start;
    EXPECT_LT(x.start, x.end) << x.name;
    if (x.name == "outer") {  // the value as a signed debug annotation (DECISION D30; none when 0)
      EXPECT_EQ(x.ints.count("value") ? x.ints.at("value") : 0, static_cast<std::int64_t>(value++));
      EXPECT_FALSE(x.uints.count("value"));
    }
  }
  EXPECT_EQ(value, 200u);
  // Every slice inside the one that encloses it, by time: sorted by start (longest first), a stack.
  std::vector<pf::Slice> sorted = sl;
  std::sort(sorted.begin(), sorted.end(), [](const pf::Slice& a, const pf::Slice& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::vector<pf::Slice> stack;
  std::size_t nested = 0, outside = 0;
  for (const auto& x : sorted) {
    while (!stack.empty() && stack.back().end <= x.start) stack.pop_back();
    if (!stack.empty()) {
      ++nested;
      if (x.end > stack.back().end) ++outside;
    }
    stack.push_back(x);
  }
  EXPECT_EQ(nested, 400u);
  EXPECT_EQ(outside, 0u);
  // The slices' times are the timeline's: the first outer begins at tick 1'000'003 (its middle one tick
  // later, which may round to the same nanosecond).
  std::uint64_t first_outer = ~std::uint64_t{0};
  for (const auto& x : sl)
    if (x.name == "outer") first_outer = std::min(first_outer, x.start);
  EXPECT_EQ(first_outer, tl.ns(1'000'003));
  // Every outer slice begins and ends where its samples say (the ticks of nested_scopes_file, converted by the
  // timeline): slices come out in the order they end.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> outer_ticks;
  for (std::uint64_t k = 0, tk = 1'000'003; k < 200; ++k) {
    const std::uint64_t b = tk;
    tk += 3 + (k * 7919) % 1013;
    outer_ticks.push_back({b, tk + 1});
    tk += 5 + k % 3;
  }
  std::size_t k = 0;
  for (const auto& x : sl) {
    if (x.name != "outer") continue;
    ASSERT_LT(k, outer_ticks.size());
    EXPECT_EQ(x.start, tl.ns(outer_ticks[k].first)) << "outer " << k;
    EXPECT_EQ(x.end, tl.ns(outer_ticks[k].second)) << "outer " << k;
    ++k;
  }
  // The named event: one instant with its value, on the same track as the scopes.
  std::size_t instants = 0;
  for (const auto& e : t.events)
    if (e.type == pf::kInstant) {
      ++instants;
      EXPECT_EQ(e.name, "bytes out");
      EXPECT_EQ(e.ints.at("value"), -1234);  // int_value (DECISION D30)
      EXPECT_EQ(e.track, sl.front().track);
    }
  EXPECT_EQ(instants, 1u);
  ASSERT_TRUE(t.tracks.count(sl.front().track));
  const pf::Track& thread = t.tracks.at(sl.front().track);
  EXPECT_EQ(thread.tid, 7);
  EXPECT_NE(thread.name.find("compress 0"), std::string::npos) << thread.name;
}

// kron rpt's table (ERRATUM E411): a long thread name is cut before its tid, never the tid; the rows come in
// one order whatever the order the run registered names and started threads in; --sort orders by a column;
// the thread summary gives each thread's time in outermost scopes and its top scope.
struct RptRun {
  std::string text, narrow;
  std::vector<std::string> sorted_by_total;
  std::vector<ThreadSummary> threads;
};
RptRun rpt_of(const fs::path& path, bool swapped) {
  auto h = tracefile::make_header();
  h.clock_hz = 1'000'000'000;
  const std::uint16_t write = swapped ? 2 : 1, compress = swapped ? 1 : 2;
  const std::uint32_t worker = 4211, reader = 4212;
  {
    tracefile::Writer w(path.string(), h);
    std::vector<Sample> v;
    const std::uint32_t first = swapped ? reader : worker, second = swapped ? worker : reader;
    v.push_back(begin(1000, first, first == worker ? compress : write));  // the same times, the threads first
    v.push_back(begin(1000, second, second == worker ? compress : write));  // seen in the other order
    v.push_back(end(1500, first, first == worker ? compress : write));
    v.push_back(end(1500, second, second == worker ? compress : write));
    v.push_back(begin(3000, worker, compress));  // compress 2000 ns with a write of 100 inside
    v.push_back(begin(3500, worker, write));
    v.push_back(end(3600, worker, write));
    v.push_back(end(5000, worker, compress));
    for (const auto& s : v) w.append(s);
    std::vector<NameRecord> names = {site(write, NameKind::Scope, "write", 10),
                                     site(compress, NameKind::Scope, "compress", 20),
                                     thread(worker, "compress worker 12"), thread(reader, "reader")};
    if (swapped) std::swap(names[0], names[1]);
    w.finish(h, {}, names);
  }
  Merged in = open_inputs({path.string()}, {});
  Timeline tl(in);
  Report r = make_report(tl, {});
  RptRun out;
  out.text = render_text(r, {});
  TextOptions narrow;
  narrow.columns = 60;
  out.narrow = render_text(r, narrow);
  sort_rows(r.rows, "total");
  for (const auto& row : r.rows) out.sorted_by_total.push_back(row.name + " " + row.shown_stream());
  EXPECT_THROW(sort_rows(r.rows, "colour"), std::invalid_argument);
  out.threads = r.threads;
  return out;
}

TEST(NamedScopes, RptKeepsTheThreadIdAndOneOrderWhateverTheRun) {
  const auto dir = testing::temp_dir("rpt-order");
  const RptRun a = rpt_of(dir / "a.kron", false), b = rpt_of(dir / "b.kron", true);
  EXPECT_EQ(a.text, b.text);  // names registered and threads started in another order: the same report
  EXPECT_NE(a.text.find("compress worker 12/tid4211"), std::string::npos) << a.text;
  EXPECT_NE(a.narrow.find("~/tid4211 "), std::string::npos) << a.narrow;  // cut before the tid, never in it
  EXPECT_EQ(a.text.find("event number"), std::string::npos) << a.text;     // no interval.info here
  // The default order: scopes by name, each one's threads by name.
  const auto at = [&](const std::string& t) { return a.text.find(t); };
  EXPECT_LT(at("compress  "), at("write  ")) << a.text;
  EXPECT_LT(at("write     compress worker 12/tid4211"), at("write     reader/tid4212")) << a.text;
  // --sort total: largest first (compress on the worker 2500 ns, write on the reader 500 ...).
  ASSERT_EQ(a.sorted_by_total.size(), 3u);
  EXPECT_EQ(a.sorted_by_total[0], "compress compress worker 12/tid4211");
  EXPECT_EQ(a.sorted_by_total, b.sorted_by_total);
  // The thread summary: span, time in outermost scopes (the nested write not counted twice), top scope.
  ASSERT_EQ(a.threads.size(), 2u);
  EXPECT_EQ(a.threads[0].thread_name, "compress worker 12");
  EXPECT_EQ(a.threads[0].in_scopes, 500u + 2000u);
  EXPECT_EQ(a.threads[0].top_scope, "compress");
  EXPECT_EQ(a.threads[0].top_total, 2500u);
  EXPECT_FALSE(a.threads[0].on_cpu);  // no switches recorded
  EXPECT_EQ(a.threads[1].thread_name, "reader");
  EXPECT_NE(a.text.find("threads:"), std::string::npos) << a.text;
}

}  // namespace
}  // namespace kron::analysis
