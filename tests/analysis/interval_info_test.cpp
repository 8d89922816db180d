// interval.info parser: 003 section 3.5 "Using mk_rpt" (classes 1-4, quoted descriptions) and every kind
// of malformed line, reported as FILE:LINE:COLUMN with what was expected.
#include "analysis/interval_info.hpp"

#include <gtest/gtest.h>

#include "kron/core/error.hpp"
#include "support/input_error.hpp"

using namespace kron;
using namespace kron::analysis;

// 003's own example lines, one per class.
TEST(IntervalInfo, ParsesThe003Examples) {
  const auto info = parse_interval_info(
      "1 10 20 \"whole program\"\n"
      "2 81 82 83 \"if then\" \"if else\"\n"
      "3 8 17 12 \"process input\" \"write output\"\n"
      "4 27 36 \"message timer\"\n"
      "4 10 20 \"message send/receive latency\"\n",
      "interval.info");
  ASSERT_EQ(info.intervals.size(), 5u);  // any number of class-4 lines (003's mk_rpt: one; E45)
  const auto& c1 = info.intervals[0];
  EXPECT_EQ(c1.cls, 1u);
  EXPECT_EQ(c1.n_events, 2u);
  EXPECT_EQ(c1.events[0], 10u);
  EXPECT_EQ(c1.events[1], 20u);
  EXPECT_EQ(c1.names[0], "whole program");
  const auto& c2 = info.intervals[1];
  EXPECT_EQ(c2.n_events, 3u);
  EXPECT_EQ(c2.events[2], 83u);
  EXPECT_EQ(c2.names[0], "if then");
  EXPECT_EQ(c2.names[1], "if else");
  const auto& c3 = info.intervals[2];
  EXPECT_EQ(c3.events[1], 17u);
  EXPECT_EQ(class3_total_name(c3), "process input + write output");
  EXPECT_EQ(info.intervals[4].names[0], "message send/receive latency");
  EXPECT_EQ(info.intervals[3].line, 4u);
}

// ERRATUM E45: comments, blank lines, tabs, CRLF, hexadecimal events, escapes.
TEST(IntervalInfo, CommentsBlankLinesAndExtensions) {
  const auto info = parse_interval_info(
      "# a comment\n"
      "\n"
      "   \t\n"
      "\t1\t0x10   0X2f \"a \\\"quoted\\\" name # not a comment\"  # a comment\r\n"
      "  # indented comment\n"
      "4 1 2 \"last line without newline\"",
      "f");
  ASSERT_EQ(info.intervals.size(), 2u);
  EXPECT_EQ(info.intervals[0].events[0], 16u);
  EXPECT_EQ(info.intervals[0].events[1], 47u);
  EXPECT_EQ(info.intervals[0].names[0], "a \"quoted\" name # not a comment");
  EXPECT_EQ(info.intervals[0].line, 4u);
  EXPECT_EQ(info.intervals[1].line, 6u);
  EXPECT_TRUE(parse_interval_info("", "f").intervals.empty());
  EXPECT_TRUE(parse_interval_info("\n\n# only comments\n", "f").intervals.empty());
}

namespace {
std::string error_of(const std::string& text) {
  return kron::testing::error_of([&] { parse_interval_info(text, "iv.info"); });
}
}  // namespace

TEST(IntervalInfo, MalformedLinesNameLineColumnAndWhatWasExpected) {
  struct Case {
    const char* text;
    const char* message;  // the start of what() must be this
  } cases[] = {
      {"5 1 2 \"x\"\n", "iv.info:1:1: expected an interval class 1, 2, 3 or 4, found 5"},
      {"0 1 2 \"x\"\n", "iv.info:1:1: expected an interval class 1, 2, 3 or 4, found 0"},
      {"\n\nx 1 2 \"x\"\n", "iv.info:3:1: expected an interval class (1, 2, 3 or 4)"},
      {"1 10\n", "iv.info:1:5: expected the end event number, found the end of the line"},
      {"1 10 abc \"x\"\n", "iv.info:1:6: expected the end event number (a decimal or 0x-prefixed hexadecimal number), found 'abc'"},
      {"1 10 20\n", "iv.info:1:8: expected the interval's description in double quotes, found the end of the line"},
      {"1 10 0xb\n", "iv.info:1:9: expected the interval's description in double quotes, found the end of the line"},
      {"1 10 20 whole\n", "iv.info:1:9: expected the interval's description in double quotes, found 'whole'"},
      {"1 10 20 \"whole program\n", "iv.info:1:9: unterminated the interval's description: no closing double quote"},
      {"1 10 20 \"x\" \"y\"\n", "iv.info:1:13: expected the end of the line (class 1 takes 2 events and 1 description)"},
      {"2 81 82 \"a\" \"b\"\n", "iv.info:1:9: expected the second end event number"},
      {"2 81 82 83 \"a\"\n", "iv.info:1:15: expected the second outcome's description in double quotes"},
      {"3 8 17 12 \"a\"\n", "iv.info:1:14: expected the second sub-interval's description in double quotes"},
      {"3 8 17 8 \"a\" \"b\"\n", "iv.info:1:8: event 8 appears twice in one interval"},
      {"1 10 10 \"a\"\n", "iv.info:1:6: event 10 appears twice in one interval"},
      {"4 27 36 \"\"\n", "iv.info:1:9: the interval's description is empty"},
      {"1 10 20 \"x\"y\n", "iv.info:1:12: expected a blank after the closing double quote, found 'y'"},
      {"1 -1 20 \"x\"\n", "iv.info:1:3: expected the start event number"},
      {"1 99999999999999999999 2 \"x\"\n", "iv.info:1:3: the start event number does not fit in 64 bits"},
      {"1 0x 2 \"x\"\n", "iv.info:1:3: expected the start event number"},
      {"1 1 2 \"x\"\n1 1 2 \"x\0\"\n", "iv.info:2:9: NUL byte"},
      {"1 10 20 \"x\" trailing\n", "iv.info:1:13: expected the end of the line"},
      {"1 10 20 \"x\"\n1 10 20 \"x\"\n4\n", "iv.info:3:2: expected the start event number, found the end of the line"},
  };
  for (const auto& c : cases) {
    const std::string text(c.text, std::char_traits<char>::length(c.text) + (std::string(c.message).find("NUL") != std::string::npos ? 3 : 0));
    const std::string got = error_of(text);
    EXPECT_EQ(got.rfind(c.message, 0), 0u) << "input: " << c.text << "\n got: " << got;
  }
}

TEST(IntervalInfo, MissingFileIsAnInputError) {
  try {
    load_interval_info("/nonexistent/interval.info");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/interval.info"), std::string::npos);
  }
}
