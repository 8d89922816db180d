// kron export --format ctf: a Common Trace Format 1.8 trace (a directory), what babeltrace2, Trace Compass
// and LTTng's tools read. Spec: "Common Trace Format (CTF) Specification" v1.8.3 (diamon.org/ctf/v1.8.3):
// section 4 (integers: size, align, signed, byte_order, map to a clock), 5 (packet header and context:
// magic 0xC1FC1FC1, stream_id, timestamp_begin/end, content_size/packet_size in bits, events_discarded),
// 6 (event header id + timestamp), 7 (TSDL metadata, "/* CTF 1.8 */", plain text), 8 (clock: freq, offset_s,
// offset).
//
// Layout (docs/tools.md "CTF"): `metadata`, and one stream file `stream_N` per kron stream (source and
// CPU, or source and thread), all of one stream class whose packet context names the source and lane.
// One event class per kind of kron sample: kron:trace, kron:resource (with the sixteen counters),
// kron:named (a named probe's sample, with its name and value); and kron:sched_switch, a context switch of
// kron record --sched, on a stream of its own; kron:mpi, an MPI recording's call (E174), on another. Every
// integer is byte-aligned
// little-endian, so a record is written as it is laid out. Packets are at most kPacketBytes, buffered
// one per stream; memory is that per stream, nothing per sample.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "analysis/export.hpp"
#include "kron/board.hpp"
#include "kron/core/text.hpp"

namespace kron::analysis {
namespace {
__extension__ typedef unsigned __int128 u128;

constexpr std::uint32_t kCtfMagic = 0xC1FC1FC1;  // CTF 1.8 section 5
constexpr std::size_t kPacketBytes = 64 * 1024;
constexpr std::size_t kPacketHeaderBytes = 8, kPacketContextBytes = 5 * 8 + 4 + 4 + 1;
enum : std::uint16_t { kEvTrace = 0, kEvResource = 1, kEvNamed = 2, kEvSched = 3, kEvMpi = 4 };

// The metadata: trace, clock, one stream class, the event classes. Kept beside docs/tools.md "CTF".
std::string metadata(std::uint64_t clock_hz, std::int64_t offset_s, std::uint64_t offset_cycles,
                     const std::string& description) {
  std::string m = "/* CTF 1.8 */\n";
  m += R"(
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 32; align = 8; signed = true; } := int32_t;

trace {
	major = 1;
	minor = 8;
	byte_order = le;
	packet.header := struct {
		uint32_t magic;
		uint32_t stream_id;
	};
};

env {
	producer = "kron export";
)";
  m += fmt::format("\tdescription = \"{}\";\n}};\n\n", description);
  m += fmt::format(R"(clock {{
	name = kron;
	description = "the recording's timestamp clock";
	freq = {};
	offset_s = {};
	offset = {};
	precision = 1;
	absolute = false;
}};

typealias integer {{ size = 64; align = 8; signed = false; map = clock.kron.value; }} := uint64_clock_t;
)",
                   clock_hz, offset_s, offset_cycles);
  m += R"(
stream {
	id = 0;
	packet.context := struct {
		uint64_clock_t timestamp_begin;
		uint64_clock_t timestamp_end;
		uint64_t content_size;
		uint64_t packet_size;
		uint64_t events_discarded;
		uint32_t source;
		uint32_t lane;
		uint8_t by_thread;
	};
	event.header := struct {
		uint16_t id;
		uint64_clock_t timestamp;
	};
};

event {
	name = "kron:trace";
	id = 0;
	stream_id = 0;
	fields := struct {
		uint64_t ticks;
		uint64_t data;
		uint16_t cpu;
		uint8_t flags;
		uint8_t group;
		uint32_t thread;
		uint16_t phase;
	};
};

event {
	name = "kron:resource";
	id = 1;
	stream_id = 0;
	fields := struct {
		uint64_t ticks;
		uint64_t data;
		uint16_t cpu;
		uint8_t flags;
		uint8_t group;
		uint32_t thread;
		uint16_t phase;
		uint64_t counters[16];
	};
};

event {
	name = "kron:named";
	id = 2;
	stream_id = 0;
	fields := struct {
		uint64_t ticks;
		uint64_t data;
		uint16_t cpu;
		uint8_t flags;
		uint8_t group;
		uint32_t thread;
		uint16_t phase;
		uint16_t name_id;
		uint64_t value;
		string name;
	};
};

event {
	name = "kron:sched_switch";
	id = 3;
	stream_id = 0;
	fields := struct {
		uint64_t ticks;
		uint32_t source;
		uint32_t thread;
		uint16_t cpu;
		uint8_t out;
		uint8_t preempted;
	};
};

event {
	name = "kron:mpi";
	id = 4;
	stream_id = 0;
	fields := struct {
		uint64_t ticks;
		uint64_t end;
		uint64_t bytes;
		uint32_t source;
		uint32_t thread;
		uint32_t rank;
		uint32_t comm;
		uint32_t comm_size;
		int32_t peer;
		int32_t tag;
		uint16_t call;
		uint16_t cpu;
		uint8_t flags;
		string call_name;
	};
};
)";
  return m;
}

template <class T>
void put(std::string& b, T v) {
  char le[sizeof(T)];
  for (unsigned i = 0; i < sizeof(T); ++i) le[i] = static_cast<char>(static_cast<std::uint64_t>(v) >> (8 * i));
  b.append(le, sizeof(T));
}

// The packet context's by_thread: what a stream's lane is.
enum : std::uint8_t { kLaneCpu = 0, kLaneThread = 1, kLaneSched = 2, kLaneMpi = 3 };

// kron:mpi's call_name: the MPI function the record comes from (record::MpiCall).
const char* mpi_call_name(record::MpiCall c) {
  using C = record::MpiCall;
  switch (c) {
    case C::Send: return "MPI_Send";
    case C::Recv: return "MPI_Recv";
    case C::Isend: return "MPI_Isend";
    case C::Irecv: return "MPI_Irecv";
    case C::SendrecvSend: return "MPI_Sendrecv (send)";
    case C::SendrecvRecv: return "MPI_Sendrecv (receive)";
    case C::Barrier: return "MPI_Barrier";
    case C::Bcast: return "MPI_Bcast";
    case C::Reduce: return "MPI_Reduce";
    case C::Allreduce: return "MPI_Allreduce";
    case C::Gather: return "MPI_Gather";
    case C::Allgather: return "MPI_Allgather";
    case C::Scatter: return "MPI_Scatter";
    case C::Alltoall: return "MPI_Alltoall";
  }
  return "MPI (unknown call)";
}

struct CtfStream {
  StreamKey key;
  bool sched = false;  // the scheduling switches' stream (kron:sched_switch), lane 0
  bool mpi = false;    // the MPI records' stream (kron:mpi), lane 0
  std::string path;
  std::string packet;  // events of the packet being filled
  std::uint64_t first = 0, last = 0;  // clock values of its first and last event
  std::uint64_t discarded = 0;        // events_discarded: cumulative, per the spec (section 5)
  bool any = false;
};

void write_all(const std::string& path, const std::string& a, const std::string& b) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  for (const std::string* s : {&a, &b}) {
    std::size_t off = 0;
    while (off < s->size()) {
      const ssize_t n = ::write(fd, s->data() + off, s->size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int e = errno;
        ::close(fd);
        throw std::runtime_error(path + ": write failed: " + std::strerror(e));
      }
      off += static_cast<std::size_t>(n);
    }
  }
  if (::close(fd) != 0) throw std::runtime_error(path + ": write failed: " + std::strerror(errno));
}

void flush_packet(CtfStream& s) {
  std::string head;
  put<std::uint32_t>(head, kCtfMagic);
  put<std::uint32_t>(head, 0);  // stream_id
  const std::uint64_t bits = 8 * (kPacketHeaderBytes + kPacketContextBytes + s.packet.size());
  put<std::uint64_t>(head, s.first);
  put<std::uint64_t>(head, s.last);
  put<std::uint64_t>(head, bits);  // content_size
  put<std::uint64_t>(head, bits);  // packet_size
  put<std::uint64_t>(head, s.discarded);
  put<std::uint32_t>(head, s.key.source);
  put<std::uint32_t>(head, s.key.lane);
  put<std::uint8_t>(head, s.sched ? kLaneSched : s.mpi ? kLaneMpi : s.key.by_thread ? kLaneThread : kLaneCpu);
  write_all(s.path, head, s.packet);
  s.packet.clear();
  s.any = false;
}

}  // namespace

ExportStats export_ctf(Merged& in, const std::string& dir) {
  ExportStats st;
  const std::uint64_t clock = in.clock_hz(), mask = in.ts_mask();
  const tracefile::NameTable& names = in.names();
  // ERRATUM E164. The clock's offset (CTF 1.8 section 8): ticks 0 at offset_s seconds + offset cycles after the epoch,
  // from the kron file's start_ticks and start_realtime_ns; 0 (the epoch) for a raw stream (E164).
  std::int64_t offset_s = 0;
  std::uint64_t offset_cycles = 0;
  std::uint64_t start_ticks = 0, start_rt = 0;
  for (const auto& input : in.inputs())
    if (input->wall_clock(start_ticks, start_rt)) {
      const u128 ticks_ns = static_cast<u128>(start_ticks) * 1'000'000'000u / clock;
      if (ticks_ns <= start_rt) {
        const std::uint64_t base_ns = start_rt - static_cast<std::uint64_t>(ticks_ns);
        offset_s = static_cast<std::int64_t>(base_ns / 1'000'000'000u);
        offset_cycles = static_cast<std::uint64_t>(static_cast<u128>(base_ns % 1'000'000'000u) * clock / 1'000'000'000u);
      }
      break;
    }
  std::string description = "kron export of";
  for (const auto& input : in.inputs()) description += " " + input->path();
  {
    std::string esc;
    for (char c : text::utf8_safe(description)) {
      if (c == '"' || c == '\\') esc += '\\';
      if (static_cast<unsigned char>(c) >= 0x20) esc += c;
    }
    write_all(dir + "/metadata", metadata(clock, offset_s, offset_cycles, esc), "");
  }

  std::vector<CtfStream> streams;
  std::unordered_map<std::uint64_t, std::uint32_t> index;
  SampleLoop loop(in, st);
  const std::uint64_t& t0 = loop.t0;
  Sample s;
  while (loop.next(s)) {
    // ERRATUM E164: the clock value is t0 + (t - t0) modulo the timestamp's width (a classic counter that
    // wrapped goes on counting), and never less than the stream's last one (CTF needs it monotonic per
    // stream); `ticks` keeps the sample's own timestamp.
    const StreamKey k = StreamKey::of(s);
    auto [it, fresh] = index.try_emplace(k.key(), static_cast<std::uint32_t>(streams.size()));
    if (fresh) {
      CtfStream& n = streams.emplace_back();
      n.key = k;
      n.path = fmt::format("{}/stream_{}", dir, streams.size() - 1);
    }
    CtfStream& cs = streams[it->second];
    std::uint64_t v = t0 + ((s.timestamp - t0) & mask);
    if (v < cs.last) v = cs.last;
    if (!cs.any) cs.first = v;
    cs.any = true;
    cs.last = v;
    std::string& b = cs.packet;
    const bool named = (s.flags & kFlagNamed) && !s.is_resource();
    put<std::uint16_t>(b, s.is_resource() ? kEvResource : named ? kEvNamed : kEvTrace);
    put<std::uint64_t>(b, v);
    put<std::uint64_t>(b, s.timestamp);
    put<std::uint64_t>(b, s.data);
    put<std::uint16_t>(b, s.cpu);
    put<std::uint8_t>(b, s.flags);
    put<std::uint8_t>(b, s.group);
    put<std::uint32_t>(b, s.thread);
    put<std::uint16_t>(b, s.phase);  // issue 12: the thread's phase (1.4 files; 0 before)
    if (s.is_resource()) {
      for (unsigned c = 0; c < kResourceCounters; ++c) put<std::uint64_t>(b, s.counters[c]);
      st.counters += kResourceCounters;
    } else if (named) {
      put<std::uint16_t>(b, record::name_id_of(s.data));
      put<std::uint64_t>(b, record::named_value_of(s.data));
      const std::string nm = text::utf8_safe(names.name_of(s));
      b.append(nm.c_str(), std::strlen(nm.c_str()) + 1);  // a CTF string ends at its first NUL
      ++st.instants;
    }
    if (b.size() >= kPacketBytes) flush_packet(cs);
  }
  // Scheduling switches (kron record --sched): a stream of their own (by_thread 2, source and lane 0), every
  // input's in time order, each a kron:sched_switch naming its thread; the clock is the samples' (live
  // recordings: full 64-bit ticks).
  {
    std::vector<const record::SchedRecord*> sw;
    for (const auto& input : in.inputs())
      for (const auto& r : input->sched_switches()) sw.push_back(&r);
    std::stable_sort(sw.begin(), sw.end(), [](auto* a, auto* b) { return a->timestamp < b->timestamp; });
    CtfStream* cs = nullptr;
    for (const record::SchedRecord* r : sw) {
      if (!cs) {
        cs = &streams.emplace_back();
        cs->key = StreamKey{0, 0, false};
        cs->sched = true;
        cs->path = fmt::format("{}/stream_{}", dir, streams.size() - 1);
      }
      std::string& b = cs->packet;
      if (!cs->any) cs->first = r->timestamp;
      cs->any = true;
      cs->last = r->timestamp;
      put<std::uint16_t>(b, kEvSched);
      put<std::uint64_t>(b, r->timestamp);
      put<std::uint64_t>(b, r->timestamp);
      put<std::uint32_t>(b, r->source);
      put<std::uint32_t>(b, r->thread);
      put<std::uint16_t>(b, r->h.cpu);
      put<std::uint8_t>(b, (r->h.flags & record::kSchedOut) ? 1 : 0);
      put<std::uint8_t>(b, (r->h.flags & record::kSchedPreempt) ? 1 : 0);
      ++st.sched_slices;
      if (b.size() >= kPacketBytes) flush_packet(*cs);
    }
  }
  // MPI records (trace format 1.5, libkron_mpi or kron merge): a stream of their own (by_thread 3, source and
  // lane 0), every input's in order of their begin (ERRATUM E174: the event's time is the call's begin;
  // `end` a field), each a kron:mpi with every field of the record and the call's name.
  {
    std::vector<const record::MpiRecord*> calls;
    for (const auto& input : in.inputs())
      for (const auto& r : input->mpi_records()) calls.push_back(&r);
    std::stable_sort(calls.begin(), calls.end(), [](auto* a, auto* b) { return a->timestamp < b->timestamp; });
    CtfStream* cs = nullptr;
    for (const record::MpiRecord* r : calls) {
      if (!cs) {
        cs = &streams.emplace_back();
        cs->key = StreamKey{0, 0, false};
        cs->mpi = true;
        cs->path = fmt::format("{}/stream_{}", dir, streams.size() - 1);
      }
      std::string& b = cs->packet;
      if (!cs->any) cs->first = r->timestamp;
      cs->any = true;
      cs->last = r->timestamp;
      put<std::uint16_t>(b, kEvMpi);
      put<std::uint64_t>(b, r->timestamp);
      put<std::uint64_t>(b, r->timestamp);
      put<std::uint64_t>(b, r->end);
      put<std::uint64_t>(b, r->bytes);
      put<std::uint32_t>(b, r->source);
      put<std::uint32_t>(b, r->thread);
      put<std::uint32_t>(b, r->rank);
      put<std::uint32_t>(b, r->comm);
      put<std::uint32_t>(b, r->comm_size);
      put<std::uint32_t>(b, static_cast<std::uint32_t>(r->peer));
      put<std::uint32_t>(b, static_cast<std::uint32_t>(r->tag));
      put<std::uint16_t>(b, static_cast<std::uint16_t>(r->call));
      put<std::uint16_t>(b, r->h.cpu);
      put<std::uint8_t>(b, r->h.flags);
      const char* nm = mpi_call_name(r->call);
      b.append(nm, std::strlen(nm) + 1);
      ++st.mpi_flows;
      if (b.size() >= kPacketBytes) flush_packet(*cs);
    }
  }
  // ERRATUM E165. The recorder's losses: each lane's count on its stream (pid and thread; else the first stream of
  // that pid; else the first stream), in a last empty packet, so that a reader reports them as discarded
  // events after the stream's samples.
  for (const auto& input : in.inputs())
    for (const Input::LaneLoss& l : input->lane_losses()) {
      CtfStream* target = nullptr;
      for (CtfStream& cs : streams)
        if (!cs.sched && !cs.mpi && board::source_pid(cs.key.source) == l.pid && cs.key.by_thread && cs.key.lane == l.tid)
          target = &cs;
      if (!target)
        for (CtfStream& cs : streams)
          if (!cs.sched && !cs.mpi && board::source_pid(cs.key.source) == l.pid && !target) target = &cs;
      if (!target && !streams.empty() && !streams[0].sched && !streams[0].mpi) target = &streams[0];
      if (!target) {  // no sample at all: one stream, empty, to carry the count
        CtfStream& n = streams.emplace_back();
        n.key = StreamKey{0, l.tid, true};
        n.path = fmt::format("{}/stream_{}", dir, streams.size() - 1);
        target = &n;
      }
      target->discarded += l.lost;
      st.discarded += l.lost;
    }
  for (CtfStream& cs : streams) {
    if (cs.any) {
      const std::uint64_t lost = cs.discarded;
      cs.discarded = 0;  // the count so far is the samples before it: none lost yet
      flush_packet(cs);
      cs.discarded = lost;
    }
    if (cs.discarded) {
      cs.first = cs.last;
      flush_packet(cs);
    } else if (::access(cs.path.c_str(), F_OK) != 0) {
      flush_packet(cs);
    }
  }
  return st;
}

}  // namespace kron::analysis
