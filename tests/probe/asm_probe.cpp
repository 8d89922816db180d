// A probe compiled on its own, for the assembly check (asm_test.sh): the fast path must stay a few
// instructions with one rdtsc and no locked instruction (no atomic read-modify-write, no fence).
#include "kron/kron.hpp"

extern "C" __attribute__((noinline, used)) void kron_asm_probe(std::uint64_t x) { kron::trace(3, x); }
