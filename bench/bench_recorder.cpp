// bench_recorder (make bench): the live recorder's costs measured side by side in one run, against a
// floor and a peer:
//   floor_ns        rdtsc + a 24-byte store into the thread's own buffer (what any software probe must do)
//   trace_ns        kron::trace() enabled, recording into its lane
//   fresh_trace_ns  the same, the first batch of probes on a board created just before (in a child process
//                   attached to it): what page faults on first touch would cost
//   fresh_p50_ns, fresh_p99_ns, fresh_p999_ns, fresh_max_ns, and warm_*: one probe's latency, timed alone
//                   (lfence; rdtsc around each of 100,000 single probes, less the timer's own median cost),
//                   on a freshly created board (first probes of its lanes) and on a warm one
//   filtered_ns     kron::trace() of a group the Filter Register leaves out
//   named_event_ns  KRON_EVENT("name", value): a named probe (its site registered before the clock starts)
//   named_scope_ns  KRON_SCOPE_V("name", value), per record (a scope writes two: begin and end)
//   resource_ns     kron::resource() with a clock and a software counter (no perf syscall)
//   threads2_scaling two threads tracing at once / one thread alone (samples per second)
//   drain_mb_s      BoardReader drain + trace file writer (kron record's loop), MB/s and samples/s
//   lttng_ns        LTTng-UST tracepoint with one integer, a real session recording in a userspace channel
//   record_latency_ns  kron::record_latency(h, v) of a value at hand (goal <= 3 ns on top of the
//                   timestamp reads), values cycling through 4096 log-normal ones; latency_timer_ns the
//                   same with its two timestamp reads (kron::latency_timer); vcount_ns kron::vcount
//   c_record_latency_ns, c_latency_timer_ns, c_vcount_ns, c_trace_ns, c_phase_ns, phase_ns: the same batches
//                   through mk.h's C probes (recorder/c_probes.c), beside the C++ ones
//   hdr_record_value_ns  the same values through HdrHistogram's record path rewritten for this bench
//                   (Debian ships no C++ HdrHistogram; hdr_histogram.c's hdr_record_values, out of line);
//                   loglinear_ns its index arithmetic and count alone, inlined (the cheapest log-linear
//                   record); map_ns a std::map<value, count>
// Each figure is the median of several batches; lanes are drained between batches (untimed). Prints a
// table and writes BUILD/bench-recorder.json (BUILD = the directory above this program).
#include <benchmark/benchmark.h>
#include <fmt/core.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "kron/board_ops.hpp"
#include "kron/kron.hpp"
#include "recorder/recorder.hpp"
#include "recorder/c_probes.h"

#ifdef KRON_HAVE_LTTNG
#include "recorder/lttng_tp.h"
#endif

namespace {

constexpr std::uint64_t kBatch = 200000;
constexpr int kReps = 9;

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ns per operation: median over kReps batches of `n` operations; `between` runs untimed before each.
// Time is this thread's CPU time (CLOCK_THREAD_CPUTIME_ID): the machine is shared, and time the thread
// spent preempted is not the probe's cost.
std::uint64_t cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}
double measure(std::uint64_t n, const std::function<void()>& batch, const std::function<void()>& between) {
  std::vector<double> v;
  for (int r = 0; r < kReps; ++r) {
    between();
    const std::uint64_t t0 = cpu_ns();
    batch();
    v.push_back(double(cpu_ns() - t0) / double(n));
  }
  return median(v);
}

// The floor: what any probe must do (timestamp + a 24-byte store into the thread's own buffer).
struct FloorSlot {
  std::uint64_t ts, id, data;
};
thread_local std::vector<FloorSlot> t_floor;
__attribute__((noinline)) void floor_batch(std::uint64_t n) {
  if (t_floor.size() < (1u << 19)) t_floor.resize(1u << 19);
  FloorSlot* b = t_floor.data();
  const std::uint64_t id = 0x1234;
  for (std::uint64_t i = 0; i < n; ++i) {
    b[i & ((1u << 19) - 1)] = FloorSlot{__rdtsc(), id, i};
    benchmark::ClobberMemory();
  }
}
__attribute__((noinline)) void trace_batch(std::uint64_t n, unsigned group) {
  for (std::uint64_t i = 0; i < n; ++i) kron::trace(group, i);
}
// Named probes: the site's id is one load beside trace()'s work (its registration, once, is the slow path).
__attribute__((noinline)) void named_event_batch(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) KRON_EVENT("bench event", i);
}
__attribute__((noinline)) void named_scope_batch(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    KRON_SCOPE_V("bench scope", i);
    benchmark::ClobberMemory();
  }
}
// Histograms. Values at hand (no timestamp read inside), the same for every histogram measured.
std::vector<std::uint64_t> make_values() {
  std::vector<std::uint64_t> v(4096);
  std::uint64_t x = 88172645463325252ull;
  for (auto& e : v) {  // log-normal-ish: 2^(8..20) ticks with a mantissa
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    e = (x & 0xfff) << (8 + (x >> 20) % 12) >> 12 | 1;
  }
  return v;
}
const std::vector<std::uint64_t> g_values = make_values();
kron::histogram g_hist("bench histogram");
__attribute__((noinline)) void hist_batch(std::uint64_t n) {
  const std::uint64_t* v = g_values.data();
  for (std::uint64_t i = 0; i < n; ++i) kron::record_latency(g_hist, v[i & 4095]);
}
__attribute__((noinline)) void timer_batch(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    kron::latency_timer t(g_hist);
    benchmark::ClobberMemory();
  }
}
__attribute__((noinline)) void phase_batch(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    kron::phase(static_cast<std::uint16_t>(i & 1));
    benchmark::ClobberMemory();
  }
}
__attribute__((noinline)) void vcount_batch(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) kron::vcount(static_cast<unsigned>(i & 8191), 1);
}
// The log-linear baselines (Debian ships no C++ HdrHistogram), 3 significant digits over 1 to 2^40: 2048
// sub-buckets, 31 buckets of 1024 (half of each is the one below), counts array, total count, min, max.
//  - LogLinear::record: the arithmetic of HdrHistogram's counts_index_for, inlined, nothing else (the
//    cheapest a log-linear record can be);
//  - hdr_record_value: HdrHistogram's own record path as hdr_histogram.c writes it (hdr_record_values: a
//    negative value refused, counts_index_for, the index checked against counts_len, normalize_index for
//    a shifted histogram, the count, total_count, update_min_max), out of line as the library's function is.
struct LogLinear {
  static constexpr int kSubBits = 11;  // sub_bucket_count 2048
  static constexpr int kUnitMagnitude = 0;
  std::vector<std::uint64_t> counts = std::vector<std::uint64_t>(32 * 1024, 0);
  std::int64_t counts_len = 32 * 1024, normalizing_index_offset = 0;
  std::uint64_t total = 0, min = ~std::uint64_t{0}, max = 0;
  static std::size_t index_of(std::uint64_t v) {
    const int pow2ceiling = 64 - __builtin_clzll(v | ((1ull << kSubBits) - 1));
    const int bucket = pow2ceiling - kUnitMagnitude - kSubBits;
    const int sub = static_cast<int>(v >> (bucket + kUnitMagnitude));
    return (static_cast<std::size_t>(bucket + 1) << (kSubBits - 1)) + static_cast<std::size_t>(sub - (1 << (kSubBits - 1)));
  }
  void record(std::uint64_t v) {
    ++counts[index_of(v)];
    ++total;
    if (v < min) min = v;
    if (v > max) max = v;
  }
};
__attribute__((noinline)) bool hdr_record_value(LogLinear* h, std::int64_t value) {
  if (value < 0) return false;
  const auto index = static_cast<std::int64_t>(LogLinear::index_of(static_cast<std::uint64_t>(value)));
  if (index < 0 || h->counts_len <= index) return false;
  std::int64_t normalised = index;
  if (h->normalizing_index_offset != 0) {  // normalize_index()
    normalised = index - h->normalizing_index_offset;
    if (normalised < 0) normalised += h->counts_len;
    else if (normalised >= h->counts_len) normalised -= h->counts_len;
  }
  h->counts[static_cast<std::size_t>(normalised)] += 1;
  h->total += 1;
  const auto v = static_cast<std::uint64_t>(value);  // update_min_max()
  if (v < h->min && value != 0) h->min = v;
  if (v > h->max) h->max = v;
  return true;
}
LogLinear g_loglinear, g_hdr;
std::map<std::uint64_t, std::uint64_t> g_map;
__attribute__((noinline)) void loglinear_batch(std::uint64_t n) {
  const std::uint64_t* v = g_values.data();
  for (std::uint64_t i = 0; i < n; ++i) g_loglinear.record(v[i & 4095]);
  benchmark::DoNotOptimize(g_loglinear.counts.data());
}
__attribute__((noinline)) void hdr_batch(std::uint64_t n) {
  const std::uint64_t* v = g_values.data();
  for (std::uint64_t i = 0; i < n; ++i) hdr_record_value(&g_hdr, static_cast<std::int64_t>(v[i & 4095]));
}
__attribute__((noinline)) void map_batch(std::uint64_t n) {
  const std::uint64_t* v = g_values.data();
  for (std::uint64_t i = 0; i < n; ++i) ++g_map[v[i & 4095]];
}

__attribute__((noinline)) void resource_batch(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) kron::resource(1, i);
}

#ifdef KRON_HAVE_LTTNG
int sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

__attribute__((noinline)) void lttng_batch(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) tracepoint(kron_bench, event, i);
}
// In the child started inside a recording session: measure and print the figure.
int lttng_child() {
  lttng_batch(20000);  // warm up (and let the session's buffers map)
  const double ns = measure(kBatch / 2, [] { lttng_batch(kBatch / 2); }, [] {});
  std::printf("%.3f\n", ns);
  return 0;
}
#endif

// LTTng-UST: start lttng-sessiond if needed, create a session with a userspace channel large enough to
// hold every event (so none is discarded, which would flatter LTTng), run the child, tear down.
struct LttngResult {
  double ns = -1;
  std::uint64_t trace_bytes = 0;
  std::string note;
};
LttngResult run_lttng(const char* self) {
  LttngResult r;
#ifndef KRON_HAVE_LTTNG
  (void)self;
  r.note = "not asked for: configured with KRON_WITH_LTTNG=OFF (make bench turns it on)";
  return r;
#else
  if (sh("command -v lttng") != 0) {
    r.note = "lttng-tools not installed (deps/bench-packages.txt)";
    return r;
  }
  const bool started = sh("pgrep -x lttng-sessiond") != 0;
  if (started) sh("lttng-sessiond --daemonize --no-kernel");
  const std::string session = "kronbench" + std::to_string(::getpid());
  const std::string out = "/tmp/" + session;
  if (sh("lttng create " + session + " --output=" + out) != 0 ||
      sh("lttng enable-channel -u -s " + session + " ch --subbuf-size=8M --num-subbuf=8") != 0 ||
      sh("lttng enable-event -u -s " + session + " -c ch 'kron_bench:*'") != 0 || sh("lttng start " + session) != 0) {
    r.note = "could not set up an LTTng session";
  } else {
    std::string cmd = std::string("KRON_BENCH_LTTNG_CHILD=1 ") + self;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
      char line[128] = {};
      if (std::fgets(line, sizeof line, p)) r.ns = std::atof(line);
      ::pclose(p);
    }
    FILE* p = ::popen(("lttng stop " + session + " 2>&1").c_str(), "r");
    char line[512];
    while (p && std::fgets(line, sizeof line, p))
      if (std::string(line).find("discarded") != std::string::npos) r.note += line;
    if (p) ::pclose(p);
  }
  sh("lttng destroy " + session);
  std::error_code ec;
  for (auto& e : std::filesystem::recursive_directory_iterator(out, ec))
    if (e.is_regular_file()) r.trace_bytes += e.file_size();
  std::filesystem::remove_all(out, ec);
  if (started) sh("kill $(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null) 2>/dev/null");
  return r;
#endif
}

// One probe at a time: the latency of each of `n` probes in timestamp ticks, the timer's own cost taken
// off (the median of as many empty timings). lfence keeps each rdtsc from moving across the probe.
struct Latency {
  double p50, p99, p999, max;
};
std::uint64_t timed_tsc() {
  _mm_lfence();
  const std::uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}
long minor_faults() {
  rusage r{};
  ::getrusage(RUSAGE_THREAD, &r);
  return r.ru_minflt;
}
// `faults`: minor page faults of this thread during the timed probes.
__attribute__((noinline)) Latency probe_latency(std::uint64_t n, long* faults = nullptr) {
  std::vector<std::uint64_t> d(n), empty(n);  // touched before the timing by the zero fill
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t t0 = timed_tsc();
    benchmark::ClobberMemory();
    empty[i] = timed_tsc() - t0;
  }
  std::sort(empty.begin(), empty.end());
  const std::uint64_t timer = empty[n / 2];
  const long f0 = minor_faults();
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t t0 = timed_tsc();
    kron::trace(1, i);
    const std::uint64_t t = timed_tsc() - t0;
    d[i] = t > timer ? t - timer : 0;
  }
  if (faults) *faults = minor_faults() - f0;
  std::sort(d.begin(), d.end());
  const double ns = 1e9 / double(kron::board::clock_hz());
  auto at = [&](double q) { return double(d[std::min<std::uint64_t>(n - 1, std::uint64_t(q * double(n)))]) * ns; };
  return Latency{at(0.5), at(0.99), at(0.999), double(d[n - 1]) * ns};
}
constexpr std::uint64_t kLatencyProbes = 100000;

// Runs `body` in a child process attached to a board created for it just before (`o`, name made here);
// returns what the child wrote to the pipe (doubles), empty on failure. Called before this process
// attaches to its own board (kron::attach() is once per process; the child attaches as a program would).
std::vector<double> on_fresh_board(kron::board::CreateOptions o, const std::function<std::vector<double>()>& body) {
  o.name = "bench-fresh-" + std::to_string(::getpid());
  o.replace = true;
  std::string err;
  kron::board::Mapping m = kron::board::Mapping::create(o, &err);
  if (!m) {
    fmt::print(stderr, "bench_recorder: {}\n", err);
    return {};
  }
  int fd[2];
  if (::pipe(fd) != 0) return {};
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fd[0]);
    int rc = 1;
    if (kron::attach(o.name.c_str())) {
      const std::vector<double> v = body();
      const std::size_t bytes = v.size() * sizeof(double);
      rc = ::write(fd[1], v.data(), bytes) == static_cast<long>(bytes) ? 0 : 1;
    }
    ::_exit(rc);
  }
  ::close(fd[1]);
  std::vector<double> out;
  double x;
  while (::read(fd[0], &x, sizeof x) == sizeof x) out.push_back(x);
  ::close(fd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  m = kron::board::Mapping{};
  kron::board::unlink(o.name, &err);
  return out;
}

// Google Benchmark entries (scripts/bench.sh collects them too): the filtered probe and the floor.
void BM_ProbeFiltered(benchmark::State& state) {
  for (auto _ : state) kron::trace(15, 1);
}
BENCHMARK(BM_ProbeFiltered);
void BM_Floor(benchmark::State& state) {
  for (auto _ : state) floor_batch(1);
}
BENCHMARK(BM_Floor);

}  // namespace

int main(int argc, char** argv) {
#ifdef KRON_HAVE_LTTNG
  if (std::getenv("KRON_BENCH_LTTNG_CHILD")) return lttng_child();
#endif
  namespace board = kron::board;
  const std::string name = "bench-" + std::to_string(::getpid());
  board::CreateOptions o;
  o.name = name;
  o.size = 64ull << 20;  // 4 lanes of 16 MiB: a batch never fills a lane
  o.lanes = 4;
  o.filter = 0x7fff;     // group 15 filtered out
  o.mode_reg = 0x21;     // counter 0 CLK, counter 1 Software (000 Table B5)
  o.clock_reg = 0x01;
  o.enable = 0x33;       // reset & enable both (Table B7)
  // A fresh board first, in a child (this process is not attached yet): the first batch of probes.
  const std::vector<double> fresh = on_fresh_board(o, [] {
    const long f0 = minor_faults();
    const std::uint64_t t0 = cpu_ns();
    trace_batch(kBatch, 1);
    const std::uint64_t t1 = cpu_ns();
    return std::vector<double>{double(t1 - t0) / double(kBatch), double(minor_faults() - f0)};
  });
  const double fresh_trace_ns = fresh.empty() ? -1 : fresh[0];
  // The same board size, fresh again, one probe at a time (its first 100,000 probes).
  const std::vector<double> fresh_lat = on_fresh_board(o, [] {
    long faults = 0;
    const Latency l = probe_latency(kLatencyProbes, &faults);
    return std::vector<double>{l.p50, l.p99, l.p999, l.max, double(faults)};
  });
  std::string err;
  board::Mapping m = board::Mapping::create(o, &err);
  if (!m) {
    fmt::print(stderr, "bench_recorder: {}\n", err);
    return 1;
  }
  if (!kron::attach(name.c_str())) return 1;
  auto reader = kron::recorder::BoardReader::open(name);
  auto drain = [&] { reader.drain(nullptr, nullptr); };

  floor_batch(kBatch);
  trace_batch(kBatch, 1);
  drain();
  const double floor_ns = measure(kBatch, [] { floor_batch(kBatch); }, [] {});
  const double trace_ns = measure(kBatch, [] { trace_batch(kBatch, 1); }, drain);
  const double filtered_ns = measure(kBatch, [] { trace_batch(kBatch, 15); }, [] {});
  named_event_batch(1), named_scope_batch(1);  // registers the sites: once, outside the clock
  drain();
  const double named_event_ns = measure(kBatch, [] { named_event_batch(kBatch); }, drain);
  const double named_scope_ns = measure(kBatch, [] { named_scope_batch(kBatch / 2); }, drain);
  // The floor again, after: the named figures are compared with the floor of their own minute.
  const double floor_after_ns = measure(kBatch, [] { floor_batch(kBatch); }, [] {});
  const double named_floor_ns = std::min(floor_ns, floor_after_ns);
  const double resource_ns = measure(kBatch / 8, [] { resource_batch(kBatch / 8); }, drain);
  // Histograms and virtual counters, in the same run as the floor (the cells taken before the clock).
  hist_batch(4096), timer_batch(16), vcount_batch(8192), loglinear_batch(4096), hdr_batch(4096), map_batch(4096);
  const double record_latency_ns = measure(kBatch, [] { hist_batch(kBatch); }, [] {});
  const double latency_timer_ns = measure(kBatch, [] { timer_batch(kBatch); }, [] {});
  const double vcount_ns = measure(kBatch, [] { vcount_batch(kBatch); }, [] {});
  const double loglinear_ns = measure(kBatch, [] { loglinear_batch(kBatch); }, [] {});
  const double hdr_ns = measure(kBatch, [] { hdr_batch(kBatch); }, [] {});
  const double map_ns = measure(kBatch, [] { map_batch(kBatch); }, [] {});
  // The C probes (mk.h), the same batches (their histogram's cells taken before the clock too).
  kron_bench_c_hist(g_values.data(), 4096), kron_bench_c_timer(16), kron_bench_c_vcount(8192);
  const double c_record_latency_ns = measure(kBatch, [] { kron_bench_c_hist(g_values.data(), kBatch); }, [] {});
  const double c_latency_timer_ns = measure(kBatch, [] { kron_bench_c_timer(kBatch); }, [] {});
  const double c_vcount_ns = measure(kBatch, [] { kron_bench_c_vcount(kBatch); }, [] {});
  const double phase_ns = measure(kBatch, [] { phase_batch(kBatch); }, [] {});
  const double c_phase_ns = measure(kBatch, [] { kron_bench_c_phase(kBatch); }, [] {});
  kron::phase(0);
  drain();
  const double c_trace_ns = measure(kBatch, [] { kron_bench_c_trace(kBatch); }, drain);
  const double floor_hist_ns = measure(kBatch, [] { floor_batch(kBatch); }, [] {});  // the floor of this minute
  // Warm: this process's lane has been written all over by the batches above.
  drain();
  const Latency warm = probe_latency(kLatencyProbes);

  // Two threads at once against one thread alone (threads are started before the clock). Two figures:
  // by wall time (needs two idle cores) and by each thread's CPU time (what the probe itself costs when
  // another thread probes at the same time: shared cache lines would show here).
  struct Rates {
    double wall, cpu;
  };
  // `floor`: the floor's loop instead of the probe, to tell what two threads can reach on this machine.
  auto rate = [&](unsigned threads, bool floor) {
    std::vector<double> wall, cpu;
    for (int r = 0; r < kReps; ++r) {
      drain();
      std::atomic<bool> go{false};
      std::atomic<std::uint64_t> last_end{0};
      std::vector<double> per_thread(threads);
      std::vector<std::thread> ts;
      for (unsigned t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
          if (floor)
            floor_batch(1);  // size the thread's buffer before the clock starts
          else
            kron::trace(1, 0);  // claim the lane before the clock starts
          while (!go.load(std::memory_order_acquire)) {
          }
          const std::uint64_t c0 = cpu_ns();
          if (floor)
            floor_batch(kBatch);
          else
            trace_batch(kBatch, 1);
          per_thread[t] = double(kBatch) / double(cpu_ns() - c0);
          const std::uint64_t e = now_ns();
          std::uint64_t prev = last_end.load();
          while (e > prev && !last_end.compare_exchange_weak(prev, e)) {
          }
        });
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const std::uint64_t t0 = now_ns();
      go.store(true, std::memory_order_release);
      for (auto& t : ts) t.join();
      wall.push_back(double(threads * kBatch) / double(last_end.load() - t0));
      double sum = 0;
      for (double x : per_thread) sum += x;
      cpu.push_back(sum);
      std::vector<kron::tracefile::LaneEntry> finished;
      reader.drain(nullptr, &finished);  // frees the lanes of the threads that ended
    }
    return Rates{median(wall), median(cpu)};
  };
  const Rates rate1 = rate(1, false), rate2 = rate(2, false);
  const double threads2_scaling = rate2.cpu / rate1.cpu, threads2_wall = rate2.wall / rate1.wall;
  const Rates floor1 = rate(1, true), floor2 = rate(2, true);
  const double floor_threads2_scaling = floor2.cpu / floor1.cpu;
  double load = 0;
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = 0;
    std::fclose(f);
  }

  // Drain: records waiting in two lanes (the merge path) and in one (the copy path), taken off the board
  // into a trace file; and the same into memory only (the drain's own cost, without the file system).
  const std::filesystem::path build = std::filesystem::absolute(argv[0]).parent_path().parent_path();
  auto drain_rate = [&](const std::string& file) {
    std::vector<double> mbs, mss;
    std::unique_ptr<kron::tracefile::Writer> w;
    std::unique_ptr<kron::recorder::Recorder> rec;
    if (!file.empty()) {
      w = std::make_unique<kron::tracefile::Writer>(file, reader.file_header());
      rec = std::make_unique<kron::recorder::Recorder>(reader, *w);
    }
    std::vector<std::uint8_t> sink(64 << 20, 1);  // touched once, reused: steady state, as in kron record
    for (int r = 0; r < 7; ++r) {
      std::vector<kron::tracefile::LaneEntry> finished;
      reader.drain(nullptr, &finished);
      const unsigned lanes = r % 2 ? 2 : 1;
      std::vector<std::thread> ts;
      for (unsigned t = 0; t < lanes; ++t) ts.emplace_back([] { trace_batch(2 * kBatch, 1); });
      for (auto& t : ts) t.join();
      std::uint64_t bytes = 0, records = 0;
      const std::uint64_t t0 = now_ns();
      if (!rec) {
        reader.drain(
            [&](const kron::recorder::LaneView&, std::span<const std::uint8_t> recs, std::uint64_t n) {
              std::memcpy(sink.data() + bytes, recs.data(), std::min(recs.size(), sink.size() - bytes));
              bytes += recs.size(), records += n;
            },
            nullptr);
      } else {
        const std::uint64_t b0 = rec->bytes(), n0 = rec->records();
        rec->drain_once(true);  // the writers are done: the final pass (nothing held)
        bytes = rec->bytes() - b0, records = rec->records() - n0;
      }
      const double s = double(now_ns() - t0) / 1e9;
      if (r == 0) continue;  // the first pass grows the buffers
      mbs.push_back(double(bytes) / 1e6 / s);
      mss.push_back(double(records) / 1e6 / s);
    }
    if (rec) {
      rec->finish(reader.file_header());
      std::filesystem::remove(file);
    }
    return std::pair{median(mbs), median(mss)};
  };
  const auto [drain_mb_s, drain_ms_s] = drain_rate((build / "bench-recorder-drain.trace").string());
  const auto [drain_mem_mb_s, drain_mem_ms_s] = drain_rate("");
  // The same into a file on tmpfs: the page cache without a disk behind it.
  const auto [drain_shm_mb_s, drain_shm_ms_s] = drain_rate("/dev/shm/kron-bench-drain-" + std::to_string(::getpid()) + ".trace");
  const LttngResult lt = run_lttng(argv[0]);
  const auto t = reader.totals();

  fmt::print("\nkron live recorder, {} (median of {} batches of {} probes)\n", "one run, same machine", kReps, kBatch);
  fmt::print("{:<44} {:>10}\n", "measurement", "ns/probe");
  fmt::print("{:<44} {:>10.2f}\n", "floor: rdtsc + 24-byte store, own buffer", floor_ns);
  fmt::print("{:<44} {:>10.2f}   {:.2f}x floor (goal <= 1.25)\n", "kron::trace, enabled", trace_ns, trace_ns / floor_ns);
  fmt::print("{:<44} {:>10.2f}   (first {} probes of a fresh board, {} page faults)\n", "kron::trace, fresh board",
             fresh_trace_ns, kBatch, fresh.size() == 2 ? fresh[1] : -1);
  fmt::print("{:<44} {:>10.2f}   (goal < 1)\n", "kron::trace, group filtered out", filtered_ns);
  fmt::print("{:<44} {:>10.2f}   {:.2f}x floor (goal <= 1.25)\n", "KRON_EVENT(name, value), named", named_event_ns,
             named_event_ns / named_floor_ns);
  fmt::print("{:<44} {:>10.2f}   {:.2f}x floor (goal <= 1.25)\n", "KRON_SCOPE_V(name, value), per record",
             named_scope_ns, named_scope_ns / named_floor_ns);
  fmt::print("{:<44} {:>10.2f}   (goal <= 3 ns on top of the timestamp reads)\n", "kron::record_latency(h, value at hand)",
             record_latency_ns);
  fmt::print("{:<44} {:>10.2f}   (two timestamp reads + record_latency; floor now {:.2f})\n", "kron::latency_timer",
             latency_timer_ns, floor_hist_ns);
  fmt::print("{:<44} {:>10.2f}\n", "kron::vcount(index, 1)", vcount_ns);
  fmt::print("{:<44} {:>10.2f}   {:.2f}x C++\n", "C mk_record_latency(&h, value at hand)", c_record_latency_ns,
             c_record_latency_ns / record_latency_ns);
  fmt::print("{:<44} {:>10.2f}   {:.2f}x C++\n", "C mk_now + MK_LATENCY_END", c_latency_timer_ns,
             c_latency_timer_ns / latency_timer_ns);
  fmt::print("{:<44} {:>10.2f}   {:.2f}x C++\n", "C mk_vcount(index, 1)", c_vcount_ns, c_vcount_ns / vcount_ns);
  fmt::print("{:<44} {:>10.2f}   C {:.2f}\n", "kron::phase(id) / C mk_phase(id)", phase_ns, c_phase_ns);
  fmt::print("{:<44} {:>10.2f}   {:.2f}x C++ (a call: mk_trace is out of line)\n", "C mk_trace(group, data)", c_trace_ns,
             c_trace_ns / trace_ns);
  fmt::print("{:<44} {:>10.2f}   {:.2f}x record_latency\n", "HdrHistogram's hdr_record_value (rewritten)", hdr_ns,
             hdr_ns / record_latency_ns);
  fmt::print("{:<44} {:>10.2f}   {:.2f}x record_latency\n", "log-linear index + count, inlined", loglinear_ns,
             loglinear_ns / record_latency_ns);
  fmt::print("{:<44} {:>10.2f}   {:.2f}x record_latency\n", "std::map<value, count> record", map_ns, map_ns / record_latency_ns);
  fmt::print("one probe timed alone (ns, timer cost taken off): {:>8} {:>8} {:>8} {:>8}\n", "p50", "p99", "p99.9", "max");
  if (fresh_lat.size() == 5)
    fmt::print("  fresh board, its first {} probes        {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f}  ({} page faults)\n",
               kLatencyProbes, fresh_lat[0], fresh_lat[1], fresh_lat[2], fresh_lat[3], fresh_lat[4]);
  fmt::print("  warm board                                  {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f}\n", warm.p50, warm.p99,
             warm.p999, warm.max);
  fmt::print("{:<44} {:>10.2f}\n", "kron::resource (clock + software counters)", resource_ns);
  if (lt.ns > 0)
    fmt::print("{:<44} {:>10.2f}   {:.1f}x kron::trace (goal >= 8)\n", "LTTng-UST tracepoint, one integer", lt.ns, lt.ns / trace_ns);
  else
    fmt::print("{:<44} {:>10}   {}\n", "LTTng-UST tracepoint, one integer", "n/a", lt.note);
  fmt::print("two threads: {:.1f} M/s vs one thread {:.1f} M/s (CPU time): scaling {:.2f} (goal >= 1.8)\n",
             rate2.cpu * 1e3, rate1.cpu * 1e3, threads2_scaling);
  fmt::print("the floor's loop, same measure: two threads / one thread {:.2f} (what this machine allows)\n",
             floor_threads2_scaling);
  fmt::print("two threads by wall time: scaling {:.2f} (load average {:.1f} on {} CPUs)\n", threads2_wall, load,
             std::thread::hardware_concurrency());
  fmt::print("drain to a file: {:.0f} MB/s, {:.1f} M samples/s (goal: >= 50 M samples/s)\n", drain_mb_s, drain_ms_s);
  fmt::print("drain to a tmpfs file: {:.0f} MB/s, {:.1f} M samples/s\n", drain_shm_mb_s, drain_shm_ms_s);
  fmt::print("drain to memory: {:.0f} MB/s, {:.1f} M samples/s (the drain without the file system)\n", drain_mem_mb_s,
             drain_mem_ms_s);
  if (!lt.note.empty()) fmt::print("lttng: {}\n", lt.note);
#ifdef KRON_HAVE_LTTNG
  // Built to compare against LTTng: a missing figure is a failure, never a null in bench.json.
  const bool lttng_failed = !(lt.ns > 0);
  if (lttng_failed) fmt::print(stderr, "bench_recorder: the LTTng-UST peer could not be measured: {}\n", lt.note);
#else
  const bool lttng_failed = false;
#endif
  fmt::print("accounting over the run: passed {} = recorded {} + overruns {} + overwritten {}: {}\n", t.passed, t.recorded,
             t.overruns, t.overwritten, t.exact() ? "exact" : "NOT EXACT");

  nlohmann::json j;
  j["floor_ns"] = floor_ns;
  j["trace_ns"] = trace_ns;
  if (fresh.size() == 2) j["fresh_trace_ns"] = fresh_trace_ns, j["fresh_trace_page_faults"] = fresh[1];
  if (fresh_lat.size() == 5) {
    j["fresh_page_faults"] = fresh_lat[4];
    j["fresh_p50_ns"] = fresh_lat[0];
    j["fresh_p99_ns"] = fresh_lat[1];
    j["fresh_p999_ns"] = fresh_lat[2];
    j["fresh_max_ns"] = fresh_lat[3];
  }
  j["warm_p50_ns"] = warm.p50;
  j["warm_p99_ns"] = warm.p99;
  j["warm_p999_ns"] = warm.p999;
  j["warm_max_ns"] = warm.max;
  j["filtered_ns"] = filtered_ns;
  j["resource_ns"] = resource_ns;
  j["record_latency_ns"] = record_latency_ns;
  j["latency_timer_ns"] = latency_timer_ns;
  j["vcount_ns"] = vcount_ns;
  j["c_record_latency_ns"] = c_record_latency_ns;
  j["c_latency_timer_ns"] = c_latency_timer_ns;
  j["c_vcount_ns"] = c_vcount_ns;
  j["phase_ns"] = phase_ns;
  j["c_phase_ns"] = c_phase_ns;
  j["c_trace_ns"] = c_trace_ns;
  j["loglinear_ns"] = loglinear_ns;
  j["hdr_record_value_ns"] = hdr_ns;
  j["map_ns"] = map_ns;
  j["floor_hist_ns"] = floor_hist_ns;
  if (lt.ns > 0) {  // no figure, no key: a tree built without the peer does not pretend to have measured it
    j["lttng_ns"] = lt.ns;
    j["lttng_trace_bytes"] = lt.trace_bytes;
    j["lttng_over_trace"] = lt.ns / trace_ns;
  }
  j["threads2_scaling"] = threads2_scaling;
  j["floor_threads2_scaling"] = floor_threads2_scaling;
  j["drain_mb_s"] = drain_mb_s;
  j["drain_msamples_s"] = drain_ms_s;
  j["drain_mem_mb_s"] = drain_mem_mb_s;
  j["drain_tmpfs_mb_s"] = drain_shm_mb_s;
  j["drain_tmpfs_msamples_s"] = drain_shm_ms_s;
  j["drain_mem_msamples_s"] = drain_mem_ms_s;
  j["threads2_wall_scaling"] = threads2_wall;
  j["load_average"] = load;
  j["trace_over_floor"] = trace_ns / floor_ns;
  j["named_event_ns"] = named_event_ns;
  j["named_scope_ns"] = named_scope_ns;
  j["named_floor_ns"] = named_floor_ns;
  j["named_event_over_floor"] = named_event_ns / named_floor_ns;
  j["named_scope_over_floor"] = named_scope_ns / named_floor_ns;
  std::ofstream(build / "bench-recorder.json") << j.dump(1) << "\n";
  fmt::print("wrote {}\n", (build / "bench-recorder.json").string());

  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  m = board::Mapping{};
  board::unlink(name, &err);
  return lttng_failed ? 1 : 0;
}
