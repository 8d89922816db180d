// The function symbols of an ELF object, read from its file: what the hooks' run-time filter matches
// (filter.hpp). Only the symbol table (.symtab, else .dynsym) and, for local symbols, the STT_FILE entry
// before them (the source file of a static function; ERRATUM E452): names at report time come from libdw
// instead (src/analysis/functions.hpp). Dependency-free (libc): the hooks library links it into the program.
// The file is untrusted: every offset and size is checked against the image; a bad image is refused with the
// offset of what is wrong (fuzz/fuzz_elf_symbols.cpp).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kron::functions {

class ElfSymbols {
 public:
  // Parses an ELF64 little-endian image. On bad input returns false and sets `error` to "offset N: what".
  bool parse(std::span<const std::uint8_t> image, std::string& error);
  // Maps the file `path` and parses it; the errors name the file.
  bool load(const char* path, std::string& error);

  struct Found {
    std::string_view name;  // the symbol's (mangled) name
    std::string_view file;  // its STT_FILE source name, "" when not known
  };
  // The function symbol that covers `vaddr` (an address of the object's own numbering: run-time address minus
  // the load bias); false when none does.
  bool lookup(std::uint64_t vaddr, Found& out) const;
  std::size_t size() const { return syms_.size(); }

 private:
  struct Sym {
    std::uint64_t addr, size;
    std::uint32_t name, name_len;  // in strings_
    std::uint32_t file;            // index into files_ + 1, 0 none
  };
  std::vector<Sym> syms_;  // sorted by addr
  std::string strings_;
  std::vector<std::string> files_;
};

}  // namespace kron::functions
