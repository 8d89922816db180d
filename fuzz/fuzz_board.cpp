// Fuzz target: a board segment (header, lane headers, sample memory) as a hostile process could leave
// it. The reader must refuse a bad header with an offset, and read lanes without ever going outside the
// segment, looping forever or decoding a record that is not one (ASan/UBSan watch); the name table's
// entries likewise (seeds with a name table: names*.board).
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "board_records.hpp"
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
      check_board_records(recs, n);
      records += n;
    });
    // The same lanes a piece at a time (kron rdsample, ERRATUM E348): each piece whole, valid records.
    r.snapshot([&](const kron::recorder::LaneView&, std::span<const std::uint8_t> recs,
                   std::uint64_t n) { check_board_records(recs, n); },
               1);
    (void)r.totals();
    // The name table (board 2.1): every entry handed out passes the checks, within the validated slots.
    std::uint64_t lost = 0, bad = 0;
    const auto names = r.names(&lost, &bad);
    if (names.size() + bad > r.geo().name_slots) std::abort();
    for (const auto& n : names)
      if (kron::record::name_record_problem(n, 0)) std::abort();
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
