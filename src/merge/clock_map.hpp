// kron merge's alignment (ERRATUM E205): a rank's ticks mapped onto the reference rank's by piecewise-linear
// interpolation between its clock-offset measurements (trace format 1.5 kind 9).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "kron/core/record.hpp"
#include "kron/format/trace_file.hpp"

namespace kron::merge {

// A rank's ticks onto the reference rank's (E205).
class ClockMap {
 public:
  struct Point {
    std::uint64_t local, reference, rtt;
  };
  // From a rank's clock-offset records (any order; rtt == 0 and reference == timestamp on the reference
  // rank itself). `local_hz`, `ref_hz`: the two files' clock rates; `local_start`/`ref_start` and the
  // realtime starts: the fallback when there is no measurement (files that are not MPI recordings).
  static ClockMap build(std::span<const record::ClockOffsetRecord> offsets, std::uint64_t local_hz,
                        std::uint64_t ref_hz, const tracefile::FileHeader& local, const tracefile::FileHeader& ref);
  // No alignment (kron merge --no-align): ticks as recorded.
  static ClockMap identity();
  std::uint64_t operator()(std::uint64_t t) const;
  const std::vector<Point>& points() const { return points_; }
  // Offset (reference - local, ticks) at the first point, and the drift (slope - 1) over the whole run.
  double offset_at(std::uint64_t t) const { return double(std::int64_t((*this)(t)-t)); }
  double drift() const;
  // How well the measurements pin that drift down: (rtt/2 of the first + rtt/2 of the last) / the local
  // time between them. A drift smaller than this is not known to be there (one node: one clock).
  double drift_uncertainty() const;
  bool measured() const { return measured_; }  // from clock-offset records (else a start-time anchor)

 private:
  std::vector<Point> points_;  // sorted by local, strictly increasing in both; at least one
  double rate_ = 1.0;          // ref_hz / local_hz: the slope with one point
  bool measured_ = true;
  mutable std::size_t hint_ = 0;  // the segment of the last lookup (samples come in time order)
};
}  // namespace kron::merge
