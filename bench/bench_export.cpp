// kron export of one large recording to every format (make bench; docs/performance.md "kron export"):
// the real `kron record --wait` records build/bench/kron_probe_flood (THREADS x SAMPLES kron::trace
// calls, at least 10 M samples), then the real `kron export` writes it as each format in turn, and
// `cat FILE > /dev/null` reads it in the same run as the floor. For each: wall seconds, samples/s and
// output bytes per sample. Goal (docs/performance.md): Perfetto at least 20 M samples/s and at most
// 12 bytes a sample. Writes BUILD/bench-export.json. Environment: KRON_BENCH_EXPORT_SAMPLES (a thread,
// default 5 M, 2 threads), KRON_BENCH_EXPORT_DIR (where the files go, default BUILD).
#include <unistd.h>

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

// Runs a shell command; exits the bench when it fails. Returns its wall seconds.
double timed(const std::string& cmd) {
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = std::system(cmd.c_str());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != 0) {
    std::fprintf(stderr, "failed (%d): %s\n", rc, cmd.c_str());
    std::exit(1);
  }
  return s;
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
  timed("'" + kron + "' record -q --wait -o '" + trace.string() + "' -- '" + flood + "' " + std::to_string(threads) +
        " " + std::to_string(per_thread) + " >/dev/null");
  nlohmann::json j;
  std::printf("%-12s %9s %14s %14s %12s\n", "format", "seconds", "samples/s", "bytes", "bytes/sample");
  auto row = [&](const std::string& name, double s, std::uint64_t bytes) {
    const double rate = double(samples) / s, bps = double(bytes) / double(samples);
    std::printf("%-12s %9.2f %14.0f %14llu %12.2f\n", name.c_str(), s, rate, static_cast<unsigned long long>(bytes),
                bps);
    j["export"][name] = {{"seconds", s}, {"samples_per_s", rate}, {"bytes", bytes}, {"bytes_per_sample", bps}};
  };
  row("cat (input)", timed("cat '" + trace.string() + "' >/dev/null"), fs::file_size(trace));
  const std::vector<std::string> formats = {"perfetto", "ctf", "chrome-json", "csv"};
  for (const std::string& f : formats) {
    const fs::path out = dir / ("bench-export-" + tag + "." + f);
    const double s = timed("'" + kron + "' export --format " + f + " -o '" + out.string() + "' '" + trace.string() +
                           "' >/dev/null");
    row(f, s, tree_bytes(out));
    fs::remove_all(out);
  }
  fs::remove(trace);
  j["export"]["samples"] = samples;
  j["export"]["loadavg_before"] = load0;
  j["export"]["loadavg_after"] = loadavg();
  std::printf("load average %.2f before, %.2f after (this machine's other work shares its cores)\n", load0, loadavg());
  std::ofstream(build / "bench-export.json") << j.dump(1) << "\n";
  return 0;
}
