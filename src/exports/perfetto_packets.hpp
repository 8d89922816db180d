// The Perfetto export's packets (perfetto.cpp): sequences, their incremental clock, interned names, track
// descriptors and track events, built into the writer's batch (perfetto_writer.hpp) with protowire.hpp.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/timeline.hpp"
#include "exports/perfetto_schema.hpp"
#include "exports/perfetto_writer.hpp"

namespace kron::exports::perfetto {

// Debug annotation names every sequence interns in its first packet.
constexpr std::uint64_t kDanValue = 1;  // "value": a named probe's value
constexpr std::uint64_t kDanCpu = 2;    // "cpu": the CPU a thread ran on (scheduling states)
constexpr std::uint64_t kDanPhase = 3;  // "phase": the thread's phase (kron::phase), when not 0
// ERRATUM E160: at most this many interned event names per sequence; later new names are written in full
// on each event (`name`), so memory stays bounded whatever the event numbers.
constexpr std::uint32_t kMaxInterned = 4096;
// Track uuids: a stream's thread track is (n+1) * 32, its counter c track that + 1 + c; processes and
// interval tracks have their own ranges.
constexpr std::uint64_t kProcessUuidBase = std::uint64_t{1} << 40, kIntervalUuidBase = std::uint64_t{2} << 40,
                        kSchedUuidBase = std::uint64_t{3} << 40, kMpiUuidBase = std::uint64_t{4} << 40,
                        kSeriesUuidBase = std::uint64_t{5} << 40;

// "event N" -> iid for one sequence: open addressing over 2 * kMaxInterned slots, never removed from, so a
// lookup of a name not interned (the common case once the table is full) costs one or two probes.
class EventIids {
 public:
  // The slot of `ev`: its iid, or 0 where it would go. The table (96 KiB) is made on the first lookup.
  std::uint32_t& slot(std::uint64_t ev);

 private:
  static constexpr unsigned kBits = 13;
  static constexpr std::size_t kSlots = std::size_t{1} << kBits;  // 2 * kMaxInterned
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> iids_;
};

// One packet sequence: a stream's, or the switches', MPI's or the snapshots' after them.
struct Sequence {
  std::uint32_t seq = 0;
  std::uint64_t uuid = 0, last_ns = 0;
  bool counters_described = false;
  std::uint32_t next_iid = 1;
  std::vector<std::uint32_t> named_iid;                           // by name id; 0: not interned yet
  EventIids event_iid;                                            // "event N": N -> iid
  std::unordered_map<std::uint64_t, std::uint32_t> interval_iid;  // (interval << 8 | part) -> iid
  std::vector<std::uint16_t> open;  // named scopes begun and not ended, as the matcher holds them (E152)
  std::uint64_t counter_uuid(unsigned c) const { return uuid + 1 + c; }
};

class Packets {
 public:
  Packets(std::FILE* f, const PerfettoOptions& po) : w_(f, po), b_(w_.b()) {}
  PerfettoWriter& writer() { return w_; }

 protected:
  // A packet's start: its tag, then its timestamp on the sequence (incremental clock 64, or BOOTTIME when
  // the time went back: a sample out of order, or an interval written at its end).
  std::size_t packet_at(Sequence& s, std::uint64_t t_ns, bool absolute);
  // A packet of sequence `s` with its flags only (a sequence's first, after the samples').
  void sequence_start(const Sequence& s, std::uint32_t flags, std::uint64_t debug_iid = 0, std::string_view debug = {});
  std::pair<std::size_t, std::size_t> descriptor(const Sequence& s);
  void end_descriptor(std::pair<std::size_t, std::size_t> p);
  // The iid of a name on sequence `s`, interning it in this packet when new (before the track_event); 0
  // when the sequence's table is full (the caller writes the name in full).
  std::uint32_t intern(Sequence& s, std::uint32_t& slot, std::string_view name);
  void name_field(std::uint32_t iid, std::string_view name, bool ascii = false);
  void intern_debug_name(std::uint64_t iid, std::string_view name);  // in the packet being written
  void debug_uint(std::uint64_t iid, std::uint64_t v);               // on the track event being written
  void debug_uint(std::string_view name, std::uint64_t v);           // the same, its name not interned
  void debug_int(std::uint64_t iid, std::int64_t v);                 // the same, signed (int_value)
  std::size_t track_event(std::uint32_t type);
  void track_event_end(std::size_t te, std::size_t p);
  // The track of `source`'s process, described (on sequence `s`) the first time any sequence needs it.
  std::uint64_t process_track(Sequence& s, std::uint32_t source, const analysis::Timeline& tl);
  // A child track (interval lane, thread state, counter series) of `parent`, described on `s`.
  // `counter_unit`: null for a plain track, else a counter track with that unit ("" for none).
  void child_track(const Sequence& s, std::uint64_t uuid, std::uint64_t parent, std::string_view name,
                   const char* counter_unit = nullptr);

  PerfettoWriter w_;
  std::string& b_;
  std::unordered_map<std::uint32_t, std::uint64_t> process_uuid_;
};

}  // namespace kron::exports::perfetto
