// A read-only memory map of a whole file: see kron/format/mapped_file.hpp.
#include "kron/format/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "kron/core/error.hpp"

namespace kron {

MappedFile::MappedFile(const std::string& path, Require require) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError::at_offset(path, 0, std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw InputError::at_offset(path, 0, std::string("cannot stat: ") + std::strerror(e));
  }
  if (require == Require::Regular && !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError::at_offset(path, 0, "not a regular file");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > 0) {
    void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int e = errno;
    ::close(fd);
    if (m == MAP_FAILED) throw InputError::at_offset(path, 0, std::string("cannot map: ") + std::strerror(e));
    data_ = static_cast<const std::uint8_t*>(m);
    size_ = size;
    ::madvise(m, size_, MADV_SEQUENTIAL);
  } else {
    ::close(fd);
  }
}

MappedFile::~MappedFile() { reset(); }

MappedFile::MappedFile(MappedFile&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

void MappedFile::reset() noexcept {
  if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

void MappedFile::discard(std::uint64_t from, std::uint64_t to) const {
  if (!data_ || to <= from) return;
  ::madvise(const_cast<std::uint8_t*>(data_) + from, to - from, MADV_DONTNEED);
}

}  // namespace kron
