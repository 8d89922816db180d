// Fuzz target: classic MultiKron / MultiKron II sample decoding over an arbitrary byte stream.
// Decoding then re-encoding a sample must give back the same bytes (the formats are bijective on
// valid headers, except the N/A bit of a MultiKron II header, which encode sends as 0).
#include <cstdint>
#include <cstring>

#include "kron/format/classic.hpp"

using namespace kron::classic;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Chip chip = (data[0] & 1) ? Chip::Mk2 : Chip::Mk1;
  std::span<const std::uint8_t> in(data + 1, size - 1);
  while (!in.empty()) {
    kron::Sample s;
    const DecodeResult r = decode(chip, in, s);
    if (r.status != DecodeStatus::Ok) break;
    const auto again = encode(chip, s);
    std::uint8_t first = in[0];
    if (chip == Chip::Mk2) first &= 0xfe;
    if (again.size() != r.size || again[0] != first || std::memcmp(again.data() + 1, in.data() + 1, r.size - 1) != 0)
      __builtin_trap();
    in = in.subspan(r.size);
  }
  return 0;
}
