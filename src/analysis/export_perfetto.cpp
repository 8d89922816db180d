// kron export --format perfetto: Perfetto's own protobuf trace (a `Trace`: TracePackets back to back),
// written by the small encoder of protowire.hpp. Field numbers: Perfetto's published schema
// (github.com/google/perfetto protos/perfetto/trace/), listed with the file each comes from in
// tests/export/perfetto_subset.proto, which the tests decode the output with.
//
// Layout (docs/tools.md "Perfetto"):
//  - one packet sequence per stream (trusted_packet_sequence_id = the stream's number + 1). Its first
//    packet clears the incremental state and carries the sequence's defaults (the stream's track, its
//    counter tracks, clock 64) and a ClockSnapshot tying clock 64 (sequence-scoped, incremental, ns) to
//    BOOTTIME; then the process and thread TrackDescriptors. Every later packet's timestamp is the
//    nanoseconds since the sequence's previous packet;
//  - event names interned per sequence (interned_data.event_names, on the packet that first uses one);
//  - named scopes as SLICE_BEGIN / SLICE_END on the stream's track, named events as INSTANTs, other Trace
//    samples as INSTANTs `event N`; a Resource sample as one COUNTER event carrying its sixteen counters
//    (counter_value and extra_counter_values on the stream's sixteen counter tracks);
//  - interval.info's intervals as slices on a child track per (stream, interval, part), written when the
//    matcher completes them, with absolute BOOTTIME timestamps; class 4 with a flow to its end stream;
//  - an MPI recording's matched messages as flows between instants on the ranks' thread tracks (E169).
// Memory: per stream (its state, interned names up to kMaxInterned) and per interval track; nothing per
// sample. Output goes through a 1 MiB buffer.
#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <exception>
#include <libdeflate.h>
#include <mutex>
#include <thread>
#include <utility>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "analysis/export.hpp"
#include "analysis/protowire.hpp"
#include "kron/board.hpp"
#include "kron/core/text.hpp"

namespace kron::analysis {
namespace {
__extension__ typedef unsigned __int128 u128;

// Field numbers (tests/export/perfetto_subset.proto, from Perfetto's protos/perfetto/trace/).
enum : std::uint32_t {
  kTracePacket = 1,  // Trace.packet (trace.proto)
  kPktCompressedPackets = 50,  // TracePacket.compressed_packets (trace_packet.proto)
  // TracePacket (trace_packet.proto)
  kPktTimestamp = 8, kPktClockId = 58, kPktClockSnapshot = 6, kPktTrackEvent = 11, kPktTrackDescriptor = 60,
  kPktSequenceId = 10, kPktInternedData = 12, kPktSequenceFlags = 13, kPktDefaults = 59,
  // TracePacketDefaults (trace_packet_defaults.proto), TrackEventDefaults (track_event.proto)
  kDefClockId = 58, kDefTrackEvent = 11, kTedTrackUuid = 11, kTedExtraCounterUuids = 31,
  // ClockSnapshot, ClockSnapshot.Clock (clock_snapshot.proto)
  kCsClocks = 1, kClkId = 1, kClkTimestamp = 2, kClkIncremental = 3,
  // TrackEvent (track_event.proto)
  kTeType = 9, kTeTrackUuid = 11, kTeNameIid = 10, kTeName = 23, kTeCounterValue = 30,
  kTeExtraCounterValues = 12, kTeFlowIds = 47, kTeTerminatingFlowIds = 48, kTeDebug = 4,
  // DebugAnnotation, DebugAnnotationName (debug_annotation.proto)
  kDaNameIid = 1, kDaUint = 3, kDaString = 6, kDanIid = 1, kDanName = 2,
  // InternedData (interned_data.proto), EventName (track_event.proto)
  kIdEventNames = 2, kIdDebugNames = 3, kEnIid = 1, kEnName = 2,
  // TrackDescriptor, ProcessDescriptor, ThreadDescriptor, CounterDescriptor
  kTdUuid = 1, kTdParent = 5, kTdName = 2, kTdProcess = 3, kTdThread = 4, kTdCounter = 8,
  kPdPid = 1, kPdName = 6, kThPid = 1, kThTid = 2, kThName = 5, kCdUnitName = 6,
};
enum : std::uint32_t { kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4 };  // TrackEvent.Type
enum : std::uint32_t { kSeqIncrementalStateCleared = 1, kSeqNeedsIncrementalState = 2 };
constexpr std::uint32_t kClockBoottime = 6;  // builtin_clock.proto BUILTIN_CLOCK_BOOTTIME
constexpr std::uint32_t kClockKron = 64;     // the first sequence-scoped clock id (clock_snapshot.proto)
// Debug annotation names every sequence interns in its first packet.
constexpr std::uint64_t kDanValue = 1;  // "value": a named probe's value
constexpr std::uint64_t kDanCpu = 2;    // "cpu": the CPU a thread ran on (scheduling states)
constexpr std::uint64_t kDanPhase = 3;  // "phase": the thread's phase (issue 12), when not 0
// ERRATUM E160: at most this many interned event names per sequence; later new names are written in full
// on each event (`name`), so memory stays bounded whatever the event numbers.
constexpr std::uint32_t kMaxInterned = 4096;
// ERRATUM E163: the most tracks (lanes) one (stream, interval, part) gets for overlapping occurrences.
constexpr std::size_t kMaxLanes = 1024;
// Track uuids: a stream's thread track is (n+1) * 32, its counter c track that + 1 + c; processes and
// interval tracks have their own ranges.
constexpr std::uint64_t kProcessUuidBase = std::uint64_t{1} << 40, kIntervalUuidBase = std::uint64_t{2} << 40,
                        kSchedUuidBase = std::uint64_t{3} << 40, kMpiUuidBase = std::uint64_t{4} << 40,
                        kSeriesUuidBase = std::uint64_t{5} << 40;
// MPI messages' flow ids: a range of their own, apart from class 4's (1, 2, ...).
constexpr std::uint64_t kMpiFlowBase = std::uint64_t{1} << 62;

// "event N" -> iid for one sequence: open addressing over 2 * kMaxInterned slots, never removed from, so a
// lookup of a name not interned (the common case once the table is full) costs one or two probes.
class EventIids {
 public:
  // The slot of `ev`: its iid, or 0 where it would go. The table (96 KiB) is made on the first lookup.
  std::uint32_t& slot(std::uint64_t ev) {
    if (keys_.empty()) {
      keys_.resize(kSlots);
      iids_.resize(kSlots, 0);
    }
    std::size_t i = (ev * 0x9E3779B97F4A7C15ull) >> (64 - kBits);
    while (iids_[i] && keys_[i] != ev) i = (i + 1) & (kSlots - 1);
    keys_[i] = ev;
    return iids_[i];
  }

 private:
  static constexpr unsigned kBits = 13;
  static constexpr std::size_t kSlots = std::size_t{1} << kBits;  // 2 * kMaxInterned
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> iids_;
};

struct StreamState {
  std::uint32_t seq = 0;
  std::uint64_t uuid = 0, last_ns = 0;
  bool counters_described = false;
  std::uint32_t next_iid = 1;
  std::vector<std::uint32_t> named_iid;                   // by name id; 0: not interned yet
  EventIids event_iid;                                     // "event N": N -> iid
  std::unordered_map<std::uint64_t, std::uint32_t> interval_iid;  // (interval << 8 | part) -> iid
  std::vector<std::uint16_t> open;  // named scopes begun and not ended, as the matcher holds them (E152)
  std::uint64_t counter_uuid(unsigned c) const { return uuid + 1 + c; }
};

// The output: packets are built into a batch of about kBatch bytes (whole packets only). Uncompressed,
// a full batch is written as it is. Compressed (ERRATUM E168), a full batch is handed to a second thread
// that deflates it (libdeflate, zlib format) into one TracePacket.compressed_packets and writes that, while
// this thread builds the next batch: one batch in flight, so memory stays two batches and a compressor.
class Writer {
 public:
  Writer(std::FILE* f, const PerfettoOptions& o) : f_(f), max_bytes_(o.max_bytes), level_(o.deflate_level) {
    b_.reserve(kBatch + 65536);
    if (level_ > 0) {
      z_ = libdeflate_alloc_compressor(level_);
      if (!z_) throw std::runtime_error(fmt::format("cannot make a deflate compressor of level {}", level_));
      in_.reserve(kBatch + 65536);
      worker_ = std::thread([this] { run(); });
    }
  }
  ~Writer() {
    stop();
    if (z_) libdeflate_free_compressor(z_);
  }
  std::string& b() { return b_; }
  void maybe_flush() {
    if (b_.size() >= kBatch) flush();
  }
  // Hands the batch on (compressed: to the worker, after the previous one is written).
  void flush() {
    if (b_.empty()) return;
    if (!z_) {
      write(b_.data(), b_.size());
      b_.clear();
      return;
    }
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !busy_; });
    rethrow();
    in_.swap(b_);
    b_.clear();
    busy_ = true;
    cv_.notify_all();
  }
  // The last batch written, the worker gone; throws what went wrong on either thread.
  void finish() {
    flush();
    stop();
    rethrow();
  }
  std::uint64_t written() const { return written_; }
  std::uint64_t raw_bytes() const { return raw_; }

 private:
  static constexpr std::size_t kBatch = 1 << 20;
  void write(const char* p, std::size_t n) {
    // ERRATUM E161: a trace larger than max_bytes is refused, not split or written unopenable.
    if (written_ + n > max_bytes_)
      throw std::runtime_error(fmt::format(
          "the Perfetto trace would be larger than {} bytes, the most the Perfetto UI opens in a browser "
          "(refused after {} bytes); export part of the recording, or use --format ctf",
          max_bytes_, written_ + n));
    if (n && std::fwrite(p, 1, n, f_) != n) throw std::runtime_error(std::string("write failed: ") + std::strerror(errno));
    written_ += n;
  }
  void run() {
    std::string out;
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return busy_ || quit_; });
      if (!busy_) return;
      lock.unlock();
      try {
        // One packet: Trace.packet { compressed_packets: zlib(deflate(the batch's packets, each with its tag)) }.
        const std::size_t bound = libdeflate_zlib_compress_bound(z_, in_.size());
        out.resize(bound + 16);
        const std::size_t head = 16;  // room for the two tags and lengths, filled in front of the data
        const std::size_t n = libdeflate_zlib_compress(z_, in_.data(), in_.size(), out.data() + head, bound);
        if (n == 0) throw std::runtime_error("deflate of a Perfetto batch failed");
        std::string pre;
        pb::tag(pre, kPktCompressedPackets, pb::kLengthDelimited);
        pb::varint(pre, n);
        std::string outer;
        pb::tag(outer, kTracePacket, pb::kLengthDelimited);
        pb::varint(outer, pre.size() + n);
        outer += pre;
        std::memcpy(out.data() + head - outer.size(), outer.data(), outer.size());
        raw_ += in_.size();
        write(out.data() + head - outer.size(), outer.size() + n);
      } catch (...) {
        lock.lock();
        error_ = std::current_exception();
        busy_ = false;
        cv_.notify_all();
        continue;
      }
      lock.lock();
      busy_ = false;
      cv_.notify_all();
    }
  }
  void stop() {
    if (!worker_.joinable()) return;
    {
      std::lock_guard lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  void rethrow() {
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

  std::FILE* f_;
  std::uint64_t max_bytes_, written_ = 0, raw_ = 0;
  int level_;
  std::string b_;
  // Compressed: the batch in flight (in_), guarded by mu_ while busy_ says whose it is.
  libdeflate_compressor* z_ = nullptr;
  std::string in_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool busy_ = false, quit_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace

ExportStats export_perfetto(Merged& in, const IntervalInfo* info, const RptOptions& opt, std::FILE* f,
                            const PerfettoOptions& po) {
  Writer w(f, po);
  std::string& b = w.b();
  ExportStats st;
  IntervalInfo none;
  const tracefile::NameTable& names = in.names();
  Matcher m(info ? *info : none, opt, in.ts_mask(), &names);
  const std::uint64_t clock = in.clock_hz(), mask = in.ts_mask();
  std::uint64_t t0 = 0;
  bool have_t0 = false;
  // Nanoseconds since the first sample, rounded down (E153's integers, as the JSON export).
  const std::uint64_t fast_limit = ~std::uint64_t{0} / 1'000'000'000u;
  auto ns = [&](std::uint64_t t) -> std::uint64_t {
    const std::uint64_t d = (t - t0) & mask;
    if (clock == 1'000'000'000u) return d;
    if (d < fast_limit) return d * 1'000'000'000u / clock;
    return static_cast<std::uint64_t>(static_cast<u128>(d) * 1'000'000'000u / clock);
  };
  std::string counter_names[kResourceCounters];
  for (unsigned c = 0; c < kResourceCounters; ++c) {
    for (const auto& input : in.inputs())
      if (!input->counter_name(c).empty()) {
        counter_names[c] = input->counter_name(c);
        break;
      }
    counter_names[c] = text::utf8_safe(counter_names[c].empty() ? fmt::format("counter {}", c)
                                                                : fmt::format("counter {} ({})", c, counter_names[c]));
  }

  std::vector<StreamState> streams;
  std::unordered_map<std::uint64_t, std::uint32_t> stream_of_key;
  std::unordered_map<std::uint32_t, std::uint64_t> process_uuid;
  struct Lane {
    std::uint64_t uuid, last_end;
  };
  std::unordered_map<std::uint64_t, std::vector<Lane>> interval_lanes;  // (stream, interval, part) -> lanes
  std::uint64_t next_interval_track = 0;

  // A packet's start: its tag, then its timestamp on the stream's sequence (incremental clock 64, or
  // BOOTTIME when the time went back: a sample out of order, or an interval written at its end).
  auto packet_at = [&](StreamState& s, std::uint64_t t_ns, bool absolute) {
    const std::size_t p = pb::open(b, kTracePacket);
    if (!absolute && t_ns >= s.last_ns) {
      pb::uint_field(b, kPktTimestamp, t_ns - s.last_ns);
      s.last_ns = t_ns;
    } else {
      pb::uint_field(b, kPktTimestamp, t_ns);
      pb::uint_field(b, kPktClockId, kClockBoottime);
    }
    pb::uint_field(b, kPktSequenceId, s.seq);
    return p;
  };
  auto descriptor = [&](StreamState& s) {
    const std::size_t p = pb::open(b, kTracePacket);
    pb::uint_field(b, kPktSequenceId, s.seq);
    return std::pair{p, pb::open(b, kPktTrackDescriptor)};
  };
  auto end_descriptor = [&](std::pair<std::size_t, std::size_t> p) {
    pb::close(b, p.second);
    pb::close(b, p.first);
  };
  // The iid of a name on sequence `s`, interning it in this packet when new (before the track_event);
  // 0 when the sequence's table is full (the caller writes the name in full).
  auto intern = [&](StreamState& s, std::uint32_t& slot, std::string_view name) -> std::uint32_t {
    if (slot) return slot;
    if (s.next_iid > kMaxInterned) return 0;
    slot = s.next_iid++;
    const std::size_t id = pb::open(b, kPktInternedData);
    const std::size_t en = pb::open(b, kIdEventNames);
    pb::uint_field(b, kEnIid, slot);
    pb::bytes_field(b, kEnName, text::utf8_safe(name));
    pb::close(b, en);
    pb::close(b, id);
    return slot;
  };
  auto name_field = [&](std::uint32_t iid, std::string_view name, bool ascii = false) {
    if (iid)
      pb::uint_field(b, kTeNameIid, iid);
    else if (ascii)
      pb::bytes_field(b, kTeName, name);
    else
      pb::bytes_field(b, kTeName, text::utf8_safe(name));
  };

  // A debug annotation name interned in the packet being written (a sequence's first).
  auto intern_debug_name = [&](std::uint64_t iid, std::string_view name) {
    const std::size_t id = pb::open(b, kPktInternedData);
    const std::size_t dn = pb::open(b, kIdDebugNames);
    pb::uint_field(b, kDanIid, iid);
    pb::bytes_field(b, kDanName, name);
    pb::close(b, dn);
    pb::close(b, id);
  };
  // A debug annotation `iid` = v on the track event being written.
  auto debug_uint = [&](std::uint64_t iid, std::uint64_t v) {
    const std::size_t da = pb::open(b, kTeDebug);
    pb::uint_field(b, kDaNameIid, iid);
    pb::uint_field(b, kDaUint, v);
    pb::close(b, da);
  };
  // The track of `source`'s process, described (on sequence `s`) the first time any sequence needs it:
  // named after its main thread where the recording has that name.
  auto process_track = [&](StreamState& s, std::uint32_t source) -> std::uint64_t {
    auto [pit, fresh] = process_uuid.try_emplace(source, kProcessUuidBase + process_uuid.size());
    if (fresh) {
      const std::int64_t pid = board::source_pid(source);
      const std::string_view main = names.thread(source, static_cast<std::uint32_t>(pid));
      const std::string label =
          main.empty() ? fmt::format("source 0x{:08x}", source) : fmt::format("{} (pid {})", main, pid);
      auto d = descriptor(s);
      pb::uint_field(b, kTdUuid, pit->second);
      pb::bytes_field(b, kTdName, text::utf8_safe(label));
      const std::size_t pd = pb::open(b, kTdProcess);
      pb::int_field(b, kPdPid, pid);
      pb::bytes_field(b, kPdName, text::utf8_safe(label));
      pb::close(b, pd);
      end_descriptor(d);
    }
    return pit->second;
  };
  // The stream's sequence: made (with its tracks described) when its first sample comes.
  auto stream_for = [&](const StreamKey& k, std::uint64_t t_ns) -> std::uint32_t {
    auto [it, fresh] = stream_of_key.try_emplace(k.key(), static_cast<std::uint32_t>(streams.size()));
    if (!fresh) return it->second;
    StreamState& s = streams.emplace_back();
    s.seq = static_cast<std::uint32_t>(streams.size());
    s.uuid = std::uint64_t{s.seq} * 32;
    s.last_ns = t_ns;
    // First packet: incremental state cleared, defaults, the clock, the debug annotation names.
    const std::size_t p = pb::open(b, kTracePacket);
    pb::uint_field(b, kPktTimestamp, t_ns);
    pb::uint_field(b, kPktClockId, kClockBoottime);
    pb::uint_field(b, kPktSequenceId, s.seq);
    // ERRATUM E166: the flags on this first packet only; the sixteen counters as one COUNTER event.
    pb::uint_field(b, kPktSequenceFlags, kSeqIncrementalStateCleared | kSeqNeedsIncrementalState);
    {
      const std::size_t d = pb::open(b, kPktDefaults);
      pb::uint_field(b, kDefClockId, kClockKron);
      const std::size_t te = pb::open(b, kDefTrackEvent);
      pb::uint_field(b, kTedTrackUuid, s.uuid);
      for (unsigned c = 1; c < kResourceCounters; ++c) pb::uint_field(b, kTedExtraCounterUuids, s.counter_uuid(c));
      pb::close(b, te);
      pb::close(b, d);
    }
    intern_debug_name(kDanValue, "value");
    intern_debug_name(kDanPhase, "phase");
    {
      const std::size_t cs = pb::open(b, kPktClockSnapshot);
      std::size_t c = pb::open(b, kCsClocks);
      pb::uint_field(b, kClkId, kClockBoottime);
      pb::uint_field(b, kClkTimestamp, t_ns);
      pb::close(b, c);
      c = pb::open(b, kCsClocks);
      pb::uint_field(b, kClkId, kClockKron);
      pb::uint_field(b, kClkTimestamp, t_ns);
      pb::uint_field(b, kClkIncremental, 1);
      pb::close(b, c);
      pb::close(b, cs);
    }
    pb::close(b, p);
    // The process (once per source) and this stream's track, with the recording's names.
    const std::int64_t pid = board::source_pid(k.source);
    const std::uint64_t process = process_track(s, k.source);
    const std::string_view tn = k.by_thread ? names.thread(k.source, k.lane) : std::string_view{};
    const std::string label = !tn.empty() ? fmt::format("{} (tid {})", tn, k.lane)
                                          : fmt::format("{} {}", k.by_thread ? "thread" : "cpu", k.lane);
    auto d = descriptor(s);
    pb::uint_field(b, kTdUuid, s.uuid);
    pb::uint_field(b, kTdParent, process);
    pb::bytes_field(b, kTdName, text::utf8_safe(label));
    if (k.by_thread) {  // a live recording's thread; a classic CPU is a plain track of its process
      const std::size_t th = pb::open(b, kTdThread);
      pb::int_field(b, kThPid, pid);
      pb::int_field(b, kThTid, k.lane);
      pb::bytes_field(b, kThName, text::utf8_safe(label));
      pb::close(b, th);
    }
    end_descriptor(d);
    return it->second;
  };
  auto describe_counters = [&](StreamState& s) {
    s.counters_described = true;
    for (unsigned c = 0; c < kResourceCounters; ++c) {
      auto d = descriptor(s);
      pb::uint_field(b, kTdUuid, s.counter_uuid(c));
      pb::uint_field(b, kTdParent, s.uuid);
      pb::bytes_field(b, kTdName, counter_names[c]);
      const std::size_t cd = pb::open(b, kTdCounter);
      pb::bytes_field(b, kCdUnitName, "count");
      pb::close(b, cd);
      end_descriptor(d);
    }
  };
  auto track_event_end = [&](std::size_t te, std::size_t p) {
    pb::close(b, te);
    pb::close(b, p);
  };

  std::uint32_t cur = 0;  // the stream of the sample being fed
  std::uint64_t cur_key = 0;
  bool have_cur = false;
  std::uint64_t flow_id = 0;
  m.on_interval = [&](const Occurrence& o) {
    ++st.slices;
    if (o.name_id) {  // ERRATUM E162: a named scope's end closes it and the scopes left open inside it (E152)
      StreamState& s = streams[cur];
      const std::uint64_t t = ns(o.end);
      while (!s.open.empty()) {
        const std::uint16_t id = s.open.back();
        s.open.pop_back();
        const std::size_t p = packet_at(s, t, false);
        const std::size_t te = pb::open(b, kPktTrackEvent);
        pb::uint_field(b, kTeType, kSliceEnd);
        track_event_end(te, p);
        if (id == o.name_id) break;
      }
      return;
    }
    // interval.info: a slice on the (stream, interval) track, class 4 on its start's stream with a flow
    // to an instant on its end's stream.
    const unsigned cls = m.info().intervals[o.interval].cls;
    const std::uint32_t on = stream_of_key.at(m.streams()[cls == 4 ? o.start_stream : o.stream].key());
    StreamState& s = streams[on];
    // ERRATUM E163: slices of one track must nest, as a viewer nests them by time alone. So a track per
    // (stream, interval, part) (class 3's first sub-interval starts with the whole), and within it lanes:
    // an occurrence goes on the first lane whose slices all ended by its start (class 4's messages
    // overlap in flight), a new lane when none has; past kMaxLanes, the lane that ended first.
    const std::string name = m.part_name(o.interval, o.part);
    const std::uint64_t t_start = ns(o.start), t_end = ns(o.end);
    auto& lanes = interval_lanes[std::uint64_t{on} << 24 | std::uint64_t{o.interval} << 4 | o.part];
    Lane* lane = nullptr;
    for (Lane& l : lanes)
      if (l.last_end <= t_start) {
        lane = &l;
        break;
      }
    if (!lane && lanes.size() >= kMaxLanes) {
      lane = &lanes[0];
      for (Lane& l : lanes)
        if (l.last_end < lane->last_end) lane = &l;
      ++st.lanes_reused;
    }
    if (!lane) {
      lane = &lanes.emplace_back(Lane{kIntervalUuidBase + next_interval_track++, 0});
      auto d = descriptor(s);
      pb::uint_field(b, kTdUuid, lane->uuid);
      pb::uint_field(b, kTdParent, s.uuid);
      pb::bytes_field(b, kTdName, text::utf8_safe(lanes.size() == 1 ? fmt::format("{} (class {})", name, cls)
                                                                     : fmt::format("{} (class {}) #{}", name, cls, lanes.size())));
      end_descriptor(d);
    }
    lane->last_end = std::max(lane->last_end, t_end);
    const std::uint64_t track = lane->uuid;
    std::uint32_t& slot = s.interval_iid[std::uint64_t{o.interval} << 8 | o.part];
    if (cls == 4) ++flow_id;
    for (const bool begin : {true, false}) {
      const std::size_t p = packet_at(s, begin ? t_start : t_end, true);
      const std::uint32_t iid = begin ? intern(s, slot, name) : 0;
      const std::size_t te = pb::open(b, kPktTrackEvent);
      pb::uint_field(b, kTeType, begin ? kSliceBegin : kSliceEnd);
      pb::uint_field(b, kTeTrackUuid, track);
      if (begin) {
        name_field(iid, name);
        if (cls == 4) pb::fixed64_field(b, kTeFlowIds, flow_id);
      }
      track_event_end(te, p);
    }
    if (cls == 4) {
      StreamState& e = streams[stream_of_key.at(m.streams()[o.stream].key())];
      std::uint32_t& eslot = e.interval_iid[std::uint64_t{o.interval} << 8 | o.part];
      const std::size_t p = packet_at(e, t_end, true);
      const std::uint32_t iid = intern(e, eslot, name);
      const std::size_t te = pb::open(b, kPktTrackEvent);
      pb::uint_field(b, kTeType, kInstant);
      name_field(iid, name);
      pb::fixed64_field(b, kTeTerminatingFlowIds, flow_id);
      track_event_end(te, p);
    }
  };

  // Batches (Merged::next_batch: one input's batch without a merge), as the other tools' inner loops.
  std::vector<Sample> batch(4096);
  std::size_t nb = 0, at = 0;
  for (;;) {
    if (at == nb) {
      nb = in.next_batch(batch);
      at = 0;
      if (nb == 0) break;
    }
    const Sample& smp = batch[at++];
    ++st.samples;
    if (!have_t0) {
      have_t0 = true;
      t0 = smp.timestamp;
    }
    const std::uint64_t t = ns(smp.timestamp);
    const StreamKey key = StreamKey::of(smp);
    if (!(have_cur && key.key() == cur_key)) {
      cur = stream_for(key, t);
      cur_key = key.key();
      have_cur = true;
    }
    StreamState& s = streams[cur];
    const bool named = (smp.flags & kFlagNamed) && !smp.is_resource();
    if (named && (smp.flags & kFlagScopeBegin)) {  // a named scope's begin: the slice opens now
      const std::uint16_t id = record::name_id_of(smp.data);
      if (s.named_iid.size() <= id) s.named_iid.resize(std::size_t{id} + 1, 0);
      const std::size_t p = packet_at(s, t, false);
      std::string nm = s.named_iid[id] ? std::string() : names.name_of(smp);
      const std::uint32_t iid = intern(s, s.named_iid[id], nm);
      if (!iid) nm = names.name_of(smp);
      const std::size_t te = pb::open(b, kPktTrackEvent);
      pb::uint_field(b, kTeType, kSliceBegin);
      name_field(iid, nm);
      if (const std::uint64_t v = record::named_value_of(smp.data)) debug_uint(kDanValue, v);
      if (smp.phase) debug_uint(kDanPhase, smp.phase);
      track_event_end(te, p);
      s.open.push_back(id);
    }
    const bool interval_event = m.feed(smp);  // may end slices (on_interval)
    if (smp.is_resource()) {
      if (!s.counters_described) describe_counters(s);
      const std::size_t p = packet_at(s, t, false);
      const std::size_t te = pb::open(b, kPktTrackEvent);
      pb::uint_field(b, kTeType, kCounter);
      pb::uint_field(b, kTeTrackUuid, s.counter_uuid(0));
      pb::int_field(b, kTeCounterValue, static_cast<std::int64_t>(smp.counters[0]));
      for (unsigned c = 1; c < kResourceCounters; ++c)
        pb::int_field(b, kTeExtraCounterValues, static_cast<std::int64_t>(smp.counters[c]));
      track_event_end(te, p);
      st.counters += kResourceCounters;
    } else if (!interval_event) {  // a named event, or any other Trace sample: an instant
      const std::size_t p = packet_at(s, t, false);
      std::uint32_t iid;
      std::string nm;
      std::uint64_t value = 0;
      if (named) {
        const std::uint16_t id = record::name_id_of(smp.data);
        if (s.named_iid.size() <= id) s.named_iid.resize(std::size_t{id} + 1, 0);
        if (!s.named_iid[id]) nm = names.name_of(smp);
        iid = intern(s, s.named_iid[id], nm);
        if (!iid) nm = names.name_of(smp);
        value = record::named_value_of(smp.data);
      } else {
        const std::uint64_t ev = smp.data & m.event_mask();
        std::uint32_t& slot = s.event_iid.slot(ev);  // stays 0 when the table is full (intern() leaves it)
        if (!slot) {  // "event N", as the JSON export names it
          char text[32] = "event ";
          nm.assign(text, static_cast<std::size_t>(std::to_chars(text + 6, text + sizeof text, ev).ptr - text));
        }
        iid = intern(s, slot, nm);
      }
      const std::size_t te = pb::open(b, kPktTrackEvent);
      pb::uint_field(b, kTeType, kInstant);
      name_field(iid, nm, !named);
      if (value) debug_uint(kDanValue, value);
      if (smp.phase) debug_uint(kDanPhase, smp.phase);
      track_event_end(te, p);
      ++st.instants;
    }
    w.maybe_flush();
  }
  m.finish();
  // Scheduling switches (kron record --sched): each thread's states as slices on a track of their own
  // ("thread N: scheduling", in its process), on one sequence of their own after the samples' (the
  // switches follow the samples in the file), with absolute times (E153's integers, as the JSON's).
  if (have_t0) {
    StreamState sched;
    sched.seq = static_cast<std::uint32_t>(streams.size()) + 1;
    std::unordered_map<std::uint64_t, std::uint64_t> sched_track;  // (source, thread) -> track uuid
    std::uint32_t iid[3] = {0, 0, 0};
    bool started = false;
    const auto sns = [&](std::uint64_t t) {
      return t <= t0 ? 0 : static_cast<std::uint64_t>(static_cast<u128>(t - t0) * 1'000'000'000u / clock);
    };
    st.sched_slices = for_each_sched_stretch(
        in, t0,
        [&](std::uint32_t source, std::uint32_t thread) {
          if (!started) {  // the sequence's first packet: incremental state cleared (interned names)
            started = true;
            const std::size_t p = pb::open(b, kTracePacket);
            pb::uint_field(b, kPktSequenceId, sched.seq);
            pb::uint_field(b, kPktSequenceFlags, kSeqIncrementalStateCleared | kSeqNeedsIncrementalState);
            intern_debug_name(kDanCpu, "cpu");
            pb::close(b, p);
          }
          const std::uint64_t process = process_track(sched, source);  // described here when it has no samples
          const std::uint64_t uuid = kSchedUuidBase + sched_track.size();
          sched_track.emplace(std::uint64_t{source} << 32 | thread, uuid);
          auto d = descriptor(sched);
          pb::uint_field(b, kTdUuid, uuid);
          pb::uint_field(b, kTdParent, process);
          pb::bytes_field(b, kTdName, fmt::format("thread {}: scheduling", thread));
          end_descriptor(d);
          w.maybe_flush();
        },
        [&](const SchedStretch& x) {
          const std::uint64_t track = sched_track.at(std::uint64_t{x.source} << 32 | x.thread);
          const unsigned k = x.state[0] == 'r' ? 0 : x.state[0] == 'p' ? 1 : 2;
          for (const bool begin : {true, false}) {
            const std::size_t p = packet_at(sched, sns(begin ? x.begin : x.end), true);
            const std::uint32_t name = begin ? intern(sched, iid[k], x.state) : 0;
            const std::size_t te = pb::open(b, kPktTrackEvent);
            pb::uint_field(b, kTeType, begin ? kSliceBegin : kSliceEnd);
            pb::uint_field(b, kTeTrackUuid, track);
            if (begin) {
              name_field(name, x.state);
              debug_uint(kDanCpu, x.cpu);
            }
            track_event_end(te, p);
          }
          w.maybe_flush();
        });
  }
  // ERRATUM E169. MPI messages (trace format 1.5): each matched send/receive pair (match_messages, E208) a flow from an
  // instant "MPI send" on the sender's thread track at the send's begin to an instant "MPI receive" on the
  // receiver's thread track at the receive's end (inside libkron_mpi's MPI_Send / MPI_Recv ... slices
  // there), on one sequence of their own after the samples', with absolute times. A thread with MPI calls
  // and no samples gets a thread track of its own. Collectives are not flows.
  const MpiCalls mpi = mpi_calls(in);
  if (!mpi.matching.pairs.empty()) {
    StreamState seq;
    seq.seq = static_cast<std::uint32_t>(streams.size()) + 2;  // after the samples' and the switches'
    const std::size_t p0 = pb::open(b, kTracePacket);
    pb::uint_field(b, kPktSequenceId, seq.seq);
    pb::uint_field(b, kPktSequenceFlags, kSeqIncrementalStateCleared | kSeqNeedsIncrementalState);
    pb::close(b, p0);
    std::unordered_map<std::uint64_t, std::uint64_t> mpi_track;  // stream key -> thread track uuid
    auto track_of = [&](const record::MpiRecord& r) {
      const StreamKey k{r.source, r.thread, true};
      if (auto sit = stream_of_key.find(k.key()); sit != stream_of_key.end()) return streams[sit->second].uuid;
      auto [tit, fresh] = mpi_track.try_emplace(k.key(), kMpiUuidBase + mpi_track.size());
      if (fresh) {
        const std::uint64_t process = process_track(seq, r.source);
        const std::int64_t pid = board::source_pid(r.source);
        auto d = descriptor(seq);
        pb::uint_field(b, kTdUuid, tit->second);
        pb::uint_field(b, kTdParent, process);
        const std::size_t th = pb::open(b, kTdThread);
        pb::int_field(b, kThPid, pid);
        pb::int_field(b, kThTid, r.thread);
        pb::bytes_field(b, kThName, fmt::format("rank {} thread {}", r.rank, r.thread));
        pb::close(b, th);
        end_descriptor(d);
      }
      return tit->second;
    };
    const auto mns = [&](std::uint64_t t) {
      return t <= t0 ? 0 : static_cast<std::uint64_t>(static_cast<u128>(t - t0) * 1'000'000'000u / clock);
    };
    std::uint32_t iid[2] = {0, 0};
    std::uint64_t id = kMpiFlowBase;
    for (const auto& [si, ri] : mpi.matching.pairs) {
      ++id;
      for (const bool send : {true, false}) {
        const record::MpiRecord& r = mpi.events[send ? si : ri].rec;
        const std::uint64_t track = track_of(r);
        const std::size_t p = packet_at(seq, mns(send ? r.timestamp : r.end), true);
        const char* name = send ? "MPI send" : "MPI receive";
        const std::uint32_t n = intern(seq, iid[send ? 0 : 1], name);
        const std::size_t te = pb::open(b, kPktTrackEvent);
        pb::uint_field(b, kTeType, kInstant);
        pb::uint_field(b, kTeTrackUuid, track);
        name_field(n, name, true);
        pb::fixed64_field(b, send ? kTeFlowIds : kTeTerminatingFlowIds, id);
        track_event_end(te, p);
      }
      w.maybe_flush();
    }
    st.mpi_flows = id - kMpiFlowBase;
  }
  // Issue 12's snapshots (trace format 1.4): a counter track of the process per series, as the JSON's
  // (a histogram's count, p50, p99 and max per thread and phase; a virtual counter's value), on a
  // sequence of their own with absolute times.
  if (have_t0) {
    StreamState snap;
    snap.seq = static_cast<std::uint32_t>(streams.size()) + 3;  // after the switches' and MPI's
    std::unordered_map<std::string, std::uint64_t> series_track;  // "SOURCE/SERIES/METRIC" -> track uuid
    bool started = false;
    auto value = [&](const SnapshotSeries& x, std::string_view metric, std::uint64_t v) {
      if (!started) {
        started = true;
        const std::size_t p = pb::open(b, kTracePacket);
        pb::uint_field(b, kPktSequenceId, snap.seq);
        pb::uint_field(b, kPktSequenceFlags, kSeqIncrementalStateCleared);
        pb::close(b, p);
      }
      const std::string key = fmt::format("{}/{}/{}", x.source, x.series, metric);
      auto [trk, fresh] = series_track.try_emplace(key, kSeriesUuidBase + series_track.size());
      if (fresh) {
        const std::uint64_t process = process_track(snap, x.source);
        auto d = descriptor(snap);
        pb::uint_field(b, kTdUuid, trk->second);
        pb::uint_field(b, kTdParent, process);
        pb::bytes_field(b, kTdName, text::utf8_safe(metric.empty() ? x.series : x.series + " " + std::string(metric)));
        const std::size_t cd = pb::open(b, kTdCounter);
        pb::close(b, cd);
        end_descriptor(d);
      }
      const std::size_t p = packet_at(snap, x.when > t0 ? ns(x.when) : 0, true);
      const std::size_t te = pb::open(b, kPktTrackEvent);
      pb::uint_field(b, kTeType, kCounter);
      pb::uint_field(b, kTeTrackUuid, trk->second);
      pb::int_field(b, kTeCounterValue, static_cast<std::int64_t>(v));
      track_event_end(te, p);
      w.maybe_flush();
    };
    st.counters += for_each_snapshot_series(in, [&](const SnapshotSeries& x) {
      if (x.hist) {
        value(x, "count", x.sum.count);
        value(x, "p50", x.sum.p50);
        value(x, "p99", x.sum.p99);
        value(x, "max", x.sum.max);
      } else {
        value(x, "", x.value);
      }
    });
  }
  w.finish();
  st.bytes = w.written();
  st.raw_bytes = w.raw_bytes();
  return st;
}

}  // namespace kron::analysis
