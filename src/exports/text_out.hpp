// The text exports' output (chrome-json, csv): a 1 MiB buffer written to the file when full, and JSON's
// string escaping for names that come from files.
#pragma once
#include <cstdio>
#include <string>

namespace kron::exports {

class TextOut {
 public:
  explicit TextOut(std::FILE* f) : f_(f) { buf_.reserve(kBuf + 4096); }
  std::string& buf() { return buf_; }
  void maybe_flush() {
    if (buf_.size() >= kBuf) flush();
  }
  void flush();  // throws std::runtime_error when the write fails

 private:
  static constexpr std::size_t kBuf = 1 << 20;
  std::FILE* f_;
  std::string buf_;
};

// A JSON string: quotes, backslashes and control bytes escaped; bytes that are not UTF-8 become \xNN
// (ERRATUM E131), so the file is valid UTF-8 whatever the names hold.
std::string json_string(const std::string& s);

}  // namespace kron::exports
