// Bounded text inputs: see kron/format/text_file.hpp.
#include "kron/format/text_file.hpp"

#include <algorithm>
#include <cstring>

#include "kron/core/error.hpp"
#include "kron/format/mapped_file.hpp"

namespace kron {
namespace {

// Appends `piece` to `text`, checking the limits; `line_start` is where the current line began in text.
void take(std::string& text, std::string_view piece, std::size_t& line_start, unsigned& line, const std::string& name,
          const TextLimits& l) {
  if (text.size() + piece.size() > l.max_bytes)
    throw InputError::at_offset(name, l.max_bytes,
                                "more than " + std::to_string(l.max_bytes) + " bytes (the limit for a " + l.what + ")");
  for (std::size_t i = 0; i < piece.size();) {
    const void* nl = std::memchr(piece.data() + i, '\n', piece.size() - i);
    const std::size_t end = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - piece.data()) : piece.size();
    if (text.size() - line_start + (end - i) > l.max_line_bytes)
      throw InputError::at_line(
          name, line, 0,
          "line is longer than " + std::to_string(l.max_line_bytes) + " bytes (the limit for a " + l.what + ")");
    text.append(piece.data() + i, end - i);
    if (!nl) break;
    text.push_back('\n');
    line_start = text.size();
    ++line;
    i = end + 1;
  }
}

}  // namespace

std::string read_text_file(const std::string& path, const TextLimits& l) {
  const MappedFile f(path, MappedFile::Require::Regular);
  if (f.size() > l.max_bytes)
    throw InputError::at_offset(path, l.max_bytes,
                                "the file is " + std::to_string(f.size()) + " bytes, more than " +
                                    std::to_string(l.max_bytes) + " (the limit for a " + l.what + ")");
  std::string text;
  std::size_t line_start = 0;
  unsigned line = 1;
  take(text, {reinterpret_cast<const char*>(f.data()), static_cast<std::size_t>(f.size())}, line_start, line, path, l);
  f.check();
  return text;
}

std::string read_text_stream(std::istream& in, const std::string& name, const TextLimits& l) {
  std::string text;
  std::size_t line_start = 0;
  unsigned line = 1;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    take(text, {buf, static_cast<std::size_t>(in.gcount())}, line_start, line, name, l);
  }
  if (in.bad()) throw InputError::at_line(name, line, 0, "read error");
  return text;
}

}  // namespace kron
