// kron's record layout, defined once: the records a probe writes into its lane of a board, that the
// board reader and the recorder copy unchanged into a trace file, and that every reader decodes. Both
// versioned ABIs use it: the board's rings (include/kron/board.hpp, docs/board-format.md) and the trace
// file's record area (include/kron/format/trace_file.hpp, docs/trace-format.md).
//
// No third-party dependency: the probe side (kron.hpp's hot path) includes it.
//
// Every record starts with an 8-byte RecordHeader; size is the whole record in bytes (a multiple of 8), so
// a reader skips kinds it does not know. All integers little-endian. The probe writes the header as one
// 64-bit word (little-endian: field at byte offset B is bits 8B..8B+7 of the word):
//
//   bits  0-15 kind     bits 16-31 size     bits 32-39 flags (SampleFlag)
//   bits 40-47 group (filter level 0-15)    bits 48-63 cpu (1.3 and older) / phase (1.4 samples)
//
// and the ids word (word 1) as source | thread << 32. A record is a whole number of 32-byte slots of a
// lane's ring: Trace one slot, Resource five.
//
// ERRATUM E180. Trace format 1.4 / board 2.2 ("phased" samples): a Trace or Resource record carries the
// thread's 16-bit phase (004 4.4.1 PhaseID Register) in bits 48-63 of its header word, where 1.3 kept the
// cpu, and the cpu moves to bits 22-31 of the thread field (Linux thread ids are below 2^22,
// PID_MAX_LIMIT); a cpu above 1022 is stored as 1023. A 1.3 file or a 2.1 board reads as phase 0 with the
// cpu where it was (phased_fields() below with phased = false). Scheduling switches keep their cpu in the
// header (not samples: no phase).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>

#include "kron/core/vocabulary.hpp"

namespace kron::record {

// Record kinds (the values are file and board ABI).
// Trace and Resource are samples (a board lane's and the file's record area). Names (3, trace format 1.3) is
// an entry of the name table: a board's name slots and the trace file's name section, never a lane or the
// record area (its kRecordSize entry is 0). SchedSwitch (4, trace format 1.3) is the recorder's, never a
// probe's: a board never holds one (valid_slots refuses it).
// HistSnapshot (5) and CounterSnapshot (6) are trace format 1.4 (kron/core/stats.hpp): the recorder's, never
// in a board's lane, not samples; of variable size, so kRecordSize holds 0 for them. (7 is kept for the statistics
// area's threshold crossings, which are Trace samples with kFlagThreshold instead: ERRATUM E185.) Mpi (8) and
// ClockOffset (9, trace format 1.5) are libkron_mpi's (src/mpi), never a probe's: after the samples of a
// rank's file, not samples (FileHeader::mpi_records, clock_offsets count them); kind 10 is reserved for MPI.
enum class RecordKind : std::uint16_t {
  Trace = 1,
  Resource = 2,
  Names = 3,
  SchedSwitch = 4,
  HistSnapshot = 5,
  CounterSnapshot = 6,
  Mpi = 8,
  ClockOffset = 9
};
inline constexpr std::size_t kRecordKinds = 9;

struct RecordHeader {
  RecordKind kind;
  std::uint16_t size;  // whole record, bytes
  std::uint8_t flags;  // SampleFlag
  std::uint8_t group;  // filter level 0-15, 0xff unknown
  union {
    std::uint16_t cpu;    // 1.3 and older samples, scheduling switches
    std::uint16_t phase;  // 1.4 (board 2.2) Trace and Resource records: the thread's phase (ERRATUM E180)
  };
};
struct TraceRecord {
  RecordHeader h;
  std::uint32_t source;     // "node.process" source identification
  std::uint32_t thread;     // thread id
  std::uint64_t timestamp;  // ticks
  std::uint64_t data;       // user data
};
struct ResourceRecord {
  TraceRecord t;
  std::uint64_t counters[kResourceCounters];
};
// A context switch of a traced thread (kron record --sched): the thread went off (kSchedOut) or onto a CPU
// (h.cpu) at `timestamp`, in the file's clock. Not a sample: readers hand them apart from the samples,
// and FileHeader::samples does not count them. The ids are a Trace record's (source, thread).
enum SchedFlag : std::uint8_t {
  kSchedOut = 1u << 0,      // switched out (else in)
  kSchedPreempt = 1u << 1,  // switched out while still runnable (preempted), else it blocked or slept
};
struct SchedRecord {
  RecordHeader h;           // kind SchedSwitch, flags SchedFlag, group 0xff, cpu the CPU
  std::uint32_t source;     // "node.process" source identification of the thread's process
  std::uint32_t thread;     // thread id
  std::uint64_t timestamp;  // ticks
  std::uint64_t reserved;   // 0
};

// An MPI call of a rank (1.5, libkron_mpi): point-to-point (one record per message, both ends: the sender's
// and the receiver's) or collective. `timestamp` is when the call began (a non-blocking one: when it was
// posted), `end` when it completed (a non-blocking one: the end of the MPI_Wait/MPI_Test call that
// completed it). Ranks are MPI_COMM_WORLD ranks; `comm` a communicator id equal on every member (E203).
enum class MpiCall : std::uint16_t {
  Send = 1,
  Recv = 2,
  Isend = 3,
  Irecv = 4,
  SendrecvSend = 5,
  SendrecvRecv = 6,  // point to point (MPI_Sendrecv_replace's two halves too)
  Mrecv = 7,         // MPI_Mrecv: a receive of a message MPI_Mprobe/MPI_Improbe matched
  Imrecv = 8,        // MPI_Imrecv, completed as Irecv is
  PsendStart = 9,    // MPI_Start of a persistent send (Send_init, Ssend_init, Bsend_init, Rsend_init)
  PrecvStart = 10,   // MPI_Start of a persistent receive (Recv_init)
  Barrier = 16,
  Bcast = 17,
  Reduce = 18,
  Allreduce = 19,
  Gather = 20,
  Allgather = 21,
  Scatter = 22,
  Alltoall = 23,  // collectives: 16 and up
  Gatherv = 24,
  Scatterv = 25,
  Allgatherv = 26,
  Alltoallv = 27,
  ReduceScatter = 28,
  ReduceScatterBlock = 29,
  Scan = 30,
  Exscan = 31,
  Ibarrier = 32,  // non-blocking collectives: begin = posting, end = the completion (E433)
  Ibcast = 33,
  Ireduce = 34,
  Iallreduce = 35,
  Igather = 36,
  Iallgather = 37,
  Iscatter = 38,
  Ialltoall = 39,
  Igatherv = 40,
  Iscatterv = 41,
  Iallgatherv = 42,
  Ialltoallv = 43,
};
inline constexpr std::uint16_t kMpiFirstCollective = 16;
constexpr bool mpi_is_send(MpiCall c) {
  return c == MpiCall::Send || c == MpiCall::Isend || c == MpiCall::SendrecvSend || c == MpiCall::PsendStart;
}
constexpr bool mpi_is_recv(MpiCall c) {
  return c == MpiCall::Recv || c == MpiCall::Irecv || c == MpiCall::SendrecvRecv || c == MpiCall::Mrecv ||
         c == MpiCall::Imrecv || c == MpiCall::PrecvStart;
}
constexpr bool mpi_is_collective(MpiCall c) { return static_cast<std::uint16_t>(c) >= kMpiFirstCollective; }
enum MpiFlag : std::uint8_t {
  kMpiIncomplete = 1u << 0,  // a non-blocking request the program never completed: `end` is its posting
};
struct MpiRecord {
  RecordHeader h;           // kind Mpi, size 64, flags MpiFlag, group 0xff, cpu the CPU at the call's begin
  std::uint32_t source;     // "node.process" of the rank's process (node = rank, E201)
  std::uint32_t thread;     // thread id
  std::uint64_t timestamp;  // ticks: begin (posted)
  std::uint64_t end;        // ticks: completed
  std::uint64_t bytes;      // message size (collectives: the rank's send buffer), bytes
  std::uint32_t comm;       // communicator id (E203); 0 MPI_COMM_WORLD
  std::int32_t peer;        // point to point: the other rank (world); rooted collectives: the root; else -1
  std::int32_t tag;         // point to point: the tag (a receive's: the one received); collectives: the
                            // call's sequence number on the communicator (0, 1, ...), the same on every member
  std::uint32_t rank;       // this rank (world)
  MpiCall call;
  std::uint16_t reserved;   // 0
  std::uint32_t comm_size;  // members of the communicator
};
// A clock-offset measurement (1.5, libkron_mpi, ERRATUM E204): of the ping-pongs of one exchange with the
// reference rank (0), the one with the smallest round trip: the reference's clock read `reference` while
// this rank's read `timestamp` (the midpoint of the round trip), to within rtt / 2.
struct ClockOffsetRecord {
  RecordHeader h;                // kind ClockOffset, size 48, flags 0, group 0xff, cpu 0
  std::uint32_t rank;            // this rank (world)
  std::uint32_t reference_rank;  // 0
  std::uint64_t timestamp;       // this rank's ticks: midpoint of the exchange
  std::uint64_t reference;       // the reference rank's ticks at that moment (its own clock_hz)
  std::uint64_t rtt;             // round trip of the exchange kept, this rank's ticks
  std::uint64_t exchanges;       // ping-pongs done, of which this one had the smallest rtt
};

// Record size table by kind, checked against the kinds (Tracy's QueueDataSize). Index 0 is no kind.
// Variable-size kinds (Names lives apart; 5 and 6 are snapshots) have 0: a reader checks them itself; 7 is
// unused.
inline constexpr std::size_t kRecordSize[] = {
    0, sizeof(TraceRecord), sizeof(ResourceRecord),   0, sizeof(SchedRecord), 0, 0,
    0, sizeof(MpiRecord),   sizeof(ClockOffsetRecord)};
static_assert(std::size(kRecordSize) == kRecordKinds + 1);
static_assert(std::size(kRecordSize) == static_cast<std::size_t>(RecordKind::ClockOffset) + 1);
static_assert(sizeof(MpiRecord) == 64 && offsetof(MpiRecord, timestamp) == offsetof(TraceRecord, timestamp) &&
              offsetof(MpiRecord, end) == 24 && offsetof(MpiRecord, bytes) == 32 && offsetof(MpiRecord, comm) == 40 &&
              offsetof(MpiRecord, peer) == 44 && offsetof(MpiRecord, tag) == 48 && offsetof(MpiRecord, rank) == 52 &&
              offsetof(MpiRecord, call) == 56 && offsetof(MpiRecord, comm_size) == 60);
static_assert(sizeof(ClockOffsetRecord) == 48 && offsetof(ClockOffsetRecord, timestamp) == 16 &&
              offsetof(ClockOffsetRecord, reference) == 24 && offsetof(ClockOffsetRecord, rtt) == 32 &&
              offsetof(ClockOffsetRecord, exchanges) == 40);
static_assert(sizeof(RecordHeader) == 8 && sizeof(TraceRecord) == 32 && sizeof(ResourceRecord) == 160);
static_assert(sizeof(SchedRecord) == 32 && offsetof(SchedRecord, timestamp) == offsetof(TraceRecord, timestamp));
static_assert(offsetof(RecordHeader, size) == 2 && offsetof(RecordHeader, flags) == 4 &&
              offsetof(RecordHeader, group) == 5 && offsetof(RecordHeader, cpu) == 6);
static_assert(offsetof(TraceRecord, source) == 8 && offsetof(TraceRecord, thread) == 12 &&
              offsetof(TraceRecord, timestamp) == 16 && offsetof(TraceRecord, data) == 24);
static_assert(offsetof(ResourceRecord, counters) == 32);

// Slots: the ring unit of a board lane is one Trace record.
inline constexpr std::uint32_t kSlotBytes = sizeof(TraceRecord);
inline constexpr std::uint32_t kSlotWords = kSlotBytes / 8;
inline constexpr std::uint32_t kResourceSlots = sizeof(ResourceRecord) / kSlotBytes;
static_assert(sizeof(ResourceRecord) % kSlotBytes == 0 && kResourceSlots == 5);

// The size of a record of `kind`; 0 for a kind this version does not know.
constexpr std::size_t size_of(RecordKind kind) {
  const auto k = static_cast<std::size_t>(kind);
  return k < std::size(kRecordSize) ? kRecordSize[k] : 0;
}

// ---- The header as one 64-bit word (what the probe stores) ----------------------------------------------
inline constexpr unsigned kKindShift = 0, kSizeShift = 16, kFlagsShift = 32, kGroupShift = 40, kCpuShift = 48;
static_assert(kSizeShift == 8 * offsetof(RecordHeader, size) && kFlagsShift == 8 * offsetof(RecordHeader, flags) &&
              kGroupShift == 8 * offsetof(RecordHeader, group) && kCpuShift == 8 * offsetof(RecordHeader, cpu));
// Kind and size: what stays of a probe's prepared header word once its pending flags went out.
inline constexpr std::uint64_t kKindSizeMask = 0xffffffffu;

// Kind and size of a record of `kind`, without flags, group and cpu.
constexpr std::uint64_t header_word(RecordKind kind) {
  return std::uint64_t{static_cast<std::uint16_t>(kind)} << kKindShift | std::uint64_t{size_of(kind)} << kSizeShift;
}
constexpr std::uint64_t flag_bits(std::uint8_t flags) { return std::uint64_t{flags} << kFlagsShift; }
constexpr std::uint64_t group_bits(unsigned group) { return std::uint64_t{group & 15u} << kGroupShift; }
constexpr std::uint64_t cpu_bits(std::uint64_t cpu) { return cpu << kCpuShift; }

// ---- Phased samples (1.4 / board 2.2, ERRATUM E180) ------------------------------------------------------
inline constexpr unsigned kPhaseShift = kCpuShift;  // header word bits 48-63
inline constexpr unsigned kIdsCpuShift = 54;        // ids word bits 54-63: the thread field's bits 22-31
inline constexpr std::uint32_t kThreadBits = 22;    // Linux PID_MAX_LIMIT is 2^22
inline constexpr std::uint32_t kThreadMask = (1u << kThreadBits) - 1;
inline constexpr std::uint32_t kMaxPhasedCpu = 1023;  // a cpu above it is stored as 1023
// The header word bits of phase `phase` (what kron::phase() stores, shifted once, in a thread-local).
constexpr std::uint64_t phase_bits(std::uint16_t phase) { return std::uint64_t{phase} << kPhaseShift; }
// The ids word bits of `cpu` (the probe passes a cpu it knows to be at most 1023).
constexpr std::uint64_t ids_cpu_bits(std::uint64_t cpu) {
  return (cpu > kMaxPhasedCpu ? kMaxPhasedCpu : cpu) << kIdsCpuShift;
}
struct PhasedFields {
  std::uint16_t cpu, phase;
  std::uint32_t thread;
};
// The cpu, phase and thread of a Trace or Resource record: `phased` for a 1.4 file or a 2.2 board.
constexpr PhasedFields phased_fields(std::uint16_t header_cpu, std::uint32_t thread, bool phased) {
  if (!phased) return {header_cpu, 0, thread};
  return {static_cast<std::uint16_t>(thread >> kThreadBits), header_cpu, thread & kThreadMask};
}
static_assert(phased_fields(7, 1234u | 5u << 22, true).cpu == 5 &&
              phased_fields(7, 1234u | 5u << 22, true).phase == 7 &&
              phased_fields(7, 1234u | 5u << 22, true).thread == 1234 && phased_fields(7, 99, false).cpu == 7);
// Word 1: source | thread << 32.
constexpr std::uint64_t ids_word(std::uint32_t source, std::uint32_t thread) {
  return std::uint64_t{source} | std::uint64_t{thread} << 32;
}

constexpr std::uint16_t kind_of(std::uint64_t word) { return static_cast<std::uint16_t>(word >> kKindShift); }
constexpr std::uint16_t size_of_word(std::uint64_t word) { return static_cast<std::uint16_t>(word >> kSizeShift); }
// The slots a record with this header word fills when its kind is known and its size is that kind's;
// 0 otherwise (a reader never trusts a board's memory).
constexpr std::uint64_t valid_slots(std::uint64_t word) {
  const std::uint16_t kind = kind_of(word), size = size_of_word(word);
  if (kind == 0 || kind >= std::size(kRecordSize) || size != kRecordSize[kind]) return 0;
  if (kind != static_cast<std::uint16_t>(RecordKind::Trace) && kind != static_cast<std::uint16_t>(RecordKind::Resource))
    return 0;  // SchedSwitch is the recorder's, Mpi and ClockOffset libkron_mpi's: never a probe's
  return size / kSlotBytes;
}

static_assert(header_word(RecordKind::Trace) == (1u | 32u << 16) &&
              header_word(RecordKind::Resource) == (2u | 160u << 16));
static_assert(valid_slots(header_word(RecordKind::Trace) | group_bits(3) | cpu_bits(7)) == 1);
static_assert(valid_slots(header_word(RecordKind::Resource)) == kResourceSlots && valid_slots(2u | 32u << 16) == 0);
static_assert(valid_slots(header_word(RecordKind::SchedSwitch)) == 0 && valid_slots(3u | 32u << 16) == 0);
static_assert(valid_slots(header_word(RecordKind::Mpi)) == 0 && valid_slots(header_word(RecordKind::ClockOffset)) == 0);

// ---- Named probes: the data word and the name table ------------------------------------------------------
// ERRATUM E150. A named probe's sample is a Trace record with kFlagNamed whose data word carries the name id
// in bits 48-63 and the probe's value in bits 0-47: the record stays 32 bytes and the hot path one store per
// word.
// DECISION D30: the value is a signed 48-bit integer, kNamedValueMin..kNamedValueMax (-2^47 .. 2^47-1), kept
// as two's complement in bits 0-47. named_data() stores the low 48 bits of whatever it is given (an int64 -5
// and a uint64 2^64-5 are the same bits); named_value_of() is the one decoder, sign-extending bit 47, and
// every tool, export and the Python module read the value through it. A value outside the range keeps its
// low 48 bits and reads back as that modulo 2^48 in the range (DECISION D31); a code address of the function
// hooks is below 2^47 on x86-64 and reads back unchanged (DECISION D32).
inline constexpr unsigned kNameIdShift = 48;
inline constexpr std::uint64_t kNamedValueMask = (std::uint64_t{1} << kNameIdShift) - 1;
inline constexpr std::int64_t kNamedValueMax = (std::int64_t{1} << (kNameIdShift - 1)) - 1;
inline constexpr std::int64_t kNamedValueMin = -kNamedValueMax - 1;
constexpr std::uint64_t named_data(std::uint32_t id, std::uint64_t value) {
  return std::uint64_t{id} << kNameIdShift | (value & kNamedValueMask);
}
constexpr std::uint16_t name_id_of(std::uint64_t data) { return static_cast<std::uint16_t>(data >> kNameIdShift); }
// The value's 48 bits moved to the top of the word, then an arithmetic shift back: bit 47 fills bits 48-63.
constexpr std::int64_t named_value_of(std::uint64_t data) {
  return static_cast<std::int64_t>(data << (64 - kNameIdShift)) >> (64 - kNameIdShift);
}
static_assert(named_value_of(named_data(7, static_cast<std::uint64_t>(std::int64_t{-5}))) == -5 &&
              named_value_of(named_data(7, static_cast<std::uint64_t>(kNamedValueMin))) == kNamedValueMin &&
              named_value_of(named_data(7, kNamedValueMax)) == kNamedValueMax &&
              named_value_of(named_data(7, std::uint64_t{1} << 47)) == kNamedValueMin);
inline constexpr std::uint16_t kNoNameId = 0xffff;  // KRON_NAME_NONE (kron/site.h): the table had no room

// What a name-table entry names.
// Node (1.5, libkron_mpi): id 0, `source` the rank's process, `thread` its rank, `name` the node's name
// (MPI_Get_processor_name), `function` "rank R of N".
// Function (1.7, the function hooks of kron-functions.pc: docs/functions.md): a site like Scope whose samples
// carry a function's run-time address as their value (begin at entry, end at exit); the tools name each address
// from the load map. Module (1.7): id 0, `source` the process, one loaded object of its load map: `file` its
// path (the end kept), `name` its load bias as "0x" and hex digits, `function` "" (ERRATUM E450).
enum class NameKind : std::uint16_t { Scope = 1, Event = 2, Thread = 3, Node = 4, Function = 5, Module = 6 };
// Kinds whose entries carry an id that samples name (the others have id 0).
constexpr bool name_has_id(NameKind k) {
  return k == NameKind::Scope || k == NameKind::Event || k == NameKind::Function;
}
inline constexpr std::size_t kNameBytes = 64, kFunctionBytes = 64, kFileBytes = 104;
// One entry (256 bytes): a board's name slot and a record of the trace file's name section. Scope and Event
// entries: `id` is what samples carry, `source`/`thread` who registered it, name/file/line/function the
// probe's site. Thread entries: id 0, `source`/`thread` the thread, `name` its name (the last entry for a
// thread wins). Strings are NUL-padded; a reader never trusts them to be terminated. A file name longer
// than kFileBytes - 1 keeps its end.
struct NameRecord {
  RecordHeader h;  // kind Names, size sizeof(NameRecord); flags, group, cpu 0
  NameKind name_kind;
  std::uint16_t id;
  std::uint32_t source;
  std::uint32_t thread;
  std::uint32_t line;
  char name[kNameBytes];
  char function[kFunctionBytes];
  char file[kFileBytes];
};
static_assert(sizeof(NameRecord) == 256 && offsetof(NameRecord, name) == 24 && offsetof(NameRecord, file) == 152);
// What is wrong with an entry read from untrusted memory (a board, a file), or nullptr: its header word, its
// kind, its id (Scope/Event 1-65534 and `expected_id` when not 0; Thread 0), and a NUL in every string.
inline const char* name_record_problem(const NameRecord& r, std::uint32_t expected_id) {
  if (r.h.kind != RecordKind::Names || r.h.size != sizeof(NameRecord)) return "not a name record (kind 3, size 256)";
  if (r.name_kind == NameKind::Thread || r.name_kind == NameKind::Node || r.name_kind == NameKind::Module) {
    if (r.id != 0) return "thread, node or module name entry with an id";
  } else if (name_has_id(r.name_kind)) {
    if (r.id == 0 || r.id == 0xffff || (expected_id && r.id != expected_id)) return "name entry id is invalid";
  } else {
    return "name entry of unknown kind";
  }
  if (!std::memchr(r.name, 0, sizeof r.name) || !std::memchr(r.function, 0, sizeof r.function) ||
      !std::memchr(r.file, 0, sizeof r.file))
    return "name entry string is not terminated";
  return nullptr;
}
constexpr std::uint64_t name_header_word() {
  return std::uint64_t{static_cast<std::uint16_t>(RecordKind::Names)} << kKindShift | std::uint64_t{sizeof(NameRecord)}
                                                                                          << kSizeShift;
}

// ---- Fields of an encoded record in memory (any alignment) ----------------------------------------------
inline std::uint64_t header_word_at(const std::uint8_t* rec) {
  std::uint64_t w;
  std::memcpy(&w, rec, sizeof w);
  return w;
}
inline std::uint16_t size_at(const std::uint8_t* rec) {
  std::uint16_t s;
  std::memcpy(&s, rec + offsetof(RecordHeader, size), sizeof s);
  return s;
}
// Rewrites a Trace or Resource record of a 2.1 board (cpu in the header) as a 2.2 one (ERRATUM E180): cpu to
// the thread field's bits 22-31, phase 0.
inline void upgrade_to_phased(std::uint8_t* rec) {
  RecordHeader h;
  std::uint32_t thread;
  std::memcpy(&h, rec, sizeof h);
  std::memcpy(&thread, rec + offsetof(TraceRecord, thread), sizeof thread);
  thread = (thread & kThreadMask) | static_cast<std::uint32_t>(ids_cpu_bits(h.cpu) >> 32);
  h.phase = 0;
  std::memcpy(rec, &h, sizeof h);
  std::memcpy(rec + offsetof(TraceRecord, thread), &thread, sizeof thread);
}
inline std::uint64_t timestamp_at(const std::uint8_t* rec) {
  std::uint64_t t;
  std::memcpy(&t, rec + offsetof(TraceRecord, timestamp), sizeof t);
  return t;
}

}  // namespace kron::record
