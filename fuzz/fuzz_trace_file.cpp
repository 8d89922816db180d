// Fuzz target: the kron trace file reader (header validation and record iteration) on arbitrary bytes.
// It must either read samples or throw InputError; never crash, hang or read out of bounds.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "kron/core/error.hpp"
#include "kron/format/trace_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int fd = memfd_create("kron-fuzz-trace", 0);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    kron::tracefile::Reader r(path);
    kron::Sample s;
    std::uint64_t n = 0;
    while (r.next(s)) ++n;
    if (r.complete() && n > r.header().records_bytes / 32) __builtin_trap();  // records are at least 32 bytes
  } catch (const kron::InputError&) {
  }
  return 0;
}
