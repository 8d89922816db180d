// The function hooks' run-time filter (src/functions/filter.hpp, Score-P's syntax) and the ELF symbol reader
// its names come from (src/functions/elf_symbols.hpp).
#include "functions/filter.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>

#include "functions/elf_symbols.hpp"

namespace kron::functions {
namespace {

Filter parse_ok(std::string_view text) {
  Filter f;
  FilterError e;
  EXPECT_TRUE(parse_filter(text, "t.filter", f, e)) << e.text();
  return f;
}

FilterError parse_bad(std::string_view text) {
  Filter f;
  FilterError e;
  EXPECT_FALSE(parse_filter(text, "t.filter", f, e));
  return e;
}

TEST(FunctionFilter, LastMatchingRuleDecides) {
  const Filter f = parse_ok(
      "SCOREP_REGION_NAMES_BEGIN\n"
      "  EXCLUDE tiny_* get*  # hot and small\n"
      "  INCLUDE tiny_but_wanted\n"
      "SCOREP_REGION_NAMES_END\n");
  EXPECT_TRUE(f.excluded("tiny_add", "tiny_add", "", "/p"));
  EXPECT_TRUE(f.excluded("getx", "getx", "", "/p"));
  EXPECT_FALSE(f.excluded("tiny_but_wanted", "tiny_but_wanted", "", "/p"));
  EXPECT_FALSE(f.excluded("main", "main", "", "/p"));
}

TEST(FunctionFilter, DemangledByDefaultMangledOnRequest) {
  const Filter f = parse_ok(
      "SCOREP_REGION_NAMES_BEGIN\n"
      "EXCLUDE geo::*\n"
      "EXCLUDE MANGLED _Z4keepv\n"
      "SCOREP_REGION_NAMES_END\n");
  EXPECT_TRUE(f.excluded("_ZN3geo5scaleEii", "geo::scale(int, int)", "", "/p"));
  EXPECT_FALSE(f.excluded("_ZN3geo5scaleEii", "other", "", "/p"));  // the pattern is matched demangled only
  EXPECT_TRUE(f.excluded("_Z4keepv", "keep()", "", "/p"));
}

TEST(FunctionFilter, FilesBySourceOrObject) {
  const Filter f = parse_ok(
      "SCOREP_FILE_NAMES_BEGIN\n"
      "  EXCLUDE */vendor/* /usr/lib/*\n"
      "SCOREP_FILE_NAMES_END\n");
  EXPECT_TRUE(f.excluded("f", "f", "src/vendor/x.c", "/bin/p"));
  EXPECT_TRUE(f.excluded("f", "f", "", "/usr/lib/libz.so"));
  EXPECT_FALSE(f.excluded("f", "f", "src/own.c", "/bin/p"));
}

// docs/functions.md "Filters": within the file block too, the last matching rule decides: a file that an
// INCLUDE after an EXCLUDE matches keeps its functions.
TEST(FunctionFilter, AnIncludedFileKeepsItsFunctions) {
  const Filter f = parse_ok(
      "SCOREP_FILE_NAMES_BEGIN\n"
      "  EXCLUDE */vendor/*\n"
      "  INCLUDE */vendor/wanted.c\n"
      "SCOREP_FILE_NAMES_END\n");
  EXPECT_TRUE(f.excluded("f", "f", "src/vendor/x.c", "/bin/p"));
  EXPECT_FALSE(f.excluded("f", "f", "src/vendor/wanted.c", "/bin/p"));
  EXPECT_FALSE(f.excluded("f", "f", "src/own.c", "/bin/p"));
}

TEST(FunctionFilter, ErrorsNameTheLine) {
  auto e = parse_bad("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE\nSCOREP_REGION_NAMES_END\n");
  EXPECT_EQ(e.line, 2u);
  EXPECT_EQ(e.text().rfind("t.filter:2: EXCLUDE without a pattern", 0), 0u) << e.text();
  EXPECT_EQ(parse_bad("\n\nEXCLUDE x\n").line, 3u);  // outside a block
  EXPECT_EQ(parse_bad("SCOREP_REGION_NAMES_BEGIN\nFOO x\nSCOREP_REGION_NAMES_END\n").line, 2u);
  EXPECT_EQ(parse_bad("SCOREP_REGION_NAMES_BEGIN\n# open\n").line, 1u);  // never closed
  EXPECT_EQ(parse_bad("SCOREP_FILE_NAMES_END\n").line, 1u);              // END without BEGIN
  EXPECT_EQ(parse_bad("SCOREP_FILE_NAMES_BEGIN\nEXCLUDE MANGLED x\nSCOREP_FILE_NAMES_END\n").line, 2u);
  EXPECT_EQ(parse_bad(std::string(5000, 'x')).line, 1u);  // a line too long
}

TEST(FunctionFilter, MissingFileIsAnError) {
  Filter f;
  FilterError e;
  EXPECT_FALSE(load_filter("/nonexistent/kron.filter", f, e));
  EXPECT_NE(e.text().find("/nonexistent/kron.filter:0: cannot open"), std::string::npos) << e.text();
}

__attribute__((noinline)) int kron_filter_test_marker(int x) { return x * 3 + 1; }

TEST(ElfSymbols, FindsThisProgramsOwnFunction) {
  ElfSymbols s;
  std::string error;
  ASSERT_TRUE(s.load("/proc/self/exe", error)) << error;
  ASSERT_GT(s.size(), 0u);
  // The symbol's address in the file's numbering: the run-time address minus the load bias.
  Dl_info info{};
  link_map* lm = nullptr;
  ASSERT_NE(
      dladdr1(reinterpret_cast<void*>(&kron_filter_test_marker), &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP),
      0);
  ElfSymbols::Found f;
  const bool found = s.lookup(reinterpret_cast<std::uint64_t>(&kron_filter_test_marker) - lm->l_addr, f);
  ASSERT_TRUE(found);
  EXPECT_NE(f.name.find("kron_filter_test_marker"), std::string_view::npos) << f.name;
}

TEST(ElfSymbols, BadImagesNameAnOffset) {
  ElfSymbols s;
  std::string error;
  const std::uint8_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_FALSE(s.parse(junk, error));
  EXPECT_EQ(error.rfind("offset 0: ", 0), 0u) << error;
  std::uint8_t elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  elf[0x28] = 0xff;  // e_shoff far outside
  elf[0x3a] = 64;    // e_shentsize
  elf[0x3c] = 3;     // e_shnum
  EXPECT_FALSE(s.parse(elf, error));
  EXPECT_NE(error.find("section headers lie outside the file"), std::string::npos) << error;
}

}  // namespace
}  // namespace kron::functions
