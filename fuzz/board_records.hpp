// Shared by the board fuzz targets: what a reader hands a sink must be whole records of a known kind and
// size (a Trace record: kind 1, 32 bytes; a Resource record: kind 2, 160 bytes), `n` of them.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

inline void check_board_records(std::span<const std::uint8_t> recs, std::uint64_t n) {
  std::uint64_t seen = 0;
  for (std::size_t off = 0; off < recs.size(); ++seen) {
    std::uint16_t kind, sz;
    std::memcpy(&kind, recs.data() + off, 2);
    std::memcpy(&sz, recs.data() + off + 2, 2);
    if (!((kind == 1 && sz == 32) || (kind == 2 && sz == 160)) || off + sz > recs.size()) std::abort();
    off += sz;
  }
  if (seen != n) std::abort();
}
