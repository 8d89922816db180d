// kron export --format perfetto: Perfetto's own protobuf trace (a `Trace`: TracePackets back to back),
// written by the small encoder of protowire.hpp; field numbers in perfetto_schema.hpp, packets built by
// perfetto_packets.hpp, batches written (and deflated) by perfetto_writer.hpp.
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
//  - after the samples, three sequences of their own with absolute times: the thread states of kron record
//    --sched, an MPI recording's matched messages as flows between instants on the ranks' thread tracks
//    (E169), the histogram and virtual counter snapshots as counter tracks.
// Memory: per stream (its state, interned names up to kMaxInterned) and per interval track; nothing per
// sample. Output goes through a 1 MiB batch.
#include <fmt/core.h>

#include <algorithm>
#include <charconv>

#include "exports/exports.hpp"
#include "exports/sink.hpp"
#include "exports/perfetto_packets.hpp"
#include "exports/protowire.hpp"
#include "kron/board.hpp"
#include "kron/core/text.hpp"

namespace kron::exports {
namespace perfetto {
namespace {

using analysis::Occurrence;
using analysis::StreamKey;

// ERRATUM E163: the most tracks (lanes) one (stream, interval, part) gets for overlapping occurrences.
constexpr std::size_t kMaxLanes = 1024;
// MPI messages' flow ids: a range of their own, apart from class 4's (1, 2, ...).
constexpr std::uint64_t kMpiFlowBase = std::uint64_t{1} << 62;

class Sink final : public analysis::TimelineSink, Packets {
 public:
  Sink(std::FILE* f, const PerfettoOptions& po, ExportStats& st) : Packets(f, po), st_(st) {}
  Needs needs() const override { return Needs().matched().then({Part::Stretches, Part::Messages, Part::Snapshots}); }
  void begin(analysis::Timeline& tl) override { tl_ = &tl; }
  void stream(std::uint32_t index, const StreamKey& k, const Sample& first) override;
  void before_match(const Sample& s, std::uint32_t stream) override;
  void interval(const Occurrence& o) override;
  void sample(const Sample& s, std::uint32_t stream, bool interval_event) override;
  void sched_thread(std::uint32_t source, std::uint32_t thread) override;
  void sched_stretch(const analysis::SchedStretch& x) override;
  void mpi_message(const record::MpiRecord& snd, const record::MpiRecord& rcv) override;
  void snapshot(const analysis::SnapshotSeries& x) override;
  void end() override {
    w_.finish();
    st_.bytes = w_.written();
    st_.raw_bytes = w_.raw_bytes();
  }

 private:
  void named_end(const Occurrence& o);
  void cut_open(Sequence& s, const Sample& smp);
  void describe_counters(Sequence& s);
  void instant(Sequence& s, const Sample& smp);
  std::uint64_t mpi_track(const record::MpiRecord& r);
  void series_value(const analysis::SnapshotSeries& x, std::string_view metric, std::uint64_t v);

  ExportStats& st_;
  analysis::Timeline* tl_ = nullptr;
  std::vector<Sequence> streams_;  // by the timeline's stream number
  std::uint32_t cur_ = 0;          // the stream of the sample being fed
  struct Lane {
    std::uint64_t uuid, last_end;
  };
  std::unordered_map<std::uint64_t, std::vector<Lane>> interval_lanes_;  // (stream, interval, part) -> lanes
  std::uint64_t next_interval_track_ = 0, flow_id_ = 0;
  // The sequences after the samples': made when their first packet is written.
  Sequence sched_, mpi_, snap_;
  bool sched_started_ = false, mpi_started_ = false, snap_started_ = false;
  std::unordered_map<std::uint64_t, std::uint64_t> sched_track_;  // stream key of (source, thread) -> uuid
  std::unordered_map<std::uint64_t, std::uint64_t> mpi_track_;    // stream key -> thread track uuid
  std::unordered_map<std::string, std::uint64_t> series_track_;   // "SOURCE/SERIES/METRIC" -> uuid
  std::uint32_t sched_iid_[3] = {0, 0, 0}, mpi_iid_[2] = {0, 0};
};

// A stream's sequence, made (with its tracks described) when its first sample comes. First packet:
// incremental state cleared, defaults, the clock, the debug annotation names.
void Sink::stream(std::uint32_t index, const StreamKey& k, const Sample& first) {
  const std::uint64_t t_ns = tl_->ns(first.timestamp);
  Sequence& s = streams_.emplace_back();
  s.seq = index + 1;
  s.uuid = std::uint64_t{s.seq} * 32;
  s.last_ns = t_ns;
  const std::size_t p = pb::open(b_, kTracePacket);
  pb::uint_field(b_, kPktTimestamp, t_ns);
  pb::uint_field(b_, kPktClockId, kClockBoottime);
  pb::uint_field(b_, kPktSequenceId, s.seq);
  // ERRATUM E166: the flags on this first packet only; the sixteen counters as one COUNTER event.
  pb::uint_field(b_, kPktSequenceFlags, kSeqIncrementalStateCleared | kSeqNeedsIncrementalState);
  const std::size_t d = pb::open(b_, kPktDefaults);
  pb::uint_field(b_, kDefClockId, kClockKron);
  const std::size_t te = pb::open(b_, kDefTrackEvent);
  pb::uint_field(b_, kTedTrackUuid, s.uuid);
  for (unsigned c = 1; c < kResourceCounters; ++c) pb::uint_field(b_, kTedExtraCounterUuids, s.counter_uuid(c));
  pb::close(b_, te);
  pb::close(b_, d);
  intern_debug_name(kDanValue, "value");
  intern_debug_name(kDanPhase, "phase");
  const std::size_t cs = pb::open(b_, kPktClockSnapshot);
  for (const std::uint32_t clock : {kClockBoottime, kClockKron}) {
    const std::size_t c = pb::open(b_, kCsClocks);
    pb::uint_field(b_, kClkId, clock);
    pb::uint_field(b_, kClkTimestamp, t_ns);
    if (clock == kClockKron) pb::uint_field(b_, kClkIncremental, 1);
    pb::close(b_, c);
  }
  pb::close(b_, cs);
  pb::close(b_, p);
  // The process (once per source) and this stream's track, with the recording's names.
  const std::uint64_t process = process_track(s, k.source, *tl_);
  const std::string label = text::utf8_safe(tl_->stream_label(k));
  auto desc = descriptor(s);
  pb::uint_field(b_, kTdUuid, s.uuid);
  pb::uint_field(b_, kTdParent, process);
  pb::bytes_field(b_, kTdName, label);
  if (k.by_thread) {  // a live recording's thread; a classic CPU is a plain track of its process
    const std::size_t th = pb::open(b_, kTdThread);
    pb::int_field(b_, kThPid, board::source_pid(k.source));
    pb::int_field(b_, kThTid, k.lane);
    pb::bytes_field(b_, kThName, label);
    pb::close(b_, th);
  }
  end_descriptor(desc);
}

// DECISION D26: a sample after lost ones (analysis::lost_before) closes every named slice open on its
// stream at its time, as the matcher cuts them (D20): each end carries the debug annotation cut_by_loss.
void Sink::cut_open(Sequence& s, const Sample& smp) {
  const std::uint64_t t = tl_->ns(smp.timestamp);
  for (; !s.open.empty(); s.open.pop_back()) {
    const std::size_t p = packet_at(s, t, false);
    const std::size_t te = track_event(kSliceEnd);
    debug_uint("cut_by_loss", 1);
    track_event_end(te, p);
    ++st_.cut_by_loss;
  }
}

// A named scope's begin: the slice opens now, before the matcher sees the sample.
void Sink::before_match(const Sample& smp, std::uint32_t stream) {
  cur_ = stream;
  if (analysis::lost_before(smp.flags)) [[unlikely]]
    cut_open(streams_[stream], smp);
  if (!(smp.flags & kFlagNamed) || smp.is_resource() || !(smp.flags & kFlagScopeBegin)) return;
  Sequence& s = streams_[stream];
  const std::uint16_t id = record::name_id_of(smp.data);
  if (s.named_iid.size() <= id) s.named_iid.resize(std::size_t{id} + 1, 0);
  const std::size_t p = packet_at(s, tl_->ns(smp.timestamp), false);
  std::string nm = s.named_iid[id] ? std::string() : tl_->names().name_of(smp);
  const std::uint32_t iid = intern(s, s.named_iid[id], nm);
  if (!iid) nm = tl_->names().name_of(smp);
  const std::size_t te = track_event(kSliceBegin);
  name_field(iid, nm);
  if (const std::int64_t v = record::named_value_of(smp.data)) debug_int(kDanValue, v);  // DECISION D30
  if (smp.phase) debug_uint(kDanPhase, smp.phase);
  track_event_end(te, p);
  s.open.push_back(id);
}

// ERRATUM E162: a named scope's end closes it and the scopes left open inside it (E152).
void Sink::named_end(const Occurrence& o) {
  Sequence& s = streams_[cur_];
  const std::uint64_t t = tl_->ns(o.end);
  while (!s.open.empty()) {
    const std::uint16_t id = s.open.back();
    s.open.pop_back();
    const std::size_t p = packet_at(s, t, false);
    track_event_end(track_event(kSliceEnd), p);
    if (id == o.name_id) break;
  }
}

// interval.info: a slice on the (stream, interval) track, class 4 on its start's stream with a flow to an
// instant on its end's stream.
void Sink::interval(const Occurrence& o) {
  ++st_.slices;
  if (o.name_id) return named_end(o);
  const analysis::Matcher& m = *tl_->matcher();
  const unsigned cls = m.info().intervals[o.interval].cls;
  const std::uint32_t on = tl_->stream_index(m.streams()[cls == 4 ? o.start_stream : o.stream]);
  Sequence& s = streams_[on];
  // ERRATUM E163: slices of one track must nest, as a viewer nests them by time alone. So a track per
  // (stream, interval, part) (class 3's first sub-interval starts with the whole), and within it lanes: an
  // occurrence goes on the first lane whose slices all ended by its start (class 4's messages overlap in
  // flight), a new lane when none has; past kMaxLanes, the lane that ended first.
  const std::string name = m.part_name(o.interval, o.part);
  const std::uint64_t t_start = tl_->ns(o.start), t_end = tl_->ns(o.end);
  auto& lanes = interval_lanes_[std::uint64_t{on} << 24 | std::uint64_t{o.interval} << 4 | o.part];
  auto lane = std::find_if(lanes.begin(), lanes.end(), [&](const Lane& l) { return l.last_end <= t_start; });
  if (lane == lanes.end() && lanes.size() >= kMaxLanes) {
    lane = std::min_element(lanes.begin(), lanes.end(), [](auto& a, auto& b) { return a.last_end < b.last_end; });
    ++st_.lanes_reused;
  }
  if (lane == lanes.end()) {
    lanes.push_back(Lane{kIntervalUuidBase + next_interval_track_++, 0});
    lane = lanes.end() - 1;
    child_track(s, lane->uuid, s.uuid,
                lanes.size() == 1 ? fmt::format("{} (class {})", name, cls)
                                  : fmt::format("{} (class {}) #{}", name, cls, lanes.size()));
  }
  lane->last_end = std::max(lane->last_end, t_end);
  const std::uint64_t track = lane->uuid;
  std::uint32_t& slot = s.interval_iid[std::uint64_t{o.interval} << 8 | o.part];
  if (cls == 4) ++flow_id_;
  for (const bool begin : {true, false}) {
    const std::size_t p = packet_at(s, begin ? t_start : t_end, true);
    const std::uint32_t iid = begin ? intern(s, slot, name) : 0;
    const std::size_t te = track_event(begin ? kSliceBegin : kSliceEnd);
    pb::uint_field(b_, kTeTrackUuid, track);
    if (begin) {
      name_field(iid, name);
      if (cls == 4) pb::fixed64_field(b_, kTeFlowIds, flow_id_);
    }
    track_event_end(te, p);
  }
  if (cls == 4) {
    Sequence& e = streams_[tl_->stream_index(m.streams()[o.stream])];
    std::uint32_t& eslot = e.interval_iid[std::uint64_t{o.interval} << 8 | o.part];
    const std::size_t p = packet_at(e, t_end, true);
    const std::uint32_t iid = intern(e, eslot, name);
    const std::size_t te = track_event(kInstant);
    name_field(iid, name);
    pb::fixed64_field(b_, kTeTerminatingFlowIds, flow_id_);
    track_event_end(te, p);
  }
}

void Sink::describe_counters(Sequence& s) {
  s.counters_described = true;
  for (unsigned c = 0; c < kResourceCounters; ++c)
    child_track(s, s.counter_uuid(c), s.uuid, tl_->counter_label(c), "count");
}

void Sink::sample(const Sample& smp, std::uint32_t stream, bool interval_event) {
  ++st_.samples;
  Sequence& s = streams_[stream];
  if (smp.is_resource()) {
    if (!s.counters_described) describe_counters(s);
    const std::size_t p = packet_at(s, tl_->ns(smp.timestamp), false);
    const std::size_t te = track_event(kCounter);
    pb::uint_field(b_, kTeTrackUuid, s.counter_uuid(0));
    pb::int_field(b_, kTeCounterValue, static_cast<std::int64_t>(smp.counters[0]));
    for (unsigned c = 1; c < kResourceCounters; ++c)
      pb::int_field(b_, kTeExtraCounterValues, static_cast<std::int64_t>(smp.counters[c]));
    track_event_end(te, p);
    st_.counters += kResourceCounters;
  } else if (!interval_event) {  // a named event, or any other Trace sample: an instant
    instant(s, smp);
  }
  w_.maybe_flush();
}

void Sink::instant(Sequence& s, const Sample& smp) {
  const bool named = smp.flags & kFlagNamed;
  const std::size_t p = packet_at(s, tl_->ns(smp.timestamp), false);
  std::uint32_t iid;
  std::string nm;
  std::int64_t value = 0;  // a named probe's: signed (DECISION D30)
  if (named) {
    const std::uint16_t id = record::name_id_of(smp.data);
    if (s.named_iid.size() <= id) s.named_iid.resize(std::size_t{id} + 1, 0);
    if (!s.named_iid[id]) nm = tl_->names().name_of(smp);
    iid = intern(s, s.named_iid[id], nm);
    if (!iid) nm = tl_->names().name_of(smp);
    value = record::named_value_of(smp.data);
  } else {
    const std::uint64_t ev = smp.data & tl_->matcher()->event_mask();
    std::uint32_t& slot = s.event_iid.slot(ev);  // stays 0 when the table is full (intern() leaves it)
    if (!slot) {                                 // "event N", as the JSON export names it
      char text[32] = "event ";
      nm.assign(text, static_cast<std::size_t>(std::to_chars(text + 6, text + sizeof text, ev).ptr - text));
    }
    iid = intern(s, slot, nm);
  }
  const std::size_t te = track_event(kInstant);
  name_field(iid, nm, !named);
  if (value) debug_int(kDanValue, value);
  if (smp.phase) debug_uint(kDanPhase, smp.phase);
  track_event_end(te, p);
  ++st_.instants;
}

// Scheduling switches (kron record --sched): each thread's states as slices on a track of their own
// ("NAME (tid N): scheduling", in its process), on one sequence of their own after the samples' (the switches
// follow the samples in the file), with absolute times (E153's integers, as the JSON's).
void Sink::sched_thread(std::uint32_t source, std::uint32_t thread) {
  if (!tl_->have_t0()) return;
  if (!sched_started_) {  // the sequence's first packet: incremental state cleared (interned names)
    sched_started_ = true;
    sched_.seq = static_cast<std::uint32_t>(streams_.size()) + 1;
    sequence_start(sched_, kSeqIncrementalStateCleared | kSeqNeedsIncrementalState, kDanCpu, "cpu");
  }
  const std::uint64_t process = process_track(sched_, source, *tl_);  // described here when it has no samples
  const std::uint64_t uuid = kSchedUuidBase + sched_track_.size();
  sched_track_.emplace(thread_key(source, thread), uuid);
  child_track(sched_, uuid, process, text::utf8_safe(tl_->sched_label(source, thread)));
  w_.maybe_flush();
}

void Sink::sched_stretch(const analysis::SchedStretch& x) {
  if (!tl_->have_t0()) return;
  const std::uint64_t track = sched_track_.at(thread_key(x.source, x.thread));
  const unsigned k = x.state[0] == 'r' ? 0 : x.state[0] == 'p' ? 1 : 2;
  for (const bool begin : {true, false}) {
    const std::size_t p = packet_at(sched_, tl_->ns_after(begin ? x.begin : x.end), true);
    const std::uint32_t name = begin ? intern(sched_, sched_iid_[k], x.state) : 0;
    const std::size_t te = track_event(begin ? kSliceBegin : kSliceEnd);
    pb::uint_field(b_, kTeTrackUuid, track);
    if (begin) {
      name_field(name, x.state);
      debug_uint(kDanCpu, x.cpu);
    }
    track_event_end(te, p);
  }
  ++st_.sched_slices;
  w_.maybe_flush();
}

// A thread with MPI calls and no samples gets a thread track of its own.
std::uint64_t Sink::mpi_track(const record::MpiRecord& r) {
  const StreamKey k{r.source, r.thread, true};
  if (const std::uint32_t i = tl_->stream_index(k); i != analysis::Timeline::kNoStream) return streams_[i].uuid;
  auto [tit, fresh] = mpi_track_.try_emplace(k.key(), kMpiUuidBase + mpi_track_.size());
  if (fresh) {
    const std::uint64_t process = process_track(mpi_, r.source, *tl_);
    auto d = descriptor(mpi_);
    pb::uint_field(b_, kTdUuid, tit->second);
    pb::uint_field(b_, kTdParent, process);
    const std::size_t th = pb::open(b_, kTdThread);
    pb::int_field(b_, kThPid, board::source_pid(r.source));
    pb::int_field(b_, kThTid, r.thread);
    pb::bytes_field(b_, kThName, fmt::format("rank {} thread {}", r.rank, r.thread));
    pb::close(b_, th);
    end_descriptor(d);
  }
  return tit->second;
}

// ERRATUM E169. MPI messages (trace format 1.5): each matched send/receive pair (match_messages, E208) a
// flow from an instant "MPI send" on the sender's thread track at the send's begin to an instant "MPI
// receive" on the receiver's thread track at the receive's end (inside libkron_mpi's MPI_Send / MPI_Recv
// ... slices there), on a sequence of their own, with absolute times. Collectives are not flows.
void Sink::mpi_message(const record::MpiRecord& snd, const record::MpiRecord& rcv) {
  if (!mpi_started_) {
    mpi_started_ = true;
    mpi_.seq = static_cast<std::uint32_t>(streams_.size()) + 2;  // after the samples' and the switches'
    sequence_start(mpi_, kSeqIncrementalStateCleared | kSeqNeedsIncrementalState);
  }
  const std::uint64_t id = kMpiFlowBase + ++flow_id_;
  for (const bool send : {true, false}) {
    const record::MpiRecord& r = send ? snd : rcv;
    const std::uint64_t track = mpi_track(r);
    const std::size_t p = packet_at(mpi_, tl_->ns_after(send ? r.timestamp : r.end), true);
    const char* name = send ? "MPI send" : "MPI receive";
    const std::uint32_t n = intern(mpi_, mpi_iid_[send ? 0 : 1], name);
    const std::size_t te = track_event(kInstant);
    pb::uint_field(b_, kTeTrackUuid, track);
    name_field(n, name, true);
    pb::fixed64_field(b_, send ? kTeFlowIds : kTeTerminatingFlowIds, id);
    track_event_end(te, p);
  }
  st_.mpi_flows = flow_id_;
  w_.maybe_flush();
}

// Snapshots (trace format 1.4): a counter track of the process per series, as the JSON's (a histogram's
// count, p50, p99 and max per thread and phase; a virtual counter's value), on a sequence of their own
// with absolute times.
void Sink::snapshot(const analysis::SnapshotSeries& x) {
  if (!tl_->have_t0()) return;
  ++st_.counters;
  if (!x.hist) return series_value(x, "", x.value);
  series_value(x, "count", x.sum.count);
  series_value(x, "p50", x.sum.p50);
  series_value(x, "p99", x.sum.p99);
  series_value(x, "max", x.sum.max);
}

void Sink::series_value(const analysis::SnapshotSeries& x, std::string_view metric, std::uint64_t v) {
  if (!snap_started_) {
    snap_started_ = true;
    snap_.seq = static_cast<std::uint32_t>(streams_.size()) + 3;  // after the switches' and MPI's
    sequence_start(snap_, kSeqIncrementalStateCleared);
  }
  auto [trk, fresh] = series_track_.try_emplace(fmt::format("{}/{}/{}", x.source, x.series, metric),
                                                kSeriesUuidBase + series_track_.size());
  if (fresh) {
    const std::uint64_t process = process_track(snap_, x.source, *tl_);
    child_track(snap_, trk->second, process, metric.empty() ? x.series : x.series + " " + std::string(metric), "");
  }
  const std::size_t p = packet_at(snap_, x.when > tl_->t0() ? tl_->ns(x.when) : 0, true);
  const std::size_t te = track_event(kCounter);
  pb::uint_field(b_, kTeTrackUuid, trk->second);
  pb::int_field(b_, kTeCounterValue, static_cast<std::int64_t>(v));
  track_event_end(te, p);
  w_.maybe_flush();
}

}  // namespace
}  // namespace perfetto

ExportStats export_perfetto(analysis::Timeline& tl, std::FILE* out, const PerfettoOptions& po) {
  return run_sink<perfetto::Sink>(tl, out, po);
}

}  // namespace kron::exports
