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
// sample. An MPI recording (trace format 1.5): MPI communication records on the ranks' locations (E173),
// a Comm per communicator (E170), and a rank's own file's clock offsets as ClockOffset definitions (E171,
// E172). Memory: OTF2's event buffers, one per location, and per name, and the MPI calls; nothing per sample.
#include "analysis/export.hpp"

#include <fmt/core.h>

#include <stdexcept>

#ifdef KRON_HAVE_OTF2
#include <otf2/otf2.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "kron/board.hpp"
#include "kron/core/text.hpp"
#endif

namespace kron::analysis {

std::string otf2_not_built_in() {
  return "--format otf2 was not built into this kron: configure with -DKRON_WITH_OTF2=ON after installing "
         "libopen-trace-format2-dev (deps/test-packages.txt; make test does)";
}

#ifndef KRON_HAVE_OTF2
bool otf2_built_in() { return false; }
ExportStats export_otf2(Merged&, const std::string&) { throw std::runtime_error(otf2_not_built_in()); }
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
    throw std::runtime_error(fmt::format("OTF2: {}: {} ({})", what, OTF2_Error_GetName(e), OTF2_Error_GetDescription(e)));
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
  StreamKey key;
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
    case C::Barrier: return OTF2_COLLECTIVE_OP_BARRIER;
    case C::Bcast: return OTF2_COLLECTIVE_OP_BCAST;
    case C::Reduce: return OTF2_COLLECTIVE_OP_REDUCE;
    case C::Allreduce: return OTF2_COLLECTIVE_OP_ALLREDUCE;
    case C::Gather: return OTF2_COLLECTIVE_OP_GATHER;
    case C::Allgather: return OTF2_COLLECTIVE_OP_ALLGATHER;
    case C::Scatter: return OTF2_COLLECTIVE_OP_SCATTER;
    default: return OTF2_COLLECTIVE_OP_ALLTOALL;
  }
}
}  // namespace

ExportStats export_otf2(Merged& in, const std::string& dir) {
  ExportStats st;
  const std::uint64_t clock = in.clock_hz(), mask = in.ts_mask();
  const tracefile::NameTable& names = in.names();
  OTF2_Archive* ar = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, kChunkBytes, 4 * kChunkBytes,
                                       OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!ar) throw std::runtime_error(dir + ": OTF2 cannot create the archive");
  struct Closer {
    OTF2_Archive* a;
    ~Closer() {
      if (a) OTF2_Archive_Close(a);
    }
  } closer{ar};
  check(OTF2_Archive_SetFlushCallbacks(ar, &kFlush, nullptr), "flush callbacks");
  check(OTF2_Archive_SetMemoryCallbacks(ar, &kMemory, nullptr), "memory callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(ar), "collective callbacks");
  check(OTF2_Archive_SetCreator(ar, "kron export"), "creator");
  check(OTF2_Archive_OpenEvtFiles(ar), "open event files");

  std::vector<std::string> strings;
  std::unordered_map<std::string, OTF2_StringRef> string_ref;
  auto str = [&](const std::string& s) {
    const std::string safe = text::utf8_safe(s);
    auto [it, fresh] = string_ref.try_emplace(safe, static_cast<OTF2_StringRef>(strings.size()));
    if (fresh) strings.push_back(safe);
    return it->second;
  };
  std::vector<Loc> locs;
  std::unordered_map<std::uint64_t, std::uint32_t> loc_of;
  std::vector<std::uint32_t> groups;  // source of each location group
  std::unordered_map<std::uint32_t, std::uint32_t> group_of;
  std::vector<std::uint16_t> regions;  // name id of each region
  std::unordered_map<std::uint16_t, OTF2_RegionRef> region_of;
  constexpr OTF2_MetricRef kCounters = 0, kData = 1;
  SampleLoop loop(in, st);
  std::uint64_t& t0 = loop.t0;
  const bool& have_t0 = loop.have_t0;
  std::uint64_t t_last = 0, t_first = ~std::uint64_t{0};

  auto loc_for = [&](const StreamKey& k, std::size_t input) -> Loc& {
    auto [it, fresh] = loc_of.try_emplace(k.key(), static_cast<std::uint32_t>(locs.size()));
    if (fresh) {
      Loc& l = locs.emplace_back();
      l.key = k;
      l.input = static_cast<std::uint32_t>(input);
      l.w = OTF2_Archive_GetEvtWriter(ar, it->second);
      if (!l.w) throw std::runtime_error("OTF2: cannot get an event writer");
      auto [g, new_group] = group_of.try_emplace(k.source, static_cast<std::uint32_t>(groups.size()));
      if (new_group) groups.push_back(k.source);
      l.group = g->second;
    }
    return locs[it->second];
  };

  // ERRATUM E173. MPI records (trace format 1.5), read ahead (Input::mpi_records()): each call's events on its thread's
  // location, interleaved in time order with the samples' events there (OTF2 requires each location's
  // events in time order). An event at the time of a sample goes after a scope's Enter and before any
  // other event, so that it lies inside libkron_mpi's MPI_Send ... region when the times allow.
  const MpiCalls mpi = mpi_calls(in);
  std::map<std::uint32_t, std::uint32_t> rank_loc;  // world rank -> the location of its first MPI call
  auto loc_of_call = [&](std::size_t i) {
    const record::MpiRecord& r = mpi.events[i].rec;
    return static_cast<std::uint32_t>(&loc_for(StreamKey{r.source, r.thread, true}, mpi.events[i].input) - locs.data());
  };
  {
    std::map<std::uint32_t, std::size_t> first;  // world rank -> its first record: locations in rank order
    for (std::size_t i = 0; i < mpi.events.size(); ++i) first.try_emplace(mpi.events[i].rec.rank, i);
    for (const auto& [rank, i] : first) rank_loc.emplace(rank, loc_of_call(i));
    // ERRATUM E170: the ranks the records name and the inputs do not hold (a rank's file exported alone:
    // its peers; MPI_COMM_WORLD's other members) get a location without events, so that every rank an
    // MPI record names is defined.
    std::set<std::uint32_t> named;
    for (const auto& e : mpi.events) {
      if (e.rec.peer >= 0) named.insert(static_cast<std::uint32_t>(e.rec.peer));
      if (e.rec.comm == 0)
        for (std::uint32_t r = 0; r < e.rec.comm_size && r < kMaxAbsentRanks; ++r) named.insert(r);
    }
    for (std::uint32_t r : named)
      if (!rank_loc.count(r)) {
        Loc& l = loc_for(StreamKey{kAbsentSource, r, false}, 0);
        l.absent = true;
        rank_loc.emplace(r, static_cast<std::uint32_t>(&l - locs.data()));
      }
  }
  for (std::uint32_t i = 0; i < mpi.events.size(); ++i) {
    const record::MpiRecord& r = mpi.events[i].rec;
    const std::uint32_t li = loc_of_call(i);
    locs[li].mpi.push_back({r.timestamp, i, false});
    const bool incomplete = r.h.flags & record::kMpiIncomplete;
    const bool one_event = r.call == record::MpiCall::Send || r.call == record::MpiCall::SendrecvSend ||
                           r.call == record::MpiCall::Recv || r.call == record::MpiCall::SendrecvRecv;
    if (one_event) {  // a blocking send is its begin, a blocking receive its end
      if (record::mpi_is_recv(r.call)) locs[li].mpi.back() = {r.end, i, true};
    } else if (!incomplete) {
      locs[li].mpi.push_back({r.end, i, true});
    }
  }
  for (Loc& l : locs)
    std::stable_sort(l.mpi.begin(), l.mpi.end(), [](const MpiEv& a, const MpiEv& b) { return a.t < b.t; });
  // Communicators: a Comm for each id seen, over a group of its members' world ranks (every rank that
  // called on it, and their peers), ERRATUM E170: in world-rank order; one group of every rank's location.
  std::map<std::uint32_t, std::vector<std::uint32_t>> comm_ranks;  // comm id -> world ranks, sorted
  for (const auto& e : mpi.events) {
    auto& v = comm_ranks[e.rec.comm];
    v.push_back(e.rec.rank);
    if (e.rec.comm == 0 && v.size() == 1)  // MPI_COMM_WORLD: its ranks are the world ranks
      for (std::uint32_t r = 0; r < e.rec.comm_size && r < kMaxAbsentRanks; ++r) v.push_back(r);
    const auto peer = static_cast<std::uint32_t>(e.rec.peer);
    if (e.rec.peer >= 0) v.push_back(peer);
  }
  std::map<std::uint32_t, OTF2_CommRef> comm_ref;
  for (auto& [id, v] : comm_ranks) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    comm_ref.emplace(id, static_cast<OTF2_CommRef>(comm_ref.size()));
  }
  auto comm_rank = [&](std::uint32_t comm, std::int32_t world) -> std::uint32_t {
    const auto& v = comm_ranks.at(comm);
    const auto w = static_cast<std::uint32_t>(world);
    const auto it = std::lower_bound(v.begin(), v.end(), w);
    return world >= 0 && it != v.end() && *it == w ? static_cast<std::uint32_t>(it - v.begin()) : OTF2_UNDEFINED_UINT32;
  };
  // Writes location l's MPI events before time `t` (or up to it, with `through`).
  auto write_mpi = [&](Loc& l, std::uint64_t t, bool through) {
    for (; l.mpi_at < l.mpi.size(); ++l.mpi_at) {
      const MpiEv& e = l.mpi[l.mpi_at];
      if (e.t > t || (e.t == t && !through)) break;
      const record::MpiRecord& r = mpi.events[e.rec].rec;
      const std::uint64_t at = std::max(e.t, l.last);
      l.last = at;
      t_last = std::max(t_last, at);
      t_first = std::min(t_first, at);
      const OTF2_CommRef c = comm_ref.at(r.comm);
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
      } else if (r.call == C::Recv || r.call == C::SendrecvRecv) {
        check(OTF2_EvtWriter_MpiRecv(l.w, nullptr, at, peer, c, tag, r.bytes), "MPI receive");
      } else if (r.call == C::Isend) {
        if (!e.end)
          check(OTF2_EvtWriter_MpiIsend(l.w, nullptr, at, peer, c, tag, r.bytes, req), "MPI isend");
        else
          check(OTF2_EvtWriter_MpiIsendComplete(l.w, nullptr, at, req), "MPI isend complete");
      } else {  // Irecv
        if (!e.end)
          check(OTF2_EvtWriter_MpiIrecvRequest(l.w, nullptr, at, req), "MPI irecv request");
        else
          check(OTF2_EvtWriter_MpiIrecv(l.w, nullptr, at, peer, c, tag, r.bytes, req), "MPI irecv");
      }
      ++l.events;
      ++st.mpi_flows;
    }
  };

  Sample s;
  while (loop.next(s)) {
    Loc& l = loc_for(StreamKey::of(s), in.last_input());
    // As in CTF (E164): unwrapped, and never back within a location (OTF2 needs each in time order).
    std::uint64_t t = t0 + ((s.timestamp - t0) & mask);
    const bool named = (s.flags & kFlagNamed) && !s.is_resource();
    if (l.mpi_at < l.mpi.size()) write_mpi(l, t, !(named && (s.flags & kFlagScopeBegin)));
    if (t < l.last) t = l.last;
    l.last = t;
    t_last = std::max(t_last, t);
    if (named && (s.flags & (kFlagScopeBegin | kFlagScopeEnd))) {
      const std::uint16_t id = record::name_id_of(s.data);
      auto [r, new_region] = region_of.try_emplace(id, static_cast<OTF2_RegionRef>(regions.size()));
      if (new_region) regions.push_back(id);
      if (s.flags & kFlagScopeBegin) {
        check(OTF2_EvtWriter_Enter(l.w, nullptr, t, r->second), "enter");
        ++l.events;
        l.open.push_back(r->second);
      } else {
        // ERRATUM E167: as the matcher (E152): the end leaves its innermost open scope of that name and
        // the scopes opened inside it; an end with none open is left out (counted by kron rpt).
        std::size_t n = l.open.size();
        while (n > 0 && l.open[n - 1] != r->second) --n;
        if (n == 0) continue;
        while (l.open.size() >= n) {
          check(OTF2_EvtWriter_Leave(l.w, nullptr, t, l.open.back()), "leave");
          ++l.events;
          l.open.pop_back();
          ++st.slices;
        }
      }
      continue;
    }
    if (s.is_resource()) {
      OTF2_Type types[kResourceCounters];
      OTF2_MetricValue values[kResourceCounters];
      for (unsigned c = 0; c < kResourceCounters; ++c) {
        types[c] = OTF2_TYPE_UINT64;
        values[c].unsigned_int = s.counters[c];
      }
      check(OTF2_EvtWriter_Metric(l.w, nullptr, t, kCounters, kResourceCounters, types, values), "metric");
      ++l.events;
      st.counters += kResourceCounters;
    } else {
      OTF2_Type type = OTF2_TYPE_UINT64;
      OTF2_MetricValue v;
      v.unsigned_int = s.data;
      check(OTF2_EvtWriter_Metric(l.w, nullptr, t, kData, 1, &type, &v), "metric");
      ++l.events;
      ++st.instants;
    }
  }
  // The MPI events after every sample; then scopes still open at the end are left at the location's last
  // time (E167), so Enter and Leave pair.
  for (Loc& l : locs) write_mpi(l, ~std::uint64_t{0}, true);
  if (!have_t0) t0 = t_first == ~std::uint64_t{0} ? 0 : t_first;
  t0 = std::min(t0, t_first);
  for (Loc& l : locs)
    while (!l.open.empty()) {
      check(OTF2_EvtWriter_Leave(l.w, nullptr, l.last, l.open.back()), "leave");
      ++l.events;
      l.open.pop_back();
      ++st.closed_at_end;
    }
  for (Loc& l : locs) check(OTF2_Archive_CloseEvtWriter(ar, l.w), "close event writer");
  check(OTF2_Archive_CloseEvtFiles(ar), "close event files");
  check(OTF2_Archive_OpenDefFiles(ar), "open definition files");
  // ClockOffset definitions: a rank's file exported as it was recorded (not merged) carries its clock-offset
  // measurements (kind 9, E204): each written for every location of that file, so an OTF2 reader maps its
  // times onto the reference rank's (offset = reference - local, ticks; ERRATUM E171: the standard
  // deviation is rtt / 2, the measurement's bound, in ticks). A merged file's times are already on rank 0's
  // timeline (E205, E206): it gets none (ERRATUM E172), though it carries its ranks' measurements.
  for (std::size_t i = 0; i < locs.size(); ++i) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(ar, i);
    const auto& input = *in.inputs()[locs[i].input];
    if (!input.mpi_merged() && !locs[i].absent)
      for (const auto& c : input.clock_offsets()) {
        check(OTF2_DefWriter_WriteClockOffset(dw, c.timestamp, static_cast<std::int64_t>(c.reference - c.timestamp),
                                              static_cast<double>(c.rtt) / 2),
              "clock offset");
        ++st.clock_offsets;
      }
    check(OTF2_Archive_CloseDefWriter(ar, dw), "close definition writer");
  }
  check(OTF2_Archive_CloseDefFiles(ar), "close definition files");

  // Global definitions: strings first, then what refers to them.
  const OTF2_StringRef s_machine = str("machine"), s_node = str("node"), s_unit = str("#"),
                       s_counters = str("kron counters"), s_data = str("kron event data"), s_none = str(""),
                       s_mpi_locations = str("MPI_COMM_WORLD locations");
  std::map<std::uint32_t, OTF2_StringRef> comm_names;
  for (const auto& [id, ranks] : comm_ranks)
    comm_names.emplace(id, str(id == 0 ? std::string("MPI_COMM_WORLD") : fmt::format("MPI communicator {}", id)));
  std::vector<std::string> group_names, loc_names, region_names, counter_names;
  for (std::uint32_t src : groups) {
    const std::uint32_t pid = board::source_pid(src);
    const std::string_view main = names.thread(src, pid);
    group_names.push_back(src == kAbsentSource ? std::string("MPI ranks not in these files")
                          : main.empty()       ? fmt::format("source 0x{:08x}", src)
                                               : fmt::format("{} (pid {})", main, pid));
  }
  for (const Loc& l : locs) {
    if (l.absent) {
      loc_names.push_back(fmt::format("MPI rank {} (not in these files)", l.key.lane));
      continue;
    }
    const std::string_view tn = l.key.by_thread ? names.thread(l.key.source, l.key.lane) : std::string_view{};
    loc_names.push_back(!tn.empty() ? fmt::format("{} (tid {})", tn, l.key.lane)
                                    : fmt::format("{} {}", l.key.by_thread ? "thread" : "cpu", l.key.lane));
  }
  for (std::uint16_t id : regions) {
    Sample probe{};
    probe.flags = kFlagNamed;
    probe.data = record::named_data(id, 0);
    region_names.push_back(names.name_of(probe));
  }
  for (unsigned c = 0; c < kResourceCounters; ++c) {
    std::string n;
    for (const auto& input : in.inputs())
      if (!input->counter_name(c).empty()) {
        n = input->counter_name(c);
        break;
      }
    counter_names.push_back(n.empty() ? fmt::format("counter {}", c) : fmt::format("counter {} ({})", c, n));
  }
  for (auto* v : {&group_names, &loc_names, &region_names, &counter_names})
    for (const std::string& n : *v) str(n);

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(ar);
  if (!g) throw std::runtime_error("OTF2: cannot get the global definition writer");
  std::uint64_t start_ticks = 0, start_rt = 0, realtime = 0;
  for (const auto& input : in.inputs())
    if (input->wall_clock(start_ticks, start_rt)) {
      const u128 since = static_cast<u128>((t0 - start_ticks) & mask) * 1'000'000'000u / clock;
      realtime = start_rt + static_cast<std::uint64_t>(since);
      break;
    }
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, clock, t0, t_last - t0 + 1, realtime), "clock properties");
  for (std::size_t i = 0; i < strings.size(); ++i)
    check(OTF2_GlobalDefWriter_WriteString(g, static_cast<OTF2_StringRef>(i), strings[i].c_str()), "string");
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, s_machine, s_node, OTF2_UNDEFINED_SYSTEM_TREE_NODE), "node");
  for (std::size_t i = 0; i < groups.size(); ++i)
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(i), string_ref.at(text::utf8_safe(group_names[i])),
                                                  OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP),
          "location group");
  for (std::size_t i = 0; i < locs.size(); ++i)
    check(OTF2_GlobalDefWriter_WriteLocation(g, i, string_ref.at(text::utf8_safe(loc_names[i])), OTF2_LOCATION_TYPE_CPU_THREAD,
                                             locs[i].events, locs[i].group),
          "location");
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const OTF2_StringRef n = string_ref.at(text::utf8_safe(region_names[i]));
    // libkron_mpi's scopes (MPI_Send, ...) are the MPI paradigm's regions.
    const bool is_mpi = !mpi.events.empty() && region_names[i].rfind("MPI_", 0) == 0;
    const OTF2_Paradigm paradigm = is_mpi ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER;
    check(OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(i), n, n, s_none, OTF2_REGION_ROLE_FUNCTION,
                                           paradigm, OTF2_REGION_FLAG_NONE, s_none, 0, 0),
          "region");
  }
  // MPI: group 0 the ranks' locations in world-rank order (COMM_LOCATIONS), then per communicator a group of
  // its members (indices into group 0) and the Comm over it; OTF2 events name ranks of the communicator.
  if (!rank_loc.empty()) {
    std::vector<std::uint64_t> members;
    std::map<std::uint32_t, std::uint64_t> index_of_rank;
    for (const auto& [rank, li] : rank_loc) {
      index_of_rank.emplace(rank, members.size());
      members.push_back(li);
    }
    const auto n = static_cast<std::uint32_t>(members.size());
    check(OTF2_GlobalDefWriter_WriteGroup(g, 0, s_mpi_locations, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, n, members.data()),
          "MPI locations group");
    for (const auto& [id, ranks] : comm_ranks) {
      const OTF2_CommRef c = comm_ref.at(id);
      std::vector<std::uint64_t> m;
      for (std::uint32_t r : ranks) m.push_back(index_of_rank.at(r));
      check(OTF2_GlobalDefWriter_WriteGroup(g, c + 1, s_none, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(m.size()), m.data()),
            "MPI communicator group");
      check(OTF2_GlobalDefWriter_WriteComm(g, c, comm_names.at(id), c + 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
            "MPI communicator");
    }
  }
  OTF2_MetricMemberRef members[kResourceCounters];
  for (unsigned c = 0; c < kResourceCounters; ++c) {
    members[c] = c;
    check(OTF2_GlobalDefWriter_WriteMetricMember(g, c, string_ref.at(text::utf8_safe(counter_names[c])), s_counters,
                                                 OTF2_METRIC_TYPE_OTHER, OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_UINT64,
                                                 OTF2_BASE_DECIMAL, 0, s_unit),
          "metric member");
  }
  const OTF2_MetricMemberRef data_member = kResourceCounters;
  check(OTF2_GlobalDefWriter_WriteMetricMember(g, data_member, s_data, s_data, OTF2_METRIC_TYPE_OTHER,
                                               OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0, s_unit),
        "metric member");
  check(OTF2_GlobalDefWriter_WriteMetricClass(g, kCounters, kResourceCounters, members, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                              OTF2_RECORDER_KIND_ABSTRACT),
        "metric class");
  check(OTF2_GlobalDefWriter_WriteMetricClass(g, kData, 1, &data_member, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                              OTF2_RECORDER_KIND_ABSTRACT),
        "metric class");
  check(OTF2_Archive_CloseGlobalDefWriter(ar, g), "close global definitions");
  closer.a = nullptr;
  check(OTF2_Archive_Close(ar), "close the archive");
  return st;
}
#endif

}  // namespace kron::analysis
