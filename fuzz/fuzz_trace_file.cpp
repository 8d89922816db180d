// Fuzz target: the kron trace file reader (header validation and record iteration) on arbitrary bytes.
// It must either read samples or throw InputError; never crash, hang or read out of bounds. Seeds hold
// an uncompressed file and compressed ones (1.2: zstd chunks, and a chunk stored raw), so the chunk
// headers and zstd frames are fuzzed too, one with a name section (1.3: names.kron) and a 1.3 file with
// scheduling switches (record kind 4, kron record --sched) after its samples, and 1.6 files with a time base
// (anchors-16.kron: anchors; kernel-16.kron: the kernel's conversion).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kron/core/error.hpp"
#include "kron/format/trace_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int fd = memfd_create("kron-fuzz-trace", 0);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  // next() sample by sample; then next_batch() (the tools' inner loop) must yield the same samples and
  // end the same way: at the end, or with an error at the same offset.
  std::vector<kron::Sample> one;
  std::uint64_t one_error = ~std::uint64_t{0};
  try {
    kron::tracefile::Reader r(path);
    // The name section (1.3): every record the reader hands out passes the checks; the table built from
    // them names samples without reading outside it.
    kron::tracefile::NameTable names;
    for (const auto& n : r.names()) {
      if (kron::record::name_record_problem(n, 0)) __builtin_trap();
      names.add(n);
    }
    // The time base (1.6): a header the reader took converts without dividing by zero or looping.
    const auto& h = r.header();
    if (!(kron::tracefile::rate_hz(h) > 0)) __builtin_trap();
    (void)kron::tracefile::rate_uncertainty_ppm(h);
    (void)kron::tracefile::time_source_text(h);
    for (std::uint64_t ns : {std::uint64_t{0}, h.anchor0_ns, h.anchor1_ns, h.time_zero, ~std::uint64_t{0}})
      (void)kron::tracefile::kernel_ns_to_ticks(h, ns);
    kron::Sample s;
    while (r.next(s)) {
      one.push_back(s);
      if (const auto* site = names.site(kron::record::name_id_of(s.data))) (void)kron::tracefile::NameTable::location(*site);
      (void)names.name_of(s);
      (void)names.thread(s.source, s.thread);
    }
    // Records are >= 32 bytes; in a compressed file (1.2) the area on disk holds more than that, each
    // chunk at most kMaxChunkRawBytes of records.
    if (r.complete() && !r.compressed() && one.size() > r.header().records_bytes / 32) __builtin_trap();
    if (r.compressed() && one.size() > (r.header().records_bytes / sizeof(kron::tracefile::ChunkHeader) + 1) *
                                           (kron::tracefile::kMaxChunkRawBytes / 32))
      __builtin_trap();
  } catch (const kron::InputError& e) {
    one_error = e.offset();
  }
  try {
    kron::tracefile::Reader r(path);
    std::vector<kron::Sample> buf(3);
    std::size_t k = 0;
    while (const std::size_t n = r.next_batch(buf))
      for (std::size_t i = 0; i < n; ++i, ++k)
        if (k >= one.size() || !(buf[i] == one[k])) __builtin_trap();
    if (k != one.size() || one_error != ~std::uint64_t{0}) __builtin_trap();
  } catch (const kron::InputError& e) {
    if (e.offset() != one_error) __builtin_trap();
  }
  // --salvage (ERRATUM E128): what the strict read yielded comes first, unknown kinds are skipped and
  // counted, a count that differs is a warning; an error is still only an InputError.
  try {
    kron::tracefile::Reader r(path, kron::tracefile::ReadOptions{true});
    kron::Sample s;
    std::size_t k = 0;
    for (; r.next(s); ++k)
      if (k < one.size() && !(s == one[k])) __builtin_trap();
    if (one_error == ~std::uint64_t{0} && k != one.size()) __builtin_trap();
  } catch (const kron::InputError&) {
  }
  return 0;
}
