// kron export of one large recording to every format (make bench; docs/performance.md "kron export"):
// the real `kron record --wait` records build/bench/kron_probe_flood (THREADS x SAMPLES kron::trace
// calls, at least 10 M samples), then the real `kron export` writes it as each format in turn, and
// `cat FILE > /dev/null` reads it in the same run as the floor. For each: wall and CPU seconds (best of 3
// by wall for cat, perfetto, ctf and otf2; one run of the slow text formats), samples/s, output bytes a
// sample, and the export's peak memory (max RSS) on this recording and on one a tenth its size (memory
// that does not grow with the trace is the same on both). Goal (docs/performance.md): Perfetto at least
// 20 M samples/s and at most 12 bytes a sample. Writes BUILD/bench-export.json. Environment:
// KRON_BENCH_EXPORT_SAMPLES (a thread, default 5 M, 2 threads), KRON_BENCH_EXPORT_DIR (where the files
// go, default BUILD).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {
std::uint64_t env_u64(const char* name, std::uint64_t dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : dflt;
}

struct Time {
  double wall = 0, cpu = 0;  // seconds; cpu: the child's user + system
  long max_rss_kb = 0;       // the child's peak resident memory (wait4)
};
// Runs a shell command line as `sh -c "exec CMD"`, so that the child wait4 reports on is the command
// itself (its CPU time and peak memory); exits the bench when it fails.
Time timed_once(const std::string& cmd) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  struct rusage ru {};
  if (pid < 0 || ::wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "failed (%d): %s\n", status, cmd.c_str());
    std::exit(1);
  }
  Time t;
  t.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.cpu = double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  t.max_rss_kb = ru.ru_maxrss;
  return t;
}
// Best of `runs` by wall time (this machine is shared: the best run is the one least disturbed).
Time timed(const std::string& cmd, int runs = 3) {
  Time best{1e30, 0, 0};
  for (int i = 0; i < runs; ++i) {
    const Time t = timed_once(cmd);
    if (t.wall < best.wall) best = t;
  }
  return best;
}

std::uint64_t tree_bytes(const fs::path& p) {
  if (!fs::is_directory(p)) return fs::file_size(p);
  std::uint64_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(p))
    if (e.is_regular_file()) n += e.file_size();
  return n;
}

double loadavg() {
  double l = -1;
  std::ifstream("/proc/loadavg") >> l;
  return l;
}
}  // namespace

int main() {
  const fs::path build = fs::canonical("/proc/self/exe").parent_path().parent_path();  // BUILD/bench/x
  const std::string kron = (build / "kron").string(), flood = (build / "bench" / "kron_probe_flood").string();
  const char* dir_env = std::getenv("KRON_BENCH_EXPORT_DIR");
  const fs::path dir = dir_env && *dir_env ? fs::path(dir_env) : build;
  const std::uint64_t per_thread = env_u64("KRON_BENCH_EXPORT_SAMPLES", 5'000'000), threads = 2;
  const std::uint64_t samples = per_thread * threads;
  const std::string tag = std::to_string(::getpid());
  const fs::path trace = dir / ("bench-export-" + tag + ".trace");
  const double load0 = loadavg();
  std::printf("== kron export: kron_probe_flood %llu x %llu samples recorded by kron record --wait\n",
              static_cast<unsigned long long>(threads), static_cast<unsigned long long>(per_thread));
  auto record = [&](const fs::path& file, std::uint64_t per) {
    timed_once("'" + kron + "' record -q --wait -o '" + file.string() + "' -- '" + flood + "' " +
               std::to_string(threads) + " " + std::to_string(per) + " >/dev/null");
  };
  record(trace, per_thread);
  // A tenth of it, exported too, for the memory each format needs: the same peak at a tenth of the samples
  // is memory that does not grow with the trace.
  const fs::path small = dir / ("bench-export-" + tag + "-small.trace");
  record(small, std::max<std::uint64_t>(per_thread / 10, 1));
  nlohmann::json j;
  std::printf("%-15s %9s %9s %14s %14s %14s %12s %10s %10s\n", "format", "wall s", "cpu s", "samples/s", "per cpu s",
              "bytes", "bytes/sample", "max RSS", "(1/10)");
  auto row = [&](const std::string& name, Time t, std::uint64_t bytes, long small_rss_kb) {
    const double rate = double(samples) / t.wall, cpu_rate = double(samples) / t.cpu,
                 bps = double(bytes) / double(samples);
    std::printf("%-15s %9.2f %9.2f %14.0f %14.0f %14llu %12.2f %7ld MB %7ld MB\n", name.c_str(), t.wall, t.cpu, rate,
                cpu_rate, static_cast<unsigned long long>(bytes), bps, t.max_rss_kb / 1024, small_rss_kb / 1024);
    j["export"][name] = {{"wall_s", t.wall},         {"cpu_s", t.cpu},    {"samples_per_s", rate},
                         {"samples_per_cpu_s", cpu_rate}, {"bytes", bytes}, {"bytes_per_sample", bps},
                         {"max_rss_kb", t.max_rss_kb}, {"max_rss_kb_tenth", small_rss_kb}};
  };
  row("cat (input)", timed("cat '" + trace.string() + "' >/dev/null"), fs::file_size(trace),
      timed_once("cat '" + small.string() + "' >/dev/null").max_rss_kb);
  // perfetto is the default (compressed packets, ERRATUM E168); perfetto-plain its --compress 0.
  const std::vector<std::string> formats = {"perfetto", "perfetto-plain", "ctf", "chrome-json", "csv"};
  // OTF2 where this kron was built with it (KRON_WITH_OTF2; make bench's tree is not).
  std::vector<std::string> all = formats;
  if (std::system(("'" + kron + "' export --format otf2 -o '" + (dir / ("bench-export-" + tag + ".probe")).string() +
                   "' /nonexistent.trace 2>&1 | grep -q 'not built into'").c_str()) != 0)
    all.insert(all.begin() + 2, "otf2");
  else
    std::printf("%-15s (not built into this kron: KRON_WITH_OTF2=OFF)\n", "otf2");
  fs::remove_all(dir / ("bench-export-" + tag + ".probe"));
  for (const std::string& f : all) {
    const fs::path out = dir / ("bench-export-" + tag + "." + f);
    const std::string args = f == "perfetto-plain" ? "--format perfetto --compress 0" : "--format " + f;
    auto cmd = [&](const fs::path& in) {
      fs::remove_all(out);
      return "'" + kron + "' export " + args + " -o '" + out.string() + "' '" + in.string() + "' >/dev/null";
    };
    const long small_rss = timed_once(cmd(small)).max_rss_kb;
    const int runs = f.starts_with("perfetto") || f == "ctf" || f == "otf2" ? 3 : 1;
    Time t{1e30, 0, 0};
    for (int i = 0; i < runs; ++i) {  // best of `runs` by wall (timed(), with the output removed each time)
      const Time r = timed_once(cmd(trace));
      if (r.wall < t.wall) t = r;
    }
    row(f, t, tree_bytes(out), small_rss);
    fs::remove_all(out);
  }
  fs::remove(trace);
  fs::remove(small);
  j["export"]["samples"] = samples;
  j["export"]["loadavg_before"] = load0;
  j["export"]["loadavg_after"] = loadavg();
  std::printf("load average %.2f before, %.2f after (this machine's other work shares its cores)\n", load0, loadavg());
  std::ofstream(build / "bench-export.json") << j.dump(1) << "\n";
  return 0;
}
