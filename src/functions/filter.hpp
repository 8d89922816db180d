// The run-time filter of the function hooks (docs/functions.md "Filters"): Score-P's filter file syntax, so
// that a filter written for Score-P works unchanged.
//
//   SCOREP_REGION_NAMES_BEGIN            # function names (demangled; MANGLED: the symbol's own name)
//     EXCLUDE tiny_* *::operator[]*
//     INCLUDE tiny_but_wanted
//   SCOREP_REGION_NAMES_END
//   SCOREP_FILE_NAMES_BEGIN              # source files (and the object's path: ERRATUM E452)
//     EXCLUDE */vendor/*
//   SCOREP_FILE_NAMES_END
//
// Patterns are shell wildcards (fnmatch: *, ?, [...]), separated by blanks; `#` starts a comment. Within each
// block the last rule that matches decides; a function is left out when its file or its name is excluded.
// Dependency-free (libc, the C++ standard library): the hooks library parses it in the recorded program, and
// `kron record --functions-filter` parses it first to report a bad file before the program runs.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kron::functions {

struct FilterRule {
  bool exclude = false;
  bool mangled = false;  // match the symbol's mangled name (Score-P's MANGLED)
  std::string pattern;
};

struct Filter {
  std::vector<FilterRule> names, files;
  bool empty() const { return names.empty() && files.empty(); }
  // Whether a function is left out: `mangled` its symbol, `demangled` its C++ name (== mangled for C), `file`
  // its source file ("" when not known), `object` the path of the object that holds it.
  bool excluded(std::string_view mangled, std::string_view demangled, std::string_view file,
                std::string_view object) const;
};

inline constexpr std::size_t kMaxFilterBytes = 1u << 20;  // a filter file larger than this is refused
inline constexpr std::size_t kMaxFilterLine = 4096;       // and a longer line

// What is wrong with a filter file: its line (0: the file as a whole) and what.
struct FilterError {
  std::string file;
  std::size_t line = 0;
  std::string what;
  std::string text() const { return file + ":" + std::to_string(line) + ": " + what; }  // "PATH:LINE: what"
};
// Parses the text of a filter file named `path`. On bad input returns false and fills `error`; `out` is then
// unspecified.
bool parse_filter(std::string_view text, std::string_view path, Filter& out, FilterError& error);
// Reads and parses the file `path` (the size and line limits above); the same errors, and an unreadable file.
bool load_filter(const char* path, Filter& out, FilterError& error);

}  // namespace kron::functions
