// kron rpt --html on a large recording (make bench; docs/performance.md "The HTML report"): writes a
// recording of 10 M samples (4 threads, each a run of named scopes two deep with varied durations, and context
// switches), then times, in the same run, `kron rpt FILE` (the text report: the same walk, the floor) and
// `kron rpt --html PAGE FILE`, takes the page's size, and, where chromium is installed, opens the page in
// headless Chromium: the page's own figure (performance.now() once the timeline was drawn and every chart
// checked, <html data-open-ms>) and the wall time of the browser run against the same run on an empty page.
// Writes BUILD/bench-html.json. Environment: KRON_BENCH_HTML_SAMPLES (default 10 M), KRON_BENCH_HTML_DIR
// (where the files go, default BUILD).
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kron/board.hpp"
#include "kron/format/trace_file.hpp"

namespace fs = std::filesystem;
using namespace kron;

namespace {

std::uint64_t env_u64(const char* name, std::uint64_t dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : dflt;
}

record::NameRecord name_record(record::NameKind kind, std::uint16_t id, std::uint32_t source, std::uint32_t thread,
                               const char* name) {
  record::NameRecord nr{};
  nr.h.kind = record::RecordKind::Names;
  nr.h.size = sizeof nr;
  nr.name_kind = kind;
  nr.id = id;
  nr.source = source;
  nr.thread = thread;
  std::snprintf(nr.name, sizeof nr.name, "%s", name);
  std::snprintf(nr.file, sizeof nr.file, "%s", kind == record::NameKind::Scope ? "bench_html.cpp" : "");
  nr.line = id;
  return nr;
}

// 4 threads; each iteration a "block" scope (2-20 us) holding a "step" scope, one of three names, four samples
// an iteration; the threads interleaved in time order; a switch out and in every 64 iterations.
void write_recording(const fs::path& p, std::uint64_t samples) {
  constexpr std::uint32_t kSrc = 0x00000064, kThreads = 4;
  tracefile::FileHeader h = tracefile::make_header();
  h.clock_hz = 1'000'000'000;
  tracefile::set_program(h, "bench_html_workload --threads 4");
  tracefile::Writer w(p.string(), h);
  std::vector<record::SchedRecord> sws;
  const std::uint64_t iters = samples / 4 / kThreads;
  std::uint64_t rng = 88172645463325252ull, t = 1000;
  auto next = [&] { return rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17; };
  auto scope = [&](std::uint32_t th, std::uint64_t at, std::uint16_t id, bool begin) {
    Sample s;
    s.source = kSrc;
    s.thread = th;
    s.timestamp = at;
    s.data = record::named_data(id, th);
    s.flags = kFlagNamed | (begin ? kFlagScopeBegin : kFlagScopeEnd);
    w.append(s);
  };
  for (std::uint64_t i = 0; i < iters; ++i) {
    for (std::uint32_t k = 0; k < kThreads; ++k) {  // each thread's block starts a little after the last one's
      const std::uint64_t d = 2000 + next() % 18000, start = t + k * 10;
      scope(100 + k, start, 1, true);
      const auto inner = static_cast<std::uint16_t>(2 + next() % 3);
      scope(100 + k, start + d / 4, inner, true);
      scope(100 + k, start + d / 2, inner, false);
      scope(100 + k, start + d, 1, false);
      if (i % 64 == 63) {
        record::SchedRecord r{};
        r.h.kind = record::RecordKind::SchedSwitch;
        r.h.size = sizeof r;
        r.source = kSrc;
        r.thread = 100 + k;
        r.h.flags = record::kSchedOut;
        r.timestamp = start + d + 1;
        sws.push_back(r);
        r.h.flags = 0;
        r.timestamp = start + d + 1500;
        sws.push_back(r);
      }
    }
    t += 22'000;
  }
  w.append_sched(sws);
  h.passed_filter = iters * 4 * kThreads;
  const std::vector<record::NameRecord> names{name_record(record::NameKind::Scope, 1, 0, 0, "block"),
                                              name_record(record::NameKind::Scope, 2, 0, 0, "parse"),
                                              name_record(record::NameKind::Scope, 3, 0, 0, "transform"),
                                              name_record(record::NameKind::Scope, 4, 0, 0, "emit"),
                                              name_record(record::NameKind::Thread, 0, kSrc, 100, "main"),
                                              name_record(record::NameKind::Thread, 0, kSrc, 101, "worker"),
                                              name_record(record::NameKind::Thread, 0, kSrc, 102, "worker"),
                                              name_record(record::NameKind::Thread, 0, kSrc, 103, "worker")};
  w.finish(h, {}, names);
}

struct Run {
  double wall = 0, cpu = 0;
  long max_rss_kib = 0;
  int status = 0;
};

// Runs a shell command line as a child; its wall time, CPU time (user + system) and peak memory.
Run timed(const std::string& cmd) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int st = 0;
  rusage ru{};
  wait4(pid, &st, 0, &ru);
  Run r;
  r.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
          static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  r.max_rss_kib = ru.ru_maxrss;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

int main() {
  const fs::path build = fs::canonical("/proc/self/exe").parent_path().parent_path();
  const fs::path dir = std::getenv("KRON_BENCH_HTML_DIR") ? fs::path(std::getenv("KRON_BENCH_HTML_DIR")) : build;
  const std::uint64_t samples = env_u64("KRON_BENCH_HTML_SAMPLES", 10'000'000);
  const std::string kron = (build / "kron").string();
  const fs::path trace = dir / "bench-html.kron", page = dir / "bench-html.html";
  std::printf("== kron rpt --html: a recording of %llu samples (4 threads, named scopes, switches)\n",
              static_cast<unsigned long long>(samples));
  write_recording(trace, samples);
  nlohmann::ordered_json j;
  j["html_samples"] = samples;
  const Run text = timed("'" + kron + "' rpt '" + trace.string() + "' >/dev/null");
  const Run html = timed("'" + kron + "' rpt --html '" + page.string() + "' '" + trace.string() + "' >/dev/null");
  if (text.status || html.status) {
    std::fprintf(stderr, "kron rpt failed (%d, %d)\n", text.status, html.status);
    return 1;
  }
  const auto bytes = fs::file_size(page);
  std::printf("kron rpt (text)    %.2f s wall, %.2f s CPU, %ld MiB peak\n", text.wall, text.cpu,
              text.max_rss_kib / 1024);
  std::printf("kron rpt --html    %.2f s wall, %.2f s CPU, %ld MiB peak; page %.2f MB\n", html.wall, html.cpu,
              html.max_rss_kib / 1024, static_cast<double>(bytes) / 1e6);
  j["html_rpt_text_cpu_s"] = text.cpu;
  j["html_rpt_cpu_s"] = html.cpu;
  j["html_rpt_peak_mib"] = html.max_rss_kib / 1024;
  j["html_page_bytes"] = bytes;
  const char* chromium = "chromium";
  if (timed("command -v chromium >/dev/null").status == 0) {
    const std::string base = std::string("timeout 120 ") + chromium +
                             " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking "
                             "--disable-component-update --disable-sync --user-data-dir='" +
                             (dir / "bench-html-profile").string() +
                             "' --window-size=1280,900 --virtual-time-budget=10000 --dump-dom ";
    std::ofstream(dir / "bench-empty.html") << "<!DOCTYPE html><title>empty</title>";
    const Run empty = timed(base + "'file://" + (dir / "bench-empty.html").string() + "' >/dev/null 2>&1");
    const Run open =
        timed(base + "'file://" + page.string() + "' >'" + (dir / "bench-html.dom").string() + "' 2>/dev/null");
    const std::string dom = slurp(dir / "bench-html.dom");
    const auto at = dom.find("data-open-ms=\"");
    const double open_ms = at == std::string::npos ? -1 : std::atof(dom.c_str() + at + 14);
    const bool ok = dom.find("data-ok=\"1\"") != std::string::npos;
    std::printf(
        "headless Chromium  page %.0f ms to loaded and drawn (its own clock), %s; browser run %.2f s "
        "(empty page %.2f s)\n",
        open_ms, ok ? "data-ok" : "NOT data-ok", open.wall, empty.wall);
    j["html_open_ms"] = open_ms;
    j["html_open_ok"] = ok;
    j["html_browser_wall_s"] = open.wall;
    j["html_browser_empty_wall_s"] = empty.wall;
    j["html_browser_cpu_s"] = open.cpu;
    j["html_browser_empty_cpu_s"] = empty.cpu;
    std::printf("                   browser CPU (user + system, all its processes) %.2f s, empty page %.2f s\n",
                open.cpu, empty.cpu);
    fs::remove_all(dir / "bench-html-profile");
  } else {
    std::printf("headless Chromium: not installed (deps/test-packages.txt): no open time\n");
  }
  std::ofstream(build / "bench-html.json") << j.dump(1) << "\n";
  fs::remove(trace);
  return 0;
}
