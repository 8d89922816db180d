// One clock (docs/trace-format.md "Time base", ERRATA E300-E305): the probes' ticks and the context
// switches `kron record --sched` takes from the kernel compare exactly.
// - real_program spin: 1 ms asleep, then 50 us computing in the named scope "spin", many times. The scope
//   is on a CPU all along by construction, so `kron rpt --json`'s cpu_share of it is >= 0.95. With switch
//   times off the probes' clock by a rate error of a few hundred ppm (files before 1.6: a rate calibrated
//   over 7 ms and rounded to 100 kHz) the switches drift a millisecond off the scopes within seconds and
//   the share falls to a few percent.
// - the last probes and switches of the thread: each scope's end is followed by the switch out of the
//   sleep after it, each begin follows the switch in of the sleep before it; over the last 100 scopes,
//   no switch is on the wrong side of its probe, and the switches' error against the probes (half the
//   difference of the two nearest gaps) is within 2 us.
// Both clock paths: the default (the kernel's conversion where this machine offers it, else anchors) and
// the anchors forced by KRON_CLOCK_ANCHORS=1 (the fallback, testable everywhere). 4,000 iterations for the
// default (about 5 s: the drift of the old conversion is then far past the 50 us scope), 1,500 forced.
// The kernel's own conversion (KernelConversion) is checked on numbers, also where this machine lacks it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kron/format/trace_file.hpp"

namespace kron {
namespace {

namespace fs = std::filesystem;

std::string kron_bin() { return std::string(KRON_BINARY_DIR) + "/kron"; }

struct Recording {
  int rc = -1;
  std::string file;
};

Recording record_spin(const std::string& env, unsigned n, const std::string& tag) {
  Recording r;
  const fs::path dir = fs::temp_directory_path() / ("kron-clock-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  r.file = (dir / (tag + ".kron")).string();
  const std::string cmd = env + " " + kron_bin() + " record -q --sched -o " + r.file + " -- " + KRON_REAL_PROGRAM +
                          " spin " + std::to_string(n) + " 2>" + r.file + ".err";
  const int st = std::system(cmd.c_str());
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  return r;
}

std::string slurp_cmd(const std::string& cmd) {
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

double spin_cpu_share(const std::string& file) {
  const auto j = nlohmann::json::parse(slurp_cmd(kron_bin() + " rpt --json " + file));
  EXPECT_EQ(j.at("cpu_source"), "sched");
  for (const auto& row : j.at("rows"))
    if (row.at("name") == "spin") return row.at("cpu_share").get<double>();
  ADD_FAILURE() << "no row for the scope spin";
  return 0;
}

// Over the last `last` scopes of the recording: the smallest distance from a scope's end to the switch out
// after it, and from the switch in before a scope's begin to that begin, in microseconds (negative: the
// switch on the wrong side of the probe).
struct Gaps {
  double end_to_out_us = 1e18, in_to_begin_us = 1e18;
  std::size_t scopes = 0;
};
Gaps gaps(const std::string& file, std::size_t last) {
  tracefile::Reader rd(file);
  std::vector<std::uint64_t> begins, ends;
  Sample s;
  std::uint32_t thread = 0;
  while (rd.next(s))
    if ((s.flags & kFlagNamed) && (s.flags & (kFlagScopeBegin | kFlagScopeEnd))) {
      thread = s.thread;
      ((s.flags & kFlagScopeBegin) ? begins : ends).push_back(s.timestamp);
    }
  // The sleeps' switches: voluntary outs, and the ins after them (a preemption inside a scope, by another
  // program on a loaded machine, is not a sleep's).
  std::vector<std::uint64_t> outs, ins;
  bool after_sleep = true;
  for (const auto& sw : rd.sched_switches()) {
    if (sw.thread != thread) continue;
    if (sw.h.flags & record::kSchedOut) {
      after_sleep = !(sw.h.flags & record::kSchedPreempt);
      if (after_sleep) outs.push_back(sw.timestamp);
    } else if (after_sleep) {
      ins.push_back(sw.timestamp);
    }
  }
  const double tick_us = 1e6 / tracefile::rate_hz(rd.header());
  Gaps g;
  const std::size_t n = std::min(begins.size(), ends.size());
  for (std::size_t i = n > last ? n - last : 0; i < n; ++i) {
    // The switch out nearest the end (either side) and the switch in nearest the begin.
    auto near = [&](const std::vector<std::uint64_t>& v, std::uint64_t t, bool after) {
      auto it = std::lower_bound(v.begin(), v.end(), t);
      double best = 1e18;  // signed: the one nearest t
      auto keep = [&](double d) {
        if (std::abs(d) < std::abs(best)) best = d;
      };
      if (it != v.end()) keep(after ? double(*it - t) : -double(*it - t));
      if (it != v.begin()) keep(after ? -double(t - *(it - 1)) : double(t - *(it - 1)));
      return best * tick_us;
    };
    const double o = near(outs, ends[i], true), in = near(ins, begins[i], false);
    if (std::abs(o) < std::abs(g.end_to_out_us) || g.scopes == 0) g.end_to_out_us = o;
    if (std::abs(in) < std::abs(g.in_to_begin_us) || g.scopes == 0) g.in_to_begin_us = in;
    ++g.scopes;
  }
  return g;
}

bool skip_without_perf(const Recording& r) {
  if (r.rc == 0) return false;
  return slurp_cmd("cat " + r.file + ".err").find("perf_event_open") != std::string::npos;
}

void check(const Recording& r, const char* what) {
  if (skip_without_perf(r)) GTEST_SKIP() << "kron record --sched: no perf_event here";
  ASSERT_EQ(r.rc, 0) << slurp_cmd("cat " + r.file + ".err");
  const double share = spin_cpu_share(r.file);
  EXPECT_GE(share, 0.95) << what << ": the scope computes all along, its on-CPU share is " << share;
  const Gaps g = gaps(r.file, 100);
  ASSERT_GE(g.scopes, 50u);
  std::printf("%s: cpu_share %.4f; last 100 scopes: end to switch out %.3f us, switch in to begin %.3f us\n", what,
              share, g.end_to_out_us, g.in_to_begin_us);
  // The switches' error e against the probes lies in [-in_to_begin, +end_to_out]: each gap is a system
  // call's latency (into nanosleep, out of it: about 2 us each on a 2-core VM) plus or minus e. Both gaps
  // are positive (no switch on the wrong side of its probe), and their half difference, e where the two
  // latencies are alike, is within 2 us.
  EXPECT_GE(g.end_to_out_us, 0.0) << what << ": a switch out before the scope's end";
  EXPECT_GE(g.in_to_begin_us, 0.0) << what << ": a switch in after the scope's begin";
  EXPECT_LE(std::abs(g.end_to_out_us - g.in_to_begin_us) / 2, 2.0) << what << ": the switches and the last probes";
  EXPECT_LE(g.end_to_out_us, 10.0) << what;
  EXPECT_LE(g.in_to_begin_us, 10.0) << what;
  tracefile::Reader rd(r.file);
  EXPECT_GE(rd.header().minor, 6);
  EXPECT_LT(tracefile::rate_uncertainty_ppm(rd.header()), 5.0) << tracefile::time_source_text(rd.header());
}

// Scopes preempted by other programs (a loaded machine: the switch out is flagged preempted) are off the
// CPU for real, and lower the share: such a recording is taken once more (the broken conversion fails both).
std::uint64_t preemptions(const Recording& r) {
  if (r.rc != 0) return 0;
  tracefile::Reader rd(r.file);
  Sample s;
  while (rd.next(s)) {
  }
  std::uint64_t n = 0;
  for (const auto& sw : rd.sched_switches()) n += (sw.h.flags & record::kSchedPreempt) != 0;
  return n;
}
Recording record_twice_if_preempted(const std::string& env, unsigned n, const std::string& tag) {
  Recording r = record_spin(env, n, tag);
  if (r.rc == 0 && preemptions(r) > n / 100 && spin_cpu_share(r.file) < 0.95) {
    std::printf("%s: %llu preemptions by other programs: recorded again\n", tag.c_str(),
                static_cast<unsigned long long>(preemptions(r)));
    r = record_spin(env, n, tag);
  }
  return r;
}

TEST(ClockTest, SleepThenSpinIsOnCpuAndSwitchesMeetProbes) {
  const Recording r = record_twice_if_preempted("", 4000, "default");
  check(r, "default clock");
}

TEST(ClockTest, AnchorsForcedAgreeToo) {
  const Recording r = record_twice_if_preempted("KRON_CLOCK_ANCHORS=1", 1500, "anchors");
  check(r, "anchors");
  if (r.rc == 0) {
    tracefile::Reader rd(r.file);
    EXPECT_EQ(tracefile::time_source(rd.header()), tracefile::TimeSource::Anchors);
    EXPECT_GT(rd.header().anchor1_ns, rd.header().anchor0_ns);
  }
}

// perf_event_open(2) "MMAP layout": time = time_zero + quot * time_mult + ((rem * time_mult) >> time_shift),
// quot = cyc >> time_shift, rem = cyc & ((1 << time_shift) - 1). The kernel's formula, written as it is,
// against KernelConversion; and the way back to the tick, for a TSC of 2095.984 MHz (this VM's kernel's).
TEST(ClockTest, KernelConversionIsTheKernelsFormulaAndInvertsToTheTick) {
  tracefile::KernelConversion k;
  k.shift = 31;
  k.mult = 1024570630;  // 2^31 x 10^9 / 2095.984 MHz, rounded down
  k.zero = ~std::uint64_t{0} - 123456789;  // the kernel's offset is often "negative"
  for (std::uint64_t cyc : {std::uint64_t{0}, std::uint64_t{1} << 20, std::uint64_t{123456789012345},
                            std::uint64_t{7} << 50}) {
    const std::uint64_t quot = cyc >> k.shift, rem = cyc & ((std::uint64_t{1} << k.shift) - 1);
    const std::uint64_t kernel = k.zero + quot * k.mult + ((rem * k.mult) >> k.shift);
    EXPECT_EQ(k.to_ns(cyc), kernel) << cyc;
    const std::uint64_t back = k.to_ticks(kernel);
    EXPECT_EQ(k.to_ns(back), kernel);    // a tick of that nanosecond,
    EXPECT_GT(k.to_ns(back + 1), kernel);  // its last one (a tick is under half a nanosecond)
    EXPECT_GE(back, cyc);
    EXPECT_LT(back - cyc, 3u);
  }
  EXPECT_NEAR(k.hz(), 2095.984e6, 1.0);
}

}  // namespace
}  // namespace kron
