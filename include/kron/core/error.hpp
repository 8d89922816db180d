// Errors about input: every one names the file and the byte offset or line, so that a person can find
// the bad spot. Tools print what() and exit non-zero.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace kron {

class InputError : public std::runtime_error {
 public:
  // A binary input: "FILE: offset N: WHAT".
  static InputError at_offset(const std::string& file, std::uint64_t offset, const std::string& what) {
    return InputError(file + ": offset " + std::to_string(offset) + ": " + what, file, offset, 0, 0);
  }
  // A text input: "FILE:LINE:COLUMN: WHAT" (column omitted when 0).
  static InputError at_line(const std::string& file, unsigned line, unsigned column, const std::string& what) {
    std::string where = file + ":" + std::to_string(line);
    if (column) where += ":" + std::to_string(column);
    return InputError(where + ": " + what, file, 0, line, column);
  }

  const std::string& file() const { return file_; }
  std::uint64_t offset() const { return offset_; }
  unsigned line() const { return line_; }
  unsigned column() const { return column_; }

 private:
  InputError(const std::string& msg, std::string file, std::uint64_t offset, unsigned line, unsigned column)
      : std::runtime_error(msg), file_(std::move(file)), offset_(offset), line_(line), column_(column) {}
  std::string file_;
  std::uint64_t offset_;
  unsigned line_, column_;
};

}  // namespace kron
