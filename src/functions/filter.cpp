// The run-time filter of the function hooks: filter.hpp.
#include "filter.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kron::functions {
namespace {

// Splits a line into blank-separated words, dropping a comment.
std::vector<std::string_view> words_of(std::string_view line) {
  if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<std::string_view> w;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t b = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > b) w.push_back(line.substr(b, i - b));
  }
  return w;
}

bool fail(FilterError& error, std::string_view path, std::size_t line, std::string_view what) {
  error = FilterError{std::string(path), line, std::string(what)};
  return false;
}

bool matches(const std::vector<FilterRule>& rules, std::string_view mangled, std::string_view demangled,
             bool& exclude) {
  bool any = false;
  std::string m(mangled), d(demangled);
  for (const auto& r : rules)
    if (::fnmatch(r.pattern.c_str(), r.mangled ? m.c_str() : d.c_str(), 0) == 0) {
      exclude = r.exclude;
      any = true;
    }
  return any;
}

}  // namespace

bool Filter::excluded(std::string_view mangled, std::string_view demangled, std::string_view file,
                      std::string_view object) const {
  bool ex = false;
  if (matches(files, file, file, ex) && ex) return true;
  ex = false;
  if (matches(files, object, object, ex) && ex) return true;
  ex = false;
  return matches(names, mangled, demangled, ex) && ex;
}

bool parse_filter(std::string_view text, std::string_view path, Filter& out, FilterError& error) {
  out = Filter{};
  if (text.size() > kMaxFilterBytes) return fail(error, path, 1, "filter file larger than 1 MiB");
  enum class Block { None, Names, Files } block = Block::None;
  std::size_t line_no = 0, opened_at = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.size() > kMaxFilterLine) return fail(error, path, line_no, "line longer than 4096 bytes");
    if (line.find('\0') != std::string_view::npos) return fail(error, path, line_no, "NUL byte in a filter file");
    const auto w = words_of(line);
    if (w.empty()) continue;
    const std::string_view k = w[0];
    if (k == "SCOREP_REGION_NAMES_BEGIN" || k == "SCOREP_FILE_NAMES_BEGIN") {
      if (block != Block::None) return fail(error, path, line_no, std::string(k) + " inside an open block");
      if (w.size() != 1) return fail(error, path, line_no, "nothing may follow " + std::string(k));
      block = k == "SCOREP_REGION_NAMES_BEGIN" ? Block::Names : Block::Files;
      opened_at = line_no;
      continue;
    }
    if (k == "SCOREP_REGION_NAMES_END" || k == "SCOREP_FILE_NAMES_END") {
      const Block want = k == "SCOREP_REGION_NAMES_END" ? Block::Names : Block::Files;
      if (block != want) return fail(error, path, line_no, std::string(k) + " without its BEGIN");
      if (w.size() != 1) return fail(error, path, line_no, "nothing may follow " + std::string(k));
      block = Block::None;
      continue;
    }
    if (k != "INCLUDE" && k != "EXCLUDE")
      return fail(error, path, line_no,
                  "expected INCLUDE, EXCLUDE or a SCOREP_REGION_NAMES_/SCOREP_FILE_NAMES_ BEGIN/END line, not '" +
                      std::string(k.substr(0, 64)) + "'");
    if (block == Block::None)
      return fail(error, path, line_no, std::string(k) + " outside a SCOREP_REGION_NAMES or SCOREP_FILE_NAMES block");
    std::size_t first = 1;
    const bool mangled = w.size() > 1 && w[1] == "MANGLED";
    if (mangled) {
      if (block == Block::Files) return fail(error, path, line_no, "MANGLED applies to region names only");
      first = 2;
    }
    if (w.size() <= first) return fail(error, path, line_no, std::string(k) + " without a pattern");
    auto& rules = block == Block::Names ? out.names : out.files;
    for (std::size_t i = first; i < w.size(); ++i) rules.push_back({k == "EXCLUDE", mangled, std::string(w[i])});
  }
  if (block != Block::None) return fail(error, path, opened_at, "block not closed by its END line");
  return true;
}

bool load_filter(const char* path, Filter& out, FilterError& error) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(error, path, 0, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(error, path, 0, "not a regular file");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return fail(error, path, 0, std::string("cannot read: ") + std::strerror(errno));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxFilterBytes) break;
  }
  ::close(fd);
  return parse_filter(text, path, out, error);
}

}  // namespace kron::functions
