// The probes (include/kron/kron.hpp, mk.h) against a real board. Each test runs its probes in a forked
// child (a process attaches to one board) and inspects the board from the parent, as kron status would.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "kron/core/codec.hpp"
#include "kron/core/vocabulary.hpp"
#include "kron/format/trace_file.hpp"
#include "kron/mk.h"
#include "recorder/recorder.hpp"
#include "recorder_test_util.hpp"

extern "C" int kron_c_probe_program(void);  // mk_c_test.c

namespace kron {
namespace {
using testing::in_child;
using testing::samples_of;
using testing::ScratchBoard;

board::CreateOptions small(board::BufferMode mode = board::BufferMode::Simple, std::uint64_t size = 64 << 10) {
  board::CreateOptions o;
  o.size = size;
  o.lanes = 4;
  o.mode = mode;
  return o;
}

TEST(ProbeTest, TraceSampleCarriesSourceThreadCpuGroupAndData) {
  ScratchBoard b(small());
  int tid = 0;
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  ASSERT_EQ(in_child(b.name, [&] {
              kron::trace(5, 0x1122334455667788ull);
              const int t = static_cast<int>(::syscall(SYS_gettid));
              return ::write(pipefd[1], &t, sizeof t) == sizeof t ? 0 : 1;
            }),
            0);
  ASSERT_EQ(::read(pipefd[0], &tid, sizeof tid), static_cast<long>(sizeof tid));
  auto r = b.reader();
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].type, SampleType::Trace);
  EXPECT_EQ(s[0].group, 5);
  EXPECT_EQ(s[0].data, 0x1122334455667788ull);
  EXPECT_EQ(s[0].thread, static_cast<std::uint32_t>(tid));
  // 000 "Source Address Registers": node.process of the writer (node 0 here; the child's pid = its tid).
  EXPECT_EQ(board::source_pid(s[0].source), static_cast<std::uint32_t>(tid));
  EXPECT_LT(s[0].cpu, 4096);  // a real CPU number (rseq or sched_getcpu)
  EXPECT_GE(s[0].timestamp, b.header().created_ticks);
  close(pipefd[0]);
  close(pipefd[1]);
}

TEST(ProbeTest, FilterRegisterSelectsGroups) {  // 000 "Filter Register": bit n set = level n sampled
  board::CreateOptions o = small();
  o.filter = 0x0005;  // groups 0 and 2
  ScratchBoard b(o);
  ASSERT_EQ(in_child(b.name, [] {
              for (unsigned g = 0; g < 16; ++g) kron::trace(g, g);
              return 0;
            }),
            0);
  auto r = b.reader();
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].group, 0);
  EXPECT_EQ(s[1].group, 2);
  EXPECT_EQ(r.totals().passed, 2u);  // filtered probes are not counted as passed
}

TEST(ProbeTest, FilterAndCsrChangedFromOutsideTakeEffect) {
  ScratchBoard b(small());
  ASSERT_EQ(in_child(b.name, [&] {
              kron::trace(1, 1);
              board::write_filter(b.header(), 0x0001);  // as `kron filter` does from another process
              kron::trace(1, 2);                         // filtered out
              kron::trace(0, 3);
              board::write_csr(b.header(), 1u << 1);  // 000 Table B1 bit 1: Disable Sampling
              kron::trace(0, 4);
              board::write_csr(b.header(), 1u << 0);  // bit 0: Enable Sampling
              kron::trace(0, 5);
              return 0;
            }),
            0);
  auto r = b.reader();
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].data, 1u);
  EXPECT_EQ(s[1].data, 3u);
  EXPECT_EQ(s[2].data, 5u);
}

// 000 Table B1 bit 0 "Enable Sampling" and the Filter Register ("If the correspond entry in the Filter Register
// is discarded (no sample is assembled)") hold for every probe kind, not only trace(): resource(), a named
// event, a named scope (its begin and its end) and the C API. Each kind is tried with sampling disabled, then
// with its filter level off; only the tries with both on record, and nothing else is counted as passed.
TEST(ProbeTest, EveryProbeKindHonoursSamplingEnableAndFilter) {
  ScratchBoard b(small());
  static_assert(KRON_NAMED_GROUP == 0);
  ASSERT_EQ(in_child(b.name,
                     [&] {
                       auto all_kinds = [](std::uint64_t base) {
                         kron::trace(3, base + 1);
                         kron::resource(3, base + 2);
                         mk_trace(3, base + 3);
                         mk_resource(3, base + 4);
                         KRON_EVENT("event", base + 5);
                         { KRON_SCOPE_V("scope", base + 6); }
                       };
                       board::write_csr(b.header(), 1u << 1);  // 000 Table B1 bit 1: Disable Sampling
                       all_kinds(100);
                       board::write_csr(b.header(), 1u << 0);    // bit 0: Enable Sampling
                       board::write_filter(b.header(), 0xfff6);  // levels 0 and 3 (named probes: 0) off
                       all_kinds(200);
                       board::write_filter(b.header(), 0xffff);
                       all_kinds(300);
                       return 0;
                     }),
            0);
  auto r = b.reader();
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 7u);  // trace, resource, C trace, C resource, event, scope begin and end
  for (const Sample& x : s) {
    const std::uint64_t v = x.flags & kFlagNamed ? record::named_value_of(x.data) : x.data;
    EXPECT_GT(v, 300u) << "a sample taken while sampling was disabled or its filter level off";
  }
  EXPECT_EQ(s[0].type, SampleType::Trace);
  EXPECT_EQ(s[1].type, SampleType::Resource);
  EXPECT_EQ(s[2].type, SampleType::Trace);
  EXPECT_EQ(s[3].type, SampleType::Resource);
  EXPECT_EQ(s[4].flags, kFlagNamed);
  EXPECT_EQ(s[5].flags, kFlagNamed | kFlagScopeBegin);
  EXPECT_EQ(s[6].flags, kFlagNamed | kFlagScopeEnd);
  EXPECT_EQ(r.totals().passed, 7u);  // what the CSR or the filter stopped is not a passed sample
}

TEST(ProbeTest, ProgramWithoutBoardRecordsNothing) {
  ASSERT_FALSE(kron::attached());  // the test process itself never attaches
  kron::trace(0, 1);               // must be harmless
  kron::resource(0, 1);
  kron::count(0, 1);
  SUCCEED();
}

TEST(ProbeTest, ScopeEmitsAPair) {
  ScratchBoard b(small());
  ASSERT_EQ(in_child(b.name, [] {
              { kron::Scope s(1, 10, 20); kron::trace(1, 15); }
              return 0;
            }),
            0);
  auto r = b.reader();
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].data, 10u);
  EXPECT_EQ(s[1].data, 15u);
  EXPECT_EQ(s[2].data, 20u);
  EXPECT_LE(s[0].timestamp, s[2].timestamp);
}

TEST(ProbeTest, SimpleBufferKeepsOldestAndCountsOverruns) {  // 003 2.7 simple buffer; 000 Table B3a, discard
  ScratchBoard b(small(board::BufferMode::Simple, 32 << 10));  // one thread may fill the whole pool
  const std::uint64_t slots = testing::pool_slots(b.header());
  const std::uint64_t n = slots + 100;
  ASSERT_EQ(testing::trace_in_child(b.name, n), 0);
  auto r = b.reader();
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), slots);
  for (std::uint64_t i = 0; i < slots; ++i) ASSERT_EQ(s[i].data, i);  // the oldest are kept
  const auto t = r.totals();
  EXPECT_EQ(t.overruns, 100u);
  EXPECT_EQ(t.passed, n);
  EXPECT_TRUE(t.exact());
  EXPECT_EQ(t.torn, 0u);  // a program that ended normally cut no record: the 100 are the lane's own overruns
  const auto lanes = r.lanes();
  ASSERT_EQ(lanes.size(), 1u);
  EXPECT_EQ(lanes[0].overruns, 100u);  // 000 Table B3a "Incr": counted where they were lost
  EXPECT_TRUE(r.csr_read() & board::kCsrFifoOverrun);  // 000 Table B1 bit 8
}

TEST(ProbeTest, NextSampleAfterOverrunCarriesTheFlag) {  // 000 SAMPLING: "reset by next successful sample"
  ScratchBoard b(small(board::BufferMode::Simple, 32 << 10));
  const std::uint64_t slots = testing::pool_slots(b.header());
  int go[2], done[2];
  ASSERT_EQ(::pipe(go), 0);
  ASSERT_EQ(::pipe(done), 0);
  auto r = b.reader();
  std::vector<Sample> drained;
  auto sink = [&](const recorder::LaneView&, std::span<const std::uint8_t> recs, std::uint64_t) {
    for (std::size_t off = 0; off < recs.size(); off += 32) {
      drained.push_back(codec::decode(recs.data() + off, true));
    }
  };
  const pid_t pid = ::fork();
  if (pid == 0) {
    kron::attach(b.name.c_str());
    for (std::uint64_t i = 0; i < slots + 3; ++i) kron::trace(0, i);  // 3 overruns
    char c = 1;
    if (::write(done[1], &c, 1) != 1) std::exit(2);
    if (::read(go[0], &c, 1) != 1) std::exit(3);  // the parent drained
    kron::trace(0, 1000);
    kron::trace(0, 1001);
    std::exit(0);
  }
  char c;
  ASSERT_EQ(::read(done[0], &c, 1), 1);
  r.drain(sink, nullptr);
  ASSERT_EQ(::write(go[1], &c, 1), 1);
  int status;
  ::waitpid(pid, &status, 0);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  r.drain(sink, nullptr);
  ASSERT_EQ(drained.size(), slots + 2);
  EXPECT_EQ(drained[slots].data, 1000u);
  EXPECT_EQ(drained[slots].flags & kFlagFifoOverrun, kFlagFifoOverrun);
  EXPECT_EQ(drained[slots + 1].flags & kFlagFifoOverrun, 0);
  EXPECT_TRUE(r.totals().exact());
}

// 000 SAMPLING: an error flag is "reset by next successful sample", also when that sample is written by the
// probe's fast path: a Resource sample that finds no room (it needs three slots; the pool is empty) is
// dropped and flagged on the Trace sample that still fits in the block's last slots, and only on it.
TEST(ProbeTest, OverrunFlagGoesWithTheNextSampleOnlyOnTheFastPathToo) {
  ScratchBoard b(small(board::BufferMode::Simple, 32 << 10));
  const std::uint64_t slots = testing::pool_slots(b.header());
  ASSERT_EQ(in_child(b.name, [&] {
              for (std::uint64_t i = 0; i + 2 < slots; ++i) kron::trace(0, i);  // two slots left, no free block
              kron::resource(0, 7777);                                           // needs three: dropped, counted
              kron::trace(0, 8888);                                              // fits: carries the flag
              kron::trace(0, 9999);                                              // fits: does not
              return 0;
            }),
            0);
  auto r = b.reader();
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), slots);
  EXPECT_EQ(s[slots - 2].data, 8888u);
  EXPECT_EQ(s[slots - 2].flags & kFlagShadowOverrun, kFlagShadowOverrun);  // ERRATUM E24: a Resource sample lost
  EXPECT_EQ(s[slots - 1].data, 9999u);
  EXPECT_EQ(s[slots - 1].flags & (kFlagShadowOverrun | kFlagFifoOverrun), 0) << "the flag stayed after its sample";
  EXPECT_EQ(s[slots - 3].flags & (kFlagShadowOverrun | kFlagFifoOverrun), 0);
  const auto t = r.totals();
  EXPECT_EQ(t.overruns, 1u);
  EXPECT_TRUE(t.exact());
}

TEST(ProbeTest, WaitPolicyWithoutDrainerDiscardsInsteadOfHanging) {  // 000 Table B3a; ERRATUM E22
  board::CreateOptions o = small(board::BufferMode::Simple, 32 << 10);
  o.csr = board::kCsrSamplingEnabled | board::kCsrWriteWait;
  ScratchBoard b(o);
  const std::uint64_t slots = testing::pool_slots(b.header());
  ASSERT_EQ(testing::trace_in_child(b.name, slots + 10), 0);
  auto r = b.reader();
  const auto t = r.totals();
  EXPECT_EQ(t.overruns, 10u);
  EXPECT_EQ(t.waits, 0u);
  EXPECT_TRUE(t.exact());
}

TEST(ProbeTest, WaitPolicyHoldsTheProbeUntilTheDrainerMakesRoom) {  // 000 Table B3a rows "Wait until FIFO is available"
  board::CreateOptions o = small(board::BufferMode::Simple, 32 << 10);
  o.csr = board::kCsrSamplingEnabled | board::kCsrWriteWait;
  ScratchBoard b(o);
  const std::uint64_t slots = testing::pool_slots(b.header());
  auto r = b.reader();
  r.set_drainer(true);
  std::uint64_t got = 0;
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    kron::attach(b.name.c_str());
    for (std::uint64_t i = 0; i < 3 * slots; ++i) kron::trace(0, i);
    std::exit(0);
  }
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) != pid) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a slow drainer: the probe must wait
    r.drain([&](const recorder::LaneView&, std::span<const std::uint8_t>, std::uint64_t n) { got += n; }, nullptr);
  }
  r.drain([&](const recorder::LaneView&, std::span<const std::uint8_t>, std::uint64_t n) { got += n; }, nullptr);
  r.set_drainer(false);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const auto t = r.totals();
  EXPECT_EQ(got, 3 * slots);  // nothing discarded
  EXPECT_EQ(t.overruns, 0u);
  EXPECT_GT(t.waits, 0u);       // the Wait Counter counted the holds
  EXPECT_GT(t.wait_ticks, 0u);
  EXPECT_TRUE(t.exact());
}

TEST(ProbeTest, CircularBufferKeepsNewestAndCountsOverwritten) {  // 003 2.7 circular ("cockpit voice recorder")
  ScratchBoard b(small(board::BufferMode::Circular, 32 << 10));
  const std::uint64_t slots = testing::pool_slots(b.header());
  const std::uint64_t n = 10 * slots + 7;
  ASSERT_EQ(testing::trace_in_child(b.name, n), 0);
  auto r = b.reader();
  const auto s = samples_of(r);
  // The oldest block is recycled when the pool is empty: the newest (block_count - 1) blocks and the
  // current one are kept.
  ASSERT_GE(s.size(), slots - b.header().block_bytes / board::kSlot);
  ASSERT_LE(s.size(), slots);
  for (std::size_t i = 0; i < s.size(); ++i) ASSERT_EQ(s[i].data, n - s.size() + i);  // the newest, in order
  const auto t = r.totals();
  EXPECT_EQ(t.overwritten, n - s.size());
  EXPECT_EQ(t.overruns, 0u);
  EXPECT_TRUE(t.exact());
}

TEST(ProbeTest, ResourceSampleCarriesSixteenCounters) {  // 000 Table B2 RESOURCE sample; Tables B5-B7
  board::CreateOptions o = small();
  o.mode_reg = 0x21;  // counter 0 CLK (Table B5 x001), counter 1 Software (x010)
  o.clock_reg = 0x01; // counter 0 NodeClk (Table B6 x001)
  o.enable = 0x33;    // both Reset & Enable (Table B7 xx11)
  ScratchBoard b(o);
  ASSERT_EQ(in_child(b.name, [] {
              kron::count(1, 5);
              kron::count(2, 7);  // counter 2 is not in Software mode: no effect
              kron::resource(0, 1);
              kron::counter_control(0x10, 0, 0);  // disable counter 1 (Table B7 xx01)
              kron::count(1, 100);                // ignored while disabled
              kron::counter_control(0x01, 0, 0);  // disable counter 0: the stopwatch stops
              kron::resource(0, 2);
              kron::resource(0, 3);
              kron::counter_control(0x30, 0, 0);  // reset & enable counter 1
              kron::count(1, 2);
              kron::resource(0, 4);
              return 0;
            }),
            0);
  auto r = b.reader();
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 4u);
  for (const auto& x : s) EXPECT_EQ(x.type, SampleType::Resource);
  EXPECT_EQ(s[0].counters[1], 5u);
  EXPECT_EQ(s[0].counters[2], 0u);
  EXPECT_GT(s[0].counters[0], 0u);
  EXPECT_EQ(s[1].counters[1], 5u);                  // disabled: 100 not counted
  EXPECT_EQ(s[1].counters[0], s[2].counters[0]);    // stopped stopwatch holds its value
  EXPECT_GE(s[1].counters[0], s[0].counters[0]);
  EXPECT_EQ(s[3].counters[1], 2u);                  // reset, then 2
}

TEST(ProbeTest, ControlRegistersReadBackAsWritten) {  // 000: "a zero value written into any field leaves that field unchanged"
  ScratchBoard b(small());
  auto& h = b.header();
  EXPECT_EQ(h.mode_reg.load(), board::all_fields(board::kModeReset));  // Table B5 default x100
  EXPECT_EQ(h.clock_reg.load(), board::all_fields(board::kClockReset));  // Table B6 default x100
  EXPECT_EQ(h.enable_reg.load(), board::all_fields(board::kEnableReset));  // Table B7 default xx01
  board::write_counter_control(h, 0x20, 0x0301, 0);
  EXPECT_EQ(h.enable_reg.load(), (board::all_fields(1) & ~std::uint64_t{0xf0}) | 0x20);
  EXPECT_EQ(h.mode_reg.load(), (board::all_fields(4) & ~std::uint64_t{0x0f0f}) | 0x0301);
}

TEST(ProbeTest, CApiRecordsLikeTheToolkit) {  // mk.h: MK_DEFAULT_MAP, mk_trace, mk_resource
  ScratchBoard b(small());
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv(board::kEnvBoard, b.name.c_str(), 1);
    std::exit(kron_c_probe_program());
  }
  int status;
  ::waitpid(pid, &status, 0);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  auto r = b.reader();
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].data, 10u);
  EXPECT_EQ(s[1].type, SampleType::Resource);
  EXPECT_EQ(s[2].data, 20u);
}

TEST(RecorderTest, LanesOfOnePassAreMergedByTimestamp) {
  ScratchBoard b(small());
  // Two threads take turns (1, 2, 3, 4, 5, 6): one drain pass finds three records in each lane.
  ASSERT_EQ(in_child(b.name, [] {
              std::atomic<int> turn{0};
              auto body = [&](int me) {
                for (int k = 0; k < 3; ++k) {
                  while (turn.load() % 2 != me) {
                  }
                  kron::trace(0, static_cast<std::uint64_t>(turn.load() + 1));
                  turn.fetch_add(1);
                }
              };
              std::thread a(body, 0), c(body, 1);
              a.join();
              c.join();
              return 0;
            }),
            0);
  auto r = b.reader();
  const std::string path = ::testing::TempDir() + "merge-" + std::to_string(::getpid()) + ".trace";
  {
    tracefile::Writer w(path, r.file_header());
    recorder::Recorder rec(r, w);
    EXPECT_EQ(rec.drain_once(true), 6u);
    rec.finish(r.file_header());
  }
  // The claim is order by timestamp, not by the turns: rdtsc is not serialising (it may run before the
  // load that ended a thread's wait) and vCPUs' TSCs may differ slightly, so two turns taken in quick
  // succession on two CPUs can carry timestamps in the other order.
  tracefile::Reader f(path);
  Sample s;
  std::vector<std::uint64_t> data, ts;
  while (f.next(s)) {
    data.push_back(s.data);
    ts.push_back(s.timestamp);
  }
  ASSERT_EQ(data.size(), 6u);
  EXPECT_TRUE(std::is_sorted(ts.begin(), ts.end()));
  std::sort(data.begin(), data.end());
  EXPECT_EQ(data, (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(f.lanes().size(), 2u);
  std::remove(path.c_str());
}

TEST(ProbeTest, BoardIsPrivateAndSixteenMegabytesByDefault) {  // 0600; 003: 16 MB local memory
  ScratchBoard b(board::CreateOptions{});
  struct stat st;
  ASSERT_EQ(::stat(("/dev/shm/kron." + b.name).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(std::uint64_t{b.header().block_bytes} * b.header().block_count, 16u << 20);  // sample memory
  EXPECT_EQ(b.header().lane_count, 4096u);  // 4096 threads at once by default
}

// A board's memory is committed when it is created; ERRATUM E321: no process maps all of it when it opens
// the board, a probe maps each block it takes in its slow path, so the fast path never takes a page fault.
// Counted with the kernel's minor-fault counter of the probing thread around the fast-path probes only
// (every probe but the first of each block) of 64 KiB blocks (16 pages each: a fault per page but the first
// without the slow path's mapping), 30 blocks' worth on a fresh 16 MiB board.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KRON_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KRON_TEST_ASAN 1
#endif
#endif
TEST(ProbeTest, ProbesOnAFreshBoardTakeNoPageFault) {
#ifdef KRON_TEST_ASAN
  // AddressSanitizer and ThreadSanitizer check every store against their shadow memory, whose pages
  // fault on first use: those faults are the tool's, not the probe's. The g++ tree (no sanitizer) runs
  // this test.
  GTEST_SKIP() << "the sanitizer's shadow memory takes page faults of its own";
#endif
  board::CreateOptions o;  // 16 MiB
  o.block_bytes = 64u << 10;
  ScratchBoard b(o);
  const std::uint64_t B = o.block_bytes / board::kSlot, blocks = 30;
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  ASSERT_EQ(in_child(b.name, [&] {
              long faults = 0;
              for (std::uint64_t k = 0; k < blocks; ++k) {
                kron::trace(0, k * B);  // the first record of a block: the slow path takes the block
                rusage before{}, after{};
                ::getrusage(RUSAGE_THREAD, &before);
                for (std::uint64_t i = 1; i < B; ++i) kron::trace(0, k * B + i);
                ::getrusage(RUSAGE_THREAD, &after);
                faults += after.ru_minflt - before.ru_minflt;
              }
              return ::write(pipefd[1], &faults, sizeof faults) == sizeof faults ? 0 : 1;
            }),
            0);
  long faults = -1;
  ASSERT_EQ(::read(pipefd[0], &faults, sizeof faults), static_cast<long>(sizeof faults));
  ::close(pipefd[0]);
  ::close(pipefd[1]);
  EXPECT_LE(faults, 2) << "fast-path probes took page faults on a fresh board";
  auto r = b.reader();
  EXPECT_EQ(r.totals().recorded, blocks * B);
}

// ERRATUM E321: opening a board maps none of its sample memory into the opening process (kron status on a
// 1 GiB board took 0.3 s when every open populated it): after Mapping::open of a fresh 64 MiB board, no
// page of its blocks is resident in this process's page tables (/proc/self/pagemap, bit 63 "present").
TEST(ProbeTest, OpeningABoardMapsNoneOfItsMemory) {
  board::CreateOptions o;
  o.size = 64u << 20;
  ScratchBoard b(o);
  std::string err;
  const board::Mapping m = board::Mapping::open(b.name, &err);
  ASSERT_TRUE(m) << err;
  const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t first = reinterpret_cast<std::uintptr_t>(m.block_data(0)) / page;
  const std::uint64_t pages = (o.size + page - 1) / page;
  std::vector<std::uint64_t> entries(pages);
  ASSERT_EQ(::pread(fd, entries.data(), pages * 8, static_cast<off_t>(first * 8)), static_cast<ssize_t>(pages * 8));
  ::close(fd);
  std::uint64_t present = 0;
  for (const std::uint64_t e : entries) present += e >> 63;
  EXPECT_EQ(present, 0u) << "pages of the board's sample memory were mapped by opening it";
}

// ERRATUM E322: the header's `attached` counts the processes attached now (board 2.3), `arrivals` the attaches.
// A program attaches (1); its forked child that probes counts itself (2) and takes itself off when it exits
// normally (1); a child that only execs is never counted; the program's normal exit takes it off (0). A
// process killed cannot take itself off: it stays counted (1), as the documents say.
TEST(ProbeTest, AttachedCountsTheProcessesAttachedNow) {
  ScratchBoard b(small());
  auto& h = b.header();
  ASSERT_EQ(h.attached.load(), 0u);
  ASSERT_EQ(in_child(b.name, [&] {
              kron::trace(0, 1);
              if (h.attached.load() != 1) return 10;
              const pid_t probing = ::fork();
              if (probing == 0) {
                kron::trace(0, 2);  // the child's first lane counts it
                std::exit(h.attached.load() == 2 ? 0 : 11);
              }
              int st = 0;
              ::waitpid(probing, &st, 0);
              if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return 12;
              if (h.attached.load() != 1) return 13;
              const pid_t execs = ::fork();
              if (execs == 0) {
                ::execl("/bin/true", "true", static_cast<char*>(nullptr));
                std::_Exit(127);
              }
              ::waitpid(execs, &st, 0);
              return h.attached.load() == 1 ? 0 : 14;
            }),
            0);
  EXPECT_EQ(h.attached.load(), 0u) << "a normal exit did not take the process off";
  EXPECT_EQ(h.arrivals.load(), 2u);
  EXPECT_EQ(in_child(b.name, [] {
              kron::trace(0, 3);
              ::kill(::getpid(), SIGKILL);
              return 0;
            }),
            128 + SIGKILL);
  EXPECT_EQ(h.attached.load(), 1u) << "a killed process cannot take itself off";
  EXPECT_EQ(h.arrivals.load(), 3u);
}

TEST(ProbeTest, ThreadsGetTheirOwnLanesAndLanesAreReusedAfterDrain) {
  board::CreateOptions o = small();
  o.lanes = 2;
  ScratchBoard b(o);
  ASSERT_EQ(in_child(b.name, [] {
              kron::trace(0, 1);                              // main thread: lane 0
              std::thread([] { kron::trace(0, 2); }).join();  // lane 1 of 2 (retired at thread exit)
              std::thread([] {
                kron::trace(0, 3);  // adopts the retired lane 1
                std::thread([] { kron::trace(0, 4); }).join();  // no lane free or retired: counted
              }).join();
              return 0;
            }),
            0);
  auto r = b.reader();
  auto t = r.totals();
  EXPECT_EQ(t.no_lane, 1u);
  EXPECT_EQ(t.passed, 4u);
  EXPECT_EQ(t.recorded, 3u);
  EXPECT_TRUE(t.exact());
  std::vector<tracefile::LaneEntry> finished;
  r.drain(nullptr, &finished);
  EXPECT_EQ(finished.size(), 2u);  // both owners are gone: lanes freed
  t = r.totals();
  EXPECT_EQ(t.passed, 4u);
  EXPECT_TRUE(t.exact());
  for (const auto& v : r.lanes()) EXPECT_EQ(v.state, board::LaneState::Free);
}

}  // namespace
}  // namespace kron

