// The function symbols of an ELF object: elf_symbols.hpp.
#include "elf_symbols.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kron::functions {
namespace {

bool fail(std::string& error, std::uint64_t offset, const char* what) {
  error = "offset " + std::to_string(offset) + ": " + what;
  return false;
}

template <class T>
bool read_at(std::span<const std::uint8_t> image, std::uint64_t off, T& out) {
  if (off > image.size() || image.size() - off < sizeof(T)) return false;
  std::memcpy(&out, image.data() + off, sizeof(T));
  return true;
}

}  // namespace

bool ElfSymbols::parse(std::span<const std::uint8_t> image, std::string& error) {
  syms_.clear();
  strings_.clear();
  files_.clear();
  Elf64_Ehdr eh;
  if (!read_at(image, 0, eh)) return fail(error, 0, "shorter than an ELF64 header");
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return fail(error, 0, "not an ELF file (no \\177ELF magic)");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return fail(error, EI_CLASS, "not a 64-bit little-endian ELF object");
  if (eh.e_shentsize != sizeof(Elf64_Shdr) && eh.e_shnum != 0)
    return fail(error, offsetof(Elf64_Ehdr, e_shentsize), "section header size is not 64");
  if (eh.e_shoff > image.size() || (image.size() - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
    return fail(error, offsetof(Elf64_Ehdr, e_shoff), "section headers lie outside the file");
  auto shdr = [&](std::uint32_t i) {
    Elf64_Shdr s;
    read_at(image, eh.e_shoff + std::uint64_t{i} * sizeof(Elf64_Shdr), s);
    return s;
  };
  // .symtab when there is one (every function), else .dynsym (the exported ones: a stripped object).
  int pick = -1;
  for (std::uint32_t i = 0; i < eh.e_shnum; ++i) {
    const auto s = shdr(i);
    if (s.sh_type == SHT_SYMTAB) pick = static_cast<int>(i);
    if (s.sh_type == SHT_DYNSYM && pick < 0) pick = static_cast<int>(i);
  }
  if (pick < 0) return true;  // no symbols at all: every lookup fails
  const std::uint64_t sh_at = eh.e_shoff + static_cast<std::uint64_t>(pick) * sizeof(Elf64_Shdr);
  const auto st = shdr(static_cast<std::uint32_t>(pick));
  if (st.sh_link >= eh.e_shnum) return fail(error, sh_at, "symbol table links to no string table");
  const auto strs = shdr(st.sh_link);
  if (strs.sh_offset > image.size() || image.size() - strs.sh_offset < strs.sh_size)
    return fail(error, sh_at, "string table lies outside the file");
  if (st.sh_offset > image.size() || image.size() - st.sh_offset < st.sh_size)
    return fail(error, sh_at, "symbol table lies outside the file");
  if (st.sh_entsize != sizeof(Elf64_Sym)) return fail(error, sh_at, "symbol entry size is not 24");
  const std::string_view table(reinterpret_cast<const char*>(image.data() + strs.sh_offset), strs.sh_size);
  auto name_at = [&](std::uint32_t off) -> std::string_view {
    if (off >= table.size()) return {};
    const auto end = table.find('\0', off);
    return end == std::string_view::npos ? std::string_view{} : table.substr(off, end - off);
  };
  const std::uint64_t n = st.sh_size / sizeof(Elf64_Sym);
  std::uint32_t file = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    Elf64_Sym s;
    read_at(image, st.sh_offset + i * sizeof(Elf64_Sym), s);
    const unsigned type = ELF64_ST_TYPE(s.st_info);
    if (type == STT_FILE) {
      files_.emplace_back(name_at(s.st_name));
      file = static_cast<std::uint32_t>(files_.size());
      continue;
    }
    if (ELF64_ST_BIND(s.st_info) != STB_LOCAL) file = 0;  // globals follow every file's locals
    if (type != STT_FUNC || s.st_shndx == SHN_UNDEF || s.st_value == 0) continue;
    const std::string_view nm = name_at(s.st_name);
    if (nm.empty() || strings_.size() + nm.size() > 0xffffffffu) continue;
    syms_.push_back({s.st_value, s.st_size, static_cast<std::uint32_t>(strings_.size()),
                     static_cast<std::uint32_t>(nm.size()), file});
    strings_.append(nm);
  }
  std::sort(syms_.begin(), syms_.end(), [](const Sym& a, const Sym& b) { return a.addr < b.addr; });
  return true;
}

bool ElfSymbols::lookup(std::uint64_t vaddr, Found& out) const {
  auto it =
      std::upper_bound(syms_.begin(), syms_.end(), vaddr, [](std::uint64_t v, const Sym& s) { return v < s.addr; });
  if (it == syms_.begin()) return false;
  --it;
  if (vaddr != it->addr && vaddr - it->addr >= it->size) return false;
  out.name = std::string_view(strings_).substr(it->name, it->name_len);
  out.file = it->file ? std::string_view(files_[it->file - 1]) : std::string_view{};
  return true;
}

bool ElfSymbols::load(const char* path, std::string& error) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = std::string(path) + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    ::close(fd);
    error = std::string(path) + ": not a regular file";
    return false;
  }
  void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    error = std::string(path) + ": cannot map: " + std::strerror(errno);
    return false;
  }
  std::string why;
  const bool ok = parse({static_cast<const std::uint8_t*>(p), static_cast<std::size_t>(st.st_size)}, why);
  ::munmap(p, static_cast<std::size_t>(st.st_size));
  if (!ok) error = std::string(path) + ": " + why;
  return ok;
}

}  // namespace kron::functions
