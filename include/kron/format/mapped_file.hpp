// A read-only memory map of a whole file: the one way kron's readers take a file front to back (the
// trace-file Reader, raw classic streams in the analysis tools). No third-party dependency.
//
// Errors are InputErrors naming the file, at offset 0: "cannot open: WHY", "cannot stat: WHY", "not a
// regular file (WHAT IT IS)" (when asked for a regular file, and always for a FIFO or a directory: the
// open never waits for a FIFO's writer), "cannot map: WHY". An empty file maps nothing (data() is null,
// size() 0). The descriptor is closed once the file is mapped; the map is private, so pages given back
// with discard() are simply read again from the file if touched.
//
// A file that shrinks while mapped (ERRATUM E127): the pages past its new end read as zeros instead of
// killing the process with SIGBUS (a process-wide SIGBUS handler, installed with the first map, covers
// every live MappedFile of a regular file), and shrunk() turns true. Readers call check() where what they
// decoded ends or looks wrong: it throws "FILE: offset NOW: the file shrank while it was read".
#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace kron {

class MappedFile {
 public:
  enum class Require : std::uint8_t { Any, Regular };

  MappedFile() = default;
  // Maps `path` whole and advises the kernel that it is read sequentially. Throws InputError.
  explicit MappedFile(const std::string& path, Require require = Require::Any);
  ~MappedFile();
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::uint8_t* data() const { return data_; }
  std::uint64_t size() const { return size_; }
  std::span<const std::uint8_t> bytes() const { return {data_, static_cast<std::size_t>(size_)}; }
  // Gives back the pages of [from, to) (page-aligned offsets) to the kernel (MADV_DONTNEED): a mapped
  // file's resident pages count as the process's memory, so a long front-to-back read stays flat.
  void discard(std::uint64_t from, std::uint64_t to) const;
  // True once a read met a page past the file's (new) end: what was read there is zeros, not the file.
  bool shrunk() const;
  // Throws InputError (offset: the file's size now) when shrunk().
  void check() const;

 private:
  void reset() noexcept;
  std::string path_;
  const std::uint8_t* data_ = nullptr;
  std::uint64_t size_ = 0;
  int slot_ = -1;  // the SIGBUS guard's slot for this mapping, -1 none
};

}  // namespace kron
