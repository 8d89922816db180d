// kron record's run-and-drain loop and rdsample's snapshot (record_session.hpp).
#include "recorder/record_session.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "kron/core/record.hpp"

namespace kron::recorder {
namespace {

volatile sig_atomic_t g_child = 0;
void forward(int sig) {
  if (g_child > 0) ::kill(g_child, sig);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

RecordResult record_program(const RecordOptions& o, const Progress& progress) {
  if (o.program.empty()) throw std::runtime_error("no program to record");
  std::string err;
  board::Mapping created = board::Mapping::create(o.board, &err);
  if (!created) throw std::runtime_error(err);
  created = board::Mapping{};
  BoardReader reader = BoardReader::open(o.board.name);
  struct Unlink {
    std::string name;
    ~Unlink() {
      std::string e;
      board::unlink(name, &e);
    }
  } unlink_at_end{o.board.name};

  tracefile::FileHeader fh = reader.file_header();
  std::string cmdline;
  for (const auto& p : o.program) cmdline += (cmdline.empty() ? "" : " ") + p;
  tracefile::set_program(fh, cmdline);
  tracefile::Writer writer(o.output, fh);
  Recorder rec(reader, writer, static_cast<std::uint64_t>(o.hold_ms * 1e-3 * double(reader.header().clock_hz)));
  reader.set_drainer(true);

  struct sigaction sa {};
  sa.sa_handler = forward;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (child == 0) {
    ::setenv(board::kEnvBoard, o.board.name.c_str(), 1);
    ::setenv(board::kEnvNode, std::to_string(o.board.node).c_str(), 1);
    std::vector<char*> argv;
    for (const auto& p : o.program) argv.push_back(const_cast<char*>(p.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "kron record: cannot run %s: %s\n", o.program[0].c_str(), std::strerror(errno));
    ::_exit(127);
  }
  g_child = child;
  RecordResult r;
  rec.run([&] { return ::waitpid(child, &r.wait_status, WNOHANG) == child; },
          progress ? std::function<void()>([&] { progress(rec.records(), rec.bytes(), seconds_since(t0)); })
                   : std::function<void()>());
  g_child = 0;
  reader.set_drainer(false);
  r.seconds = seconds_since(t0);
  rec.finish(fh);
  r.records = rec.records();
  r.bytes = rec.bytes();
  r.late = rec.late();
  r.totals = rec.totals();
  r.clock_hz = reader.header().clock_hz;
  r.problems = reader.problems();
  return r;
}

SnapshotResult snapshot_to_file(BoardReader& r, const std::string& file, const SnapshotOptions& o) {
  std::vector<std::uint8_t> all;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> index;  // (timestamp, offset) per record
  r.snapshot([&](const LaneView& v, std::span<const std::uint8_t> recs, std::uint64_t n) {
    if (o.on_lane) o.on_lane(v, n);
    const std::size_t base = all.size();
    all.insert(all.end(), recs.begin(), recs.end());
    // The reader validated every record's kind and size.
    for (std::size_t off = base; off < all.size(); off += record::size_at(all.data() + off))
      index.emplace_back(record::timestamp_at(all.data() + off), static_cast<std::uint32_t>(off));
  });
  std::stable_sort(index.begin(), index.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  const std::uint64_t end = std::min<std::uint64_t>(o.end, index.size());
  tracefile::FileHeader fh = r.file_header();
  tracefile::set_program(fh, o.program);
  tracefile::Writer w(file, fh);
  SnapshotResult res;
  res.held = index.size();
  for (std::uint64_t i = o.start; i < end; ++i) {
    const std::uint8_t* rec = all.data() + index[i].second;
    w.append_records(std::span<const std::uint8_t>(rec, record::size_at(rec)), 1);
    ++res.written;
  }
  res.totals = r.totals();
  fill_totals(fh, res.totals);
  w.finish(fh, r.lane_entries());
  res.problems = r.problems();
  return res;
}

}  // namespace kron::recorder
