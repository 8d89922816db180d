// Fuzz target: the raw classic stream reader of the analysis tools (--input-format mk1 / mk2) and the
// tools on top of it. Any bytes either decode to whole samples or stop with an InputError naming the
// stream and an offset inside it at a sample boundary; expand and rpt consume whatever was decoded; the
// merge with a reorder window delivers the same samples.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "analysis/expand.hpp"
#include "analysis/input.hpp"
#include "analysis/rpt.hpp"
#include "kron/core/error.hpp"

using namespace kron;
using namespace kron::analysis;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto chip = (data[0] & 1) ? classic::Chip::Mk2 : classic::Chip::Mk1;
  const std::span<const std::uint8_t> bytes(data + 1, size - 1);
  static const IntervalInfo info = parse_interval_info(
      "1 10 20 \"a\"\n2 81 82 83 \"b\" \"c\"\n3 8 17 12 \"d\" \"e\"\n4 27 36 \"f\"\n", "fuzz.info");
  ClassicStream in("fuzz.dat", chip, bytes, 10'000'000);
  RptOptions opt;
  opt.event_bits = 8;
  opt.histograms = true;
  Matcher m(info, opt, in.ts_mask());
  ExpandOptions eo;
  eo.counters = eo.header_bits = eo.elapsed = true;
  eo.ts_radix = Radix::Dec;
  Expander ex(eo, chip, false, in.ts_mask());
  std::string out;
  Sample s;
  std::uint64_t boundary = 0, n = 0;
  bool failed = false;
  try {
    while (in.next(s)) {
      ++n;
      if (in.offset() <= boundary || in.offset() > bytes.size()) __builtin_trap();
      boundary = in.offset();
      m.feed(s);
      ex.line(s, out);
      if (out.size() > (1u << 16)) out.clear();
    }
    if (boundary != bytes.size()) __builtin_trap();  // a clean end consumed every byte
  } catch (const InputError& e) {
    failed = true;
    if (e.file() != "fuzz.dat" || e.offset() != boundary || e.offset() >= bytes.size()) __builtin_trap();
  }
  // The merge's reorder window (E50) over the same bytes: the same samples, none lost or added, the same
  // error after them, and out of time order exactly what it counts.
  {
    std::vector<std::unique_ptr<Input>> v;
    v.push_back(std::make_unique<ClassicStream>("fuzz.dat", chip, bytes, 10'000'000));
    Merged mg(std::move(v), (data[0] >> 1) % 8);
    std::uint64_t n2 = 0, behind = 0, last = 0;
    bool failed2 = false;
    try {
      while (mg.next(s)) {
        if (n2 && s.timestamp < last) ++behind;
        last = s.timestamp;
        ++n2;
      }
    } catch (const InputError& e) {
      failed2 = true;
      if (e.offset() != boundary) __builtin_trap();
    }
    if (n2 != n || failed2 != failed || behind != mg.out_of_order()) __builtin_trap();
  }
  m.finish();
  (void)render_text(report_rows(m, true), {true, true});
  return 0;
}
