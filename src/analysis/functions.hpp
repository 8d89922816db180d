// Function names of a recording made with the function hooks (kron-functions.pc, docs/functions.md): the samples
// of a NameKind::Function site carry a run-time address; here each distinct (process, address) becomes a Scope
// entry of its own, named at report time from the program's symbols and DWARF through elfutils' libdw
// (demangled C++ names, file:line), using the load map the hooks wrote (NameKind::Module entries: each loaded
// object's path and load bias, so PIE and shared libraries resolve). A function with no symbol (a stripped
// object, a file that moved) is named "OBJECT+0xOFFSET" and counted in a warning with a hint; never an error.
//
// The entries get ids above the file's own (ERRATUM E453), so every tool (rpt, export, expand) sees ordinary
// named scopes: the input renames the samples as it reads them (KronFile, input.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kron/core/sample.hpp"
#include "kron/format/trace_file.hpp"

namespace kron::analysis {

// One object of a process's load map.
struct LoadedObject {
  std::uint32_t source = 0;  // the process ("node.process")
  std::uint64_t bias = 0;    // its load bias (dl_iterate_phdr's dlpi_addr)
  std::string path;
};
// The load map of a recording's name entries (Module entries). A bad entry throws InputError naming `file` and
// the entry's offset (`names_offset` + 256 per entry before it).
std::vector<LoadedObject> load_map(std::span<const record::NameRecord> names, const std::string& file,
                                   std::uint64_t names_offset);

// Names run-time addresses of each process from its objects' files (libdw).
class Symbolizer {
 public:
  explicit Symbolizer(const std::vector<LoadedObject>& objects);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;
  struct Name {
    std::string name;  // demangled; "OBJECT+0xOFFSET" (or "0xADDRESS") when no symbol covers it
    std::string file;  // the source file, "" when the debug information does not say
    std::uint32_t line = 0;
    bool symbol = false;  // a symbol named it
  };
  Name resolve(std::uint32_t source, std::uint64_t address);

 private:
  struct Process;
  std::unordered_map<std::uint32_t, std::unique_ptr<Process>> procs_;
};

class FunctionNames {
 public:
  // Reads the file at `path` once ahead (a reader of its own) for the function sites' addresses and names them;
  // null when its name section has no Function site.
  static std::unique_ptr<FunctionNames> scan(const std::string& path, const tracefile::Reader& r, bool salvage);
  // The Scope entries made, one per (process, address).
  const std::vector<record::NameRecord>& names() const { return names_; }
  // Gives every function sample of `batch` its own entry's id (the value, its address, stays).
  void rename(std::span<Sample> batch) const;
  // Functions named by an address only, and entries that found no id (more than 65534 names in all).
  std::uint64_t unnamed() const { return unnamed_; }
  std::uint64_t no_id() const { return no_id_; }

 private:
  using Key = std::pair<std::uint32_t, std::uint64_t>;  // (source, address)
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::uint64_t>()(k.second ^ (std::uint64_t{k.first} * 0x9E3779B97F4A7C15ull));
    }
  };
  std::vector<bool> is_function_;  // by the file's site id
  std::unordered_map<Key, std::uint16_t, KeyHash> id_of_;
  std::vector<record::NameRecord> names_;
  std::uint64_t unnamed_ = 0, no_id_ = 0;
};

}  // namespace kron::analysis
