// A reader of the Perfetto traces kron writes, for the tests that check what the Perfetto export says: the
// protobuf wire format (protobuf.dev/programming-guides/encoding) and Perfetto's field numbers as
// tests/exports/perfetto_subset.proto lists them, typed here again (never taken from the writer's
// perfetto_schema.hpp, so that a wrong number there fails). Uncompressed traces only (kron export
// --compress 0, PerfettoOptions::deflate_level 0); the protoc-based test (tests/exports/perfetto_test.sh)
// reads the compressed ones.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kron::testing::perfetto {

// One field of a message: its number, wire type and value (a varint or fixed number, or the bytes).
struct Field {
  std::uint32_t number = 0, wire = 0;
  std::uint64_t value = 0;
  std::string_view bytes;
};

inline std::vector<Field> fields(std::string_view m) {
  std::vector<Field> out;
  std::size_t i = 0;
  auto varint = [&]() {
    std::uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (i >= m.size()) throw std::runtime_error("perfetto: a varint runs past its message");
      const auto c = static_cast<unsigned char>(m[i++]);
      v |= std::uint64_t{c & 0x7fu} << shift;
      if (!(c & 0x80)) return v;
    }
    throw std::runtime_error("perfetto: a varint longer than ten bytes");
  };
  auto fixed = [&](unsigned n) {
    if (m.size() - i < n) throw std::runtime_error("perfetto: a fixed field runs past its message");
    std::uint64_t v = 0;
    for (unsigned k = 0; k < n; ++k) v |= std::uint64_t{static_cast<unsigned char>(m[i + k])} << (8 * k);
    i += n;
    return v;
  };
  while (i < m.size()) {
    const std::uint64_t key = varint();
    Field f;
    f.number = static_cast<std::uint32_t>(key >> 3);
    f.wire = static_cast<std::uint32_t>(key & 7);
    switch (f.wire) {
      case 0: f.value = varint(); break;
      case 1: f.value = fixed(8); break;
      case 5: f.value = fixed(4); break;
      case 2: {
        const std::uint64_t n = varint();
        if (n > m.size() - i) throw std::runtime_error("perfetto: a length-delimited field runs past its message");
        f.bytes = m.substr(i, n);
        i += n;
        break;
      }
      default: throw std::runtime_error("perfetto: wire type " + std::to_string(f.wire));
    }
    out.push_back(f);
  }
  return out;
}

// TrackEvent.Type (track_event.proto).
enum : std::uint32_t { kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4 };

struct Event {
  std::uint32_t sequence = 0, type = 0;
  std::uint64_t track = 0, ts = 0;             // ts: ns on BUILTIN_CLOCK_BOOTTIME, incremental clocks resolved
  std::string name;                            // interned names resolved
  std::map<std::string, std::uint64_t> uints;  // debug annotations with a uint value, by (interned) name
  std::map<std::string, std::int64_t> ints;    // ... with an int value (int_value: two's complement varint)
  std::map<std::string, std::string> strings;  // ... with a string value
  std::int64_t counter = 0;                    // COUNTER events: counter_value
  std::vector<std::int64_t> extra_counters;    // extra_counter_values
};
struct Track {
  std::uint64_t uuid = 0, parent = 0;
  std::string name;
  std::int64_t pid = -1, tid = -1;  // process or thread descriptor
  bool counter = false;
};
struct Trace {
  std::vector<Event> events;
  std::map<std::uint64_t, Track> tracks;
  std::size_t packets = 0;
};

// Decodes a whole trace: Trace.packet (1) fields, each a TracePacket.
inline Trace read(std::string_view bytes) {
  struct Seq {
    std::uint32_t clock = 0;                                         // TracePacketDefaults.timestamp_clock_id
    std::uint64_t track = 0;                                         // TrackEventDefaults.track_uuid
    std::map<std::uint32_t, std::pair<std::uint64_t, bool>> clocks;  // id: (last value, incremental)
    std::map<std::uint64_t, std::string> event_names, debug_names;
  };
  std::map<std::uint32_t, Seq> seqs;
  Trace t;
  for (const Field& pf : fields(bytes)) {
    if (pf.number != 1 || pf.wire != 2) throw std::runtime_error("perfetto: not a Trace.packet field");
    ++t.packets;
    const std::vector<Field> p = fields(pf.bytes);
    std::uint32_t seq_id = 0, clock_id = 0;
    bool has_ts = false;
    std::uint64_t ts = 0;
    for (const Field& f : p) {
      if (f.number == 10) seq_id = static_cast<std::uint32_t>(f.value);    // trusted_packet_sequence_id
      if (f.number == 8) has_ts = true, ts = f.value;                      // timestamp
      if (f.number == 58) clock_id = static_cast<std::uint32_t>(f.value);  // timestamp_clock_id
      if (f.number == 50) throw std::runtime_error("perfetto: compressed_packets (export with --compress 0)");
    }
    Seq& s = seqs[seq_id];
    for (const Field& f : p) {
      if (f.number == 13 && (f.value & 1)) s = Seq{};  // sequence_flags: SEQ_INCREMENTAL_STATE_CLEARED
    }
    for (const Field& f : p) {
      if (f.number == 59) {  // trace_packet_defaults
        for (const Field& d : fields(f.bytes)) {
          if (d.number == 58) s.clock = static_cast<std::uint32_t>(d.value);
          if (d.number == 11)
            for (const Field& e : fields(d.bytes))
              if (e.number == 11) s.track = e.value;
        }
      } else if (f.number == 6) {  // clock_snapshot
        for (const Field& c : fields(f.bytes)) {
          if (c.number != 1) continue;
          std::uint32_t id = 0;
          std::uint64_t v = 0;
          bool incremental = false;
          for (const Field& k : fields(c.bytes)) {
            if (k.number == 1) id = static_cast<std::uint32_t>(k.value);
            if (k.number == 2) v = k.value;
            if (k.number == 3) incremental = k.value != 0;
          }
          s.clocks[id] = {v, incremental};
        }
      } else if (f.number == 12) {  // interned_data: event_names (2), debug_annotation_names (3)
        for (const Field& d : fields(f.bytes)) {
          if (d.number != 2 && d.number != 3) continue;
          std::uint64_t iid = 0;
          std::string name;
          for (const Field& e : fields(d.bytes)) {
            if (e.number == 1) iid = e.value;
            if (e.number == 2) name = std::string(e.bytes);
          }
          (d.number == 2 ? s.event_names : s.debug_names)[iid] = name;
        }
      }
    }
    // The packet's time: on its own clock, else the sequence's default; an incremental clock adds.
    std::uint64_t when = ts;
    const std::uint32_t clock = clock_id ? clock_id : s.clock;
    if (has_ts && clock) {
      const auto it = s.clocks.find(clock);
      if (it != s.clocks.end() && it->second.second) when = it->second.first += ts;
    }
    for (const Field& f : p) {
      if (f.number == 60) {  // track_descriptor
        Track tr;
        for (const Field& d : fields(f.bytes)) {
          if (d.number == 1) tr.uuid = d.value;
          if (d.number == 5) tr.parent = d.value;
          if (d.number == 2) tr.name = std::string(d.bytes);
          if (d.number == 8) tr.counter = true;
          if (d.number == 3)
            for (const Field& e : fields(d.bytes))
              if (e.number == 1) tr.pid = static_cast<std::int64_t>(e.value);
          if (d.number == 4)
            for (const Field& e : fields(d.bytes)) {
              if (e.number == 1) tr.pid = static_cast<std::int64_t>(e.value);
              if (e.number == 2) tr.tid = static_cast<std::int64_t>(e.value);
            }
        }
        t.tracks[tr.uuid] = tr;
      } else if (f.number == 11) {  // track_event
        Event e;
        e.sequence = seq_id;
        e.ts = when;
        e.track = s.track;
        for (const Field& d : fields(f.bytes)) {
          if (d.number == 9) e.type = static_cast<std::uint32_t>(d.value);
          if (d.number == 11) e.track = d.value;
          if (d.number == 10) e.name = s.event_names.at(d.value);
          if (d.number == 23) e.name = std::string(d.bytes);
          if (d.number == 30) e.counter = static_cast<std::int64_t>(d.value);
          if (d.number == 12) e.extra_counters.push_back(static_cast<std::int64_t>(d.value));
          if (d.number == 4) {
            std::string name;
            std::uint64_t u = 0;
            std::string str;
            std::int64_t i = 0;
            bool is_u = false, is_s = false, is_i = false;
            for (const Field& a : fields(d.bytes)) {
              if (a.number == 1) name = s.debug_names.at(a.value);
              if (a.number == 10) name = std::string(a.bytes);
              if (a.number == 3) u = a.value, is_u = true;
              if (a.number == 4) i = static_cast<std::int64_t>(a.value), is_i = true;
              if (a.number == 6) str = std::string(a.bytes), is_s = true;
            }
            if (is_u) e.uints[name] = u;
            if (is_i) e.ints[name] = i;
            if (is_s) e.strings[name] = str;
          }
        }
        t.events.push_back(std::move(e));
      }
    }
  }
  return t;
}

// Slices from the begin and end events of each track (Perfetto nests them by track: an end closes the
// innermost open slice of its track).
struct Slice {
  std::uint64_t track, start, end;
  std::string name;
  std::map<std::string, std::uint64_t> uints;
  std::map<std::string, std::string> strings;
  unsigned depth;
  std::map<std::string, std::int64_t> ints;
};
inline std::vector<Slice> slices(const Trace& t) {
  std::vector<Slice> out;
  std::map<std::uint64_t, std::vector<Slice>> open;
  for (const Event& e : t.events) {
    if (e.type == kSliceBegin) {
      auto& st = open[e.track];
      st.push_back({e.track, e.ts, 0, e.name, e.uints, e.strings, static_cast<unsigned>(st.size()), e.ints});
    } else if (e.type == kSliceEnd) {
      auto& st = open[e.track];
      if (st.empty()) throw std::runtime_error("perfetto: an end without a begin on track " + std::to_string(e.track));
      Slice s = st.back();
      st.pop_back();
      s.end = e.ts;
      for (const auto& [k, v] : e.uints) s.uints[k] = v;  // an end's arguments are the slice's (Perfetto merges them)
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace kron::testing::perfetto
