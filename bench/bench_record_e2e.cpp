// The live recorder end to end: the real `kron record` running the real
// instrumented program build/bench/kron_probe_flood (record_e2e/probe_flood.cpp: THREADS threads calling
// kron::trace flat out, after committing the board's pages), the trace file written as users write it.
// For each thread count, in the same run:
//   - wait mode on the default board (16 MiB, 16 lanes): the program's probing time and the samples/s
//     reaching the trace file (samples over the wall time of `kron record`, start to exit);
//   - the floor: the same program on a board large enough that it never waits (`--buffer` of every
//     sample, one lane a thread); its probing time;
//   - slowdown = probing time in wait mode / probing time on the floor (goal <= 1.5 for one thread on the
//     2-core machine);
//   - scaling = end-to-end samples/s of N threads / of one thread, by the wall clock (not CPU time);
//   - drain CPU: kron record's own CPU time (user + system) per sample in wait mode, which a loaded
//     machine does not inflate as it does wall times; (user) its user part (the rest is the kernel's: the
//     trace file's page cache, page faults, sleeps);
//   - the same wait-mode run with the trace file on tmpfs (/dev/shm): samples/s and drain CPU a sample;
//   - the write floor: the CPU time of writing the same number of bytes from memory into a new file in
//     the same directory (and on /dev/shm) in 256 KiB writes, no kron: what any drain into that file pays;
//   - for reference, the probing time on the default board in circular mode (never waits either; its
//     rings stay in the cache, where a floor board streams every record to memory);
//   - `kron record --compress` (zstd level 1 chunks, trace format 1.2), 1 and 2 threads, compressed on the
//     drain's thread (--compress-threads 0) and on the default workers: samples/s into the file, kron record's
//     CPU a sample (its workers' included) and the file's bytes a sample, beside the uncompressed run's. The flood's
//     records are synthetic (a counter for data, one thread id, steady timestamps) and compress better than real ones,
//     so bytes a sample are also measured on a recording of examples/sample1 (kron_sample1).
// Each figure is the best of KRON_BENCH_E2E_RUNS runs (3; 0 runs only the in-process merge benchmark). Writes
// BUILD/bench-record-e2e.json.
//
//   build/bench/kron_bench_record_e2e      (KRON_BENCH_E2E_SAMPLES: samples a thread, 10000000;
//                                           KRON_BENCH_E2E_DIR: where the trace goes, BUILD by default;
//                                           KRON_BENCH_E2E_KRON: the kron binary, BUILD/kron by default)
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kron/core/codec.hpp"
#include "kron/format/trace_file.hpp"
#include "recorder/recorder.hpp"

namespace fs = std::filesystem;

namespace {

struct Run {
  double probe_s = 0;       // the program's own time from the common start to the last thread's end
  double wall_s = 0;        // kron record, start to exit (program, drain, the file finished)
  double drain_cpu_s = 0;   // kron record's own CPU time (user + system): its children's less the program's
  double drain_user_s = 0;  // of which user time (the rest: the kernel's, mostly the file's page cache)
  std::uint64_t recorded = 0;
  std::uint64_t file_bytes = 0;  // the trace file's size
};

std::uint64_t env_u64(const char* name, std::uint64_t dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : dflt;
}

double cpu_seconds(const struct rusage& ru) {
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}
double user_seconds(const struct rusage& ru) { return double(ru.ru_utime.tv_sec) + double(ru.ru_utime.tv_usec) * 1e-6; }

// The kernel's own cost of the bytes a recording writes: `bytes` written from memory into a new file at
// `path` in pieces of 256 KiB (as the drain writes a busy lane), then closed; this process's CPU time (almost
// all system) a 32-byte sample. No kron: the floor under any drain into that file system.
double write_floor_ns_per_sample(const std::string& path, std::uint64_t bytes) {
  fs::remove(path);
  std::vector<char> piece(256 << 10, 'k');
  struct rusage ru0 = {}, ru1 = {};
  ::getrusage(RUSAGE_SELF, &ru0);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::perror(path.c_str()), std::exit(1);
  for (std::uint64_t done = 0; done < bytes; done += piece.size())
    if (std::fwrite(piece.data(), 1, piece.size(), f) != piece.size()) std::perror(path.c_str()), std::exit(1);
  std::fclose(f);
  ::getrusage(RUSAGE_SELF, &ru1);
  fs::remove(path);
  return (cpu_seconds(ru1) - cpu_seconds(ru0)) * 1e9 / (double(bytes) / 32);
}

// One `kron record` of the flood program; exits the bench if it fails or loses a sample.
Run record_once(const std::string& kron, const std::string& flood, const std::string& trace, unsigned threads,
                std::uint64_t samples, const std::string& board_args, bool wait = true) {
  fs::remove(trace);  // (truncating last run's file would be timed as part of this one)
  const std::string cmd = "'" + kron + "' record " + (wait ? "--wait " : "") + board_args + " -o '" + trace + "' -- '" +
                          flood + "' " + std::to_string(threads) + " " + std::to_string(samples) + " 2>&1";
  struct rusage ru0 = {}, ru1 = {};
  ::getrusage(RUSAGE_CHILDREN, &ru0);
  const auto t0 = std::chrono::steady_clock::now();
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) std::perror("popen"), std::exit(1);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int status = ::pclose(p);
  Run r;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto at = out.find("seconds=");
  // kron record's summary: "kron record: N samples in S s ..." (a line about late samples may come first)
  auto rec = out.find(" samples in ");
  while (rec != std::string::npos && rec > 0 && std::isdigit(static_cast<unsigned char>(out[rec - 1]))) --rec;
  if (status != 0 || at == std::string::npos || rec == std::string::npos) {
    std::fprintf(stderr, "failed (status %d): %s\n%s", status, cmd.c_str(), out.c_str());
    std::exit(1);
  }
  ::getrusage(RUSAGE_CHILDREN, &ru1);
  r.probe_s = std::strtod(out.c_str() + at + 8, nullptr);
  const auto cpu_at = out.find("cpu="), user_at = out.find("user=");
  const double probe_cpu = cpu_at == std::string::npos ? 0 : std::strtod(out.c_str() + cpu_at + 4, nullptr);
  const double probe_user = user_at == std::string::npos ? 0 : std::strtod(out.c_str() + user_at + 5, nullptr);
  r.drain_cpu_s = cpu_seconds(ru1) - cpu_seconds(ru0) - probe_cpu;
  r.drain_user_s = user_seconds(ru1) - user_seconds(ru0) - probe_user;
  r.recorded = std::strtoull(out.c_str() + rec, nullptr, 10);
  if (wait && r.recorded != threads * samples) {  // (circular mode keeps the newest: it may overwrite)
    std::fprintf(stderr, "recorded %llu of %llu samples: %s\n%s", static_cast<unsigned long long>(r.recorded),
                 static_cast<unsigned long long>(threads * samples), cmd.c_str(), out.c_str());
    std::exit(1);
  }
  r.file_bytes = fs::file_size(trace);
  fs::remove(trace);
  return r;
}

// The trace file's bytes a sample when `kron record [extra]` records examples/sample1 (LOOPS loops,
// --wait: nothing lost): a real program's records (two threads, varied data, resource samples).
double sample1_bytes_per_sample(const std::string& kron, const std::string& sample1, const std::string& trace,
                                const std::string& extra) {
  fs::remove(trace);
  const std::string cmd =
      "'" + kron + "' record --wait " + extra + " -o '" + trace + "' -- '" + sample1 + "' 200000 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) std::perror("popen"), std::exit(1);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const auto rec = out.find("kron record: ");
  if (::pclose(p) != 0 || rec == std::string::npos) {
    std::fprintf(stderr, "failed: %s\n%s", cmd.c_str(), out.c_str());
    std::exit(1);
  }
  const double samples = std::strtod(out.c_str() + rec + 13, nullptr);
  const double bytes = double(fs::file_size(trace));
  fs::remove(trace);
  return bytes / samples;
}

Run best_of(int n, const std::function<Run()>& f) {
  Run best{1e30, 1e30, 1e30, 1e30, 0, 0};
  for (int i = 0; i < n; ++i) {
    const Run r = f();
    best.probe_s = std::min(best.probe_s, r.probe_s);
    best.wall_s = std::min(best.wall_s, r.wall_s);
    best.drain_cpu_s = std::min(best.drain_cpu_s, r.drain_cpu_s);
    best.drain_user_s = std::min(best.drain_user_s, r.drain_user_s);
    best.recorded = r.recorded;
    best.file_bytes = r.file_bytes;
  }
  return best;
}

// The merge alone (recorder::LaneMerge), in memory: `lanes` lanes whose timestamps interleave record by
// record (the worst case: every piece one record), 64 Ki records a lane a pass, a quarter held each pass.
void BM_LaneMerge(benchmark::State& state) {
  const auto lanes = static_cast<std::uint32_t>(state.range(0));
  constexpr std::uint64_t kPerLane = 1 << 16;
  std::vector<std::vector<std::uint8_t>> bufs(lanes, std::vector<std::uint8_t>(kPerLane * 32));
  std::uint64_t sink = 0, ts = 0;
  kron::recorder::LaneMerge m([&](std::span<const std::uint8_t> r, std::uint64_t) { sink += r.size(); });
  for (auto _ : state) {
    state.PauseTiming();  // making the records is not the merge's work
    for (std::uint32_t l = 0; l < lanes; ++l) {
      for (std::uint64_t i = 0; i < kPerLane; ++i) {
        kron::Sample smp;
        smp.timestamp = ts + i * lanes + l;
        std::uint8_t rec[kron::codec::kMaxRecordBytes];
        kron::codec::encode(smp, rec);
        std::memcpy(bufs[l].data() + i * 32, rec, 32);
      }
    }
    state.ResumeTiming();
    for (std::uint32_t l = 0; l < lanes; ++l) m.add(l, bufs[l], kPerLane);
    ts += kPerLane * lanes;
    m.merge(ts - kPerLane * lanes / 4);
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kPerLane * lanes));
}
BENCHMARK(BM_LaneMerge)->Arg(1)->Arg(2)->Arg(16)->Unit(benchmark::kMillisecond);

double loadavg() {
  double l = -1;
  std::ifstream("/proc/loadavg") >> l;
  return l;
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path build = fs::canonical("/proc/self/exe").parent_path().parent_path();  // BUILD/bench/x
  const char* kron_env = std::getenv("KRON_BENCH_E2E_KRON");  // another kron to compare (before/after)
  const std::string kron = kron_env && *kron_env ? kron_env : (build / "kron").string(),
                    flood = (build / "bench" / "kron_probe_flood").string();
  const char* dir_env = std::getenv("KRON_BENCH_E2E_DIR");
  const fs::path dir = dir_env && *dir_env ? fs::path(dir_env) : build;
  const std::string trace = (dir / ("bench-record-e2e-" + std::to_string(::getpid()) + ".trace")).string();
  const std::uint64_t samples = env_u64("KRON_BENCH_E2E_SAMPLES", 10'000'000);
  const int runs = static_cast<int>(env_u64("KRON_BENCH_E2E_RUNS", 3));
  const double load0 = loadavg();

  nlohmann::json j;
  std::map<unsigned, double> rate;
  std::printf("== kron record --wait end to end: kron_probe_flood, %llu samples a thread, trace in %s\n",
              static_cast<unsigned long long>(samples), dir.c_str());
  // The same recording into a file on tmpfs (no disk and no ext4 under the page cache), when /dev/shm is one.
  const bool tmpfs = fs::is_directory("/dev/shm") && dir != fs::path("/dev/shm");
  const std::string shm_trace = "/dev/shm/bench-record-e2e-" + std::to_string(::getpid()) + ".trace";
  std::printf("%7s %11s %12s %15s %9s %14s %8s %15s %9s %14s %13s\n", "threads", "probe ns", "floor ns", "circular ns",
              "slowdown", "to file /s", "scaling", "drain cpu ns", "(user)", "to tmpfs /s", "tmpfs cpu ns");
  std::vector<std::string> compress_lines;
  auto fmt_line = [](unsigned t, const char* workers, double rate_z, double rate_raw, double bps_z, double bps_raw,
                     double cpu_ns) {
    char b[200];
    std::snprintf(b, sizeof b, "%7u %8s %14.0f %14.0f %11.2f %11.2f %15.2f", t, workers, rate_z, rate_raw, bps_z,
                  bps_raw, cpu_ns);
    return std::string(b);
  };
  for (const unsigned t : {1u, 2u, 4u}) {
    if (runs == 0) break;  // KRON_BENCH_E2E_RUNS=0: only the in-process benchmark
    const Run wait = best_of(runs, [&] { return record_once(kron, flood, trace, t, samples, ""); });
    // The floor: every sample fits (a lane's ring is a power of two of 32-byte slots, one lane a thread;
    // the first trace() of a thread, which claims its lane, is one more sample).
    const std::uint64_t ring = std::bit_ceil(samples * 32 + (1 << 20));
    const std::string floor_args = "--lanes " + std::to_string(t) + " --buffer " + std::to_string(t * ring + (4 << 20));
    const Run floor = best_of(runs, [&] { return record_once(kron, flood, trace, t, samples, floor_args); });
    // A second reference: the default board in circular mode never waits either, and its rings stay in the
    // cache as in wait mode (a floor board streams every record to DRAM).
    const Run circ =
        best_of(runs, [&] { return record_once(kron, flood, trace, t, samples, "--mode circular", false); });
    const double total = double(t) * double(samples);
    rate[t] = total / wait.wall_s;
    const double ns = 1e9 / double(samples);
    const double slowdown = wait.probe_s / floor.probe_s, scaling = rate[t] / rate[1];
    const double drain_ns = wait.drain_cpu_s * 1e9 / total, user_ns = wait.drain_user_s * 1e9 / total;
    Run shm;
    if (tmpfs) shm = best_of(runs, [&] { return record_once(kron, flood, shm_trace, t, samples, ""); });
    std::printf("%7u %11.2f %12.2f %15.2f %9.2f %14.0f %8.2f %15.2f %9.2f %14.0f %13.2f\n", t, wait.probe_s * ns,
                floor.probe_s * ns, circ.probe_s * ns, slowdown, rate[t], scaling, drain_ns, user_ns,
                tmpfs ? total / shm.wall_s : 0.0, tmpfs ? shm.drain_cpu_s * 1e9 / total : 0.0);
    const std::string k = "e2e_" + std::to_string(t) + "t_";
    j[k + "samples_per_s"] = rate[t];
    j[k + "probe_ns"] = wait.probe_s * ns;
    j[k + "floor_probe_ns"] = floor.probe_s * ns;
    j[k + "circular_probe_ns"] = circ.probe_s * ns;
    j[k + "slowdown"] = slowdown;
    j[k + "drain_cpu_ns_per_sample"] = drain_ns;
    j[k + "drain_user_ns_per_sample"] = user_ns;
    if (tmpfs) {
      j[k + "tmpfs_samples_per_s"] = total / shm.wall_s;
      j[k + "tmpfs_drain_cpu_ns_per_sample"] = shm.drain_cpu_s * 1e9 / total;
    }
    if (t > 1) j[k + "scaling"] = scaling;
    j[k + "bytes_per_sample"] = double(wait.file_bytes) / total;
    if (t <= 2) {  // --compress: the same wait-mode run, zstd level 1, on the drain's thread and on workers
      for (const bool drain_thread : {true, false}) {
        const Run z = best_of(runs, [&] {
          return record_once(kron, flood, trace, t, samples,
                             drain_thread ? "--compress --compress-threads 0" : "--compress");
        });
        const std::string kz =
            std::string(drain_thread ? "e2e_compress_drain_" : "e2e_compress_") + std::to_string(t) + "t_";
        j[kz + "samples_per_s"] = total / z.wall_s;
        j[kz + "bytes_per_sample"] = double(z.file_bytes) / total;
        j[kz + "cpu_ns_per_sample"] = z.drain_cpu_s * 1e9 / total;
        compress_lines.push_back(fmt_line(t, drain_thread ? "0" : "default", total / z.wall_s, rate[t],
                                          double(z.file_bytes) / total, double(wait.file_bytes) / total,
                                          z.drain_cpu_s * 1e9 / total));
      }
    }
  }
  if (runs > 0) {
    // The floor under the drain's CPU: the kernel's cost of writing the same bytes, no kron involved.
    const double floor_file = write_floor_ns_per_sample(trace, samples * 32);
    const double floor_shm = tmpfs ? write_floor_ns_per_sample(shm_trace, samples * 32) : 0.0;
    std::printf(
        "write floor (%llu samples' bytes in 256 KiB writes, no kron): %.2f ns a sample into %s, %.2f into "
        "/dev/shm\n",
        static_cast<unsigned long long>(samples), floor_file, dir.c_str(), floor_shm);
    j["e2e_write_floor_ns_per_sample"] = floor_file;
    if (tmpfs) j["e2e_tmpfs_write_floor_ns_per_sample"] = floor_shm;
    std::printf(
        "== kron record --wait --compress (zstd 1) against the same without; --compress-threads 0 (the "
        "drain compresses) and the default (%u workers); cpu: kron record's, workers included\n"
        "%7s %8s %14s %14s %11s %11s %15s\n",
        kron::tracefile::default_compress_threads(), "threads", "workers", "to file /s", "(raw /s)", "bytes/smp",
        "(raw)", "kron cpu ns");
    for (const auto& l : compress_lines) std::printf("%s\n", l.c_str());
    const std::string sample1 = (build / "examples" / "kron_sample1").string();
    const double raw1 = sample1_bytes_per_sample(kron, sample1, trace, "");
    const double z1 = sample1_bytes_per_sample(kron, sample1, trace, "--compress");
    std::printf("examples/sample1 (200000 loops): %.2f bytes a sample in the file, %.2f with --compress (%.2fx)\n",
                raw1, z1, raw1 / z1);
    j["e2e_sample1_bytes_per_sample"] = raw1;
    j["e2e_compress_sample1_bytes_per_sample"] = z1;
  }
  j["e2e_samples_per_thread"] = samples;
  j["e2e_trace_dir"] = dir.string();
  j["e2e_loadavg"] = {load0, loadavg()};
  const fs::path out = build / "bench-record-e2e.json";
  std::ofstream(out) << j.dump(1) << "\n";
  std::printf("load average %.2f before, %.2f after; wrote %s\n", load0, loadavg(), out.c_str());
  // In process: the merge alone (BM_LaneMerge), for the JSON scripts/bench.sh merges.
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
