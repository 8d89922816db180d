// kron merge's clocks (clocks.hpp; DECISIONS D10, D11; ERRATA E204-E206, E306).
#include "merge/clocks.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "kron/core/error.hpp"

namespace kron::merge {

using record::ClockOffsetRecord;

const char* clock_kind_name(ClockKind k) {
  switch (k) {
    case ClockKind::Reference: return "reference";
    case ClockKind::Exact: return "exact";
    case ClockKind::Measured: return "measured";
    case ClockKind::StartTime: return "start time";
    case ClockKind::AsRecorded: return "as recorded";
  }
  return "unknown";
}

// ---- Records that contradict each other (DECISION D11) ----------------------------------------------------
void check_clock_records(const tracefile::Reader& r, const std::string& path) {
  const auto& h = r.header();
  const auto& recs = r.clock_offsets();
  const std::size_t at = offsetof(tracefile::FileHeader, clock_offsets);
  auto which = [&](std::size_t k) {
    return "clock-offset record " + std::to_string(k) + " of " + std::to_string(recs.size()) + " (local tick " +
           std::to_string(recs[k].timestamp) + ")";
  };
  for (std::size_t k = 0; k < recs.size(); ++k) {
    const ClockOffsetRecord& c = recs[k];
    if (c.rank != h.mpi_rank)
      throw InputError::at_offset(
          path, offsetof(tracefile::FileHeader, mpi_rank),
          which(k) + " is of rank " + std::to_string(c.rank) + ", the file of rank " + std::to_string(h.mpi_rank));
    if (c.reference_rank != 0)
      throw InputError::at_offset(path, at,
                                  which(k) + " measures against rank " + std::to_string(c.reference_rank) +
                                      ": every rank measures against rank 0 (ERRATUM E204)");
    const std::uint64_t self = c.reference > c.timestamp ? c.reference - c.timestamp : c.timestamp - c.reference;
    if (h.mpi_rank == 0 && double(self) > double(c.rtt) / 2 + 1)
      throw InputError::at_offset(path, at,
                                  which(k) + " of the reference rank reads " + std::to_string(c.reference) + ", " +
                                      std::to_string(self) + " ticks off its own clock with a round trip of " +
                                      std::to_string(c.rtt) +
                                      ": rank 0's own records read its one clock twice alike (ERRATUM E204)");
  }
  // Two measurements of one instant: rank 0's clock read within rtt / 2 of each midpoint (E204), so their
  // references may differ by at most the sum of the halves.
  std::vector<std::size_t> by_time(recs.size());
  for (std::size_t k = 0; k < recs.size(); ++k) by_time[k] = k;
  std::stable_sort(by_time.begin(), by_time.end(),
                   [&](std::size_t a, std::size_t b) { return recs[a].timestamp < recs[b].timestamp; });
  for (std::size_t i = 1; i < by_time.size(); ++i) {
    const ClockOffsetRecord &a = recs[by_time[i - 1]], &b = recs[by_time[i]];
    if (a.timestamp != b.timestamp) continue;
    const std::uint64_t diff = a.reference > b.reference ? a.reference - b.reference : b.reference - a.reference;
    if (double(diff) > double(a.rtt) / 2 + double(b.rtt) / 2 + 1)
      throw InputError::at_offset(path, at,
                                  which(by_time[i - 1]) + " and " + which(by_time[i]) + " read rank 0's clock " +
                                      std::to_string(diff) +
                                      " ticks apart at one instant, more than their round trips (" +
                                      std::to_string(a.rtt) + ", " + std::to_string(b.rtt) + ") allow");
  }
}

// ---- Measurements worth believing (ERRATUM E344) ------------------------------------------------------------
namespace {
// The clock-offset measurements of a rank that are plausible: a crystal drifts by tens of ppm, so a
// measurement that implies more than kMaxDriftPpm against the rank's consensus measurement (the one whose
// offset is the median) is dropped with a warning naming rank and measurement; so is a lone measurement
// whose offset is more than an hour off the one the files' CLOCK_REALTIME starts give.
inline constexpr double kMaxDriftPpm = 1000;
std::vector<ClockOffsetRecord> plausible_offsets(const tracefile::Reader& x, const std::string& path,
                                                 const tracefile::FileHeader& rh, std::vector<std::string>* warnings) {
  const auto& h = x.header();
  const auto& all = x.clock_offsets();
  if (all.empty()) return {};
  const double rate = h.clock_hz && rh.clock_hz ? double(rh.clock_hz) / double(h.clock_hz) : 1.0;  // ClockMap's slope
  auto offset = [&](const ClockOffsetRecord& c) { return double(c.reference) - double(c.timestamp) * rate; };
  std::vector<double> offs;
  for (const auto& c : all) offs.push_back(offset(c));
  std::nth_element(offs.begin(), offs.begin() + static_cast<std::ptrdiff_t>(offs.size() / 2), offs.end());
  const double median = offs[offs.size() / 2];
  const ClockOffsetRecord a = *std::min_element(all.begin(), all.end(), [&](const auto& p, const auto& q) {
    return std::fabs(offset(p) - median) < std::fabs(offset(q) - median);
  });
  const double hz = double(rh.clock_hz ? rh.clock_hz : 1);
  auto warn = [&](std::size_t k, const std::string& why) {
    warnings->push_back("rank " + std::to_string(h.mpi_rank) + ": clock-offset measurement " + std::to_string(k) +
                        " (local tick " + std::to_string(all[k].timestamp) + ") " + why + ": dropped (" + path + ")");
  };
  std::vector<ClockOffsetRecord> out;
  for (std::size_t k = 0; k < all.size(); ++k) {
    const ClockOffsetRecord& c = all[k];
    if (all.size() == 1) {
      const double real_diff = double(std::int64_t(h.start_realtime_ns - rh.start_realtime_ns)) * 1e-9 * hz;
      const double by_realtime = double(rh.start_ticks) + real_diff - double(h.start_ticks) * rate;
      if (std::fabs(offset(c) - by_realtime) > 3600 * hz) {
        warn(k, "is more than an hour off the offset of the files' start times");
        continue;
      }
    } else if (c.timestamp != a.timestamp) {
      // Differences first, in integers: absolute tick counts lose precision as doubles.
      const double dt = double(std::int64_t(c.timestamp - a.timestamp)) * rate;
      const double ppm = (double(std::int64_t(c.reference - a.reference)) / dt - 1.0) * 1e6;
      if (!(std::fabs(ppm) <= kMaxDriftPpm)) {
        warn(k, "implies a drift of " + std::to_string(std::llround(ppm)) + " ppm (more than " +
                    std::to_string(int(kMaxDriftPpm)) + ")");
        continue;
      }
    }
    out.push_back(c);
  }
  return out;
}

// ---- One clock (ERRATUM E306, DECISION D10) ---------------------------------------------------------------
std::string node_of(const tracefile::Reader& r) {
  for (const auto& n : r.names())
    if (n.name_kind == record::NameKind::Node) return std::string(n.name, strnlen(n.name, sizeof n.name));
  return {};
}
// 1: a TSC (kernel conversion or anchors), 2: CLOCK_MONOTONIC nanoseconds, 0: neither (no claim of one clock).
int clock_family(const tracefile::FileHeader& h) {
  switch (tracefile::time_source(h)) {
    case tracefile::TimeSource::Kernel:
    case tracefile::TimeSource::Anchors: return 1;
    case tracefile::TimeSource::KernelClock: return 2;
    default: return 0;
  }
}
// What the two files' time bases claim: one node (MPI_Get_processor_name), one kind of clock (a TSC, or the
// kernel's CLOCK_MONOTONIC), rates that agree within their uncertainties plus 1 ppm.
bool claim_one_clock(const tracefile::Reader& a, const tracefile::Reader& b) {
  const auto &ha = a.header(), &hb = b.header();
  const int f = clock_family(ha);
  if (f == 0 || f != clock_family(hb)) return false;
  const std::string node = node_of(a);
  if (node.empty() || node != node_of(b)) return false;
  const double ra = tracefile::rate_hz(ha), rb = tracefile::rate_hz(hb);
  const double ppm = std::fabs(ra - rb) / rb * 1e6;
  return ppm <= tracefile::rate_uncertainty_ppm(ha) + tracefile::rate_uncertainty_ppm(hb) + 1.0;
}
// The first of `recs` that `m` does not fit: its reference more than rtt / 2 + `slack` (+ 1 for rounding)
// from the map's value at its local time; recs.size() when all fit.
std::size_t first_misfit(std::span<const ClockOffsetRecord> recs, const ClockMap& m, double slack) {
  for (std::size_t k = 0; k < recs.size(); ++k) {
    const double off = double(std::int64_t(m(recs[k].timestamp) - recs[k].reference));
    if (std::fabs(off) > double(recs[k].rtt) / 2 + slack + 1) return k;
  }
  return recs.size();
}
// How far a map built from measurements may be from the truth between them: half its worst round trip.
double map_slack(const ClockMap& m) {
  double s = 0;
  for (const auto& p : m.points()) s = std::max(s, double(p.rtt) / 2);
  return s;
}
}  // namespace

namespace {
// "rank R (FILE): its node and time base are rank W's (FILE), but clock-offset measurement K ... : not one
// clock": a rank whose measurements say otherwise than its time base (DECISION D11: reported by name).
std::string misfit_warning(const tracefile::Reader& x, const std::string& path, const tracefile::Reader& w,
                           const std::string& wpath, std::size_t k, const ClockMap& m) {
  const ClockOffsetRecord& c = x.clock_offsets()[k];
  const std::int64_t off = std::int64_t(c.reference - m(c.timestamp));
  return "rank " + std::to_string(x.header().mpi_rank) + " (" + path + "): its node and time base are rank " +
         std::to_string(w.header().mpi_rank) + "'s (" + wpath + "), but its clock-offset measurement " +
         std::to_string(k) + " (local tick " + std::to_string(c.timestamp) + ") is " + std::to_string(off) +
         " ticks off that clock with a round trip of " + std::to_string(c.rtt) +
         ": not one clock, aligned by its own measurements";
}
// Marks the records of `x` that are points of `m`.
std::vector<char> used_by(const tracefile::Reader& x, const ClockMap& m) {
  std::vector<char> used(x.clock_offsets().size(), 0);
  if (!m.measured()) return used;
  for (std::size_t k = 0; k < used.size(); ++k) {
    const ClockOffsetRecord& c = x.clock_offsets()[k];
    for (const auto& p : m.points())
      if (p.local == c.timestamp && p.reference == c.reference && p.rtt == c.rtt) used[k] = 1;
  }
  return used;
}
}  // namespace

std::vector<InputClock> assign_clocks(std::span<const tracefile::Reader* const> files,
                                      std::span<const std::string> paths, std::size_t ref, bool align,
                                      std::vector<std::string>& warnings) {
  const std::size_t n = files.size();
  const tracefile::FileHeader& rh = files[ref]->header();
  std::vector<std::string> quiet;  // --no-align: nothing is dropped from a map that is not used
  std::vector<std::vector<ClockOffsetRecord>> plausible(n);
  std::vector<ClockMap> own(n);
  for (std::size_t i = 0; i < n; ++i) {
    plausible[i] = plausible_offsets(*files[i], paths[i], rh, align ? &warnings : &quiet);
    const auto& h = files[i]->header();
    own[i] = ClockMap::build(plausible[i], h.clock_hz, rh.clock_hz, h, rh);
  }
  std::vector<InputClock> out(n);
  std::vector<char> placed(n, 0), warned(n, 0);
  // The reference's ticks are the timeline when it is rank 0, the clock everyone measured against; a merge
  // without rank 0 puts them on rank 0's clock by their own measurements, as every other rank's.
  const bool rank0 = rh.mpi_rank == 0;
  const ClockMap ref_map = rank0 || !align ? ClockMap::identity() : own[ref];
  out[ref] = {ref_map, static_cast<std::uint32_t>(ref), ClockKind::Reference, ref, {}};
  placed[ref] = 1;
  // One clock with a rank `w` already placed: what the time bases claim, and every measurement fits w's map.
  auto join = [&](std::size_t i, std::size_t w, const ClockMap& m, double slack) {
    if (placed[i] || !claim_one_clock(*files[i], *files[w]) || files[i]->clock_offsets().empty()) return false;
    const std::size_t k = first_misfit(files[i]->clock_offsets(), m, slack);
    if (k < files[i]->clock_offsets().size()) {  // said once a rank, for the first clock it was tried on
      if (!warned[i]) warnings.push_back(misfit_warning(*files[i], paths[i], *files[w], paths[w], k, m));
      warned[i] = 1;
      return false;
    }
    placed[i] = 1;
    return true;
  };
  const ClockMap ref_fit = rank0 ? ClockMap::identity() : own[ref];  // the reference's ticks on rank 0's clock
  for (std::size_t i = 0; i < n; ++i)
    if ((rank0 || own[ref].measured()) && join(i, ref, ref_fit, rank0 ? 0.0 : map_slack(own[ref])))
      out[i] = {ref_map, static_cast<std::uint32_t>(ref), ClockKind::Exact, ref, {}};
  // The other clocks: each rank not placed, with the later ranks of its node whose measurements fit its map:
  // one clock, mapped by that first rank's measurements for all (pooled, measurements of several ranks a few
  // microseconds apart would bend the line by their jitter over that time).
  for (std::size_t i = 0; i < n; ++i) {
    if (placed[i]) continue;
    placed[i] = 1;
    std::vector<std::size_t> members{i};
    if (own[i].measured())
      for (std::size_t j = i + 1; j < n; ++j)
        if (join(j, i, own[i], map_slack(own[i]))) members.push_back(j);
    const ClockMap& m = own[i];
    for (std::size_t j : members) {
      const ClockKind kind = !align ? ClockKind::AsRecorded : m.measured() ? ClockKind::Measured : ClockKind::StartTime;
      out[j] = {align ? m : ClockMap::identity(), static_cast<std::uint32_t>(i), kind, i, {}};
    }
  }
  for (std::size_t i = 0; i < n; ++i) out[i].used = used_by(*files[i], out[i].map);
  return out;
}

}  // namespace kron::merge
