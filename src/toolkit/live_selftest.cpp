// test_mk and mk_sample_test against a live board. Sources: live_selftest.hpp; 000 Tables B1, B5, B6;
// 003 section 3.4.
#include "toolkit/live_selftest.hpp"

#include <fmt/core.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <random>
#include <stdexcept>
#include <vector>

#include "kron/board_ops.hpp"
#include "kron/core/codec.hpp"
#include "kron/format/classic.hpp"
#include "kron/format/trace_file.hpp"
#include "recorder/board_reader.hpp"

namespace kron::toolkit {
namespace {

constexpr unsigned kLevel = 15;  // the filter level the tests' samples use

bool check(bool ok, std::uint64_t& errors, std::ostream& out, const std::string& what) {
  if (!ok) {
    ++errors;
    out << "ERROR: " << what << '\n';
  }
  return ok;
}

std::uint64_t mono_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The probes run in a process of their own: kron-selftest-probe (src/probe/selftest_probe.cpp), an
// instrumented program started with KRON_BOARD=board. This process never links the probe side and never
// attaches (with KRON_BOARD=A in the environment, `--board B` samples land on B only).
// Found through $KRON_SELFTEST_PROBE, beside this binary (a build tree), or in LIBEXECDIR/kron (installed).
std::string probe_program() {
  if (const char* p = std::getenv("KRON_SELFTEST_PROBE"); p && *p) return p;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const auto& c :
         {self.parent_path() / "kron-selftest-probe", self.parent_path() / KRON_BIN_TO_LIBEXEC / "kron-selftest-probe"})
      if (::access(c.c_str(), X_OK) == 0) return c.string();
  }
  throw std::runtime_error("cannot find kron-selftest-probe (the selftest's probe program) beside " + self.string() +
                           " or in its libexec folder; set KRON_SELFTEST_PROBE");
}

// Runs the probe program against board `board` at filter level `level` (on `cpu`, -1: anywhere) with the
// probes `ops` ("trace"/"resource", user data). Returns its pid once it exited, or 0 when it could not run
// on `cpu` (exit 4); throws when it could not attach or failed otherwise.
std::uint32_t run_probes(const std::string& board, unsigned level, int cpu,
                         const std::vector<std::pair<const char*, std::uint64_t>>& ops) {
  const std::string prog = probe_program();
  std::vector<std::string> args{prog, board, std::to_string(level), std::to_string(cpu)};
  for (const auto& [op, data] : ops) args.insert(args.end(), {op, std::to_string(data)});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    ::setenv(board::kEnvBoard, board.c_str(), 1);  // the program attaches at start-up to this board only
    ::execv(prog.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return static_cast<std::uint32_t>(pid);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 4) return 0;
  throw std::runtime_error(fmt::format("{} {} failed ({})", prog, board,
                                       WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                                                         : fmt::format("signal {}", WTERMSIG(status))));
}

// The board, refused while a living recorder drains it; its Filter Register and CSR restored on exit.
class LiveBoard {
 public:
  explicit LiveBoard(const std::string& name) : r_(recorder::BoardReader::open(name)), name_(name) {
    const std::uint32_t pid = h().drainer_pid.load(std::memory_order_acquire);
    if (pid && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM))
      throw std::runtime_error(
          fmt::format("board {} is being drained by process {} (kron record): the test's samples "
                      "would go into that recording; stop it first",
                      name, pid));
    filter_ = board::filter_of(h());
    csr_ = board::csr_stored(h());
  }
  ~LiveBoard() {
    board::write_filter(h(), filter_);
    // 000 Table B1: each stored bit is set by its even control bit and cleared by the odd one above it.
    std::uint16_t w = 0;
    for (const std::uint16_t bit :
         {board::kCsrSamplingEnabled, board::kCsrWriteWait, board::kCsrReadWait, board::kCsr32Bit})
      w = static_cast<std::uint16_t>(w | ((csr_ & bit) ? bit : bit << 1));
    board::write_csr(h(), w);
  }
  board::BoardHeader& h() { return r_.header(); }
  recorder::BoardReader& reader() { return r_; }
  const std::string& name() const { return name_; }
  std::uint16_t saved_filter() const { return filter_; }

  // Lets level-15 samples through (the probe program's).
  void open_for_samples() {
    board::write_filter(h(), static_cast<std::uint16_t>(filter_ | 1u << kLevel));
    board::write_csr(h(), 1);  // Enable Sampling
  }

  struct Found {
    bool ok = false;
    tracefile::ResourceRecord rec{};
    std::uint32_t lane = 0;
    std::uint64_t head = 0;  // the lane's head (slots) now
  };
  // The record that the probe program `pid` (its main thread) wrote with user data `data`, from a
  // snapshot of the board. Matched by the record's own thread and source: the lane may have a new owner.
  Found find(std::uint32_t pid, std::uint64_t data) {
    Found f;
    const std::uint32_t source = board::source_id(h().node, pid);
    r_.snapshot([&](const recorder::LaneView& v, std::span<const std::uint8_t> recs, std::uint64_t) {
      for (std::size_t at = 0; at + sizeof(tracefile::TraceRecord) <= recs.size();) {
        tracefile::TraceRecord t;
        std::memcpy(&t, recs.data() + at, sizeof t);
        if (t.h.size < sizeof t || at + t.h.size > recs.size()) break;
        // The reader hands 2.2 records (phased, ERRATUM E180): the thread id is the field's bits 0-21.
        if (t.data == data && (t.thread & record::kThreadMask) == pid && t.source == source) {
          f.ok = true;
          std::memcpy(&f.rec, recs.data() + at, std::min<std::size_t>(t.h.size, sizeof f.rec));
          f.lane = v.index;
          f.head = r_.mapping().lane(v.index)->head.load(std::memory_order_acquire);
        }
        at += t.h.size;
      }
    });
    return f;
  }

 private:
  recorder::BoardReader r_;
  std::string name_;
  std::uint16_t filter_ = 0, csr_ = 0;
};

// A record found on the board as a sample (2.2 records: ERRATUM E180).
Sample to_sample(const tracefile::ResourceRecord& r) {
  return codec::decode(reinterpret_cast<const std::uint8_t*>(&r), true);
}

std::string hex(std::span<const std::uint8_t> b) {
  std::string s;
  for (std::size_t i = 0; i < b.size(); ++i) s += fmt::format("{}{:02x}", i == 0 || i % 4 ? "" : " ", b[i]);
  return s;
}

std::uint64_t marker() { return std::random_device{}() | std::uint64_t{std::random_device{}()} << 32; }

}  // namespace

std::uint64_t live_basic_test(const std::string& name, std::ostream& out) {
  std::uint64_t errors = 0;
  LiveBoard b(name);
  auto& h = b.h();
  // Filter Register round trip (000 "Filter Register": 16 bits, one per level).
  for (const unsigned w : {0x0000u, 0xffffu, 0x5555u, 0xaaaau, 0x1234u}) {
    const auto v = static_cast<std::uint16_t>(w);
    board::write_filter(h, v);
    const std::uint16_t got = board::filter_of(h);
    check(got == v, errors, out, fmt::format("Filter Register: wrote 0x{:04x}, read 0x{:04x}", v, got));
  }
  board::write_filter(h, b.saved_filter());
  out << "test_mk: Filter Register round trip done\n";
  // CSR, 000 Table B1: write 1 to act; bits 6-13 read only.
  const auto csr_case = [&](std::uint16_t written, std::uint16_t bit, bool set, const char* what) {
    board::write_csr(h, written);
    const bool is = board::csr_stored(h) & bit;
    check(is == set, errors, out,
          fmt::format("CSR: write 0x{:04x} ({}) left the bit {}", written, what, is ? "set" : "clear"));
  };
  csr_case(0x0002, board::kCsrSamplingEnabled, false, "Disable Sampling");
  csr_case(0x0001, board::kCsrSamplingEnabled, true, "Enable Sampling");
  csr_case(0x0004, board::kCsrWriteWait, true, "Enable Wait on sample");
  csr_case(0x0008, board::kCsrWriteWait, false, "Disable Wait on sample");
  const std::uint16_t before = board::csr_stored(h);
  board::write_csr(h, board::kCsrReadOnlyMask);
  check(board::csr_stored(h) == before, errors, out, "CSR: a write to the read-only bits 6-13 changed the CSR");
  check((b.reader().csr_read() & board::kCsrStoredMask) == board::csr_stored(h), errors, out,
        "CSR read does not return the stored bits");
  out << "test_mk: CSR (000 Table B1) write-1-to-act and read-only bits done\n";
  // Mode and Clock Select of counter 15 (000 Tables B5, B6), restored after.
  const std::uint8_t mode15 = board::field(h.mode_reg.load(), 15), clock15 = board::field(h.clock_reg.load(), 15);
  if (mode15 && clock15) {
    for (const std::uint8_t v : {std::uint8_t{0x2}, std::uint8_t{0x9}, mode15}) {
      board::write_counter_control(h, 0, std::uint64_t{v} << 60, 0);
      check(board::field(h.mode_reg.load(), 15) == v, errors, out,
            fmt::format("Mode Register counter 15: wrote {:x}", v));
    }
    for (const std::uint8_t v : {std::uint8_t{0x1}, std::uint8_t{0x3}, clock15}) {
      board::write_counter_control(h, 0, 0, std::uint64_t{v} << 60);
      check(board::field(h.clock_reg.load(), 15) == v, errors, out,
            fmt::format("Clock Select counter 15: wrote {:x}", v));
    }
    out << "test_mk: Mode and Clock Select Registers (000 Tables B5, B6) round trip done\n";
  }
  // A trace and a resource sample, through the probe, read back from the board.
  b.open_for_samples();
  const std::uint64_t m = marker();
  const std::uint64_t t0 = board::ticks(h.clock_kind);
  const std::uint32_t pid = run_probes(name, kLevel, -1, {{"trace", m}, {"resource", m + 1}});
  const std::uint64_t t1 = board::ticks(h.clock_kind);
  const auto tr = b.find(pid, m), rs = b.find(pid, m + 1);
  const std::uint32_t source = board::source_id(h.node, pid);
  for (const auto* f : {&tr, &rs}) {
    const bool resource = f == &rs;
    const char* what = resource ? "resource" : "trace";
    if (!check(f->ok, errors, out,
               fmt::format("the {} sample is not on the board (board full? overruns {})", what,
                           b.reader().totals().overruns)))
      continue;
    const auto& t = f->rec.t;
    check((t.h.kind == tracefile::RecordKind::Resource) == resource && t.h.group == kLevel && t.source == source &&
              t.timestamp >= t0 && t.timestamp <= t1,
          errors, out,
          fmt::format("{} sample: kind {} level {} source 0x{:08x} ts {}, expected level {} source 0x{:08x} ts {}-{}",
                      what, static_cast<unsigned>(t.h.kind), t.h.group, t.source, t.timestamp, kLevel, source, t0, t1));
    const auto bytes = classic::encode(classic::Chip::Mk2, to_sample(f->rec));
    out << fmt::format("test_mk: {} sample in lane {} (head {}): {}\n", what, f->lane, f->head, hex(bytes));
  }
  // The timestamp at its calibrated rate, over 100 ms of real time (each end bracketed by the clock).
  const auto read_pair = [&] {  // retried until no preemption fell between the reads (bracket < 50 us)
    std::uint64_t a = 0, t = 0, c = 0;
    for (int i = 0; i < 1000; ++i) {
      a = mono_ns(), t = board::ticks(h.clock_kind), c = mono_ns();
      if (c - a < 50'000) break;
    }
    return std::pair{t, a + (c - a) / 2};
  };
  const auto [k0, n0] = read_pair();
  ::usleep(100'000);
  const auto [k1, n1] = read_pair();
  const double hz = static_cast<double>(k1 - k0) * 1e9 / static_cast<double>(n1 - n0);
  const double dev = (hz - static_cast<double>(h.clock_hz)) / static_cast<double>(h.clock_hz);
  out << fmt::format("test_mk: timestamp counted {} ticks in {} ns: {:.0f} Hz, board calibrated {} Hz ({:+.3f}%)\n",
                     k1 - k0, n1 - n0, hz, h.clock_hz, dev * 100);
  check(dev > -0.01 && dev < 0.01, errors, out,
        fmt::format("the timestamp runs at {:.0f} Hz, not the board's {} Hz (within 1%)", hz, h.clock_hz));
  out << fmt::format("test_mk: {} error(s)\n", errors);
  return errors;
}

std::uint64_t live_sample_test(const std::string& name, std::ostream& out) {
  std::uint64_t errors = 0;
  LiveBoard b(name);
  cpu_set_t saved;
  CPU_ZERO(&saved);
  if (::sched_getaffinity(0, sizeof saved, &saved) != 0) throw std::runtime_error("sched_getaffinity failed");
  b.open_for_samples();
  for (const bool resource : {false, true}) {
    for (unsigned cpu = 0; cpu < 2; ++cpu) {
      if (!CPU_ISSET(cpu, &saved)) {
        out << fmt::format("mk_sample_test: CPU {} is not available to this process: skipped\n", cpu);
        continue;
      }
      const std::uint64_t data = marker();
      const std::uint32_t pid =
          run_probes(name, kLevel, static_cast<int>(cpu), {{resource ? "resource" : "trace", data}});
      if (!pid) {
        out << fmt::format("mk_sample_test: cannot run on CPU {}: skipped\n", cpu);
        continue;
      }
      const std::uint32_t source = board::source_id(b.h().node, pid);
      const auto f = b.find(pid, data);
      if (!check(f.ok, errors, out,
                 fmt::format("{} sample from CPU {} is not on the board", resource ? "resource" : "trace", cpu)))
        continue;
      const Sample smp = to_sample(f.rec);
      const auto bytes = classic::encode(classic::Chip::Mk2, smp);
      const std::span<const std::uint8_t> rec(reinterpret_cast<const std::uint8_t*>(&f.rec), f.rec.t.h.size);
      out << fmt::format(
          "mk_sample_test: {} sample, CPU ID {}, lane {} head {} (the lane's memory address pointer):\n"
          "  board record ({} bytes): {}\n  MultiKron II ({} bytes): {}\n",
          resource ? "resource" : "trace", cpu, f.lane, f.head, rec.size(), hex(rec), bytes.size(), hex(bytes));
      const std::uint16_t rec_cpu = smp.cpu;
      check((f.rec.t.h.kind == tracefile::RecordKind::Resource) == resource && rec_cpu == cpu &&
                f.rec.t.source == source && f.rec.t.h.group == kLevel,
            errors, out,
            fmt::format("the sample carries CPU {} source 0x{:08x} level {}, expected CPU {} source 0x{:08x} level {}",
                        rec_cpu, f.rec.t.source, f.rec.t.h.group, cpu, source, kLevel));
    }
  }
  out << fmt::format("mk_sample_test: {} error(s)\n", errors);
  return errors;
}

}  // namespace kron::toolkit
