// Losses in the analysis (docs/decisions.md D20-D26): a sample that says samples were lost before it
// (kFlagFifoOverrun, kFlagShadowOverrun, kFlagOverwritten) cuts every scope open on its stream; a cut scope
// never yields a duration and is counted once (Stats::cut); rpt shows the column only for a recording that
// lost samples; the exports that draw slices close them at the loss.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "analysis/html.hpp"
#include "analysis/input.hpp"
#include "analysis/matcher.hpp"
#include "analysis/rpt.hpp"
#include "analysis/timeline.hpp"
#include "exports/exports.hpp"
#include "fixtures.hpp"
#include "kron/board.hpp"
#include "support/perfetto_read.hpp"

namespace kron::analysis {
namespace {
using record::NameKind;
using record::NameRecord;

constexpr std::uint32_t kPid = 5151;
constexpr std::uint32_t kSrc = board::source_id(0, kPid);
enum : std::uint16_t { kA = 1, kB = 2, kC = 3 };

NameRecord scope_site(std::uint16_t id, const char* name) {
  NameRecord r{};
  r.h = {record::RecordKind::Names, sizeof(NameRecord), 0, 0, 0};
  r.name_kind = NameKind::Scope;
  r.id = id;
  r.source = kSrc;
  r.thread = kPid;
  std::snprintf(r.name, sizeof r.name, "%s", name);
  return r;
}
tracefile::NameTable names() {
  tracefile::NameTable n;
  for (const auto& r : {scope_site(kA, "A"), scope_site(kB, "B"), scope_site(kC, "C")}) n.add(r);
  return n;
}

Sample named(std::uint64_t t, std::uint16_t id, std::uint8_t what, std::uint32_t tid = 7) {
  Sample s;
  s.timestamp = t;
  s.source = kSrc;
  s.thread = tid;
  s.flags = static_cast<std::uint8_t>(kFlagNamed | what);
  s.data = record::named_data(id, 0);
  return s;
}
Sample begin(std::uint64_t t, std::uint16_t id) { return named(t, id, kFlagScopeBegin); }
Sample end(std::uint64_t t, std::uint16_t id) { return named(t, id, kFlagScopeEnd); }
// A plain Trace sample (no interval event) that follows lost samples of its thread.
Sample loss(std::uint64_t t, std::uint8_t flag = kFlagFifoOverrun, std::uint32_t tid = 7) {
  Sample s;
  s.timestamp = t;
  s.source = kSrc;
  s.thread = tid;
  s.flags = flag;
  s.data = 0x5000;
  return s;
}
Sample lost(Sample s, std::uint8_t flag = kFlagOverwritten) {
  s.flags |= flag;
  return s;
}

struct Fed {
  tracefile::NameTable n = names();
  IntervalInfo info;
  Matcher m;
  std::vector<Occurrence> occ;
  explicit Fed(IntervalInfo i = {}) : info(std::move(i)), m(info, {}, ~std::uint64_t{0}, &n) {
    m.on_interval = [this](const Occurrence& o) { occ.push_back(o); };
  }
  Fed& feed(std::initializer_list<Sample> v) {
    for (const Sample& s : v) m.feed(s);
    return *this;
  }
  const Stats& named_row(const char* name) {
    for (unsigned i = 0; i < m.info().intervals.size(); ++i)
      if (m.info().intervals[i].named && m.part_name(i, 0) == name) return m.stats(i, 0, 0);
    throw std::runtime_error(std::string("no row ") + name);
  }
};

// D20: A > B open at the loss: both cut, no duration; their ends after the loss count nothing more (D21).
TEST(Losses, NestedScopesOpenAtALossAreCutOnceAndNeverTimed) {
  Fed r;
  r.feed({begin(100, kA), begin(200, kB), loss(300), end(400, kB), end(500, kA)}).m.finish();
  EXPECT_TRUE(r.occ.empty()) << "a scope was timed across the loss";
  const Stats& a = r.named_row("A");
  const Stats& b = r.named_row("B");
  EXPECT_EQ(a.count, 0u);
  EXPECT_EQ(b.count, 0u);
  EXPECT_EQ(a.cut, 1u);
  EXPECT_EQ(b.cut, 1u);
  EXPECT_EQ(a.unmatched_starts + a.unmatched_ends + b.unmatched_starts + b.unmatched_ends, 0u);
  EXPECT_EQ(r.m.loss_samples(), 1u);
}

// D21: after a loss, an end whose begin is neither open nor cut lost its begin in the gap: cut, not
// unmatched. Before any loss the same end is unmatched (E152).
TEST(Losses, AnEndWithoutBeginAfterALossIsCutNotUnmatched) {
  Fed before;
  before.feed({end(50, kC)}).m.finish();
  EXPECT_EQ(before.named_row("C").unmatched_ends, 1u);
  EXPECT_EQ(before.named_row("C").cut, 0u);
  Fed r;
  r.feed({begin(100, kA), loss(200), end(300, kC), end(400, kA)}).m.finish();
  EXPECT_EQ(r.named_row("C").cut, 1u);
  EXPECT_EQ(r.named_row("C").unmatched_ends, 0u);
  EXPECT_EQ(r.named_row("A").cut, 1u);  // cut at the loss; its end consumed, not counted twice
  EXPECT_EQ(r.named_row("A").unmatched_ends, 0u);
}

// D21: the cut scope's end is consumed once: a second end of the same scope is counted again (its begin was
// lost too), and a fresh pair after the loss is timed exactly.
TEST(Losses, NoDoubleCountAndPairsAfterTheLossAreExact) {
  Fed r;
  r.feed({begin(100, kA), loss(150), end(160, kA), end(170, kA), begin(200, kA), end(230, kA)}).m.finish();
  const Stats& a = r.named_row("A");
  EXPECT_EQ(a.cut, 2u);  // the one open at the loss, then the end at 170 whose begin was lost
  ASSERT_EQ(a.count, 1u);
  EXPECT_EQ(a.max, 30u);
  ASSERT_EQ(r.occ.size(), 1u);
  EXPECT_EQ(r.occ[0].start, 200u);
}

// The loss flag on a begin: the scope open before is cut, the new one begins after the loss and is timed.
TEST(Losses, ALossFlagOnABeginCutsWhatWasOpenAndStartsTheNewScope) {
  Fed r;
  r.feed({begin(100, kA), lost(begin(300, kA)), end(340, kA)}).m.finish();
  const Stats& a = r.named_row("A");
  EXPECT_EQ(a.cut, 1u);
  ASSERT_EQ(a.count, 1u);
  EXPECT_EQ(a.total, 40u);
}

// D20: the loss flag on an end: the scope it would close is cut (the samples lost may have been its end and
// a new begin); nothing is timed across it.
TEST(Losses, ALossFlagOnAnEndTimesNothing) {
  Fed r;
  r.feed({begin(100, kA), lost(end(900, kA), kFlagShadowOverrun)}).m.finish();
  EXPECT_EQ(r.named_row("A").count, 0u);
  EXPECT_EQ(r.named_row("A").cut, 1u);
}

// A loss on one thread leaves the other threads' scopes alone (a lane is one thread's).
TEST(Losses, ALossCutsOnlyItsOwnThread) {
  Fed r;
  r.feed({named(100, kA, kFlagScopeBegin, 8), begin(110, kA), loss(200), named(300, kA, kFlagScopeEnd, 8)}).m.finish();
  const std::uint32_t t8 = r.m.stream_of(named(0, kA, 0, 8));
  const std::uint32_t t7 = r.m.stream_of(named(0, kA, 0, 7));
  unsigned a = 0;
  while (!(r.m.info().intervals[a].named && r.m.part_name(a, 0) == "A")) ++a;
  EXPECT_EQ(r.m.stats(a, 0, t8).count, 1u);
  EXPECT_EQ(r.m.stats(a, 0, t8).cut, 0u);
  EXPECT_FALSE(r.m.stats(a, 0, t8).lossy);
  EXPECT_EQ(r.m.stats(a, 0, t7).cut, 1u);
  EXPECT_EQ(r.m.stats(a, 0, t7).count, 0u);
}

// D22: a row is marked when its thread lost samples while it could have been open: a cut, or a loss between
// two of its events; a row whose events all follow the loss is exact.
TEST(Losses, RowsAreMarkedWhenTheLossFellInsideTheirStretch) {
  Fed r;
  r.feed({begin(100, kA), end(110, kA), loss(200), begin(300, kA), end(310, kA),  // A on both sides
          begin(400, kB), end(420, kB)})                                          // B only after
      .m.finish();
  EXPECT_TRUE(r.named_row("A").lossy);
  EXPECT_EQ(r.named_row("A").cut, 0u);
  EXPECT_EQ(r.named_row("A").count, 2u);
  EXPECT_FALSE(r.named_row("B").lossy);
}

// D20, D21 for interval.info's classes 1-3: the start open at the loss is cut on its start row (E44), its
// end consumed; an end with no start after the loss is cut on its end row.
TEST(Losses, IntervalInfoClassesOneToThreeAreCutLikeScopes) {
  const auto info = parse_interval_info("1 10 20 \"one\"\n3 8 17 12 \"first\" \"second\"\n", "interval.info");
  Fed r(info);
  auto ev = [](std::uint64_t t, std::uint64_t d) {
    Sample s = loss(t, 0);
    s.data = d;
    return s;
  };
  r.feed({ev(100, 10), ev(110, 8), loss(200), ev(300, 20), ev(310, 17), ev(320, 12), ev(400, 10), ev(450, 20)});
  r.m.finish();
  const Stats& one = r.m.stats(0, 0, 0);
  EXPECT_EQ(one.cut, 1u);
  EXPECT_EQ(one.count, 1u);  // 400-450
  EXPECT_EQ(one.max, 50u);
  EXPECT_EQ(one.unmatched_ends, 0u);
  // class 3: FIRST (8) was open at the loss: "first" (8-17) and the whole (8-12) are cut on their start row;
  // MIDDLE (17) after the loss starts "second", which ends at 12: timed (10 ticks).
  EXPECT_EQ(r.m.stats(1, 0, 0).cut, 1u);
  EXPECT_EQ(r.m.stats(1, 2, 0).cut, 1u);
  EXPECT_EQ(r.m.stats(1, 0, 0).count + r.m.stats(1, 2, 0).count, 0u);
  EXPECT_EQ(r.m.stats(1, 1, 0).count, 1u);
  EXPECT_EQ(r.m.stats(1, 1, 0).total, 10u);
}

// D24: class 4 pairs its k-th end with its k-th start across streams; a loss anywhere cuts every start still
// waiting, whose ends are then consumed; an end with nothing waiting after a loss is cut.
TEST(Losses, ClassFourStartsWaitingAtALossAreCut) {
  const auto info = parse_interval_info("4 27 36 \"message\"\n", "interval.info");
  Fed r(info);
  auto ev = [](std::uint64_t t, std::uint64_t d, std::uint32_t tid) {
    Sample s = loss(t, 0, tid);
    s.data = d;
    return s;
  };
  r.feed(
      {ev(100, 27, 7), loss(150, kFlagOverwritten, 8), ev(200, 36, 8), ev(300, 36, 8), ev(400, 27, 7), ev(450, 36, 8)});
  r.m.finish();
  const Stats& all = r.m.stats(0, 0, Matcher::kAll);
  EXPECT_EQ(all.cut, 2u);  // the start waiting at the loss; the end at 300 with nothing waiting
  ASSERT_EQ(all.count, 1u);
  EXPECT_EQ(all.max, 50u);
  EXPECT_EQ(all.unmatched_ends + all.unmatched_starts, 0u);
  EXPECT_TRUE(all.lossy);
}

// D23: a classic chip's FIFO serves every CPU of its node: a FIFO overrun seen on CPU 0 cuts CPU 1's open
// interval of the same source.
TEST(Losses, AClassicOverrunCutsEveryCpuOfItsSource) {
  const auto info = parse_interval_info("1 10 20 \"one\"\n", "interval.info");
  Fed r(info);
  Sample a = testing::ev(100, false, 10);  // source B, cpu 1
  Sample l = testing::ev(200, false, 5);
  l.cpu = 0;
  l.flags = kFlagFifoOverrun;
  Sample b = testing::ev(300, false, 20);
  r.feed({a, l, b}).m.finish();
  EXPECT_EQ(r.m.stats(0, 0, Matcher::kAll).count, 0u);
  EXPECT_EQ(r.m.stats(0, 0, Matcher::kAll).cut, 1u);
}

// The file behind the report and export tests: thread 7 runs A (10 ticks each) around a loss that cut an A
// of "true" length 20 whose end came 5000 ticks later; clock 1 GHz.
std::string lossy_file(const std::filesystem::path& dir, bool with_loss) {
  auto h = tracefile::make_header();
  h.clock_hz = 1'000'000'000;
  const auto path = (dir / (with_loss ? "loss.kron" : "clean.kron")).string();
  tracefile::Writer w(path, h);
  w.append(begin(100, kA));
  w.append(end(110, kA));
  w.append(begin(200, kA));
  w.append(begin(205, kB));
  if (with_loss) w.append(lost(end(5200, kB)));  // A's end and more were lost before it
  w.append(begin(6000, kA));
  w.append(end(6010, kA));
  const NameRecord ns[] = {scope_site(kA, "A"), scope_site(kB, "B")};
  w.finish(h, {}, ns);
  return path;
}

// A report and the timeline its rows point into.
struct Reported {
  Merged in;
  Timeline tl{in};
  Report r = make_report(tl, {});
  explicit Reported(const std::string& path) : in(open_inputs({path}, {})) {}
};

// D25: the cut column and the mark only for a recording that lost samples; the thread summary's time in
// scopes never counts cut time (E411).
TEST(Losses, RptShowsTheCutColumnOnlyWhenSamplesWereLost) {
  const auto dir = testing::temp_dir("loss-rpt");
  const Reported clean_walk(lossy_file(dir, false));
  const Report& clean = clean_walk.r;
  EXPECT_FALSE(clean.lossy);
  const std::string ct = render_text(clean, {});
  EXPECT_EQ(ct.find(" cut"), std::string::npos) << ct;
  EXPECT_FALSE(nlohmann::json::parse(render_json(clean, false))["rows"][0].contains("cut"));

  const Reported walk(lossy_file(dir, true));
  const Report& r = walk.r;
  ASSERT_TRUE(r.lossy);
  EXPECT_EQ(r.loss_samples, 1u);
  const std::string t = render_text(r, {});
  EXPECT_NE(t.find(" cut"), std::string::npos) << t;
  EXPECT_NE(t.find("samples followed a loss"), std::string::npos) << t;
  const auto j = nlohmann::json::parse(render_json(r, false));
  EXPECT_EQ(j["loss_samples"], 1);
  bool saw_a = false;
  for (const auto& row : j["rows"]) {
    if (row["name"] != "A") continue;
    saw_a = true;
    EXPECT_EQ(row["count"], 2);
    EXPECT_EQ(row["max"], 10) << "a scope was timed across the loss";
    EXPECT_EQ(row["cut"], 1);
    EXPECT_EQ(row["lossy"], true);
    EXPECT_EQ(row["unmatched_starts"], 0);
  }
  EXPECT_TRUE(saw_a);
  const std::string wide = render_text(r, TextOptions{false, false, true});
  EXPECT_NE(wide.find("1*"), std::string::npos) << wide;
  // The HTML table: the column only for the recording that lost samples, its cells with the mark.
  EXPECT_EQ(render_html(clean, nullptr).find(">cut</th>"), std::string::npos);
  const std::string page = render_html(r, nullptr);
  EXPECT_NE(page.find(">cut</th>"), std::string::npos);
  EXPECT_NE(page.find(">1*</td>"), std::string::npos);
  EXPECT_NE(page.find("cut by losses"), std::string::npos);
  ASSERT_EQ(r.threads.size(), 1u);
  EXPECT_EQ(r.threads[0].in_scopes, 20u);  // the two timed A's; never the cut A or B
  EXPECT_EQ(r.threads[0].top_total, 20u);
}

// D26: the Perfetto export ends the slices open at the loss where the loss was seen, each end marked
// cut_by_loss; no slice spans the loss.
TEST(Losses, PerfettoEndsOpenSlicesAtTheLoss) {
  const auto dir = testing::temp_dir("loss-pf");
  const std::string path = lossy_file(dir, true);
  Merged in = open_inputs({path}, {});
  const auto out = (dir / "l.pftrace").string();
  std::FILE* f = std::fopen(out.c_str(), "wb");
  ASSERT_TRUE(f);
  Timeline tl(in);
  const exports::ExportStats st = exports::export_perfetto(tl, f, {exports::kPerfettoMaxBytes, 0});
  std::fclose(f);
  EXPECT_EQ(st.cut_by_loss, 2u);
  std::ifstream is(out, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
  const auto sl = testing::perfetto::slices(testing::perfetto::read(bytes));
  unsigned cut = 0, timed = 0;
  for (const auto& s : sl) {
    if (s.uints.count("cut_by_loss")) {
      ++cut;
      EXPECT_EQ(s.end, 5200u - 100u) << s.name;  // ended at the loss sample (ns since the first sample)
    } else {
      ++timed;
      EXPECT_EQ(s.end - s.start, 10u) << s.name;
    }
  }
  EXPECT_EQ(cut, 2u);
  EXPECT_EQ(timed, 2u);
}

// D26: OTF2 leaves the regions open at the loss there (Leave at the loss sample): the two timed A's are
// left as they end, the cut A and B at the loss, none at the end; the late end of B is left out.
TEST(Losses, Otf2LeavesOpenRegionsAtTheLoss) {
  if (!exports::otf2_built_in()) GTEST_SKIP() << exports::otf2_not_built_in();
  const auto dir = testing::temp_dir("loss-otf2");
  const std::string path = lossy_file(dir, true);
  Merged in = open_inputs({path}, {});
  Timeline tl(in);
  const auto out = dir / "l.otf2";
  std::filesystem::create_directories(out);
  const exports::ExportStats st = exports::export_otf2(tl, out.string());
  EXPECT_EQ(st.cut_by_loss, 2u);
  EXPECT_EQ(st.slices, 2u);
  EXPECT_EQ(st.closed_at_end, 0u);
}

}  // namespace
}  // namespace kron::analysis
