// The hand-checked trace: every interval class of 003 section 3.5, with matched and unmatched events on
// two streams, whose statistics are worked out by hand in the comments below (and asserted in
// rpt_test.cpp and the golden files). Clock 10 MHz: 1 tick = 0.1 us.
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kron/core/sample.hpp"
#include "kron/format/classic.hpp"
#include "kron/format/trace_file.hpp"

namespace kron::testing {

inline constexpr std::uint32_t kSrcA = 0x00010001;  // node 1, process 1, cpu 0
inline constexpr std::uint32_t kSrcB = 0x00010002;  // node 1, process 2, cpu 1

// 003's examples, one line per class, with a comment and a blank line (E45).
inline const char* kIntervalInfo =
    "# hand-checked intervals: one of each class (003 section 3.5)\n"
    "1 10 20 \"whole program\"\n"
    "\n"
    "2 81 82 83 \"if then\" \"if else\"\n"
    "3 8 17 12 \"process input\" \"write output\"   # the whole is \"process input + write output\"\n"
    "4 27 36 \"message timer\"\n";

inline Sample ev(std::uint64_t t, bool on_a, std::uint64_t data) {
  Sample s;
  s.type = SampleType::Trace;
  s.timestamp = t;
  s.source = on_a ? kSrcA : kSrcB;
  s.cpu = on_a ? 0 : 1;
  s.data = data;
  return s;
}

// In time order.
inline std::vector<Sample> hand_checked() {
  const bool A = true, B = false;
  std::vector<Sample> v;
  v.push_back(ev(50, A, 5));  // not an interval event
  Sample r = ev(60, A, 99);   // a Resource sample: counters discarded by rpt (003)
  r.type = SampleType::Resource;
  for (unsigned c = 0; c < kResourceCounters; ++c) r.counters[c] = 1000 + c;
  v.push_back(r);
  // Class 1 "whole program": A 300 and 500; B 100; A's 20@1600 is an unmatched end, B's 10@2000 an
  // unmatched start. A: n 2, total 800, min 300, max 500, mean 400, stddev 100.
  // B: n 1, total 100, stddev 0, 1 unmatched start. all: n 3, total 900, mean 300, stddev sqrt(80000/3).
  v.push_back(ev(100, A, 10));
  v.push_back(ev(200, B, 10));
  v.push_back(ev(300, B, 20));
  v.push_back(ev(400, A, 20));
  v.push_back(ev(1000, A, (std::uint64_t{7} << 32) | 10));  // qualifier in the upper 32 bits (E40)
  v.push_back(ev(1500, A, 20));
  v.push_back(ev(1600, A, 20));
  v.push_back(ev(2000, B, 10));
  // Class 2 on A: then 50, else 70, then 30, else-end without a start (unmatched end on "if else"),
  // a start replaced by another (unmatched start, counted on "if then"), else 10.
  // "if then": n 2, total 80, mean 40, stddev 10, 1 unmatched start. "if else": n 2 (70, 10), total 80,
  // mean 40, stddev 30, 1 unmatched end.
  v.push_back(ev(2100, A, 81));
  v.push_back(ev(2150, A, 82));
  v.push_back(ev(2200, A, 81));
  v.push_back(ev(2270, A, 83));
  v.push_back(ev(2300, A, 81));
  v.push_back(ev(2330, A, 82));
  v.push_back(ev(2400, A, 83));
  v.push_back(ev(2500, A, 81));
  v.push_back(ev(2600, A, 81));
  v.push_back(ev(2610, A, 83));
  // Class 3 on B: 40+60, 20+80, then a middle without a first (unmatched end of "process input") and its
  // last 50 later (a second sub-interval of 50; the whole has an unmatched end).
  // "process input": n 2 (40, 20), total 60, mean 30, stddev 10, 1 unmatched end.
  // "write output": n 3 (60, 80, 50), total 190, mean 63.333, stddev sqrt(1400/9).
  // "process input + write output": n 2 (100, 100), total 200, stddev 0, 1 unmatched end.
  v.push_back(ev(3000, B, 8));
  v.push_back(ev(3040, B, 17));
  v.push_back(ev(3100, B, 12));
  v.push_back(ev(3200, B, 8));
  v.push_back(ev(3220, B, 17));
  v.push_back(ev(3300, B, 12));
  v.push_back(ev(3400, B, 17));
  v.push_back(ev(3450, B, 12));
  // Class 4 across streams, k-th end with k-th start: 4000->4100 (100), 4010->4250 (240),
  // 4200->4300 (100); 36@4400 unmatched end; 27@4500 unmatched start.
  // "message timer" (all): n 3, total 440, mean 146.667, stddev sqrt(39200/9), 1 unmatched start, 1 end.
  v.push_back(ev(4000, A, 27));
  v.push_back(ev(4010, B, 27));
  v.push_back(ev(4100, B, 36));
  v.push_back(ev(4200, A, 27));
  v.push_back(ev(4250, A, 36));
  v.push_back(ev(4300, B, 36));
  v.push_back(ev(4400, A, 36));
  v.push_back(ev(4500, B, 27));
  return v;
}

inline void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

inline void write_kron(const std::filesystem::path& p, const std::vector<Sample>& v, std::uint64_t clock_hz = 10'000'000) {
  auto h = tracefile::make_header();
  h.clock_hz = clock_hz;
  h.origin = tracefile::Origin::Model;
  tracefile::Writer w(p.string(), h);
  for (const auto& s : v) w.append(s);
  w.finish(h, {});
}

inline std::vector<std::uint8_t> encode_stream(classic::Chip chip, const std::vector<Sample>& v) {
  std::vector<std::uint8_t> out;
  for (const auto& s : v) {
    const auto b = classic::encode(chip, s);
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

inline void write_bytes(const std::filesystem::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// A fresh directory for one test.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("kron-analysis-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace kron::testing
