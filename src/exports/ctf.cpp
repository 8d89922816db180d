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
#include <vector>

#include "exports/ctf.hpp"
#include "exports/exports.hpp"
#include "exports/sink.hpp"
#include "kron/board.hpp"
#include "kron/core/text.hpp"

namespace kron::exports {
namespace ctf {
namespace {
__extension__ typedef unsigned __int128 u128;

using analysis::StreamKey;

constexpr std::uint32_t kCtfMagic = 0xC1FC1FC1;  // CTF 1.8 section 5
constexpr std::size_t kPacketBytes = 64 * 1024;
constexpr std::size_t kPacketHeaderBytes = 8, kPacketContextBytes = 5 * 8 + 4 + 4 + 1;
enum : std::uint16_t { kEvTrace = 0, kEvResource = 1, kEvNamed = 2, kEvSched = 3, kEvMpi = 4 };

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
    case C::Mrecv: return "MPI_Mrecv";
    case C::Imrecv: return "MPI_Imrecv";
    case C::PsendStart: return "MPI_Start (send)";
    case C::PrecvStart: return "MPI_Start (receive)";
    case C::Gatherv: return "MPI_Gatherv";
    case C::Scatterv: return "MPI_Scatterv";
    case C::Allgatherv: return "MPI_Allgatherv";
    case C::Alltoallv: return "MPI_Alltoallv";
    case C::ReduceScatter: return "MPI_Reduce_scatter";
    case C::ReduceScatterBlock: return "MPI_Reduce_scatter_block";
    case C::Scan: return "MPI_Scan";
    case C::Exscan: return "MPI_Exscan";
    case C::Ibarrier: return "MPI_Ibarrier";
    case C::Ibcast: return "MPI_Ibcast";
    case C::Ireduce: return "MPI_Ireduce";
    case C::Iallreduce: return "MPI_Iallreduce";
    case C::Igather: return "MPI_Igather";
    case C::Iallgather: return "MPI_Iallgather";
    case C::Iscatter: return "MPI_Iscatter";
    case C::Ialltoall: return "MPI_Ialltoall";
    case C::Igatherv: return "MPI_Igatherv";
    case C::Iscatterv: return "MPI_Iscatterv";
    case C::Iallgatherv: return "MPI_Iallgatherv";
    case C::Ialltoallv: return "MPI_Ialltoallv";
  }
  return "MPI (unknown call)";
}

struct CtfStream {
  StreamKey key;
  bool sched = false;   // the scheduling switches' stream (kron:sched_switch), lane 0
  bool mpi = false;     // the MPI records' stream (kron:mpi), lane 0
  bool ranked = false;  // an MPI recording: the packet context ends with the stream's rank (ERRATUM E395)
  std::int32_t rank = -1;
  std::string path;
  std::string packet;                 // events of the packet being filled
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
  const std::uint64_t bits = 8 * (kPacketHeaderBytes + kPacketContextBytes + (s.ranked ? 4 : 0) + s.packet.size());
  put<std::uint64_t>(head, s.first);
  put<std::uint64_t>(head, s.last);
  put<std::uint64_t>(head, bits);  // content_size
  put<std::uint64_t>(head, bits);  // packet_size
  put<std::uint64_t>(head, s.discarded);
  put<std::uint32_t>(head, s.key.source);
  put<std::uint32_t>(head, s.key.lane);
  put<std::uint8_t>(head, s.sched ? kLaneSched : s.mpi ? kLaneMpi : s.key.by_thread ? kLaneThread : kLaneCpu);
  if (s.ranked) put<std::int32_t>(head, s.rank);
  write_all(s.path, head, s.packet);
  s.packet.clear();
  s.any = false;
}

class Sink final : public analysis::TimelineSink {
 public:
  Sink(std::string dir, ExportStats& st) : dir_(std::move(dir)), st_(st) {}
  Needs needs() const override { return Needs().then({Part::Switches, Part::Calls}); }
  void begin(analysis::Timeline& tl) override;
  void stream(std::uint32_t, const StreamKey& k, const Sample&) override { new_stream(k); }  // stream_N: N = its number
  void sample(const Sample& s, std::uint32_t stream, bool) override;
  void sched_switch(const record::SchedRecord& r) override;
  void mpi_call(const record::MpiRecord& r) override;
  void end() override;

 private:
  CtfStream& new_stream(const StreamKey& k) {
    CtfStream& n = streams_.emplace_back();
    n.key = k;
    n.ranked = tl_->ranks().any();  // the rank of a stream of samples; -1 for the switches' and MPI calls'
    if (const auto r = tl_->rank(k.source)) n.rank = static_cast<std::int32_t>(*r);
    n.path = fmt::format("{}/stream_{}", dir_, streams_.size() - 1);
    return n;
  }
  // The stream of the records after the samples (switches, MPI calls), made at the first; `t` the event's time.
  std::string& annex_event(std::size_t& at, bool sched, std::uint64_t t, std::uint16_t id);
  void annex_done(std::size_t at, std::uint64_t& count) {  // an event of the stream `at` written, counted
    ++count;
    if (streams_[at].packet.size() >= kPacketBytes) flush_packet(streams_[at]);
  }
  CtfStream* loss_target(const analysis::Input::LaneLoss& l);

  std::string dir_;
  ExportStats& st_;
  analysis::Timeline* tl_ = nullptr;
  std::vector<CtfStream> streams_;
  static constexpr std::size_t kNone = ~std::size_t{0};
  std::size_t sched_ = kNone, mpi_ = kNone;  // streams_ index of the switches' and the MPI calls' streams
};

// ERRATUM E164. The clock's offset (CTF 1.8 section 8): ticks 0 at offset_s seconds + offset cycles after the
// epoch, from the kron file's start_ticks and start_realtime_ns; 0 (the epoch) for a raw stream.
void Sink::begin(analysis::Timeline& tl) {
  tl_ = &tl;
  const std::uint64_t clock = tl.clock_hz();
  std::int64_t offset_s = 0;
  std::uint64_t offset_cycles = 0, start_ticks = 0, start_rt = 0;
  for (const auto& input : tl.in().inputs())
    if (input->wall_clock(start_ticks, start_rt)) {
      const u128 ticks_ns = static_cast<u128>(start_ticks) * 1'000'000'000u / clock;
      if (ticks_ns <= start_rt) {
        const std::uint64_t base_ns = start_rt - static_cast<std::uint64_t>(ticks_ns);
        offset_s = static_cast<std::int64_t>(base_ns / 1'000'000'000u);
        offset_cycles =
            static_cast<std::uint64_t>(static_cast<u128>(base_ns % 1'000'000'000u) * clock / 1'000'000'000u);
      }
      break;
    }
  std::string description = "kron export of";
  for (const auto& input : tl.in().inputs()) description += " " + input->path();
  std::string esc;
  for (char c : text::utf8_safe(description)) {
    if (c == '"' || c == '\\') esc += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) esc += c;
  }
  write_all(dir_ + "/metadata", metadata(clock, offset_s, offset_cycles, esc, tl.ranks().any()), "");
}

void Sink::sample(const Sample& s, std::uint32_t stream, bool) {
  ++st_.samples;
  // ERRATUM E164: the clock value is t0 + (t - t0) modulo the timestamp's width (a classic counter that
  // wrapped goes on counting), and never less than the stream's last one (CTF needs it monotonic per
  // stream); `ticks` keeps the sample's own timestamp.
  CtfStream& cs = streams_[stream];
  const std::uint64_t t0 = tl_->t0();
  std::uint64_t v = t0 + ((s.timestamp - t0) & tl_->ts_mask());
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
  put<std::uint16_t>(b, s.phase);  // the thread's phase (1.4 files; 0 before)
  if (s.is_resource()) {
    for (unsigned c = 0; c < kResourceCounters; ++c) put<std::uint64_t>(b, s.counters[c]);
    st_.counters += kResourceCounters;
  } else if (named) {
    put<std::uint16_t>(b, record::name_id_of(s.data));
    put<std::int64_t>(b, record::named_value_of(s.data));  // int64_t in the metadata (DECISION D30)
    const std::string nm = text::utf8_safe(tl_->names().name_of(s));
    b.append(nm.c_str(), std::strlen(nm.c_str()) + 1);  // a CTF string ends at its first NUL
    ++st_.instants;
  }
  if (b.size() >= kPacketBytes) flush_packet(cs);
}

std::string& Sink::annex_event(std::size_t& at, bool sched, std::uint64_t t, std::uint16_t id) {
  if (at == kNone) {
    at = streams_.size();
    CtfStream& n = new_stream(StreamKey{0, 0, false});
    (sched ? n.sched : n.mpi) = true;
  }
  CtfStream* cs = &streams_[at];
  if (!cs->any) cs->first = t;
  cs->any = true;
  cs->last = t;
  std::string& b = cs->packet;
  put<std::uint16_t>(b, id);
  put<std::uint64_t>(b, t);
  put<std::uint64_t>(b, t);
  return b;
}

// Scheduling switches (kron record --sched): a stream of their own (by_thread 2, source and lane 0), every
// input's in time order, each a kron:sched_switch naming its thread; the clock is the samples' (live
// recordings: full 64-bit ticks).
void Sink::sched_switch(const record::SchedRecord& r) {
  std::string& b = annex_event(sched_, true, r.timestamp, kEvSched);
  put<std::uint32_t>(b, r.source);
  put<std::uint32_t>(b, r.thread);
  put<std::uint16_t>(b, r.h.cpu);
  put<std::uint8_t>(b, (r.h.flags & record::kSchedOut) ? 1 : 0);
  put<std::uint8_t>(b, (r.h.flags & record::kSchedPreempt) ? 1 : 0);
  annex_done(sched_, st_.sched_slices);
}

// MPI records (trace format 1.5, libkron_mpi or kron merge): a stream of their own (by_thread 3, source and
// lane 0), every input's in order of their begin (ERRATUM E174: the event's time is the call's begin; `end`
// a field), each a kron:mpi with every field of the record and the call's name.
void Sink::mpi_call(const record::MpiRecord& r) {
  std::string& b = annex_event(mpi_, false, r.timestamp, kEvMpi);
  put<std::uint64_t>(b, r.end);
  put<std::uint64_t>(b, r.bytes);
  put<std::uint32_t>(b, r.source);
  put<std::uint32_t>(b, r.thread);
  put<std::uint32_t>(b, r.rank);
  put<std::uint32_t>(b, r.comm);
  put<std::uint32_t>(b, r.comm_size);
  put<std::uint32_t>(b, static_cast<std::uint32_t>(r.peer));
  put<std::uint32_t>(b, static_cast<std::uint32_t>(r.tag));
  put<std::uint16_t>(b, static_cast<std::uint16_t>(r.call));
  put<std::uint16_t>(b, r.h.cpu);
  put<std::uint8_t>(b, r.h.flags);
  const char* nm = mpi_call_name(r.call);
  b.append(nm, std::strlen(nm) + 1);
  annex_done(mpi_, st_.mpi_flows);
}

// A lane's loss goes on its stream (pid and thread; else the first stream of that pid; else the first
// stream); with no sample at all, one stream, empty, to carry the count.
CtfStream* Sink::loss_target(const analysis::Input::LaneLoss& l) {
  CtfStream* target = nullptr;
  for (CtfStream& cs : streams_)
    if (!cs.sched && !cs.mpi && board::source_pid(cs.key.source) == l.pid && cs.key.by_thread && cs.key.lane == l.tid)
      target = &cs;
  if (!target)
    for (CtfStream& cs : streams_)
      if (!cs.sched && !cs.mpi && board::source_pid(cs.key.source) == l.pid && !target) target = &cs;
  if (!target && !streams_.empty() && !streams_[0].sched && !streams_[0].mpi) target = &streams_[0];
  return target ? target : &new_stream(StreamKey{0, l.tid, true});
}

// ERRATUM E165. The recorder's losses: each lane's count on its stream, in a last empty packet, so that a
// reader reports them as discarded events after the stream's samples.
void Sink::end() {
  for (const auto& input : tl_->in().inputs())
    for (const analysis::Input::LaneLoss& l : input->lane_losses()) {
      CtfStream* target = loss_target(l);
      target->discarded += l.lost;
      st_.discarded += l.lost;
    }
  for (CtfStream& cs : streams_) {
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
}

}  // namespace
}  // namespace ctf

ExportStats export_ctf(analysis::Timeline& tl, const std::string& dir) { return run_sink<ctf::Sink>(tl, dir); }

}  // namespace kron::exports
