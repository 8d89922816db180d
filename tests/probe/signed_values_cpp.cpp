// Signed values from C++ (kron.hpp): KRON_EVENT("signed", v) for -5, 0, 2^47-1 and -2^47, the same from an
// unsigned variable (2^64-5 is -5's bits), two values outside the range (DECISION D31), and a scope carrying -5.
// signed_values_test.sh records it and reads the values back with the tools (DECISION D30).
#include <cstdint>
#include <cstdio>

#include "kron/kron.hpp"

int main() {
  const std::int64_t in_range[] = {-5, 0, kron::record::kNamedValueMax, kron::record::kNamedValueMin};
  const std::int64_t outside[] = {kron::record::kNamedValueMax + 1, kron::record::kNamedValueMin - 1};
  const std::uint64_t minus_five_bits = ~std::uint64_t{0} - 4;
  for (const std::int64_t v : in_range) KRON_EVENT("signed", v);
  KRON_EVENT("signed unsigned", minus_five_bits);
  for (const std::int64_t v : outside) KRON_EVENT("signed outside", v);
  { KRON_SCOPE_V("signed scope", -5); }
  std::printf("attached %d\n", kron::attached() ? 1 : 0);
  return 0;
}
