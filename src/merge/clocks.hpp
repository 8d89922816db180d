// kron merge's clocks (DECISIONS D10, D11): which ranks' ticks are one clock, how each rank's ticks reach the
// reference rank's, and the clock-offset records checked for contradictions before any of it.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kron/format/trace_file.hpp"
#include "merge/clock_map.hpp"

namespace kron::merge {

// How a rank's ticks reach the merged timeline.
enum class ClockKind : std::uint8_t {
  Reference,   // the reference rank (rank 0): its ticks are the timeline
  Exact,       // one clock with the reference rank (DECISION D10): its ticks unchanged
  Measured,    // offset and drift from clock-offset measurements (E205), pooled over the ranks of its clock
  StartTime,   // no measurement: placed by the files' start times (E205)
  AsRecorded,  // kron merge --no-align
};
const char* clock_kind_name(ClockKind k);  // "reference", "exact", "measured", "start time", "as recorded"

struct InputClock {
  ClockMap map = ClockMap::identity();
  std::uint32_t clock = 0;  // equal for the inputs whose ticks are one clock: never moved against each other
  ClockKind kind = ClockKind::Measured;
  std::size_t with = 0;    // the input whose clock this is: the reference, the first of its node's, or itself
  std::vector<char> used;  // per clock-offset record of the input: kept by its map
};

// DECISION D11: refuses (InputError naming the file and the record) clock-offset records that contradict each
// other or their file: one of another rank, a reference rank other than 0, the reference rank's own record
// not reading one clock twice alike (reference and timestamp further apart than rtt / 2), two measurements of
// one instant whose references differ by more than their round trips allow.
void check_clock_records(const tracefile::Reader& r, const std::string& path);

// The clocks of `files` (`ref`: the reference rank's). With `align` false (--no-align) every map is the
// identity; the clocks are still told apart. What was not believed is said in `warnings`, by rank and file.
std::vector<InputClock> assign_clocks(std::span<const tracefile::Reader* const> files,
                                      std::span<const std::string> paths, std::size_t ref, bool align,
                                      std::vector<std::string>& warnings);

}  // namespace kron::merge
