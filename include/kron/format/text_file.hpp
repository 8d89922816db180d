// Bounded text inputs (ERRATUM E130): interval.info and simulator scripts are read whole, but never more
// than a named limit, and no line longer than another: /dev/zero, a huge file or a file without line
// ends is refused at once, with the limit in the message, instead of growing memory without end.
//
// A named file must be a regular file (a directory, FIFO or device is refused: MappedFile's rules);
// a stream (standard input) is read through the same limits.
#pragma once
#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>

namespace kron {

struct TextLimits {
  const char* what;            // what the file is, for messages: "interval description file"
  std::uint64_t max_bytes;     // the whole text
  std::size_t max_line_bytes;  // one line, its '\n' not counted
};
inline constexpr TextLimits kIntervalInfoLimits{"interval description file", 1u << 20, 4096};
inline constexpr TextLimits kSimScriptLimits{"simulator script", 64u << 20, 4096};

// Throws InputError: "FILE:LINE: line is longer than N bytes (the limit for a WHAT)" or
// "FILE: offset N: more than N bytes (the limit for a WHAT)", or the open/stat errors of MappedFile.
std::string read_text_file(const std::string& path, const TextLimits& limits);
std::string read_text_stream(std::istream& in, const std::string& name, const TextLimits& limits);

}  // namespace kron
