// kron top's frame as lines and JSON (src/top/layout.cpp): recorded names escaped (E346) and cut to their
// columns, no line wider than asked, short screens keep every table, losses marked, JSON that survives
// any bytes. The frames on a real program: tests/tools/top_test.py.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "top/model.hpp"

namespace kron::top {
namespace {

Frame sample_frame() {
  Frame f;
  f.header.program = "server --port 1";
  f.header.board = "b";
  f.header.sample_rate = 12345;
  f.processes.push_back(ProcessRow{42, 0, "server --port 1", 2, 12345, false});
  for (std::uint32_t t = 0; t < 30; ++t) {
    ThreadRow r;
    r.pid = 42, r.tid = 100 + t, r.name = "worker", r.state = "active", r.sample_rate = 10;
    f.threads.push_back(r);
  }
  f.scopes.push_back(ScopeRow{"serve get", 10, 20, 1.5, 1, 2, 3});
  f.hists.push_back(HistRow{"get", 1, 100, 50, 1, 2, 3, "..:##"});
  f.counters.push_back(CounterRow{3, 7, 1});
  return f;
}

std::string all_text(const std::vector<Line>& lines) { return plain_text(lines); }

TEST(TopLayout, RecordedNamesAreEscapedAndCut) {
  Frame f = sample_frame();
  f.threads[0].name = "evil\x1b]0;pwned\x07\nname";
  f.scopes[0].name = std::string("scope\rwith\x1b[2J") + std::string(300, 'x');
  const std::string text = all_text(layout(f, 200));
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_EQ(text.find('\x07'), std::string::npos);
  EXPECT_NE(text.find("evil\\x1b]0;pwned\\x07\\x0aname"), std::string::npos) << text;
  EXPECT_NE(text.find("scope\\x0dwith\\x1b[2J"), std::string::npos) << text;
  EXPECT_EQ(text.find(std::string(200, 'x')), std::string::npos) << "a long name is cut to its column";
}

// A cut name fills its column exactly, its last column a '~': the columns after it stay in line with the
// rows whose names fit.
TEST(TopLayout, ACutNameKeepsTheColumnsAfterItInLine) {
  Frame f = sample_frame();
  f.scopes.push_back(ScopeRow{std::string(300, 'y'), 10, 20, 1.5, 1, 2, 3});  // the same figures, a long name
  const std::vector<Line> lines = layout(f, 120);
  std::string short_row, long_row;
  for (const Line& l : lines) {
    std::string text;
    for (const Span& sp : l) text += sp.text;
    if (text.find("serve get") != std::string::npos) short_row = text;
    if (text.find("yyyy") != std::string::npos) long_row = text;
  }
  ASSERT_FALSE(short_row.empty());
  ASSERT_FALSE(long_row.empty());
  EXPECT_EQ(long_row.size(), short_row.size()) << short_row << "\n" << long_row;
  const std::size_t cut = long_row.find('~');
  ASSERT_NE(cut, std::string::npos) << long_row;
  EXPECT_EQ(long_row.substr(cut + 1), short_row.substr(cut + 1)) << short_row << "\n" << long_row;
}

TEST(TopLayout, NoLineWiderThanAsked) {
  for (unsigned width : {40u, 80u, 120u, 200u}) {
    Frame f = sample_frame();
    f.header.program = std::string(500, 'p');
    f.notes.emplace_back(500, 'n');
    for (const Line& l : layout(f, width)) {
      std::size_t cols = 0;
      for (const Span& s : l) cols += s.text.size();
      EXPECT_LE(cols, width);
    }
  }
}

TEST(TopLayout, AShortScreenKeepsEveryTable) {
  const Frame f = sample_frame();
  const auto lines = layout(f, 120, 30);
  const std::string text = all_text(lines);
  EXPECT_LE(lines.size(), 30u) << text;
  for (const char* title : {"samples/s  program", "scope ", "histogram ", "virtual counter", "serve get", "... "})
    EXPECT_NE(text.find(title), std::string::npos) << title << "\n" << text;
  EXPECT_GE(all_text(layout(f, 120)).size(), text.size());  // no limit: all 30 threads
}

TEST(TopLayout, LossesAreMarkedOnlyWhileSamplesAreLost) {
  Frame f = sample_frame();
  auto alert = [](const std::vector<Line>& ls) {
    for (const Line& l : ls)
      for (const Span& s : l)
        if (s.attr == Attr::Alert) return true;
    return false;
  };
  f.header.lost = 10;  // lost before, none now
  EXPECT_FALSE(alert(layout(f, 120)));
  f.header.loss_rate = 5;
  EXPECT_TRUE(alert(layout(f, 120)));
}

TEST(TopLayout, JsonOfAnyBytes) {
  Frame f = sample_frame();
  f.threads[0].name = "bad \xff\xfe utf8 \x01";
  const auto j = nlohmann::json::parse(to_json(f));
  EXPECT_EQ(j["format"], "kron-top");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["threads"].size(), 30u);
  EXPECT_EQ(j["scopes"][0]["name"], "serve get");
  EXPECT_EQ(j["histograms"][0]["p99.9_us"], 3.0);
  EXPECT_FALSE(j["threads"][0].contains("oncpu"));
  f.sched = true;
  EXPECT_TRUE(nlohmann::json::parse(to_json(f))["threads"][0]["oncpu"].is_null());
}

}  // namespace
}  // namespace kron::top
