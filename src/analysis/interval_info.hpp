// interval.info: the user's description of the intervals that `kron rpt` (003 mk_rpt) measures.
//
// Source: 003 section 3.5 "Using mk_rpt". One interval a line, fields separated by blanks:
//   1 START END "description"                      class 1: one interval between two events
//   2 START END1 END2 "outcome 1" "outcome 2"      class 2: one interval with two possible ends
//   3 FIRST MIDDLE LAST "sub-interval 1" "sub-interval 2"
//                                                  class 3: two consecutive sub-intervals (and their sum)
//   4 START END "description"                      class 4: starts and ends out of sequence, k-th end
//                                                  matching the k-th start across all streams
// Event numbers are the "sequence numbers" the probes write as user data. kron accepts decimal or
// 0x-prefixed hexadecimal event numbers, '#' comments to the end of a line, blank lines, \" and \\ inside
// descriptions, and any number of class-4 lines (003's mk_rpt handled one): ERRATUM E45.
// A malformed line is an InputError "FILE:LINE:COLUMN: expected ...".
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kron::analysis {

struct Interval {
  unsigned cls = 0;       // 1-4
  unsigned n_events = 0;  // 2 (classes 1, 4) or 3 (classes 2, 3)
  std::array<std::uint64_t, 3> events{};
  unsigned n_names = 0;  // 1 (classes 1, 4) or 2 (classes 2, 3)
  std::array<std::string, 2> names;
  unsigned line = 0;  // where it was defined, for messages
  std::array<unsigned, 3> event_column{};
  // A named scope's interval (class 1, no event numbers): made by the matcher from a recording's names,
  // never read from interval.info. `location` is its site's "file:line function".
  bool named = false;
  std::string location;
};

struct IntervalInfo {
  std::string path;
  std::vector<Interval> intervals;
};

// Parses the text of an interval.info file; `path` names it in messages. Throws InputError.
IntervalInfo parse_interval_info(std::string_view text, const std::string& path);
// Reads and parses a file. Throws InputError (a file that cannot be read names the file, line 0).
IntervalInfo load_interval_info(const std::string& path);

// The name of the whole of a class-3 interval: "sub-interval-1 + sub-interval-2" (003: the two names side by
// side, "sub-interval-1 sub-interval-2"; ERRATUM E145).
std::string class3_total_name(const Interval& iv);

}  // namespace kron::analysis
