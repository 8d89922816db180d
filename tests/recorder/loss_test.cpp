// Losses visible in the stream and never paired across (docs/decisions.md D20, D27): a thread whose probes
// are discarded (a simple board too small, discard policy: 000 Table B3a "Data Discarded") and a lane whose
// blocks a circular board recycles before the drain took them (003 2.7 circular buffer). In both, the
// first record of the thread after the lost ones carries a loss flag, and the analysis times no scope
// across it.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "analysis/input.hpp"
#include "analysis/matcher.hpp"
#include "analysis/rpt.hpp"
#include "analysis/timeline.hpp"
#include "kron/format/trace_file.hpp"
#include "recorder/recorder.hpp"
#include "recorder_test_util.hpp"

namespace kron {
namespace {
using testing::ScratchBoard;

// A child's main thread: `work` scopes (with an `inner` scope) of a few probes each, `rounds` times; the
// longest time any `work` took, read around it by the probes' own clock, is its last sample (a named
// event "bound", after a pause that lets the drain empty its lane).
int scopes_child(std::uint64_t rounds) {
  std::uint64_t bound = 0;
  for (std::uint64_t k = 0; k < rounds; ++k) {
    const std::uint64_t t0 = detail::now();
    {
      KRON_SCOPE("work");
      for (unsigned i = 0; i < 4; ++i) kron::trace(0, i);
      {
        KRON_SCOPE("inner");
        for (unsigned i = 0; i < 4; ++i) kron::trace(0, i);
      }
    }
    bound = std::max(bound, detail::now() - t0);
  }
  ::usleep(100'000);
  KRON_EVENT("bound", bound);
  return 0;
}

std::uint64_t bound_of(const std::string& path) {
  tracefile::Reader r(path);
  tracefile::NameTable names;
  for (const auto& n : r.names()) names.add(n);
  std::uint64_t bound = 0;
  Sample s;
  while (r.next(s))
    if ((s.flags & kFlagNamed) && names.name_of(s) == "bound") bound = record::named_value_of(s.data);
  return bound;
}

// Done means (D20): scopes of known length on a board too small to hold them, probes discarded while the
// drain sleeps: no scope's max exceeds the longest any took, and the scopes cut are counted per row.
TEST(Losses, DiscardedProbesNeverStretchAScope) {
  board::CreateOptions o;
  o.size = 64 << 10;
  o.lanes = 4;
  o.csr = board::kCsrSamplingEnabled;  // discard (no Write Wait on Overrun)
  ScratchBoard b(o, "loss");
  auto reader = b.reader();
  const std::string path = ::testing::TempDir() + "loss-discard-" + std::to_string(::getpid()) + ".kron";
  {
    tracefile::Writer w(path, reader.file_header());
    recorder::Recorder rec(reader, w);
    reader.set_drainer(true);
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      kron::attach(b.name.c_str());
      std::exit(scopes_child(200'000));
    }
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) != pid) {
      rec.drain_once();
      ::usleep(2000);  // the lane fills meanwhile: probes discarded
    }
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    rec.drain_once(true);
    rec.drain_once(true);
    reader.set_drainer(false);
    rec.finish(reader.file_header());
  }
  {
    tracefile::Reader r(path);
    ASSERT_GT(r.header().overruns, 0u) << "nothing was discarded: the test proves nothing";
    std::uint64_t flagged = 0;
    Sample s;
    while (r.next(s)) flagged += (s.flags & kFlagFifoOverrun) != 0;
    EXPECT_GT(flagged, 0u) << "samples were lost and no sample says so";
  }
  const std::uint64_t bound = bound_of(path);
  ASSERT_GT(bound, 0u) << "the child's bound did not reach the file";
  analysis::Merged in = analysis::open_inputs({path}, {});
  analysis::Timeline tl(in);
  const analysis::Report rep = analysis::make_report(tl, {});
  ASSERT_TRUE(rep.lossy);
  std::uint64_t cut = 0, count = 0;
  for (const auto& row : rep.rows) {
    if (row.name != "work" && row.name != "inner") continue;
    const analysis::Stats& st = *row.stats;
    count += st.count;
    cut += st.cut;
    if (st.count) {
      EXPECT_LE(st.max, bound) << row.name << ": a scope was timed across lost samples";
    }
    EXPECT_EQ(st.unmatched_ends, 0u) << row.name << ": an end after a loss counted as unpaired";
  }
  EXPECT_GT(count, 0u);
  EXPECT_GT(cut, 0u);
  std::remove(path.c_str());
}

// Records a drain pass hands over, decoded.
void append_samples(std::span<const std::uint8_t> recs, std::vector<Sample>& out) {
  for (std::size_t off = 0; off < recs.size(); off += record::size_at(recs.data() + off)) {
    record::TraceRecord t;
    std::memcpy(&t, recs.data() + off, sizeof t);
    const record::PhasedFields f = record::phased_fields(t.h.cpu, t.thread, true);
    Sample s;
    s.type = t.h.kind == record::RecordKind::Resource ? SampleType::Resource : SampleType::Trace;
    s.flags = t.h.flags, s.group = t.h.group, s.cpu = f.cpu, s.phase = f.phase;
    s.source = t.source, s.thread = f.thread, s.timestamp = t.timestamp, s.data = t.data;
    out.push_back(s);
  }
}

// Done means (D27): on a circular board, the drain takes a scope's begin; the lane's blocks are then
// recycled before the next pass (a writer lapping the reader). The next pass's first record carries
// kFlagOverwritten, no other record does, and the scope open across the gap is cut, never timed.
TEST(Losses, ACircularLapIsMarkedAndNothingPairsAcrossIt) {
  board::CreateOptions o;
  o.size = 64 << 10;
  o.lanes = 4;
  o.mode = board::BufferMode::Circular;
  ScratchBoard b(o, "lap");
  auto reader = b.reader();
  const std::uint64_t slots = testing::pool_slots(b.header());
  int go[2], ready[2];
  ASSERT_EQ(::pipe(go), 0);
  ASSERT_EQ(::pipe(ready), 0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    kron::attach(b.name.c_str());
    char c = 0;
    {
      KRON_SCOPE("held");
      kron::trace(0, 1);
      if (::write(ready[1], &c, 1) != 1 || ::read(go[0], &c, 1) != 1) std::_Exit(3);
      for (std::uint64_t i = 0; i < 3 * slots; ++i) kron::trace(0, 100 + i);  // laps the whole pool
    }
    {
      KRON_SCOPE("after");
      kron::trace(0, 2);
    }
    std::exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  std::vector<Sample> first, second;
  reader.drain([&](const recorder::LaneView&, std::span<const std::uint8_t> recs,
                   std::uint64_t) { append_samples(recs, first); },
               nullptr);
  ASSERT_EQ(::write(go[1], &c, 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  reader.drain([&](const recorder::LaneView&, std::span<const std::uint8_t> recs,
                   std::uint64_t) { append_samples(recs, second); },
               nullptr);
  ASSERT_GE(first.size(), 2u);  // the begin of "held" and its first probe
  ASSERT_FALSE(second.empty());
  std::uint64_t overwritten = 0;
  for (const auto& l : reader.lanes()) overwritten += l.overwritten;
  EXPECT_GT(overwritten, 0u) << "nothing was recycled: the test proves nothing";
  for (const Sample& s : first) EXPECT_EQ(s.flags & kFlagOverwritten, 0) << s.data;
  EXPECT_EQ(second.front().flags & kFlagOverwritten, kFlagOverwritten) << "the gap is not marked";
  for (std::size_t i = 1; i < second.size(); ++i) EXPECT_EQ(second[i].flags & kFlagOverwritten, 0) << i;
  // The analysis: "held" began before the gap and ended after it: cut, never timed; "after" is exact.
  tracefile::NameTable names;
  for (const auto& n : reader.names()) names.add(n);
  analysis::IntervalInfo none;
  analysis::Matcher m(none, {}, ~std::uint64_t{0}, &names);
  for (const auto* v : {&first, &second})
    for (const Sample& s : *v) m.feed(s);
  m.finish();
  bool held = false, after = false;
  for (unsigned i = 0; i < m.info().intervals.size(); ++i) {
    const analysis::Stats& st = m.stats(i, 0, 0);
    if (m.part_name(i, 0) == "held") {
      held = true;
      EXPECT_EQ(st.count, 0u) << "timed across the gap";
      EXPECT_EQ(st.cut, 1u);
      EXPECT_EQ(st.unmatched_ends, 0u);
    } else if (m.part_name(i, 0) == "after") {
      after = true;
      EXPECT_EQ(st.count, 1u);
      EXPECT_EQ(st.cut, 0u);
    }
  }
  EXPECT_TRUE(held && after);
}

}  // namespace
}  // namespace kron
