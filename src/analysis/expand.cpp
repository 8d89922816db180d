// kron expand: see expand.hpp. Numbers are formatted by hand into the output buffer: expand prints
// tens of millions of lines and must run close to the speed of reading the file.
#include "analysis/expand.hpp"
#include "kron/core/text.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kron::analysis {

Radix parse_radix(const std::string& s) {
  if (s == "x") return Radix::Hex;
  if (s == "d") return Radix::Dec;
  if (s == "o") return Radix::Oct;
  throw std::invalid_argument("radix must be d, o or x, not '" + s + "'");
}

namespace {

// Digits needed for the largest value of `bits` bits in a radix.
unsigned width(Radix r, unsigned bits) {
  switch (r) {
    case Radix::Hex: return (bits + 3) / 4;
    case Radix::Oct: return (bits + 2) / 3;
    case Radix::Dec: {
      const std::uint64_t max = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
      unsigned n = 1;
      for (std::uint64_t v = max; v >= 10; v /= 10) ++n;
      return n;
    }
  }
  return 1;
}

// Sixteen hexadecimal digits of v at p (the most significant first), without a loop.
inline void hex16(char* p, std::uint64_t v) {
#if defined(__SSE2__)
  // Each byte split into its two nibbles, interleaved, then '0' added, and 'a' - '0' - 10 more where
  // the nibble is 10 or above: about ten vector instructions for the sixteen digits.
  const __m128i in = _mm_cvtsi64_si128(static_cast<long long>(__builtin_bswap64(v)));
  const __m128i low4 = _mm_set1_epi8(0x0f);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(in, 4), low4), lo = _mm_and_si128(in, low4);
  const __m128i nib = _mm_unpacklo_epi8(hi, lo);
  const __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(nib, _mm_set1_epi8(9)), _mm_set1_epi8('a' - '0' - 10));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm_add_epi8(_mm_add_epi8(nib, _mm_set1_epi8('0')), letter));
#else
  // SWAR: each nibble spread into a byte, eight digits at a time.
  for (int half = 0; half < 2; ++half) {
    std::uint64_t x = (half ? v : v >> 32) & 0xffffffffu;
    x = ((x & 0xffff0000u) << 16) | (x & 0xffffu);
    x = ((x & 0x0000ff000000ff00u) << 8) | (x & 0x000000ff000000ffu);
    x = ((x & 0x00f000f000f000f0u) << 4) | (x & 0x000f000f000f000fu);
    const std::uint64_t letters = ((x + 0x0606060606060606u) >> 4) & 0x0101010101010101u;
    x += 0x3030303030303030u + letters * ('a' - '0' - 10);
    x = __builtin_bswap64(x);
    std::memcpy(p + 8 * half, &x, 8);
  }
#endif
}

constexpr char kBlanks[24] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ',
                              ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};

// "00" to "99": decimal digits two at a time.
constexpr auto kDigitPairs = [] {
  std::array<char, 200> t{};
  for (int i = 0; i < 100; ++i) {
    t[static_cast<std::size_t>(2 * i)] = static_cast<char>('0' + i / 10);
    t[static_cast<std::size_t>(2 * i + 1)] = static_cast<char>('0' + i % 10);
  }
  return t;
}();

// Writes v in exactly w characters at p (w is at least the digits of the field's largest value):
// hexadecimal and octal zero-padded, decimal right-aligned with blanks. May write scratch beyond the
// field, up to p + 24, which the next field or the line's end overwrites (see Expander::kMaxLine).
[[gnu::always_inline]] inline void put(char*& p, std::uint64_t v, Radix r, unsigned w) {
  char* q = p + w;
  switch (r) {
    case Radix::Hex:
      // The w low digits shifted to the top, then all sixteen written: the w wanted ones first.
      hex16(p, w < 16 ? v << (4 * (16 - w)) : v);
      break;
    case Radix::Oct:
      while (q != p) {
        *--q = static_cast<char>('0' + (v & 7));
        v >>= 3;
      }
      break;
    case Radix::Dec:
      std::memcpy(p, kBlanks, sizeof kBlanks);  // w <= 20: the blanks first, no loop to pad
      while (v >= 100 && q - p >= 2) {
        const auto k = static_cast<std::size_t>(v % 100) * 2;
        v /= 100;
        q -= 2;
        q[0] = kDigitPairs[k];
        q[1] = kDigitPairs[k + 1];
      }
      do {
        *--q = static_cast<char>('0' + v % 10);
        v /= 10;
      } while (v && q != p);
      break;
  }
  p += w;
}

void pad(std::string& out, const char* title, unsigned w, bool right = true) {
  std::string t(title);
  if (t.size() < w) {
    if (right)
      out.append(w - t.size(), ' ');
    else
      t.append(w - t.size(), ' ');
  }
  out += t;
}

}  // namespace

Expander::Expander(const ExpandOptions& opt, classic::Chip chip, bool kron_fields, std::uint64_t ts_mask)
    : opt_(opt), chip_(chip), kron_(kron_fields), ts_mask_(ts_mask) {
  const auto& l = classic::layout(chip);
  ts_bits_ = kron_ ? 64 : 8 * l.ts_bytes;
  data_bits_ = kron_ ? 64 : 8 * l.data_bytes;
  w_ts_ = width(opt.ts_radix, ts_bits_);
  w_src_ = width(opt.source_radix, 32);
  w_data_ = width(opt.data_radix, data_bits_);
  w_ctr_ = width(opt.counter_radix, kron_ ? 64 : 32);
}

void Expander::heading(std::string& out) const {
  if (opt_.header_bits)
    out += chip_ == classic::Chip::Mk1 ? "cpu type fifo rsrc rderr" : "cpu type shadow fifo na";
  else
    out += "hd";
  out += ' ';
  pad(out, opt_.elapsed ? "elapsed" : "timestamp", w_ts_);
  out += ' ';
  pad(out, "source", w_src_);
  out += ' ';
  pad(out, "data", w_data_);
  if (kron_) out += "   cpu group     thread";
  if (opt_.counters)
    for (unsigned i = 0; i < kResourceCounters; ++i) {
      out += ' ';
      pad(out, ("c" + std::to_string(i)).c_str(), w_ctr_);
    }
  out += '\n';
}

void Expander::line(const Sample& s, std::string& out) {
  char buf[kMaxLine];
  out.append(buf, static_cast<std::size_t>(line(s, buf) - buf));
}

char* Expander::line(const Sample& s, char* p) {
  const std::uint8_t h = classic::encode_header(chip_, s);
  if (opt_.header_bits) {
    // 000 Table B2: CPU ID (3) | type (2) | Shadow Reg overflow | FIFO overflow | N/A.
    // 001 Table 5:  CPU ID (3) | type (2) | FIFO overrun | RSRC overrun | RSRC read error.
    // Each field right-aligned under its heading ("cpu type shadow fifo na" / "cpu type fifo rsrc rderr").
    const bool mk1 = chip_ == classic::Chip::Mk1;
    const unsigned w[3] = {mk1 ? 4u : 6u, 4u, mk1 ? 5u : 2u};
    *p++ = ' ';
    *p++ = ' ';
    *p++ = static_cast<char>('0' + (h >> 5));
    for (int k = 0; k < 3; ++k) *p++ = ' ';
    *p++ = (h & 0x10) ? '1' : '0';
    *p++ = (h & 0x08) ? '1' : '0';
    for (unsigned i = 0; i < 3; ++i) {
      for (unsigned k = 0; k < w[i]; ++k) *p++ = ' ';
      *p++ = (h >> (2 - i)) & 1 ? '1' : '0';
    }
  } else {
    put(p, h, Radix::Hex, 2);
  }
  *p++ = ' ';
  std::uint64_t ts = s.timestamp;
  if (opt_.elapsed) {
    if (!have_first_) {
      have_first_ = true;
      first_ts_ = s.timestamp;
    }
    ts = (s.timestamp - first_ts_) & ts_mask_;
  }
  put(p, ts, opt_.ts_radix, w_ts_);
  *p++ = ' ';
  put(p, s.source, opt_.source_radix, w_src_);
  *p++ = ' ';
  put(p, s.data, opt_.data_radix, w_data_);
  if (kron_) {
    *p++ = ' ';
    put(p, s.cpu, Radix::Dec, 5);
    *p++ = ' ';
    if (s.group == Sample::kGroupUnknown) {
      for (int k = 0; k < 4; ++k) *p++ = ' ';
      *p++ = '-';
    } else {
      put(p, s.group, Radix::Dec, 5);
    }
    *p++ = ' ';
    put(p, s.thread, Radix::Dec, 10);
    if (s.flags & kFlagNamed) {  // at most 5 + 63 + 24 + 103 + 11 + 63 bytes: within kMaxLine
      const char* what = (s.flags & kFlagScopeBegin) ? "  begin " : (s.flags & kFlagScopeEnd) ? "  end " : "  event ";
      const std::uint16_t id = record::name_id_of(s.data);
      std::string tail = what;
      tail += names_ ? names_->name_of(s) : "#" + std::to_string(id);
      tail += " value " + std::to_string(record::named_value_of(s.data));
      if (const tracefile::NameRecord* r = names_ ? names_->site(id) : nullptr)
        tail += "  " + tracefile::NameTable::location(*r);
      // ERRATUM E346: control characters as \xNN; escaped, at most 500 bytes (the tail is at most 269 bytes
      // as recorded, up to 4 times that escaped), so that the line stays within kMaxLine.
      const std::string shown = text::terminal_safe(tail);
      p = std::copy_n(shown.data(), std::min<std::size_t>(shown.size(), 500), p);
    }
  }
  if (opt_.counters && s.is_resource())
    for (unsigned i = 0; i < kResourceCounters; ++i) {
      *p++ = ' ';
      put(p, s.counters[i], opt_.counter_radix, w_ctr_);
    }
  *p++ = '\n';
  return p;
}

}  // namespace kron::analysis
