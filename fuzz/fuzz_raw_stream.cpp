// Fuzz target: the raw classic stream reader of the analysis tools (--input-format mk1 / mk2) and the
// tools on top of it. Any bytes either decode to whole samples or stop with an InputError naming the
// stream and an offset inside it at a sample boundary; expand and rpt consume whatever was decoded.
#include <cstdint>
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
  std::uint64_t boundary = 0;
  try {
    while (in.next(s)) {
      if (in.offset() <= boundary || in.offset() > bytes.size()) __builtin_trap();
      boundary = in.offset();
      m.feed(s);
      ex.line(s, out);
      if (out.size() > (1u << 16)) out.clear();
    }
    if (boundary != bytes.size()) __builtin_trap();  // a clean end consumed every byte
  } catch (const InputError& e) {
    if (e.file() != "fuzz.dat" || e.offset() != boundary || e.offset() >= bytes.size()) __builtin_trap();
  }
  m.finish();
  (void)render_text(make_report(m, true), {true, true});
  return 0;
}
