// Fuzz target: the interval.info parser (003 section 3.5). Any text either parses or raises InputError
// naming FILE:LINE(:COLUMN) inside the text; a parsed file, written back in canonical form, parses to the
// same intervals; a matcher built from it accepts a few samples without trouble.
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/interval_info.hpp"
#include "analysis/rpt.hpp"
#include "kron/core/error.hpp"

using namespace kron::analysis;

namespace {
std::string quote(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  IntervalInfo info;
  try {
    info = parse_interval_info(text, "fuzz.info");
  } catch (const kron::InputError& e) {
    if (e.file() != "fuzz.info" || e.line() == 0) __builtin_trap();
    std::size_t lines = 1;
    for (char c : text) lines += c == '\n';
    if (e.line() > lines) __builtin_trap();
    return 0;
  }
  std::string again;
  for (const auto& iv : info.intervals) {
    again += std::to_string(iv.cls);
    for (unsigned e = 0; e < iv.n_events; ++e) again += " " + std::to_string(iv.events[e]);
    for (unsigned n = 0; n < iv.n_names; ++n) {
      // A description holding a newline cannot be written back on one line; the parser never yields one.
      if (iv.names[n].find('\n') != std::string::npos) __builtin_trap();
      again += " " + quote(iv.names[n]);
    }
    again += "\n";
  }
  const IntervalInfo back = parse_interval_info(again, "again");
  if (back.intervals.size() != info.intervals.size()) __builtin_trap();
  for (std::size_t i = 0; i < info.intervals.size(); ++i) {
    const auto &a = info.intervals[i], &b = back.intervals[i];
    if (a.cls != b.cls || a.events != b.events || a.names != b.names) __builtin_trap();
  }
  RptOptions opt;
  opt.event_bits = 64;
  opt.histograms = true;
  Matcher m(info, opt, ~std::uint64_t{0});
  kron::Sample s;
  std::uint64_t t = 0;
  for (const auto& iv : info.intervals)
    for (unsigned e = 0; e < iv.n_events; ++e) {
      s.data = iv.events[e];
      s.timestamp = t += 10;
      s.cpu = static_cast<std::uint16_t>(e & 1);
      m.feed(s);
    }
  m.finish();
  (void)report_rows(m, true);
  return 0;
}
