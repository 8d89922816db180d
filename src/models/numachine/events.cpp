// Table 2.3 state names for `pipeline` (ERRATUM E86). The tables themselves: events.hpp.
#include "models/numachine/events.hpp"

#include "sim/script.hpp"

namespace kron::numachine {

std::optional<unsigned> pipeline_state(std::string_view name) {
  for (unsigned s = 0; s < kPipelineStates.size(); ++s)
    if (kPipelineStates[s] == name) return s;
  if (const auto n = sim::parse_number(name); n && *n < kPipelineStates.size()) return static_cast<unsigned>(*n);
  return std::nullopt;
}

}  // namespace kron::numachine
