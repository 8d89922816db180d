// interval.info parser: see interval_info.hpp.
#include "analysis/interval_info.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "kron/core/error.hpp"
#include "kron/format/text_file.hpp"

namespace kron::analysis {

namespace {

class LineParser {
 public:
  LineParser(std::string_view line, unsigned lineno, const std::string& path)
      : s_(line), lineno_(lineno), path_(path) {}

  InputError error(const std::string& what) const {
    return InputError::at_line(path_, lineno_, static_cast<unsigned>(pos_ + 1), what);
  }
  InputError error_at(std::size_t pos, const std::string& what) const {
    return InputError::at_line(path_, lineno_, static_cast<unsigned>(pos + 1), what);
  }
  void skip_blanks() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  // True when only blanks and a comment are left.
  bool at_end() {
    skip_blanks();
    return pos_ >= s_.size() || s_[pos_] == '#';
  }
  std::size_t pos() const { return pos_; }

  // An unsigned number: decimal or 0x-prefixed hexadecimal; `what` says what was expected.
  std::uint64_t number(const char* what) {
    skip_blanks();
    const std::size_t start = pos_;
    if (at_end()) throw error(std::string("expected ") + what + ", found the end of the line");
    unsigned base = 10;
    if (s_.size() - pos_ > 2 && s_[pos_] == '0' && (s_[pos_ + 1] == 'x' || s_[pos_ + 1] == 'X')) {
      base = 16;
      pos_ += 2;
    }
    std::uint64_t v = 0;
    std::size_t digits = 0;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      unsigned d;
      if (c >= '0' && c <= '9')
        d = static_cast<unsigned>(c - '0');
      else if (base == 16 && c >= 'a' && c <= 'f')
        d = static_cast<unsigned>(c - 'a' + 10);
      else if (base == 16 && c >= 'A' && c <= 'F')
        d = static_cast<unsigned>(c - 'A' + 10);
      else
        break;
      if (v > (~std::uint64_t{0} - d) / base) throw error_at(start, std::string(what) + " does not fit in 64 bits");
      v = v * base + d;
      ++pos_;
      ++digits;
    }
    if (digits == 0 || (pos_ < s_.size() && !is_separator(s_[pos_]))) {
      pos_ = start;
      throw error(std::string("expected ") + what + " (a decimal or 0x-prefixed hexadecimal number), found " + found());
    }
    return v;
  }

  // A double-quoted description; \" and \\ are escapes.
  std::string quoted(const char* what) {
    skip_blanks();
    if (at_end()) throw error(std::string("expected ") + what + " in double quotes, found the end of the line");
    if (s_[pos_] != '"') throw error(std::string("expected ") + what + " in double quotes, found " + found());
    const std::size_t open = pos_++;
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size() && (s_[pos_ + 1] == '"' || s_[pos_ + 1] == '\\')) ++pos_;
      out += s_[pos_++];
    }
    if (pos_ >= s_.size()) throw error_at(open, std::string("unterminated ") + what + ": no closing double quote");
    ++pos_;
    if (pos_ < s_.size() && !is_separator(s_[pos_]))
      throw error("expected a blank after the closing double quote, found " + found());
    if (out.empty()) throw error_at(open, std::string(what) + " is empty");
    return out;
  }

 private:
  static bool is_separator(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '#'; }
  std::string found() const {
    std::size_t end = pos_;
    while (end < s_.size() && !is_separator(s_[end]) && end - pos_ < 20) ++end;
    return "'" + std::string(s_.substr(pos_, end - pos_)) + "'";
  }
  std::string_view s_;
  std::size_t pos_ = 0;
  unsigned lineno_;
  const std::string& path_;
};

}  // namespace

IntervalInfo parse_interval_info(std::string_view text, const std::string& path) {
  IntervalInfo info;
  info.path = path;
  unsigned lineno = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    ++lineno;
    start = end + 1;
    if (line.find('\0') != std::string_view::npos)
      throw InputError::at_line(path, lineno, static_cast<unsigned>(line.find('\0') + 1),
                                "NUL byte: interval.info is a text file");
    LineParser p(line, lineno, path);
    if (p.at_end()) {
      if (end == text.size()) break;
      continue;
    }
    Interval iv;
    iv.line = lineno;
    const std::size_t class_pos = p.pos();
    const std::uint64_t cls = p.number("an interval class (1, 2, 3 or 4)");
    if (cls < 1 || cls > 4)
      throw p.error_at(class_pos, "expected an interval class 1, 2, 3 or 4, found " + std::to_string(cls));
    iv.cls = static_cast<unsigned>(cls);
    iv.n_events = (cls == 2 || cls == 3) ? 3 : 2;
    iv.n_names = (cls == 2 || cls == 3) ? 2 : 1;
    static const char* const kEventWhat[4][3] = {
        {"the start event number", "the end event number", ""},
        {"the start event number", "the first end event number", "the second end event number"},
        {"the first event number", "the middle event number", "the last event number"},
        {"the start event number", "the end event number", ""},
    };
    for (unsigned e = 0; e < iv.n_events; ++e) {
      p.skip_blanks();
      iv.event_column[e] = static_cast<unsigned>(p.pos() + 1);
      iv.events[e] = p.number(kEventWhat[cls - 1][e]);
      for (unsigned k = 0; k < e; ++k)
        if (iv.events[k] == iv.events[e])
          throw InputError::at_line(
              path, lineno, iv.event_column[e],
              "event " + std::to_string(iv.events[e]) + " appears twice in one interval: its events must differ");
    }
    static const char* const kNameWhat[4][2] = {
        {"the interval's description", ""},
        {"the first outcome's description", "the second outcome's description"},
        {"the first sub-interval's description", "the second sub-interval's description"},
        {"the interval's description", ""},
    };
    for (unsigned n = 0; n < iv.n_names; ++n) iv.names[n] = p.quoted(kNameWhat[cls - 1][n]);
    if (!p.at_end())
      throw p.error("expected the end of the line (class " + std::to_string(cls) + " takes " +
                    std::to_string(iv.n_events) + " events and " + std::to_string(iv.n_names) +
                    (iv.n_names == 1 ? " description)" : " descriptions)"));
    info.intervals.push_back(std::move(iv));
    if (end == text.size()) break;
  }
  return info;
}

IntervalInfo load_interval_info(const std::string& path) {
  return parse_interval_info(read_text_file(path, kIntervalInfoLimits), path);  // ERRATUM E130: bounded
}

// ERRATUM E145: 003 prints the two names side by side; " + " between them keeps them readable apart.
std::string class3_total_name(const Interval& iv) { return iv.names[0] + " + " + iv.names[1]; }

}  // namespace kron::analysis
