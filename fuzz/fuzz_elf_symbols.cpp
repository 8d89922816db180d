// Fuzz target: the hooks' ELF symbol table reader (src/functions/elf_symbols.hpp), which reads a program's own
// objects for the run-time filter. Any bytes either parse or fail with an offset; lookups never read outside.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "functions/elf_symbols.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kron::functions::ElfSymbols s;
  std::string error;
  if (!s.parse({data, size}, error)) {
    if (error.rfind("offset ", 0) != 0) std::abort();
    return 0;
  }
  kron::functions::ElfSymbols::Found f;
  for (std::uint64_t a : {std::uint64_t{0}, std::uint64_t{0x1000}, std::uint64_t{0x401136}, ~std::uint64_t{0}})
    if (s.lookup(a, f) && f.name.empty()) std::abort();
  return 0;
}
