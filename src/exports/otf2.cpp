// kron export --format otf2: an OTF2 archive (Vampir, Score-P's tools, ViTE) written through Debian's
// libopen-trace-format2 (OTF2 3.0; optional: KRON_WITH_OTF2, else the format says it was not built in).
// OTF2's reference: the library's headers, OTF2_GlobalDefWriter.h and OTF2_EvtWriter.h.
//
// Layout (docs/tools.md "OTF2"): the archive `OUT/traces.otf2` with its `traces/` and `traces.def`.
// Definitions: a system tree node "machine" with one location group per source (process) and one location
// per kron stream (a live recording's thread, a classic CPU), named as the Perfetto tracks; a region per
// named-scope name; a metric class of the sixteen resource counters, and one of the data word of every
// other sample (a kron event has no OTF2 record of its own); clock properties with the recording's clock
// and wall time. Events: Enter/Leave per named scope (E167), Metric per Resource sample and per other
// sample; a named probe's value (when not 0) as the attribute "value" of its Enter or Metric (DECISION
// D30). An MPI recording (trace format 1.5): MPI communication records on the ranks' locations (E173),
// a Comm per communicator (E170), and a rank's own file's clock offsets as ClockOffset definitions (E171,
// E172). Memory: OTF2's event buffers, one per location, and per name, and the MPI calls; nothing per sample.
#include "exports/exports.hpp"
#include "exports/sink.hpp"

#include <fmt/core.h>

#include <stdexcept>

#ifdef KRON_HAVE_OTF2
#include <otf2/otf2.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kron/board.hpp"
#include "kron/core/text.hpp"
#endif

namespace kron::exports {

std::string otf2_not_built_in() {
  return "--format otf2 was not built into this kron: configure with -DKRON_WITH_OTF2=ON after installing "
         "libopen-trace-format2-dev (deps/debian-packages.txt; every tree of the Makefile does)";
}

#ifndef KRON_HAVE_OTF2
bool otf2_built_in() { return false; }
ExportStats export_otf2(analysis::Timeline&, const std::string&) { throw std::runtime_error(otf2_not_built_in()); }
#else
bool otf2_built_in() { return true; }

namespace {
__extension__ typedef unsigned __int128 u128;

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_FlushCallbacks kFlush = {pre_flush, nullptr};

// Bounded memory: libotf2 given no memory callbacks mallocs a new chunk whenever a buffer fills and writes
// them all only when the writer closes (the whole trace in memory). Given these, a buffer holds at most
// kChunksPerBuffer chunks: the next request is refused (nullptr), and libotf2 then flushes the buffer to its
// file (pre_flush says yes), frees its chunks (free_all) and asks again. Memory: chunks x buffers (one a
// location, and the definitions').
constexpr std::size_t kChunkBytes = 1024 * 1024, kChunksPerBuffer = 4;
struct BufferChunks {
  std::vector<void*> chunks;
};
void* chunk_allocate(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, std::uint64_t size) {
  auto*& b = reinterpret_cast<BufferChunks*&>(*per_buffer);
  if (!b) b = new BufferChunks;
  if (b->chunks.size() >= kChunksPerBuffer) return nullptr;  // full: libotf2 flushes, frees, asks again
  void* c = std::malloc(size);
  if (c) b->chunks.push_back(c);
  return c;
}
void chunk_free_all(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, bool final) {
  auto*& b = reinterpret_cast<BufferChunks*&>(*per_buffer);
  if (!b) return;
  for (void* c : b->chunks) std::free(c);
  b->chunks.clear();
  if (final) {
    delete b;
    b = nullptr;
  }
}
OTF2_MemoryCallbacks kMemory = {chunk_allocate, chunk_free_all};

void check(OTF2_ErrorCode e, const char* what) {
  if (e != OTF2_SUCCESS)
    throw std::runtime_error(
        fmt::format("OTF2: {}: {} ({})", what, OTF2_Error_GetName(e), OTF2_Error_GetDescription(e)));
}

// One OTF2 event of an MPI record (trace format 1.5), on its thread's location: `end` false at the call's
// begin (MpiSend, MpiIsend, MpiIrecvRequest, MpiCollectiveBegin), true at its end (MpiRecv,
// MpiIsendComplete, MpiIrecv, MpiCollectiveEnd).
struct MpiEv {
  std::uint64_t t;
  std::uint32_t rec;
  bool end;
};

struct Loc {
  analysis::StreamKey key;
  OTF2_EvtWriter* w = nullptr;
  std::uint64_t last = 0, events = 0;
  std::uint32_t group = 0;
  std::uint32_t input = 0;           // the input its first event came from (ClockOffset definitions)
  bool absent = false;               // an MPI rank not in the inputs (E170): a location without events
  std::vector<OTF2_RegionRef> open;  // named scopes entered, not left (E152, E167)
  std::vector<MpiEv> mpi;            // its MPI events in time order, written up to mpi_at
  std::size_t mpi_at = 0;
};

// The source of the locations of MPI ranks the inputs do not hold (E170), and the most of them defined.
constexpr std::uint32_t kAbsentSource = 0xffffffffu;
constexpr std::uint32_t kMaxAbsentRanks = 1u << 16;

OTF2_CollectiveOp collective_op(record::MpiCall c) {
  using C = record::MpiCall;
  switch (c) {
    // A non-blocking collective is written as its blocking form, begun at its posting and ended at its
    // completion (ERRATUM E433).
    case C::Barrier:
    case C::Ibarrier: return OTF2_COLLECTIVE_OP_BARRIER;
    case C::Bcast:
    case C::Ibcast: return OTF2_COLLECTIVE_OP_BCAST;
    case C::Reduce:
    case C::Ireduce: return OTF2_COLLECTIVE_OP_REDUCE;
    case C::Allreduce:
    case C::Iallreduce: return OTF2_COLLECTIVE_OP_ALLREDUCE;
    case C::Gather:
    case C::Igather: return OTF2_COLLECTIVE_OP_GATHER;
    case C::Allgather:
    case C::Iallgather: return OTF2_COLLECTIVE_OP_ALLGATHER;
    case C::Scatter:
    case C::Iscatter: return OTF2_COLLECTIVE_OP_SCATTER;
    case C::Gatherv:
    case C::Igatherv: return OTF2_COLLECTIVE_OP_GATHERV;
    case C::Scatterv:
    case C::Iscatterv: return OTF2_COLLECTIVE_OP_SCATTERV;
    case C::Allgatherv:
    case C::Iallgatherv: return OTF2_COLLECTIVE_OP_ALLGATHERV;
    case C::Alltoallv:
    case C::Ialltoallv: return OTF2_COLLECTIVE_OP_ALLTOALLV;
    case C::ReduceScatter: return OTF2_COLLECTIVE_OP_REDUCE_SCATTER;
    case C::ReduceScatterBlock: return OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK;
    case C::Scan: return OTF2_COLLECTIVE_OP_SCAN;
    case C::Exscan: return OTF2_COLLECTIVE_OP_EXSCAN;
    default: return OTF2_COLLECTIVE_OP_ALLTOALL;
  }
}
using analysis::StreamKey;

class Sink final : public analysis::TimelineSink {
 public:
  Sink(const std::string& dir, ExportStats& st);
  ~Sink() override {
    if (ar_) OTF2_Archive_Close(ar_);
    OTF2_AttributeList_Delete(attrs_);
  }
  Needs needs() const override { return {}; }
  void begin(analysis::Timeline& tl) override;
  void sample(const Sample& s, std::uint32_t stream, bool) override;
  void end() override;

 private:
  OTF2_StringRef str(const std::string& s);
  Loc& loc_for(const StreamKey& k, std::size_t input);
  std::uint32_t loc_of_call(std::size_t i);
  void prepare_mpi();
  std::uint32_t comm_rank(std::uint32_t comm, std::int32_t world) const;
  void write_mpi(Loc& l, std::uint64_t t, bool through);
  void write_mpi_event(Loc& l, const MpiEv& e, std::uint64_t at);
  void scope_event(Loc& l, const Sample& s, std::uint64_t t);
  OTF2_AttributeList* value_attribute(const Sample& s);
  void write_clock_offsets();
  void write_global_defs();
  void write_mpi_defs(OTF2_GlobalDefWriter* g);
  void write_metric_defs(OTF2_GlobalDefWriter* g);

  ExportStats& st_;
  analysis::Timeline* tl_ = nullptr;
  const analysis::MpiCalls* mpi_ = nullptr;
  OTF2_Archive* ar_ = nullptr;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, OTF2_StringRef> string_ref_;
  std::vector<Loc> locs_;
  std::unordered_map<std::uint64_t, std::uint32_t> loc_of_;
  std::vector<std::uint32_t> groups_;  // source of each location group
  std::unordered_map<std::uint32_t, std::uint32_t> group_of_;
  std::vector<std::uint16_t> regions_;  // name id of each region
  std::unordered_map<std::uint16_t, OTF2_RegionRef> region_of_;
  std::map<std::uint32_t, std::uint32_t> rank_loc_;                  // world rank -> the location of its first MPI call
  std::map<std::uint32_t, std::vector<std::uint32_t> > comm_ranks_;  // comm id -> world ranks, sorted
  std::map<std::uint32_t, OTF2_CommRef> comm_ref_;
  std::uint64_t t0_ = 0, t_last_ = 0, t_first_ = ~std::uint64_t{0};
  static constexpr OTF2_MetricRef kCounters = 0, kData = 1;
  static constexpr OTF2_AttributeRef kValue = 0;
  OTF2_AttributeList* attrs_ = OTF2_AttributeList_New();  // emptied by each event written with it
  bool value_written_ = false;                            // the attribute "value" is defined when used
};

Sink::Sink(const std::string& dir, ExportStats& st) : st_(st) {
  ar_ = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, kChunkBytes, 4 * kChunkBytes,
                          OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!ar_) throw std::runtime_error(dir + ": OTF2 cannot create the archive");
  check(OTF2_Archive_SetFlushCallbacks(ar_, &kFlush, nullptr), "flush callbacks");
  check(OTF2_Archive_SetMemoryCallbacks(ar_, &kMemory, nullptr), "memory callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(ar_), "collective callbacks");
  check(OTF2_Archive_SetCreator(ar_, "kron export"), "creator");
  check(OTF2_Archive_OpenEvtFiles(ar_), "open event files");
}

OTF2_StringRef Sink::str(const std::string& s) {
  const std::string safe = text::utf8_safe(s);
  auto [it, fresh] = string_ref_.try_emplace(safe, static_cast<OTF2_StringRef>(strings_.size()));
  if (fresh) strings_.push_back(safe);
  return it->second;
}

Loc& Sink::loc_for(const StreamKey& k, std::size_t input) {
  auto [it, fresh] = loc_of_.try_emplace(k.key(), static_cast<std::uint32_t>(locs_.size()));
  if (fresh) {
    Loc& l = locs_.emplace_back();
    l.key = k;
    l.input = static_cast<std::uint32_t>(input);
    l.w = OTF2_Archive_GetEvtWriter(ar_, it->second);
    if (!l.w) throw std::runtime_error("OTF2: cannot get an event writer");
    auto [g, new_group] = group_of_.try_emplace(k.source, static_cast<std::uint32_t>(groups_.size()));
    if (new_group) groups_.push_back(k.source);
    l.group = g->second;
  }
  return locs_[it->second];
}

std::uint32_t Sink::loc_of_call(std::size_t i) {
  const record::MpiRecord& r = mpi_->events[i].rec;
  return static_cast<std::uint32_t>(&loc_for(StreamKey{r.source, r.thread, true}, mpi_->events[i].input) -
                                    locs_.data());
}

void Sink::begin(analysis::Timeline& tl) {
  tl_ = &tl;
  mpi_ = &tl.mpi();
  prepare_mpi();
}

// ERRATUM E173. MPI records (trace format 1.5), read ahead (Input::mpi_records()): each call's events on its
// thread's location, interleaved in time order with the samples' events there (OTF2 requires each
// location's events in time order). An event at the time of a sample goes after a scope's Enter and before
// any other event, so that it lies inside libkron_mpi's MPI_Send ... region when the times allow.
void Sink::prepare_mpi() {
  const auto& events = mpi_->events;
  std::map<std::uint32_t, std::size_t> first;  // world rank -> its first record: locations in rank order
  for (std::size_t i = 0; i < events.size(); ++i) first.try_emplace(events[i].rec.rank, i);
  for (const auto& [rank, i] : first) rank_loc_.emplace(rank, loc_of_call(i));
  // ERRATUM E170: the ranks the records name and the inputs do not hold (a rank's file exported alone: its
  // peers; MPI_COMM_WORLD's other members) get a location without events, so that every rank an MPI
  // record names is defined.
  std::set<std::uint32_t> named;
  for (const auto& e : events) {
    if (e.rec.peer >= 0) named.insert(static_cast<std::uint32_t>(e.rec.peer));
    if (e.rec.comm == 0)
      for (std::uint32_t r = 0; r < e.rec.comm_size && r < kMaxAbsentRanks; ++r) named.insert(r);
  }
  for (std::uint32_t r : named)
    if (!rank_loc_.count(r)) {
      Loc& l = loc_for(StreamKey{kAbsentSource, r, false}, 0);
      l.absent = true;
      rank_loc_.emplace(r, static_cast<std::uint32_t>(&l - locs_.data()));
    }
  for (std::uint32_t i = 0; i < events.size(); ++i) {
    const record::MpiRecord& r = events[i].rec;
    const std::uint32_t li = loc_of_call(i);
    locs_[li].mpi.push_back({r.timestamp, i, false});
    const bool incomplete = r.h.flags & record::kMpiIncomplete;
    const bool one_event = r.call == record::MpiCall::Send || r.call == record::MpiCall::SendrecvSend ||
                           r.call == record::MpiCall::Recv || r.call == record::MpiCall::SendrecvRecv ||
                           r.call == record::MpiCall::Mrecv;
    if (one_event) {  // a blocking send is its begin, a blocking receive its end
      if (record::mpi_is_recv(r.call)) locs_[li].mpi.back() = {r.end, i, true};
    } else if (!incomplete) {
      locs_[li].mpi.push_back({r.end, i, true});
    }
  }
  for (Loc& l : locs_)
    std::stable_sort(l.mpi.begin(), l.mpi.end(), [](const MpiEv& a, const MpiEv& b) { return a.t < b.t; });
  // Communicators: a Comm for each id seen, over a group of its members' world ranks (every rank that
  // called on it, and their peers), ERRATUM E170: in world-rank order; one group of every rank's location.
  for (const auto& e : events) {
    auto& v = comm_ranks_[e.rec.comm];
    v.push_back(e.rec.rank);
    if (e.rec.comm == 0 && v.size() == 1)  // MPI_COMM_WORLD: its ranks are the world ranks
      for (std::uint32_t r = 0; r < e.rec.comm_size && r < kMaxAbsentRanks; ++r) v.push_back(r);
    if (e.rec.peer >= 0) v.push_back(static_cast<std::uint32_t>(e.rec.peer));
  }
  for (auto& [id, v] : comm_ranks_) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    comm_ref_.emplace(id, static_cast<OTF2_CommRef>(comm_ref_.size()));
  }
}

std::uint32_t Sink::comm_rank(std::uint32_t comm, std::int32_t world) const {
  const auto& v = comm_ranks_.at(comm);
  const auto w = static_cast<std::uint32_t>(world);
  const auto it = std::lower_bound(v.begin(), v.end(), w);
  return world >= 0 && it != v.end() && *it == w ? static_cast<std::uint32_t>(it - v.begin()) : OTF2_UNDEFINED_UINT32;
}

// Writes location l's MPI events before time `t` (or up to it, with `through`).
void Sink::write_mpi(Loc& l, std::uint64_t t, bool through) {
  for (; l.mpi_at < l.mpi.size(); ++l.mpi_at) {
    const MpiEv& e = l.mpi[l.mpi_at];
    if (e.t > t || (e.t == t && !through)) break;
    const std::uint64_t at = std::max(e.t, l.last);
    l.last = at;
    t_last_ = std::max(t_last_, at);
    t_first_ = std::min(t_first_, at);
    write_mpi_event(l, e, at);
    ++l.events;
    ++st_.mpi_flows;
  }
}

void Sink::write_mpi_event(Loc& l, const MpiEv& e, std::uint64_t at) {
  const record::MpiRecord& r = mpi_->events[e.rec].rec;
  const OTF2_CommRef c = comm_ref_.at(r.comm);
  const std::uint32_t peer = comm_rank(r.comm, r.peer);
  const std::uint64_t req = std::uint64_t{e.rec} + 1;
  const std::uint32_t tag = static_cast<std::uint32_t>(r.tag);
  using C = record::MpiCall;
  if (record::mpi_is_collective(r.call)) {
    if (!e.end)
      check(OTF2_EvtWriter_MpiCollectiveBegin(l.w, nullptr, at), "MPI collective begin");
    else
      check(OTF2_EvtWriter_MpiCollectiveEnd(l.w, nullptr, at, collective_op(r.call), c, peer, r.bytes, 0),
            "MPI collective end");
  } else if (r.call == C::Send || r.call == C::SendrecvSend) {
    check(OTF2_EvtWriter_MpiSend(l.w, nullptr, at, peer, c, tag, r.bytes), "MPI send");
  } else if (r.call == C::Recv || r.call == C::SendrecvRecv || r.call == C::Mrecv) {
    check(OTF2_EvtWriter_MpiRecv(l.w, nullptr, at, peer, c, tag, r.bytes), "MPI receive");
  } else if (r.call == C::Isend || r.call == C::PsendStart) {
    if (!e.end)
      check(OTF2_EvtWriter_MpiIsend(l.w, nullptr, at, peer, c, tag, r.bytes, req), "MPI isend");
    else
      check(OTF2_EvtWriter_MpiIsendComplete(l.w, nullptr, at, req), "MPI isend complete");
  } else {  // Irecv, Imrecv, PrecvStart
    if (!e.end)
      check(OTF2_EvtWriter_MpiIrecvRequest(l.w, nullptr, at, req), "MPI irecv request");
    else
      check(OTF2_EvtWriter_MpiIrecv(l.w, nullptr, at, peer, c, tag, r.bytes, req), "MPI irecv");
  }
}

void Sink::sample(const Sample& s, std::uint32_t, bool) {
  ++st_.samples;
  if (st_.samples == 1) t0_ = tl_->t0();
  Loc& l = loc_for(StreamKey::of(s), tl_->last_input());
  // As in CTF (E164): unwrapped, and never back within a location (OTF2 needs each in time order).
  std::uint64_t t = t0_ + ((s.timestamp - t0_) & tl_->ts_mask());
  const bool named = (s.flags & kFlagNamed) && !s.is_resource();
  if (l.mpi_at < l.mpi.size()) write_mpi(l, t, !(named && (s.flags & kFlagScopeBegin)));
  if (t < l.last) t = l.last;
  l.last = t;
  t_last_ = std::max(t_last_, t);
  // DECISION D26: samples were lost before this one: every scope open on the location is left here, as the
  // matcher cuts them (D20); their ends, when they come, find nothing open and are left out (E167).
  for (; analysis::lost_before(s.flags) && !l.open.empty(); l.open.pop_back()) {
    check(OTF2_EvtWriter_Leave(l.w, nullptr, t, l.open.back()), "leave");
    ++l.events;
    ++st_.cut_by_loss;
  }
  if (named && (s.flags & (kFlagScopeBegin | kFlagScopeEnd))) return scope_event(l, s, t);
  OTF2_Type types[kResourceCounters];
  OTF2_MetricValue values[kResourceCounters];
  if (s.is_resource()) {
    for (unsigned c = 0; c < kResourceCounters; ++c) {
      types[c] = OTF2_TYPE_UINT64;
      values[c].unsigned_int = s.counters[c];
    }
    check(OTF2_EvtWriter_Metric(l.w, nullptr, t, kCounters, kResourceCounters, types, values), "metric");
    st_.counters += kResourceCounters;
  } else {
    types[0] = OTF2_TYPE_UINT64;
    values[0].unsigned_int = s.data;
    check(OTF2_EvtWriter_Metric(l.w, named ? value_attribute(s) : nullptr, t, kData, 1, types, values), "metric");
    ++st_.instants;
  }
  ++l.events;
}

void Sink::scope_event(Loc& l, const Sample& s, std::uint64_t t) {
  const std::uint16_t id = record::name_id_of(s.data);
  auto [r, new_region] = region_of_.try_emplace(id, static_cast<OTF2_RegionRef>(regions_.size()));
  if (new_region) regions_.push_back(id);
  if (s.flags & kFlagScopeBegin) {
    check(OTF2_EvtWriter_Enter(l.w, value_attribute(s), t, r->second), "enter");
    ++l.events;
    l.open.push_back(r->second);
    return;
  }
  // ERRATUM E167: as the matcher (E152): the end leaves its innermost open scope of that name and the
  // scopes opened inside it; an end with none open is left out (counted by kron rpt).
  std::size_t n = l.open.size();
  while (n > 0 && l.open[n - 1] != r->second) --n;
  if (n == 0) return;
  while (l.open.size() >= n) {
    check(OTF2_EvtWriter_Leave(l.w, nullptr, t, l.open.back()), "leave");
    ++l.events;
    l.open.pop_back();
    ++st_.slices;
  }
}

// A named probe's value as the attribute "value", OTF2_TYPE_INT64 (signed: DECISION D30); none when 0, as in
// the Perfetto export.
OTF2_AttributeList* Sink::value_attribute(const Sample& s) {
  const std::int64_t v = record::named_value_of(s.data);
  if (v == 0) return nullptr;
  OTF2_AttributeValue a;
  a.int64 = v;
  check(OTF2_AttributeList_AddAttribute(attrs_, kValue, OTF2_TYPE_INT64, a), "value attribute");
  value_written_ = true;
  return attrs_;
}

// The MPI events after every sample; then scopes still open at the end are left at the location's last
// time (E167), so Enter and Leave pair. Then the definitions.
void Sink::end() {
  for (Loc& l : locs_) write_mpi(l, ~std::uint64_t{0}, true);
  if (!tl_->have_t0()) t0_ = t_first_ == ~std::uint64_t{0} ? 0 : t_first_;
  t0_ = std::min(t0_, t_first_);
  for (Loc& l : locs_)
    while (!l.open.empty()) {
      check(OTF2_EvtWriter_Leave(l.w, nullptr, l.last, l.open.back()), "leave");
      ++l.events;
      l.open.pop_back();
      ++st_.closed_at_end;
    }
  for (Loc& l : locs_) check(OTF2_Archive_CloseEvtWriter(ar_, l.w), "close event writer");
  check(OTF2_Archive_CloseEvtFiles(ar_), "close event files");
  write_clock_offsets();
  write_global_defs();
  OTF2_Archive* ar = std::exchange(ar_, nullptr);
  check(OTF2_Archive_Close(ar), "close the archive");
}

// ClockOffset definitions: a rank's file exported as it was recorded (not merged) carries its clock-offset
// measurements (kind 9, E204): each written for every location of that file, so an OTF2 reader maps its
// times onto the reference rank's (offset = reference - local, ticks; ERRATUM E171: the standard deviation
// is rtt / 2, the measurement's bound, in ticks). A merged file's times are already on rank 0's timeline
// (E205, E206): it gets none (ERRATUM E172), though it carries its ranks' measurements.
void Sink::write_clock_offsets() {
  check(OTF2_Archive_OpenDefFiles(ar_), "open definition files");
  for (std::size_t i = 0; i < locs_.size(); ++i) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(ar_, i);
    const auto& input = *tl_->in().inputs()[locs_[i].input];
    if (!input.mpi_merged() && !locs_[i].absent)
      for (const auto& c : input.clock_offsets()) {
        check(OTF2_DefWriter_WriteClockOffset(dw, c.timestamp, static_cast<std::int64_t>(c.reference - c.timestamp),
                                              static_cast<double>(c.rtt) / 2),
              "clock offset");
        ++st_.clock_offsets;
      }
    check(OTF2_Archive_CloseDefWriter(ar_, dw), "close definition writer");
  }
  check(OTF2_Archive_CloseDefFiles(ar_), "close definition files");
}

// Global definitions: strings first, then what refers to them.
void Sink::write_global_defs() {
  const OTF2_StringRef s_machine = str("machine"), s_node = str("node");
  for (const char* s : {"#", "kron counters", "kron event data", "", "MPI_COMM_WORLD locations"}) str(s);
  const OTF2_StringRef s_none = str("");
  for (const auto& [id, ranks] : comm_ranks_)
    str(id == 0 ? std::string("MPI_COMM_WORLD") : fmt::format("MPI communicator {}", id));
  std::vector<std::string> group_names, loc_names, region_names;
  // The group of the absent ranks' locations is named for them; a recorded source of the same value (node 1023,
  // pid 2^22 - 1) keeps its own name.
  std::vector<bool> absent_group(groups_.size());
  for (const Loc& l : locs_) absent_group[l.group] = absent_group[l.group] || l.absent;
  for (std::size_t i = 0; i < groups_.size(); ++i)
    group_names.push_back(absent_group[i] ? std::string("MPI ranks not in these files")
                                          : tl_->process_label(groups_[i]));
  for (const Loc& l : locs_)
    loc_names.push_back(l.absent ? fmt::format("MPI rank {} (not in these files)", l.key.lane)
                                 : tl_->stream_label(l.key));
  for (std::uint16_t id : regions_) {
    Sample probe{};
    probe.flags = kFlagNamed;
    probe.data = record::named_data(id, 0);
    region_names.push_back(tl_->names().name_of(probe));
  }
  for (auto* v : {&group_names, &loc_names, &region_names})
    for (const std::string& n : *v) str(n);
  for (unsigned c = 0; c < kResourceCounters; ++c) str(tl_->counter_label(c));
  const OTF2_StringRef s_value = value_written_ ? str("value") : 0;
  const OTF2_StringRef s_value_text = value_written_ ? str("a named probe's value") : 0;

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(ar_);
  if (!g) throw std::runtime_error("OTF2: cannot get the global definition writer");
  std::uint64_t start_ticks = 0, start_rt = 0, realtime = 0;
  for (const auto& input : tl_->in().inputs())
    if (input->wall_clock(start_ticks, start_rt)) {
      const u128 since = static_cast<u128>((t0_ - start_ticks) & tl_->ts_mask()) * 1'000'000'000u / tl_->clock_hz();
      realtime = start_rt + static_cast<std::uint64_t>(since);
      break;
    }
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, tl_->clock_hz(), t0_, t_last_ - t0_ + 1, realtime),
        "clock properties");
  for (std::size_t i = 0; i < strings_.size(); ++i)
    check(OTF2_GlobalDefWriter_WriteString(g, static_cast<OTF2_StringRef>(i), strings_[i].c_str()), "string");
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, s_machine, s_node, OTF2_UNDEFINED_SYSTEM_TREE_NODE), "node");
  for (std::size_t i = 0; i < groups_.size(); ++i)
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(i), str(group_names[i]),
                                                  OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP),
          "location group");
  for (std::size_t i = 0; i < locs_.size(); ++i)
    check(OTF2_GlobalDefWriter_WriteLocation(g, i, str(loc_names[i]), OTF2_LOCATION_TYPE_CPU_THREAD, locs_[i].events,
                                             locs_[i].group),
          "location");
  for (std::size_t i = 0; i < regions_.size(); ++i) {
    const OTF2_StringRef n = str(region_names[i]);
    // libkron_mpi's scopes (MPI_Send, ...) are the MPI paradigm's regions.
    const bool is_mpi = !mpi_->events.empty() && region_names[i].rfind("MPI_", 0) == 0;
    const OTF2_Paradigm paradigm = is_mpi ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER;
    check(OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(i), n, n, s_none, OTF2_REGION_ROLE_FUNCTION,
                                           paradigm, OTF2_REGION_FLAG_NONE, s_none, 0, 0),
          "region");
  }
  write_mpi_defs(g);
  write_metric_defs(g);
  if (value_written_)
    check(OTF2_GlobalDefWriter_WriteAttribute(g, kValue, s_value, s_value_text, OTF2_TYPE_INT64), "value attribute");
  check(OTF2_Archive_CloseGlobalDefWriter(ar_, g), "close global definitions");
}

void Sink::write_mpi_defs(OTF2_GlobalDefWriter* g) {
  const OTF2_StringRef s_none = str(""), s_mpi_locations = str("MPI_COMM_WORLD locations");
  // MPI: group 0 the ranks' locations in world-rank order (COMM_LOCATIONS), then per communicator a group of
  // its members (indices into group 0) and the Comm over it; OTF2 events name ranks of the communicator.
  if (!rank_loc_.empty()) {
    std::vector<std::uint64_t> members;
    std::map<std::uint32_t, std::uint64_t> index_of_rank;
    for (const auto& [rank, li] : rank_loc_) {
      index_of_rank.emplace(rank, members.size());
      members.push_back(li);
    }
    const auto n = static_cast<std::uint32_t>(members.size());
    check(OTF2_GlobalDefWriter_WriteGroup(g, 0, s_mpi_locations, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, n, members.data()),
          "MPI locations group");
    for (const auto& [id, ranks] : comm_ranks_) {
      const OTF2_CommRef c = comm_ref_.at(id);
      std::vector<std::uint64_t> m;
      for (std::uint32_t r : ranks) m.push_back(index_of_rank.at(r));
      check(OTF2_GlobalDefWriter_WriteGroup(g, c + 1, s_none, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(m.size()), m.data()),
            "MPI communicator group");
      check(OTF2_GlobalDefWriter_WriteComm(
                g, c, str(id == 0 ? std::string("MPI_COMM_WORLD") : fmt::format("MPI communicator {}", id)), c + 1,
                OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
            "MPI communicator");
    }
  }
}

void Sink::write_metric_defs(OTF2_GlobalDefWriter* g) {
  const OTF2_StringRef s_unit = str("#"), s_counters = str("kron counters"), s_data = str("kron event data");
  OTF2_MetricMemberRef members[kResourceCounters];
  for (unsigned c = 0; c < kResourceCounters; ++c) {
    members[c] = c;
    check(OTF2_GlobalDefWriter_WriteMetricMember(g, c, str(tl_->counter_label(c)), s_counters, OTF2_METRIC_TYPE_OTHER,
                                                 OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0,
                                                 s_unit),
          "metric member");
  }
  const OTF2_MetricMemberRef data_member = kResourceCounters;
  check(OTF2_GlobalDefWriter_WriteMetricMember(g, data_member, s_data, s_data, OTF2_METRIC_TYPE_OTHER,
                                               OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0,
                                               s_unit),
        "metric member");
  check(OTF2_GlobalDefWriter_WriteMetricClass(g, kCounters, kResourceCounters, members, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                              OTF2_RECORDER_KIND_ABSTRACT),
        "metric class");
  check(OTF2_GlobalDefWriter_WriteMetricClass(g, kData, 1, &data_member, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                              OTF2_RECORDER_KIND_ABSTRACT),
        "metric class");
}

}  // namespace

ExportStats export_otf2(analysis::Timeline& tl, const std::string& dir) { return run_sink<Sink>(tl, dir); }
#endif

}  // namespace kron::exports
