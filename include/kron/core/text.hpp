// Text from files and programs is bytes (ERRATUM E131): a program's command line, a path, a counter or
// probe name may hold bytes that are not UTF-8. Where kron writes such text into JSON (kron info --json,
// kron rpt --json, the Perfetto export) or HTML, which must be UTF-8, it goes through utf8_safe():
// valid UTF-8 is kept as it is, and each byte of an invalid sequence becomes the four characters \xNN
// (lower-case hex), so the output is valid and the bytes can still be read off it.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kron::text {

// The length of the valid UTF-8 sequence at s[i] (1-4), or 0 when the byte there does not start one
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
inline std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto cont = [&](std::size_t k) { return i + k < s.size() && (b(k) & 0xc0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (!cont(1) || !cont(2)) return 0;
    if ((c == 0xe0 && b(1) < 0xa0) || (c == 0xed && b(1) > 0x9f)) return 0;  // overlong, surrogate
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if ((c == 0xf0 && b(1) < 0x90) || (c == 0xf4 && b(1) > 0x8f)) return 0;  // overlong, > U+10FFFF
    return 4;
  }
  return 0;
}

inline std::string utf8_safe(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(s, i);
    if (n) {
      o.append(s.substr(i, n));
      i += n;
      continue;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    const auto c = static_cast<unsigned char>(s[i++]);
    o += "\\x";
    o += kHex[c >> 4];
    o += kHex[c & 15];
  }
  return o;
}

// The one parser of whole unsigned numbers (command options, kron sim scripts, the models' commands):
// decimal, hex after 0x or binary after 0b, the whole of `text`, no sign or blank; at most `max`. Empty
// otherwise; `too_large` (when given) tells a number above `max` from text that is not a number.
inline std::optional<std::uint64_t> parse_uint(std::string_view text, std::uint64_t max = ~std::uint64_t{0},
                                               bool* too_large = nullptr) {
  if (too_large) *too_large = false;
  if (text.empty()) return std::nullopt;
  unsigned base = 10;
  std::size_t i = 0;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    base = 16, i = 2;
  else if (text.size() > 2 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B'))
    base = 2, i = 2;
  std::uint64_t v = 0;
  bool over = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    unsigned d;
    if (c >= '0' && c <= '9')
      d = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      d = static_cast<unsigned>(c - 'A' + 10);
    else
      return std::nullopt;
    if (d >= base) return std::nullopt;
    if (v > (max - d) / base)
      over = true;  // keep reading: text that is no number says so first
    else
      v = v * base + d;
  }
  if (over) {
    if (too_large) *too_large = true;
    return std::nullopt;
  }
  return v;
}

// ERRATUM E346: text recorded by a program (scope, thread, histogram, counter and program names) printed
// on a terminal by any text output of kron: as utf8_safe(), and also each byte of a control character
// (C0, DEL, C1: escape sequences, newlines, carriage returns, tabs) as \xNN, so that no name can retitle or
// clear a terminal or split a table row.
inline std::string terminal_safe(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string o;
  o.reserve(s.size());
  auto escape = [&](std::size_t i, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      o += "\\x";
      o += kHex[c >> 4];
      o += kHex[c & 15];
    }
  };
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(s, i);
    const auto c = static_cast<unsigned char>(s[i]);
    const bool control = n == 1 ? (c < 0x20 || c == 0x7f)
                                : n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0;  // U+0080-9F
    if (n && !control)
      o.append(s.substr(i, n));
    else
      escape(i, n ? n : 1);
    i += n ? n : 1;
  }
  return o;
}

// A command line as a POSIX shell reads it back: each word as it is when it holds only characters no
// shell treats specially, else in single quotes (a quote inside as '\''); an empty word is ''. The
// trace file's header quotes the recorded command this way, so `sh -c 'a > b'` reads back as typed
// (ERRATUM E148).
inline std::string shell_quote(std::string_view word) {
  constexpr std::string_view kPlain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%_+=:,./-";
  if (!word.empty() && word.find_first_not_of(kPlain) == std::string_view::npos) return std::string(word);
  std::string o = "'";
  for (const char c : word) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}
template <typename Words>
std::string shell_command(const Words& words) {
  std::string o;
  for (const auto& w : words) o += (o.empty() ? "" : " ") + shell_quote(w);
  return o;
}

}  // namespace kron::text
