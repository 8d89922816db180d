// The trace file's time base (format 1.6, kron/format/time_base.hpp): the one place where ticks meet the
// kernel's clocks. Sources: perf_event_open(2) "MMAP layout" (time_mult, time_shift, time_zero);
// clock_gettime(2) (CLOCK_MONOTONIC_RAW). Decisions: ERRATA E300-E305.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstddef>
#include <string>

#include "kron/format/trace_file.hpp"

namespace kron::tracefile {
namespace {

// ERRATUM E302: a file before 1.6 holds a rate calibrated over ~7 ms and rounded to 100 kHz; on a 2-core VM
// it read 160-550 ppm low. Its uncertainty, as `kron info` says it.
constexpr double kLegacyUncertaintyPpm = 600;
constexpr double kMaxHz = 100e9;  // a faster timestamp clock is a scribbled rate (as the board's check)
constexpr double kMinHz = 1e3;

bool closed(const FileHeader& h) { return h.anchor1_ns != 0 || h.anchor1_ticks != 0; }

double anchor_rate(const FileHeader& h) {
  return double(h.anchor1_ticks - h.anchor0_ticks) * 1e9 / double(h.anchor1_ns - h.anchor0_ns);
}

KernelConversion kernel_of(const FileHeader& h) { return KernelConversion{h.time_mult, h.time_shift, h.time_zero}; }

}  // namespace

TimeSource time_source(const FileHeader& h) {
  if (h.minor < 6) return h.origin == Origin::Live ? TimeSource::Legacy : TimeSource::Nominal;
  return static_cast<TimeSource>(h.time_source);
}

double rate_hz(const FileHeader& h) {
  switch (time_source(h)) {
    case TimeSource::Kernel: return kernel_of(h).hz();
    case TimeSource::Anchors: return closed(h) ? anchor_rate(h) : double(h.clock_hz);
    default: return double(h.clock_hz);
  }
}

double rate_uncertainty_ppm(const FileHeader& h) {
  if (time_source(h) == TimeSource::Legacy) return kLegacyUncertaintyPpm;
  return double(h.rate_uncertainty_ppb) * 1e-3;
}

std::string time_source_text(const FileHeader& h) {
  switch (time_source(h)) {
    case TimeSource::Legacy: return "calibrated over about 7 ms and rounded to 100 kHz (recorded before format 1.6)";
    case TimeSource::Nominal: return "the producer's nominal clock";
    case TimeSource::Kernel:
      return fmt::format("the kernel's TSC conversion (perf_event time_mult {}, time_shift {})", h.time_mult,
                         h.time_shift);
    case TimeSource::Anchors:
      if (!closed(h)) return "the TSC calibrated against CLOCK_MONOTONIC_RAW at the start (no end anchor)";
      return fmt::format("the TSC against CLOCK_MONOTONIC_RAW, anchors {:.3f} s apart",
                         double(h.anchor1_ns - h.anchor0_ns) * 1e-9);
    case TimeSource::KernelClock: return "CLOCK_MONOTONIC nanoseconds (no TSC)";
  }
  return "unknown";
}

std::uint64_t kernel_ns_to_ticks(const FileHeader& h, std::uint64_t ns) {
  switch (time_source(h)) {
    case TimeSource::Kernel: return kernel_of(h).to_ticks(ns);
    case TimeSource::Anchors: {
      // Between (or beyond) the anchors, on the line through them (E301); before the end anchor is
      // taken, at the calibrated rate from the start anchor.
      const long double rate =
          closed(h) ? (long double)(h.anchor1_ticks - h.anchor0_ticks) / (long double)(h.anchor1_ns - h.anchor0_ns)
                    : (long double)h.clock_hz * 1e-9L;
      const long double d = ((long double)ns - (long double)h.anchor0_ns) * rate;
      const long double t = (long double)h.anchor0_ticks + d;
      if (t <= 0) return 0;
      if (t >= 1.8e19L) return ~std::uint64_t{0};
      return static_cast<std::uint64_t>(std::llround(t));
    }
    default: return ns;  // KernelClock: the ticks are the kernel's nanoseconds
  }
}

void close_anchors(FileHeader& h, const Anchor& end) {
  if (time_source(h) != TimeSource::Anchors || closed(h)) return;
  if (end.ns <= h.anchor0_ns || end.ticks <= h.anchor0_ticks) return;  // no time between: stays unclosed
  const std::uint64_t half = std::max<std::uint64_t>(h.anchor_half_ns, end.half_ns);
  const double r = double(end.ticks - h.anchor0_ticks) * 1e9 / double(end.ns - h.anchor0_ns);
  // Each anchor is known within its half_ns: the slope within their sum over the time between; and the
  // rounding of clock_hz to the hertz. A recording too short for that to beat the board's calibration
  // (microseconds) keeps the calibration, unclosed.
  const double ppb = std::ceil(2.0 * double(half) / double(end.ns - h.anchor0_ns) * 1e9 + 0.5 / r * 1e9);
  if (h.rate_uncertainty_ppb && ppb >= double(h.rate_uncertainty_ppb)) return;
  if (ppb > 1e7 || r < 1e3 || r > kMaxHz) return;  // what a reader would refuse (E304)
  h.anchor1_ticks = end.ticks;
  h.anchor1_ns = end.ns;
  h.anchor_half_ns = static_cast<std::uint32_t>(std::min<std::uint64_t>(half, 0xffffffffu));
  h.clock_hz = static_cast<std::uint64_t>(r + 0.5);
  h.rate_uncertainty_ppb = static_cast<std::uint32_t>(ppb);
}

void copy_time_base(FileHeader& to, const FileHeader& from) {
  to.clock_hz = from.clock_hz;
  const std::size_t a = offsetof(FileHeader, time_source), b = sizeof(FileHeader);
  if (from.minor >= 6)
    std::memcpy(reinterpret_cast<char*>(&to) + a, reinterpret_cast<const char*>(&from) + a, b - a);
  else {  // an older file's rate: said as such
    to.time_source = static_cast<std::uint32_t>(time_source(from));
    to.rate_uncertainty_ppb = static_cast<std::uint32_t>(rate_uncertainty_ppm(from) * 1e3);
  }
}

const char* time_base_problem(const FileHeader& h, std::size_t* at) {
  auto fail = [&](std::size_t off, const char* why) {
    *at = off;
    return why;
  };
  // Any version: a rate above 100 GHz is scribbled. A 1.0-1.5 file holds nothing more of a time base, but a
  // file kron merge writes from it is 1.6 or later and must read back (ERRATUM E304).
  if (double(h.clock_hz) > kMaxHz) return fail(offsetof(FileHeader, clock_hz), "clock_hz is above 100 GHz");
  if (h.minor < 6) return nullptr;
  if (h.time_source >= kTimeSources) return fail(offsetof(FileHeader, time_source), "time_source is not 0-4");
  if (h.rate_uncertainty_ppb > 10'000'000u)
    return fail(offsetof(FileHeader, rate_uncertainty_ppb), "rate_uncertainty_ppb is above 1% (10^7)");
  switch (static_cast<TimeSource>(h.time_source)) {
    case TimeSource::Kernel: {
      if (h.time_mult == 0) return fail(offsetof(FileHeader, time_mult), "time_mult is 0");
      if (h.time_shift > 63) return fail(offsetof(FileHeader, time_shift), "time_shift is above 63");
      const double hz = kernel_of(h).hz();
      if (hz < kMinHz || hz > kMaxHz)
        return fail(offsetof(FileHeader, time_mult), "time_mult and time_shift give a rate outside 1 kHz-100 GHz");
      if (std::fabs(hz - double(h.clock_hz)) > 1.0)
        return fail(offsetof(FileHeader, clock_hz), "clock_hz differs from time_mult and time_shift's rate");
      break;
    }
    case TimeSource::Anchors: {
      if (!closed(h)) break;
      if (h.anchor1_ticks <= h.anchor0_ticks)
        return fail(offsetof(FileHeader, anchor1_ticks), "anchor1_ticks is not after anchor0_ticks");
      if (h.anchor1_ns <= h.anchor0_ns)
        return fail(offsetof(FileHeader, anchor1_ns), "anchor1_ns is not after anchor0_ns");
      const double hz = anchor_rate(h);
      if (hz < kMinHz || hz > kMaxHz)
        return fail(offsetof(FileHeader, anchor1_ticks),
                    "the anchors give a rate "
                    "outside 1 kHz-100 GHz");
      if (std::fabs(hz - double(h.clock_hz)) > 1.0)
        return fail(offsetof(FileHeader, clock_hz), "clock_hz differs from the anchors' rate");
      break;
    }
    case TimeSource::KernelClock:
      if (h.clock_hz != 1000000000ull)
        return fail(offsetof(FileHeader, clock_hz), "clock_hz is not 10^9 for CLOCK_MONOTONIC timestamps");
      break;
    default: break;
  }
  return nullptr;
}

}  // namespace kron::tracefile
