#include "merge/clock_map.hpp"

#include <algorithm>
#include <cmath>

namespace kron::merge {

using record::ClockOffsetRecord;

// ---- ClockMap (ERRATUM E205) -------------------------------------------------------------------------
namespace {
double rate_of(std::uint64_t local_hz, std::uint64_t ref_hz) {
  return local_hz && ref_hz ? double(ref_hz) / double(local_hz) : 1.0;
}
std::uint64_t add_signed(std::uint64_t base, double d) {
  return base + static_cast<std::uint64_t>(static_cast<std::int64_t>(std::llround(d)));
}
}  // namespace

ClockMap ClockMap::build(std::span<const ClockOffsetRecord> offsets, std::uint64_t local_hz, std::uint64_t ref_hz,
                         const tracefile::FileHeader& local, const tracefile::FileHeader& ref) {
  ClockMap m;
  m.rate_ = rate_of(local_hz, ref_hz);
  std::vector<Point> p;
  p.reserve(offsets.size());
  for (const auto& o : offsets) p.push_back({o.timestamp, o.reference, o.rtt});
  // A measurement whose best round trip was long (the rank or rank 0 preempted during all its ping-pongs)
  // is known only to within that rtt / 2: one over 4 times the rank's smallest round trip is dropped, so
  // that it cannot bend the line between good ones (ERRATUM E205); the best one always stays. (Over 4
  // times the median was not enough: with more ranks than cores most exchanges of a rank can be
  // preempted, and the median with them.)
  if (p.size() > 2) {
    std::uint64_t best = ~std::uint64_t{0};
    for (const Point& q : p) best = std::min(best, q.rtt);
    std::erase_if(p, [&](const Point& q) { return q.rtt > 4 * best && q.rtt != best; });
  }
  std::sort(p.begin(), p.end(), [](const Point& a, const Point& b) { return a.local < b.local; });
  // Strictly increasing in both clocks: a measurement that would make time run backwards (or stand
  // still) is dropped; of two at one local time the one with the smaller round trip is kept.
  for (const Point& q : p) {
    if (!m.points_.empty() && q.local == m.points_.back().local) {
      if (q.rtt < m.points_.back().rtt) m.points_.back() = q;
      continue;
    }
    if (!m.points_.empty() && q.reference <= m.points_.back().reference) continue;
    m.points_.push_back(q);
  }
  if (m.points_.size() >= 2) {  // a later drop may have broken the order of an earlier kept pair
    std::vector<Point> ok{m.points_.front()};
    for (std::size_t i = 1; i < m.points_.size(); ++i)
      if (m.points_[i].reference > ok.back().reference) ok.push_back(m.points_[i]);
    m.points_ = std::move(ok);
  }
  if (m.points_.empty()) {
    // No measurement (a file that is not an MPI recording): the files' start times, CLOCK_REALTIME apart.
    const double real_diff_ticks =
        double(std::int64_t(local.start_realtime_ns - ref.start_realtime_ns)) * 1e-9 * double(ref_hz ? ref_hz : 1);
    m.points_.push_back({local.start_ticks, add_signed(ref.start_ticks, real_diff_ticks), 0});
    m.measured_ = false;
  }
  return m;
}

ClockMap ClockMap::identity() {
  ClockMap m;
  m.rate_ = 1.0;
  m.points_.push_back({0, 0, 0});
  m.measured_ = false;
  return m;
}

std::uint64_t ClockMap::operator()(std::uint64_t t) const {
  const std::size_t n = points_.size();
  if (n == 1) {  // a constant offset (rates scaled), saturating at the ends of the range
    const Point& a = points_[0];
    const double d = double(t >= a.local ? t - a.local : a.local - t) * rate_;
    const std::uint64_t u = d < 1.8e19 ? static_cast<std::uint64_t>(d + 0.5) : ~std::uint64_t{0};
    return t >= a.local ? a.reference + std::min(u, ~std::uint64_t{0} - a.reference)
                        : a.reference - std::min(u, a.reference);
  }
  // The segment holding t (the first or the last one, extended, outside the points).
  std::size_t i = hint_;
  if (!(i + 1 < n && points_[i].local <= t && t < points_[i + 1].local)) {
    const auto it = std::upper_bound(points_.begin(), points_.end(), t,
                                     [](std::uint64_t v, const Point& q) { return v < q.local; });
    i = it == points_.begin() ? 0 : static_cast<std::size_t>(it - points_.begin()) - 1;
    if (i + 1 >= n) i = n - 2;
    hint_ = i;
  }
  const Point& a = points_[i];
  const Point& b = points_[i + 1];
  const std::uint64_t dref = b.reference - a.reference;
  const double slope = double(dref) / double(b.local - a.local);
  if (t >= a.local) {  // inside the segment, or after the last point: never below a, inside never past b
    double d = double(t - a.local) * slope;
    if (t <= b.local) d = std::min(d, double(dref));
    const std::uint64_t u = d < 1.8e19 ? static_cast<std::uint64_t>(d + 0.5) : ~std::uint64_t{0};
    const std::uint64_t up = t <= b.local ? std::min(u, dref) : std::max(u, dref);
    return a.reference + std::min(up, ~std::uint64_t{0} - a.reference);  // saturates: never wraps
  }
  const double d = double(a.local - t) * slope;  // before the first point
  const std::uint64_t u = d < 1.8e19 ? static_cast<std::uint64_t>(d + 0.5) : ~std::uint64_t{0};
  return a.reference - std::min(u, a.reference);
}

double ClockMap::drift() const {
  if (points_.size() < 2) return 0;
  const Point& a = points_.front();
  const Point& b = points_.back();
  return double(b.reference - a.reference) / double(b.local - a.local) / rate_ - 1.0;
}

double ClockMap::drift_uncertainty() const {
  if (points_.size() < 2) return 0;
  const Point& a = points_.front();
  const Point& b = points_.back();
  // Each end's offset is known to within its rtt / 2 (E204): the slope between them to within their sum
  // over the time between them.
  return (double(a.rtt) / 2 + double(b.rtt) / 2) / double(b.local - a.local);
}

}  // namespace kron::merge
