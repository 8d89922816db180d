// The time base of a trace file (format 1.6): how timestamp ticks convert to the kernel's nanoseconds,
// and so to the time of everything else the kernel stamps (context switches, other ranks' files).
// docs/trace-format.md "Time base" is the prose; ERRATA E300-E305 are the decisions.
//
// Sources, best first:
//  - Kernel: the perf_event mmap page's time_mult, time_shift, time_zero (cap_user_time and
//    cap_user_time_zero: perf_event_open(2), "MMAP layout"), the kernel's own TSC-to-sched_clock
//    conversion: ns = time_zero + ((ticks * time_mult) >> time_shift). Exact (ERRATUM E300).
//  - Anchors: (ticks, CLOCK_MONOTONIC_RAW ns) pairs taken at the start and at the end of the recording;
//    ticks convert by interpolation between them (ERRATUM E301).
//  - KernelClock: the ticks are CLOCK_MONOTONIC nanoseconds themselves (no invariant, synchronized TSC,
//    or KRON_NO_TSC): exact.
//  - Nominal: the producer's stated clock (a device model's timestamp clock, a raw stream's --ts-hz).
//  - Legacy: a file before 1.6: a rate calibrated over about 7 ms and rounded to 100 kHz (ERRATUM E302).
// Nothing here depends on anything but the standard library: the board side (src/board) uses it too.
#pragma once
#include <cstdint>

namespace kron::tracefile {

__extension__ typedef unsigned __int128 TimeU128;  // GCC and Clang: the kernel's 64x32-bit products

enum class TimeSource : std::uint32_t { Legacy = 0, Nominal = 1, Kernel = 2, Anchors = 3, KernelClock = 4 };
inline constexpr std::uint32_t kTimeSources = 5;

// The kernel's conversion (Kernel source), as the perf_event mmap page gives it.
struct KernelConversion {
  std::uint32_t mult = 0;
  std::uint32_t shift = 0;
  std::uint64_t zero = 0;
  // ns = zero + ((ticks * mult) >> shift), wrapping as the kernel's u64 arithmetic does.
  std::uint64_t to_ns(std::uint64_t ticks) const {
    return zero + static_cast<std::uint64_t>((static_cast<TimeU128>(ticks) * mult) >> shift);
  }
  // The largest ticks whose to_ns is at or before ns (a tick is shorter than a nanosecond on any TSC
  // above 1 GHz: exact to the tick). mult != 0.
  std::uint64_t to_ticks(std::uint64_t ns) const {
    const std::uint64_t d = ns - zero;
    TimeU128 t = (static_cast<TimeU128>(d) << shift) / mult;
    if (t > ~std::uint64_t{0}) t = ~std::uint64_t{0};
    std::uint64_t c = static_cast<std::uint64_t>(t);
    // The division rounds down: a step or two at most (a reader bounds the rate to 100 ticks a ns).
    for (int i = 0; i < 256 && c && to_ns(c) - zero > d; ++i) --c;
    for (int i = 0; i < 256 && c != ~std::uint64_t{0} && to_ns(c + 1) - zero <= d; ++i) ++c;
    return c;
  }
  double hz() const { return mult ? 1e9 * static_cast<double>(std::uint64_t{1} << shift) / mult : 0.0; }
};

// One anchor: ticks and CLOCK_MONOTONIC_RAW read side by side (ticks, raw, ticks: the middle of the two
// tick reads; `half_ns` is half their distance, the anchor's uncertainty).
struct Anchor {
  std::uint64_t ticks = 0, ns = 0, half_ns = 0;
};

}  // namespace kron::tracefile
