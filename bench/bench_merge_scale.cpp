// kron merge at scale: R generated rank files of one MPI world, each with C world collectives (a barrier,
// then an allreduce, alternately; every rank's clock skewed, so the controlled logical clock has work) and
// two samples around each call, merged by the real `kron merge` command. Wall time, CPU time and peak
// memory of the merge, for each R. The goal: 1,024 ranks x 1,000 collectives in under 30 s on one core and
// under 1 GB (docs/performance.md "kron merge at scale").
//
//   build/bench/kron_bench_merge_scale [RANKS ...]        (default 256 1024 4096; C = KRON_BENCH_COLLECTIVES,
//                                                          default 1000; KRON_BENCH_KRON=PATH another kron)
//
// The rank files are written under BUILD/bench-merge-scale/ and removed after; the figures go to
// BUILD/bench-merge_scale.json (top-level keys merge_scale_R_*).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kron/board.hpp"
#include "kron/format/trace_file.hpp"
#include "support/run_child.hpp"

namespace fs = std::filesystem;
using namespace kron;

namespace {

std::string write_rank(const fs::path& dir, std::uint32_t rank, std::uint32_t world, std::uint32_t collectives) {
  const std::string p = (dir / ("s.rank-" + std::to_string(rank) + ".kron")).string();
  tracefile::FileHeader h = tracefile::make_header();
  h.clock_hz = 1'000'000'000;
  const std::uint64_t skew = (std::uint64_t{rank} * 7919) % 50'000;  // up to 50 us ahead of rank 0
  h.start_ticks = 1'000'000 + skew;
  h.node = rank & 1023u;
  h.mpi_rank = rank;
  h.mpi_world_size = world;
  tracefile::Writer w(p, h);
  std::vector<record::MpiRecord> calls;
  Sample s;
  s.source = board::source_id(rank & 1023u, 1000 + rank);
  s.thread = 1000 + rank;
  for (std::uint32_t c = 0; c < collectives; ++c) {
    const std::uint64_t t0 = h.start_ticks + std::uint64_t{c} * 100'000 + (std::uint64_t{rank} * 31 + c * 17) % 5'000;
    const std::uint64_t t1 = t0 + 2'000 + (std::uint64_t{rank} * 13 + c) % 3'000;
    s.timestamp = t0, s.data = 2 * c;
    w.append(s);
    s.timestamp = t1, s.data = 2 * c + 1;
    w.append(s);
    record::MpiRecord m{};
    m.h.kind = record::RecordKind::Mpi;
    m.h.size = sizeof m;
    m.h.group = 0xff;
    m.source = s.source;
    m.thread = s.thread;
    m.timestamp = t0;
    m.end = t1;
    m.bytes = c % 2 ? 8 : 0;
    m.comm = 0;
    m.peer = -1;
    m.tag = static_cast<std::int32_t>(c);
    m.rank = rank;
    m.call = c % 2 ? record::MpiCall::Allreduce : record::MpiCall::Barrier;
    m.comm_size = world;
    calls.push_back(m);
  }
  w.append_mpi(calls);
  std::vector<record::ClockOffsetRecord> offs;
  for (std::uint64_t k = 0; k < 2; ++k) {
    record::ClockOffsetRecord o{};
    o.h.kind = record::RecordKind::ClockOffset;
    o.h.size = sizeof o;
    o.rank = rank;
    o.timestamp = h.start_ticks + k * std::uint64_t{collectives} * 100'000;
    o.reference = o.timestamp - skew;
    o.rtt = 2'000;
    offs.push_back(o);
  }
  w.append_clock(offs);
  h.passed_filter = 2ull * collectives;
  w.finish(h, {});
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path build = fs::canonical("/proc/self/exe").parent_path().parent_path();  // BUILD/bench/x
  std::vector<std::uint32_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(static_cast<std::uint32_t>(std::stoul(argv[i])));
  if (sizes.empty()) sizes = {256, 1024, 4096};
  const char* c_env = std::getenv("KRON_BENCH_COLLECTIVES");
  const std::uint32_t collectives = c_env ? static_cast<std::uint32_t>(std::stoul(c_env)) : 1000;
  const fs::path dir = build / "bench-merge-scale";
  std::ofstream json(build / "bench-merge_scale.json");
  json << "{\n  \"merge_scale_collectives\": " << collectives;
  std::printf("%8s %12s %10s %10s %12s\n", "ranks", "collectives", "wall s", "cpu s", "peak MiB");
  for (std::uint32_t ranks : sizes) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    const char* other = std::getenv("KRON_BENCH_KRON");
    std::vector<std::string> args{other ? std::string(other) : (build / "kron").string(), "merge", "-q"};
    for (std::uint32_t r = 0; r < ranks; ++r) args.push_back(write_rank(dir, r, ranks, collectives));
    args.push_back("-o");
    args.push_back((dir / "all.kron").string());
    const RunResult res = run(args);
    std::printf("%8u %12u %10.2f %10.2f %12ld\n", ranks, collectives, res.seconds, res.cpu_seconds,
                res.maxrss_kib / 1024);
    std::fflush(stdout);
    const std::string k = "merge_scale_" + std::to_string(ranks);
    json << ",\n  \"" << k << "_s\": " << res.seconds << ",\n  \"" << k << "_cpu_s\": " << res.cpu_seconds << ",\n  \""
         << k << "_peak_mib\": " << res.maxrss_kib / 1024;
  }
  json << "\n}\n";
  fs::remove_all(dir);
  std::printf("wrote %s\n", (build / "bench-merge_scale.json").c_str());
  return 0;
}
