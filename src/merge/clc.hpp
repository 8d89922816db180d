// kron merge's controlled logical clock (ERRATUM E206, after Rabenseifner and Scalasca's CLC; DECISIONS D10, D12):
// the happened-before violations left after alignment between clocks that were measured are removed by moving
// events forward, the correction fading at 1 - gamma; ranks of one clock are never moved against each other.
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "analysis/mpi_match.hpp"

namespace kron::merge {

// a + b, or the largest tick where that overflows.
inline std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? ~std::uint64_t{0} : r;
}

using analysis::Matching;
using analysis::MpiEvent;

// A clock's correction after the CLC pass: at aligned time `at` its events moved by `delta` ticks; between
// events the correction fades at (1 - gamma) per tick. delta_at() is the correction of any aligned time.
struct Correction {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> steps;  // (aligned time, delta), sorted by time
  double fade = 0.01;                                          // 1 - gamma
  std::uint64_t delta_at(std::uint64_t t, std::size_t& cursor) const;
};
struct ClcResult {
  std::vector<Correction> per_clock;          // DECISION D10: one correction for all the ranks of one clock
  std::vector<std::uint32_t> clock_of_input;  // which of them each input's is
  std::uint64_t max_correction = 0;           // ticks
  std::uint64_t events_moved = 0;
  std::uint64_t forced = 0;  // events whose dependencies formed a cycle (a mismatched pair): taken in time order
  const Correction& of_input(std::size_t i) const { return per_clock[clock_of_input[i]]; }
};
// Applies the controlled logical clock to `events` (their times change). `clock_of_input`: a number per input,
// the same for inputs whose ticks are one clock (DECISION D10): a dependency between two of those imposes no
// correction, and all of them move together.
ClcResult clc(std::vector<MpiEvent>& events, const Matching& m, std::span<const std::uint32_t> clock_of_input,
              double gamma);
// Each of `inputs` inputs a clock of its own.
ClcResult clc(std::vector<MpiEvent>& events, const Matching& m, std::size_t inputs, double gamma);
}  // namespace kron::merge
