// Fuzz target: the bounded readers (ERRATUM E130). (1) StreamClassic, standard input's raw
// stream reader, through a small buffer so that refills happen: it must yield exactly the samples, and
// stop with exactly the error (same offset), that ClassicStream yields over the same bytes in memory.
// (2) read_text_stream with small limits: the text comes back unchanged when it is within them, else an
// InputError that names the limit.
#include <cstdint>
#include <span>
#include <sstream>
#include <string>

#include "analysis/input.hpp"
#include "kron/core/error.hpp"
#include "kron/format/text_file.hpp"

using namespace kron;
using namespace kron::analysis;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto chip = (data[0] & 1) ? classic::Chip::Mk2 : classic::Chip::Mk1;
  const std::size_t buffer = classic::kMaxSampleBytes + (data[0] >> 1);  // 84-211 bytes
  const std::span<const std::uint8_t> bytes(data + 1, size - 1);
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());

  ClassicStream whole("fuzz.dat", chip, bytes, 10'000'000);
  std::istringstream is(text);
  StreamClassic stream(is, "fuzz.dat", chip, 10'000'000, buffer);
  Sample a, b;
  for (;;) {
    std::string ea, eb;
    bool ga = false, gb = false;
    std::uint64_t oa = 0, ob = 0;
    try {
      ga = whole.next(a);
    } catch (const InputError& e) {
      ea = e.what(), oa = e.offset();
    }
    try {
      gb = stream.next(b);
    } catch (const InputError& e) {
      eb = e.what(), ob = e.offset();
    }
    if (ga != gb || ea != eb || oa != ob) __builtin_trap();
    if (ga && !(a == b)) __builtin_trap();
    if (ga && whole.offset() != stream.offset()) __builtin_trap();
    if (!ga) break;
  }

  constexpr TextLimits kSmall{"fuzzed text", 512, 40};
  std::istringstream ts(text);
  bool within = text.size() <= kSmall.max_bytes;
  for (std::size_t at = 0, line_start = 0; at <= text.size() && within; ++at)
    if (at == text.size() || text[at] == '\n') {
      within = at - line_start <= kSmall.max_line_bytes;
      line_start = at + 1;
    }
  try {
    if (read_text_stream(ts, "fuzz.txt", kSmall) != text || !within) __builtin_trap();
  } catch (const InputError& e) {
    if (within || std::string(e.what()).find("(the limit for a fuzzed text)") == std::string::npos) __builtin_trap();
  }
  return 0;
}
