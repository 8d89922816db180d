// Fuzz target: a board segment (header, lane headers, sample memory) as a hostile process could leave
// it. The reader must refuse a bad header with an offset, and read lanes without ever going outside the
// segment, looping forever or decoding a record that is not one (ASan/UBSan watch).
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kron/core/error.hpp"
#include "recorder/board_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 22)) return 0;
  const std::size_t cap = (size + 63) / 64 * 64 + 64;
  auto* image = static_cast<std::uint8_t*>(std::aligned_alloc(64, cap));
  std::memset(image, 0, cap);
  std::memcpy(image, data, size);
  try {
    auto r = kron::recorder::BoardReader::view(image, size, "fuzz");
    std::uint64_t records = 0;
    r.snapshot([&](const kron::recorder::LaneView&, std::span<const std::uint8_t> recs, std::uint64_t n) {
      // Every record handed out is whole and of a known kind and size.
      std::uint64_t seen = 0;
      for (std::size_t off = 0; off < recs.size(); ++seen) {
        std::uint16_t kind, sz;
        std::memcpy(&kind, recs.data() + off, 2);
        std::memcpy(&sz, recs.data() + off + 2, 2);
        if (!((kind == 1 && sz == 32) || (kind == 2 && sz == 160)) || off + sz > recs.size()) std::abort();
        off += sz;
      }
      if (seen != n) std::abort();
      records += n;
    });
    (void)r.totals();
    (void)r.csr_read();
    (void)r.file_header();
    std::vector<kron::tracefile::LaneEntry> finished;
    r.drain(nullptr, &finished);
    (void)records;
  } catch (const kron::InputError&) {
  }
  std::free(image);
  return 0;
}
