// Fuzz target: the function hooks' filter file (src/functions/filter.hpp, Score-P syntax). Any text either
// parses or fails naming a line within the text; a parsed filter answers a few lookups without trouble.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "functions/filter.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kron::functions::Filter f;
  kron::functions::FilterError e;
  if (!kron::functions::parse_filter(text, "fuzz.filter", f, e)) {
    std::size_t lines = 1;
    for (char c : text) lines += c == '\n';
    if (e.file != "fuzz.filter" || e.line == 0 || e.line > lines || e.what.empty()) std::abort();
    return 0;
  }
  (void)f.excluded("_Z3fooi", "foo(int)", "src/a.c", "/usr/lib/libx.so");
  (void)f.excluded("main", "main", "", "/bin/prog");
  return 0;
}
