// The read-only file mapping shared by the trace-file Reader and the raw stream inputs: its bytes, and
// its errors naming the file.
#include "kron/format/mapped_file.hpp"
#include "kron/format/text_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <functional>
#include <string>
#include <utility>

#include "kron/core/error.hpp"
#include "support/input_error.hpp"

namespace kron {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("kron_mapped_file_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

using kron::testing::error_of;

TEST(MappedFile, MapsTheWholeFileReadOnly) {
  const fs::path p = temp_dir() / "bytes.bin";
  std::ofstream(p, std::ios::binary) << "0123456789";
  MappedFile f(p.string());
  ASSERT_EQ(f.size(), 10u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f.data()), 10), "0123456789");
  EXPECT_EQ(f.bytes().size(), 10u);
  f.discard(0, 0);  // nothing given back; the bytes stay readable
  EXPECT_EQ(f.bytes()[9], '9');
}

TEST(MappedFile, EmptyFileMapsNothing) {
  const fs::path p = temp_dir() / "empty.bin";
  std::ofstream(p, std::ios::binary).flush();
  MappedFile f(p.string(), MappedFile::Require::Regular);
  EXPECT_EQ(f.size(), 0u);
  EXPECT_EQ(f.data(), nullptr);
  EXPECT_TRUE(f.bytes().empty());
}

TEST(MappedFile, MoveHandsTheMappingOver) {
  const fs::path p = temp_dir() / "move.bin";
  std::ofstream(p, std::ios::binary) << "abc";
  MappedFile a(p.string());
  const std::uint8_t* d = a.data();
  MappedFile b(std::move(a));
  EXPECT_EQ(b.data(), d);
  EXPECT_EQ(b.size(), 3u);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_EQ(a.size(), 0u);
  MappedFile c;
  c = std::move(b);
  EXPECT_EQ(c.data(), d);
  EXPECT_EQ(c.bytes()[2], 'c');
}

TEST(MappedFile, ErrorsNameTheFile) {
  const fs::path dir = temp_dir();
  const std::string missing = (dir / "missing.bin").string();
  EXPECT_EQ(error_of([&] { MappedFile f(missing); }).rfind(missing + ": offset 0: cannot open: ", 0), 0u);
  EXPECT_EQ(error_of([&] { MappedFile f(dir.string(), MappedFile::Require::Regular); }),
            dir.string() + ": offset 0: not a regular file (a directory)");
}

// Opening a FIFO waited for a writer for ever; it is refused at once, asked or not.
TEST(MappedFile, FifoIsRefusedWithoutWaitingForAWriter) {
  const fs::path p = temp_dir() / "fifo";
  fs::remove(p);
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { MappedFile f(p.string()); }).find("not a regular file (a FIFO"), std::string::npos);
  EXPECT_NE(error_of([&] { MappedFile f("/dev/zero", MappedFile::Require::Regular); })
                .find("not a regular file (a character device)"),
            std::string::npos);
}

// ERRATUM E127: pages past the end of a file that shrank read as zeros, not SIGBUS;
// shrunk() says so and check() throws naming the file and its size now.
TEST(MappedFile, ShrinkingFileReadsZerosAndIsReported) {
  const fs::path p = temp_dir() / "shrink.bin";
  std::ofstream(p, std::ios::binary) << std::string(5 * 4096, 'x');
  MappedFile f(p.string());
  EXPECT_FALSE(f.shrunk());
  EXPECT_EQ(error_of([&] { f.check(); }), "(no error)");
  fs::resize_file(p, 4096);
  EXPECT_EQ(f.data()[100], 'x');
  EXPECT_EQ(f.data()[3 * 4096 + 5], 0);  // without the guard: SIGBUS here
  EXPECT_EQ(f.data()[5 * 4096 - 1], 0);
  EXPECT_TRUE(f.shrunk());
  EXPECT_EQ(error_of([&] { f.check(); }),
            p.string() + ": offset 4096: the file shrank while it was read (20480 bytes when opened, 4096 now): "
                         "another program truncated or rewrote it; read it again once it is whole");
  MappedFile g(p.string());  // a mapping made after is whole, and not marked
  EXPECT_FALSE(g.shrunk());
}

// ERRATUM E349: a file cut inside its last page raises no SIGBUS (the page's tail reads as zeros), so
// shrunk() cannot know; check(), which a reader calls where what it decoded looks wrong, still says that
// the file shrank (a compressed chunk read as zeros said "zstd: Data corruption").
TEST(MappedFile, AFileCutInsideItsLastPageIsReportedAsShrunk) {
  const fs::path p = temp_dir() / "shrink-tail.bin";
  std::ofstream(p, std::ios::binary) << std::string(2 * 4096 + 1000, 'x');
  MappedFile f(p.string());
  fs::resize_file(p, 2 * 4096 + 10);
  EXPECT_EQ(f.data()[2 * 4096 + 500], 0);  // inside the mapped last page: zeros, no signal
  EXPECT_EQ(error_of([&] { f.check(); }),
            p.string() + ": offset 8202: the file shrank while it was read (9192 bytes when opened, 8202 now): "
                         "another program truncated or rewrote it; read it again once it is whole");
}

// Bounded text inputs (ERRATUM E130): a text of exactly the limit is read whole, from a file or a stream;
// one byte more is refused, naming the limit's offset. The same for a line of exactly its limit.
TEST(TextFile, ATextOfExactlyTheLimitIsRead) {
  constexpr TextLimits kLimits{"test text", 64, 15};
  const std::string line = "0123456789abcde\n";  // 15 bytes and its line end
  const std::string exact = line + line + line + line;
  ASSERT_EQ(exact.size(), kLimits.max_bytes);
  const fs::path p = temp_dir() / "exact.txt";
  std::ofstream(p, std::ios::binary) << exact;
  EXPECT_EQ(read_text_file(p.string(), kLimits), exact);
  std::istringstream in(exact);
  EXPECT_EQ(read_text_stream(in, "<stdin>", kLimits), exact);

  std::istringstream over(exact + "x");
  EXPECT_EQ(error_of([&] { read_text_stream(over, "<stdin>", kLimits); }),
            "<stdin>: offset 64: more than 64 bytes (the limit for a test text)");
  std::ofstream(p, std::ios::binary | std::ios::app) << "x";
  EXPECT_NE(error_of([&] { read_text_file(p.string(), kLimits); }).find("offset 64: the file is 65 bytes"),
            std::string::npos);
  std::istringstream long_line("0123456789abcdef\n");
  EXPECT_EQ(error_of([&] { read_text_stream(long_line, "<stdin>", kLimits); }),
            "<stdin>:1: line is longer than 15 bytes (the limit for a test text)");
}

}  // namespace
}  // namespace kron
