// Reading a board: drain, snapshot, lane figures. See board_reader.hpp and docs/board-format.md.
#include "recorder/board_reader.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kron/core/error.hpp"
#include "kron/core/record.hpp"

namespace kron::recorder {

using namespace kron::board;

namespace {
constexpr std::uint64_t kRingBase = 0;  // (readability) slot offsets below are relative to a lane's ring

// A lane's owner is gone when its pid no longer exists (signal 0 only checks). A pid outside Linux's
// range (a hostile segment) is never passed to kill(): 0 and negative values name process groups.
bool process_gone(std::uint32_t pid) {
  if (pid == 0 || pid > (1u << 22)) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// (tail, evicted) of a circular lane under its seqlock. False when the writer is inside its update
// (tail_seq odd, or changing) for all of a short spin: it was preempted or stopped there (SIGSTOP, a
// debugger) or it died there. The caller then defers that lane to a later pass, or, where it cannot
// wait (the owner is dead, a snapshot), takes the fields as they are (issue 10: the seqlock reader
// never fails a recording).
bool load_tail(const LaneHeader* L, std::uint64_t* tail, std::uint64_t* evicted) {
  for (int tries = 0; tries < 4096; ++tries) {
    const std::uint64_t s0 = L->tail_seq.load(std::memory_order_acquire);  // acquire: fields after it
    *tail = L->tail.load(std::memory_order_relaxed);
    *evicted = L->evicted.load(std::memory_order_relaxed);
    // Acquire fence: the two loads above happen before the re-check.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (!(s0 & 1) && L->tail_seq.load(std::memory_order_relaxed) == s0) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  return false;
}
}  // namespace

BoardReader BoardReader::open(const std::string& name) {
  std::string err;
  std::uint64_t off = 0;
  Mapping m = Mapping::open(name, &err, &off);
  if (!m) throw InputError::at_offset("board " + name, off, err);
  return BoardReader(std::move(m), "board " + name);
}

BoardReader BoardReader::view(void* base, std::uint64_t size, const std::string& label) {
  const Problem p = validate(base, size);
  if (!p.ok) throw InputError::at_offset(label, p.offset, "board refused: " + p.what);
  return BoardReader(Mapping::view(base, size), label);
}

void BoardReader::set_drainer(bool on) {
  heartbeat();
  header().drainer_pid.store(on ? static_cast<std::uint32_t>(::getpid()) : 0, std::memory_order_relaxed);
}
void BoardReader::heartbeat() {
  // Relaxed: waiting probes only compare it with their clock.
  header().drainer_beat.store(ticks(header().clock_kind), std::memory_order_relaxed);
}

BoardReader::Pass BoardReader::pass(std::uint32_t i, std::uint64_t r, std::uint64_t rr, const LaneView& v, const Sink& sink,
                                    bool defer) {
  const LaneHeader* L = map_.lane(i);
  const std::uint8_t* ring = map_.ring(i);
  const std::uint64_t slots = header().ring_bytes / kSlot, mask = slots - 1;
  const std::uint64_t ring_off = header().rings_offset + std::uint64_t{i} * header().ring_bytes;
  Pass p;
  p.r = r, p.rr = rr;
  auto corrupt = [&](std::uint64_t off, const std::string& what) {
    p.corrupt = true;
    p.problem = label_ + ": offset " + std::to_string(off) + ": lane " + std::to_string(i) + ": " + what;
  };
  // Acquire: every record below head is complete (pairs with the probe's release store).
  const std::uint64_t h = L->head.load(std::memory_order_acquire);
  if (h < r) {
    corrupt(header().lanes_offset + i * std::uint64_t{header().lane_header_size} + offsetof(LaneHeader, head),
            "head is behind the read position");
    return p;
  }
  const bool circ = circular();
  // ERRATUM E34. A writer stopped inside its seqlock: a drain defers the lane (nothing taken, nothing counted: the
  // next pass retries it), unless its owner is dead (the fields stay as it left them: taken as they are;
  // a record it was evicting is then counted as torn, and the identity stays exact).
  const bool may_defer = defer && !v.owner_dead;
  std::uint64_t start = r, t0 = 0, e0 = 0;
  if (circ) {
    if (!load_tail(L, &t0, &e0) && may_defer) {
      p.deferred = true;
      return p;
    }
    start = std::max(r, t0);
    if (start > h) start = h;
    if (h - start > slots) start = h - slots;
  } else if (h - r > slots) {
    corrupt(ring_off, "head is more than a ring ahead of the read position");
    p.r = h;
    return p;
  }
  // Copy [start, h) out of the ring (two pieces at the wrap).
  const std::uint64_t n = h - start;
  // One private buffer per lane: what a sink receives stays valid until the next pass over that lane.
  if (bufs_.size() <= i) bufs_.resize(i + 1);
  std::vector<std::uint8_t>& buf = bufs_[i];
  if (buf.size() < n * kSlot) buf.resize(n * kSlot);  // grows once; never shrinks
  if (n) {
    const std::uint64_t first = std::min(n, slots - (start & mask));
    std::memcpy(buf.data(), ring + (start & mask) * kSlot, first * kSlot);
    if (n > first) std::memcpy(buf.data() + first * kSlot, ring + kRingBase, (n - first) * kSlot);
  }
  std::uint64_t vstart = start;
  if (circ) {
    std::uint64_t t1 = 0, e1 = 0;
    // Acquire fence: the copy above happens before the tail load below; a slot the writer overwrote
    // during the copy lies below the tail it published first.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (!load_tail(L, &t1, &e1) && may_defer) {
      p = Pass{};
      p.r = r, p.rr = rr, p.deferred = true;
      return p;
    }
    if (t1 > r) {  // records in [r, t1) were overwritten before this reader took them
      if (e1 < rr) {
        corrupt(ring_off, "evicted count went backwards");
        return p;
      }
      p.overwritten = e1 - rr;
      p.rr = e1;
      p.r = t1;
    }
    vstart = std::max(start, t1);
    if (vstart >= h) {
      p.r = std::max(p.r, h);
      return p;
    }
  }
  // Walk the valid records, checking each one's kind and size.
  std::uint64_t pos = vstart, count = 0;
  const std::uint8_t* base = buf.data() + (vstart - start) * kSlot;
  while (pos < h) {
    const std::uint64_t w = record::header_word_at(buf.data() + (pos - start) * kSlot);
    const std::uint64_t k = record::valid_slots(w);  // 0: unknown kind, or a size not its kind's
    if (!k) {
      corrupt(ring_off + (pos & mask) * kSlot, "record of kind " + std::to_string(record::kind_of(w)) + " and size " +
                                                   std::to_string(record::size_of_word(w)) +
                                                   " is not a Trace or Resource record");
      break;
    }
    if (pos + k > h) {
      corrupt(ring_off + (pos & mask) * kSlot, "record runs past the lane's head");
      break;
    }
    pos += k;
    ++count;
  }
  if (count && sink) sink(v, std::span<const std::uint8_t>(base, (pos - vstart) * kSlot), count);
  p.emitted = count;
  p.rr += count;
  p.r = p.corrupt ? h : pos;
  return p;
}

LaneView BoardReader::view_lane(std::uint32_t i) {
  const LaneHeader* L = map_.lane(i);
  LaneView v;
  v.index = i;
  // Acquire: the owner fields were written before the state was published.
  v.state = L->state.load(std::memory_order_acquire);
  v.pid = L->pid;
  v.tid = L->tid;
  v.source = L->source;
  v.occupancy = L->occupancy.load(std::memory_order_relaxed);
  v.owner_dead = v.state == LaneState::Active && process_gone(v.pid);
  v.passed = L->passed.load(std::memory_order_relaxed);
  v.overruns = L->overruns.load(std::memory_order_relaxed);
  v.waits = L->waits.load(std::memory_order_relaxed);
  v.wait_ticks = L->wait_ticks.load(std::memory_order_relaxed);
  v.drained = L->drained.load(std::memory_order_relaxed);
  v.overwritten = L->overwritten.load(std::memory_order_relaxed);
  v.capacity_slots = header().ring_bytes / kSlot;
  return v;
}

void BoardReader::drain(const Sink& sink, std::vector<tracefile::LaneEntry>* finished) {
  heartbeat();
  const std::uint32_t n = header().lane_count;
  for (std::uint32_t i = 0; i < n; ++i) {
    LaneHeader* L = map_.lane(i);
    LaneView v = view_lane(i);
    if (v.state != LaneState::Active && v.state != LaneState::Retired) continue;
    bool finishing = false;
    if (finished && (v.state == LaneState::Retired || v.owner_dead)) {
      // Take the lane with a CAS: a new thread may be adopting a Retired lane at this moment.
      LaneState s = v.state;
      finishing = L->state.compare_exchange_strong(s, LaneState::Claiming, std::memory_order_acquire);
      if (!finishing) continue;  // adopted: drained as an active lane next pass
    }
    Pass p = pass(i, L->read.load(std::memory_order_relaxed), L->read_records.load(std::memory_order_relaxed), v, sink,
                  true);
    if (p.deferred) {  // its writer is inside an update: the other lanes go on, this one next pass
      ++deferred_;
      if (finishing) L->state.store(v.state, std::memory_order_release);  // as it was (release: as when freed)
      continue;
    }
    if (p.corrupt && std::find(problems_.begin(), problems_.end(), p.problem) == problems_.end()) problems_.push_back(p.problem);
    // Relaxed stores of the reader line; `read` last, with release: the writer may reuse the slots
    // below it only after this process finished copying them.
    L->drained.store(v.drained + p.emitted, std::memory_order_relaxed);
    L->overwritten.store(v.overwritten + p.overwritten, std::memory_order_relaxed);
    L->read_records.store(p.rr, std::memory_order_relaxed);
    L->read.store(p.r, std::memory_order_release);
    if (!finishing) continue;
    // The owner is gone: record the lane's final figures and free it for another thread.
    const std::uint64_t passed = L->passed.load(std::memory_order_relaxed);
    const std::uint64_t torn = passed > v.overruns + p.rr ? passed - v.overruns - p.rr : 0;
    tracefile::LaneEntry e{v.pid, v.tid, v.drained + p.emitted, v.overruns + torn, v.overwritten + p.overwritten, v.waits,
                           v.wait_ticks};
    finished->push_back(e);
    freed_.passed += passed;
    freed_.recorded += e.samples;
    freed_.overruns += e.overruns;
    freed_.overwritten += e.overwritten;
    freed_.waits += e.waits;
    freed_.wait_ticks += e.wait_ticks;
    freed_.torn += torn;
    for (auto* a : {&L->head, &L->passed, &L->overruns, &L->waits, &L->wait_ticks, &L->tail_seq, &L->tail, &L->evicted,
                    &L->read, &L->read_records, &L->drained, &L->overwritten, &L->torn})
      a->store(0, std::memory_order_relaxed);
    // Release: the next owner (acquire CAS) sees the zeroed lane.
    L->state.store(LaneState::Free, std::memory_order_release);
  }
}

void BoardReader::snapshot(const Sink& sink) {
  const std::uint32_t n = header().lane_count;
  for (std::uint32_t i = 0; i < n; ++i) {
    const LaneHeader* L = map_.lane(i);
    const LaneView v = view_lane(i);
    if (v.state == LaneState::Free && L->head.load(std::memory_order_relaxed) == 0) continue;
    Pass p = pass(i, L->read.load(std::memory_order_relaxed), L->read_records.load(std::memory_order_relaxed), v, sink);
    if (p.corrupt && std::find(problems_.begin(), problems_.end(), p.problem) == problems_.end()) problems_.push_back(p.problem);
  }
}

std::vector<LaneView> BoardReader::lanes() {
  std::vector<LaneView> out;
  const std::uint32_t n = header().lane_count;
  for (std::uint32_t i = 0; i < n; ++i) {
    const LaneHeader* L = map_.lane(i);
    LaneView v = view_lane(i);
    const std::uint64_t r = L->read.load(std::memory_order_relaxed);
    Pass p = pass(i, r, L->read_records.load(std::memory_order_relaxed), v, nullptr);
    v.held = p.emitted;
    v.overwritten += p.overwritten;
    v.written = p.rr;
    std::uint64_t tail = 0, evicted = 0;
    if (circular()) load_tail(L, &tail, &evicted);
    const std::uint64_t head = L->head.load(std::memory_order_relaxed), from = std::max(r, tail);
    v.used_slots = std::min(head > from ? head - from : 0, v.capacity_slots);
    if (v.state == LaneState::Retired || v.owner_dead)
      v.torn = v.passed > v.overruns + v.written ? v.passed - v.overruns - v.written : 0;
    if (p.corrupt) v.problem = p.problem;
    out.push_back(v);
  }
  return out;
}

Totals BoardReader::totals() {
  Totals t = freed_;
  for (const LaneView& v : lanes()) {
    t.passed += v.passed;
    t.recorded += v.drained + v.held;
    t.overruns += v.overruns + v.torn;
    t.overwritten += v.overwritten;
    t.waits += v.waits;
    t.wait_ticks += v.wait_ticks;
    t.torn += v.torn;
  }
  t.no_lane = header().no_lane.load(std::memory_order_relaxed);
  t.passed += t.no_lane;
  t.overruns += t.no_lane;
  return t;
}

std::vector<tracefile::LaneEntry> BoardReader::lane_entries() {
  std::vector<tracefile::LaneEntry> out;
  for (const LaneView& v : lanes())
    if (v.passed || v.written)
      out.push_back({v.pid, v.tid, v.drained + v.held, v.overruns + v.torn, v.overwritten, v.waits, v.wait_ticks});
  return out;
}

std::uint16_t BoardReader::csr_read() {
  std::uint16_t c = csr_stored(header());
  for (const LaneView& v : lanes())
    if (!circular() && v.state == LaneState::Active && v.used_slots + kResourceSlots > v.capacity_slots) c |= kCsrFifoFull;
  if (header().trace_overrun.load(std::memory_order_relaxed)) c |= kCsrFifoOverrun;
  if (header().resource_overrun.load(std::memory_order_relaxed)) c |= kCsrShadowOverrun;
  return c;
}

void fill_totals(tracefile::FileHeader& h, const Totals& t) {
  h.overruns = t.overruns;
  h.overwritten = t.overwritten;
  h.passed_filter = t.passed;
  h.waits = t.waits;
  h.wait_ticks = t.wait_ticks;
}

tracefile::FileHeader BoardReader::file_header() {
  tracefile::FileHeader f = tracefile::make_header();
  const BoardHeader& b = header();
  f.clock_hz = b.clock_hz;
  f.start_ticks = b.created_ticks;
  f.start_realtime_ns = b.created_realtime_ns;
  f.node = b.node;
  f.origin = tracefile::Origin::Live;
  if (circular()) f.flags |= tracefile::kFlagCircular;
  if (csr_stored(b) & kCsrWriteWait) f.flags |= tracefile::kFlagWait;
  f.filter = filter_of(b);
  const std::uint64_t mode = b.mode_reg.load(std::memory_order_relaxed);
  for (unsigned n = 0; n < kCounters; ++n) {
    std::string name(b.sources[n].name, strnlen(b.sources[n].name, sizeof b.sources[n].name));
    if (name.empty() && mode_of(field(mode, n)) == Mode::Clock) name = "clock";
    if (name.empty() && mode_of(field(mode, n)) == Mode::Software) name = "software";
    tracefile::set_counter_name(f, n, name);
  }
  return f;
}

}  // namespace kron::recorder
