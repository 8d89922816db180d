// A probe compiled on its own, for the assembly check (asm_test.sh): the fast path must stay a few
// instructions with one rdtsc and no locked instruction (no atomic read-modify-write, no fence).
#include "kron/kron.hpp"

extern "C" __attribute__((noinline, used)) void kron_asm_probe(std::uint64_t x) { kron::trace(3, x); }
// A named probe: the same shape, plus the load of its site's id and the call to register it the first time.
extern "C" __attribute__((noinline, used)) void kron_asm_named(std::uint64_t x) { KRON_EVENT("asm", x); }
