// Generic register machinery shared by the chip models and the live board: the bit-level rules that
// both MultiKron chips' register tables apply the same way. Each chip keeps its own table of rows
// (src/models/mk1/registers.hpp: 001 Table A-1; src/models/mk2/registers.hpp: 000 Table B4), because the
// rows differ in shape: the first MultiKron reads unused bits as 0 and has strobe writes, the MultiKron II
// reads them as 1 (ERRATUM E3) and has 4-bit control fields. No dependency beyond the standard library
// (the probe side includes it).
//
// Sources: 000 (NISTIR 5571) "CSR Register", Table B1; 001 (NISTIR 4737) "CSR", Table 2: the same
//   write-1-to-act pairs (bits 0/1, 2/3, 4/5, 14/15) on both chips.
// Decisions: ERRATUM E13 (000) and E61 (001), one rule: a pair written with both bits 1 takes the odd
//   (clearing, reset-default) action. Decided in w1_pairs() and nowhere else.
#pragma once
#include <cstdint>

namespace kron::regs {

// The bits of a register `width` bits wide.
constexpr std::uint64_t width_mask(unsigned width) {
  return width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
}

// A write to write-1-to-act pairs: for each pair (2k, 2k+1) named in `pairs`, a 1 in bit 2k sets the
// control state kept in bit 2k, a 1 in bit 2k+1 clears it, a 0 leaves it alone (000 Table B1, 001
// Table 2: "A logical 0 ... causes no effect"). Other bits of `state` are returned unchanged.
constexpr std::uint64_t w1_pairs(std::uint64_t state, std::uint64_t written, std::uint64_t pairs) {
  for (unsigned b = 0; b < 64; b += 2) {
    if (!(pairs >> b & 1)) continue;
    // ERRATUM E13 (E61 on the first MultiKron): both bits written 1 -> the odd, disabling action wins.
    if (written >> (b + 1) & 1)
      state &= ~(std::uint64_t{1} << b);
    else if (written >> b & 1)
      state |= std::uint64_t{1} << b;
  }
  return state;
}

}  // namespace kron::regs
