// Fuzz target: a recording's load map (the function hooks' Module name entries, trace format 1.7) and the names
// made from it (src/analysis/functions.hpp). Any entries either give a load map or raise InputError naming
// the file and an offset inside the entries; resolving addresses against a parsed map never fails.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "analysis/functions.hpp"
#include "kron/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kron::record::NameRecord;
  std::vector<NameRecord> names(size / sizeof(NameRecord));
  if (!names.empty()) std::memcpy(names.data(), data, names.size() * sizeof(NameRecord));
  std::vector<kron::analysis::LoadedObject> map;
  try {
    map = kron::analysis::load_map(names, "fuzz.kron", 4096);
  } catch (const kron::InputError& e) {
    if (e.file() != "fuzz.kron" || e.offset() < 4096 || e.offset() >= 4096 + names.size() * sizeof(NameRecord))
      std::abort();
    return 0;
  }
  // Only paths that cannot exist are opened (a fuzzer must not read the machine's files at random).
  for (auto& o : map) o.path = "/nonexistent/kron-fuzz";
  kron::analysis::Symbolizer sym(map);
  for (const auto& o : map)
    if (sym.resolve(o.source, o.bias + 16).name.empty()) std::abort();
  return 0;
}
