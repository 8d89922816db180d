// mk_rdsample for the PCI board's local memory. Sources and rules: rdsample.hpp.
#include "toolkit/rdsample.hpp"

#include <fmt/core.h>

#include "kron/core/error.hpp"
#include "kron/format/classic.hpp"
#include "models/pcib/registers.hpp"

namespace kron::toolkit {
namespace {

using classic::Chip;
constexpr std::uint32_t kWords = pcib::kMemoryWords;
constexpr std::uint32_t kMaxSampleWords = static_cast<std::uint32_t>(classic::kMk2Layout.resource_bytes / 4);  // 21

// Whether samples decode back to back from byte `at` to the end of `s` (a last sample cut short is
// allowed once one whole sample decoded) with the first two in time order. `bad` marks words from which the chain
// reaches a header that does not decode (whatever the start, so later candidates that meet them stop at once).
bool chain_ok(const std::vector<std::uint8_t>& s, std::size_t at, std::vector<bool>& bad) {
  const std::size_t start = at;
  std::vector<std::size_t> visited;
  std::uint64_t first_ts = 0;
  unsigned n = 0;
  while (at < s.size()) {
    if (bad[at / 4]) break;
    visited.push_back(at / 4);
    const std::size_t size = classic::size_from_header(Chip::Mk2, s[at]);
    if (size == 0) break;
    if (s.size() - at < size) {  // cut by END: allowed after a whole sample
      if (n) return true;
      bad[start / 4] = true;
      return false;
    }
    if (n < 2) {
      Sample x;
      classic::decode(Chip::Mk2, std::span(s).subspan(at, size), x);
      if (n == 1 && x.timestamp < first_ts) {
        bad[start / 4] = true;  // only this start: the sample after it may well be the first whole one
        return false;
      }
      first_ts = x.timestamp;
    }
    ++n;
    at += size;
  }
  if (at >= s.size()) return true;
  for (const std::size_t w : visited) bad[w] = true;
  return false;
}

}  // namespace

RdsampleResult rdsample(const pcib::MemoryDump& m, const RdsampleOptions& o) {
  RdsampleResult r;
  const std::uint32_t p = m.pointer & pcib::kMemoryWordMask;
  r.wraps = m.pointer >> 22;
  r.circular = !(m.config & pcib::cfg::kWrapB);
  const auto fail = [&](std::uint64_t off, const std::string& what) {
    return InputError::at_offset(m.name, off, what);
  };
  if (o.start && *o.start >= kWords)
    throw fail(0, fmt::format("-s 0x{:x} is outside the 4M-word local memory", *o.start));
  if (o.end && *o.end > kWords) throw fail(0, fmt::format("-e 0x{:x} is outside the 4M-word local memory", *o.end));
  r.unwrapped = r.circular && (r.wraps != 0 || o.wrapped);
  // The memory in the order it was written: ring position -> memory word.
  std::uint32_t start = 0, count = 0;
  bool start_known = false;  // the start is a sample boundary
  if (r.unwrapped) {
    start = o.start.value_or(p);
    const std::uint32_t end = o.end.value_or(p) % kWords;
    count = end == start ? kWords : (end + kWords - start) % kWords;
  } else {
    start = o.start.value_or(0);
    const std::uint32_t end = o.end.value_or(p);
    if (end < start) throw fail(0, fmt::format("-s 0x{:06x} is after the end, word 0x{:06x}", start, end));
    count = end - start;
    start_known = start == 0;
    // 003 1.3: in the simple buffer the pointer stops at its maximum (ERRATUM E71: 3FFFFF).
    r.full = !r.circular && p == pcib::kMemoryWordMask;
  }
  r.first_word = start;
  r.words = count;
  const auto word_at = [&](std::uint32_t i) { return (start + i) % kWords; };
  // Every word read must be in the dump.
  if (count) {
    const std::uint32_t last = word_at(count - 1);
    const bool contiguous = start + count <= kWords;
    const bool ok = contiguous ? m.holds(start) && m.holds(last)
                               : m.holds(start) && m.holds(kWords - 1) && m.holds(0) && m.holds(last);
    if (!ok)
      throw fail(
          m.data_offset + m.words.size(),
          fmt::format("memory words 0x{:06x}-0x{:06x}{} are to be read but the dump holds words 0x{:06x}-0x{:06x}",
                      start, last, contiguous ? "" : " (round the ring)", m.first_word,
                      m.first_word + m.word_count() - (m.word_count() ? 1 : 0)));
  }
  std::vector<std::uint8_t> s;
  s.reserve(4ull * count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint64_t at = 4ull * (word_at(i) - m.first_word);
    s.insert(s.end(), m.words.begin() + static_cast<std::ptrdiff_t>(at),
             m.words.begin() + static_cast<std::ptrdiff_t>(at + 4));
  }
  std::size_t at = 0;
  if (!start_known && !s.empty()) {
    std::vector<bool> bad(count, false);
    std::size_t k = 0;
    for (; k < kMaxSampleWords && 4 * k < s.size(); ++k)
      if (chain_ok(s, 4 * k, bad)) break;
    if (k == kMaxSampleWords || 4 * k >= s.size())
      throw fail(m.file_offset(start),
                 fmt::format("no MultiKron II sample starts in the {} words from word 0x{:06x} (samples are 5 or 21 "
                             "words): the memory does not hold samples there",
                             std::min<std::size_t>(kMaxSampleWords, count), start));
    at = 4 * k;
    r.skipped_head = at;
  }
  while (at < s.size()) {
    Sample x;
    const auto d = classic::decode(Chip::Mk2, std::span(s).subspan(at), x);
    if (d.status == classic::DecodeStatus::BadHeader) {
      const std::uint32_t w = word_at(static_cast<std::uint32_t>(at / 4));
      throw fail(m.file_offset(w, static_cast<unsigned>(at % 4)),
                 fmt::format("memory word 0x{:06x}: header byte 0x{:02x} is not a MultiKron II sample (type bits must "
                             "be 10 Trace or 11 Resource, 000 Table B2)",
                             w, s[at]));
    }
    if (d.status == classic::DecodeStatus::Truncated) {
      r.cut_tail = s.size() - at;
      break;
    }
    (x.is_resource() ? r.resource : r.trace) += 1;
    at += d.size;
  }
  r.stream.assign(s.begin() + static_cast<std::ptrdiff_t>(r.skipped_head),
                  s.begin() + static_cast<std::ptrdiff_t>(s.size() - r.cut_tail));
  return r;
}

std::string RdsampleResult::describe() const {
  std::string d = fmt::format("{} samples ({} trace, {} resource), {} bytes from memory words 0x{:06x}",
                              trace + resource, trace, resource, stream.size(), first_word);
  d += words ? fmt::format("-0x{:06x}", (first_word + words - 1) % pcib::kMemoryWords) : " (none)";
  if (!circular)
    d += full ? "; simple buffer, full: later samples were discarded by the board (003 1.3)" : "; simple buffer";
  else if (unwrapped)
    d += fmt::format("; circular buffer, wrapped (count {}): oldest first", wraps);
  else
    d += "; circular buffer, not wrapped";
  if (skipped_head)
    d += fmt::format("; {} bytes of an overwritten or cut sample skipped before the first whole one", skipped_head);
  if (cut_tail) d += fmt::format("; {} bytes of a sample cut at the end dropped", cut_tail);
  return d;
}

}  // namespace kron::toolkit
