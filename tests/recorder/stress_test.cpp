// Exact accounting under load (issue 3): several threads in two processes write to one board while
// this process drains it into a trace file, in both buffer modes and both CSR policies. For every probe
// that passed the filter: recorded + overrun + overwritten == passed, exactly; every thread's samples
// arrive in order, none twice; with the wait policy in simple mode, none is lost. The file is in time
// order across threads, every exception counted in the header's `late` (E31, docs/trace-format.md).
#include <unistd.h>

#include <sched.h>

#include <algorithm>
#include <map>
#include <thread>

#include "kron/format/trace_file.hpp"
#include "recorder/recorder.hpp"
#include "recorder_test_util.hpp"

namespace kron {
namespace {
using testing::ScratchBoard;

constexpr unsigned kProcs = 2, kThreads = 3;
constexpr std::uint64_t kProbes = 60000;  // per thread
constexpr unsigned kFilteredGroup = 7;

struct Case {
  board::BufferMode mode;
  bool wait;
};
class StressTest : public ::testing::TestWithParam<Case> {};

void writer_process(const std::string& name, unsigned proc) {
  kron::attach(name.c_str());
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < kThreads; ++t)
    ts.emplace_back([proc, t] {
      for (std::uint64_t i = 0; i < kProbes; ++i) {
        const std::uint64_t data = (std::uint64_t{proc} << 56) | (std::uint64_t{t} << 48) | i;
        if (i % 10 == 9) kron::trace(kFilteredGroup, data);  // filtered out: not "passed"
        else if (i % 64 == 0) kron::resource(1, data);
        else kron::trace(static_cast<unsigned>(i % 4), data);
      }
    });
  for (auto& t : ts) t.join();
}

TEST_P(StressTest, AccountingIsExact) {
  const Case c = GetParam();
  board::CreateOptions o;
  o.size = 128 << 10;  // small lanes (8 KiB) so that they fill
  o.lanes = 8;
  o.mode = c.mode;
  o.filter = static_cast<std::uint16_t>(~(1u << kFilteredGroup));
  o.csr = board::kCsrSamplingEnabled | (c.wait ? board::kCsrWriteWait : 0);
  ScratchBoard b(o, "stress");
  auto reader = b.reader();
  const std::string path = ::testing::TempDir() + "stress-" + std::to_string(::getpid()) + ".trace";
  {
    tracefile::Writer w(path, reader.file_header());
    recorder::Recorder rec(reader, w);
    reader.set_drainer(true);
    std::fflush(nullptr);
    std::vector<pid_t> kids;
    for (unsigned p = 0; p < kProcs; ++p) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        writer_process(b.name, p);
        std::exit(0);
      }
      kids.push_back(pid);
    }
    unsigned running = kProcs;
    while (running) {
      rec.drain_once();
      for (auto& k : kids) {
        int status;
        if (k > 0 && ::waitpid(k, &status, WNOHANG) == k) {
          ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
          k = -1, --running;
        }
      }
    }
    rec.drain_once(true);
    rec.drain_once(true);
    reader.set_drainer(false);
    rec.finish(reader.file_header());
    EXPECT_TRUE(reader.problems().empty());
  }
  tracefile::Reader r(path);
  const auto& h = r.header();
  const std::uint64_t passed = kProcs * kThreads * (kProbes - kProbes / 10);
  EXPECT_EQ(h.passed_filter, passed);
  std::map<std::uint64_t, std::uint64_t> last;  // (proc, thread) -> last sequence + 1
  std::uint64_t n = 0, behind = 0, max_ts = 0;
  Sample s;
  while (r.next(s)) {
    ++n;
    if (s.timestamp < max_ts) ++behind;  // written after a record with a later timestamp
    max_ts = std::max(max_ts, s.timestamp);
    const std::uint64_t who = s.data >> 48, seq = s.data & 0xffffffffffffull;
    ASSERT_NE(seq % 10, 9u) << "a filtered probe was recorded";
    ASSERT_EQ(s.is_resource(), seq % 64 == 0);
    auto it = last.find(who);
    if (it != last.end()) {
      ASSERT_GT(seq + 1, it->second) << "out of order or twice";
    }
    last[who] = seq + 1;
  }
  std::printf("passed %llu recorded %llu overruns %llu overwritten %llu waits %llu\n", (unsigned long long)h.passed_filter,
              (unsigned long long)h.samples, (unsigned long long)h.overruns, (unsigned long long)h.overwritten,
              (unsigned long long)h.waits);
  EXPECT_EQ(behind, h.late) << "a record out of time order that the header does not count";
  EXPECT_LE(h.late * 1000, h.samples) << "more than one record in 1000 behind the watermark";
  EXPECT_EQ(last.size(), kProcs * kThreads);
  EXPECT_EQ(n, h.samples);
  EXPECT_EQ(h.samples + h.overruns + h.overwritten, h.passed_filter);  // the invariant, exactly
  std::uint64_t lane_samples = 0;
  for (const auto& l : r.lanes()) lane_samples += l.samples;
  EXPECT_EQ(lane_samples, h.samples);
  if (c.wait && c.mode == board::BufferMode::Simple) {
    EXPECT_EQ(h.overruns, 0u);  // 000 Table B3a: with Wait, data is never discarded
    EXPECT_EQ(h.samples, passed);
  }
  if (c.mode == board::BufferMode::Simple) {
    EXPECT_EQ(h.overwritten, 0u);
  }
  if (c.mode == board::BufferMode::Circular) {
    EXPECT_EQ(h.overruns, 0u);
    EXPECT_EQ(h.waits, 0u);  // ERRATUM E23: circular mode never waits
  }
  if (!c.wait) {
    EXPECT_EQ(h.waits, 0u);
  }
  std::remove(path.c_str());
}

// Time order across threads (E31): threads writing at once on both CPUs while this process drains
// every 100 us, as `kron record` does on a busy board: a record published just after its lane was read,
// while a younger one of another lane is still to be read in the same pass, is the drain race. Lanes
// large enough and the wait policy: every record reaches the file. A record's data is thread << 48 | seq.
// (Without the hold-back, this test caught the race in about half of its runs here, AccountingIsExact's
// six threads in two processes in nearly every run.)
TEST(StressOrder, FileIsInTimeOrderAcrossThreads) {
  constexpr unsigned kOrderThreads = 3;
  constexpr std::uint64_t kOrderProbes = 100000;
  board::CreateOptions o;
  o.size = 4 << 20;
  o.lanes = 8;
  o.csr = board::kCsrSamplingEnabled | board::kCsrWriteWait;
  ScratchBoard b(o, "order");
  auto reader = b.reader();
  const std::string path = ::testing::TempDir() + "stress-order-" + std::to_string(::getpid()) + ".trace";
  std::uint64_t passes = 0;
  {
    tracefile::Writer w(path, reader.file_header());
    recorder::Recorder rec(reader, w);
    reader.set_drainer(true);
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      kron::attach(b.name.c_str());
      std::vector<std::thread> ts;
      for (unsigned t = 0; t < kOrderThreads; ++t)
        ts.emplace_back([t] {
          for (std::uint64_t i = 0; i < kOrderProbes; ++i) {
            kron::trace(1, (std::uint64_t{t} << 48) | i);
            if (i % 8192 == 8191) sched_yield();  // more threads than cores: let the others run too
          }
        });
      for (auto& t : ts) t.join();
      std::exit(0);
    }
    int status = 0;
    for (;;) {
      rec.drain_once();
      ++passes;
      if (::waitpid(pid, &status, WNOHANG) == pid) break;
      ::usleep(100);
    }
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    rec.drain_once(true);
    rec.drain_once(true);
    reader.set_drainer(false);
    rec.finish(reader.file_header());
  }
  tracefile::Reader r(path);
  std::uint64_t n = 0, behind = 0, max_ts = 0;
  std::vector<std::uint64_t> next(kOrderThreads);  // thread -> its next sequence number
  Sample s;
  while (r.next(s)) {
    ++n;
    if (s.timestamp < max_ts) ++behind;
    max_ts = std::max(max_ts, s.timestamp);
    const std::uint64_t t = s.data >> 48;
    ASSERT_LT(t, kOrderThreads);
    ASSERT_EQ(s.data & 0xffffffffffffull, next[t]++) << "a thread's records out of order, lost or twice";
  }
  std::printf("%llu records in %llu passes, %llu late\n", (unsigned long long)n, (unsigned long long)passes,
              (unsigned long long)r.header().late);
  EXPECT_EQ(n, kOrderThreads * kOrderProbes);
  EXPECT_EQ(behind, r.header().late) << "a record out of time order that the header does not count";
  // The hold-back (10 ms) is far longer than a probe's timestamp-to-publication window: only a thread
  // preempted inside those few instructions for 10 ms could be late.
  EXPECT_LE(r.header().late * 1000, n);
  std::remove(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(ModesAndPolicies, StressTest,
                         ::testing::Values(Case{board::BufferMode::Simple, false}, Case{board::BufferMode::Simple, true},
                                           Case{board::BufferMode::Circular, false},
                                           Case{board::BufferMode::Circular, true}),
                         [](const auto& i) {
                           return std::string(i.param.mode == board::BufferMode::Simple ? "Simple" : "Circular") +
                                  (i.param.wait ? "Wait" : "Discard");
                         });

}  // namespace
}  // namespace kron
