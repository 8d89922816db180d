// kron's own trace file: what `kron record` writes and every tool reads. A versioned ABI
// (docs/trace-format.md is the prose description; this header is the definition).
//
//   [FileHeader, header_size bytes][records ... records_bytes][LaneEntry x lane_count]
//
// 1.2: with kFlagCompressed the record area is a sequence of chunks instead (ChunkHeader, then its
// records as one zstd frame or as they are, padded to 8 bytes), each independent of the others.
//
// All integers little-endian, all records 8-byte aligned. A file whose header lacks kFlagComplete was not
// closed (the recorder was killed): its counts are zero and its records run to the last whole record;
// the reader says how many trailing bytes it dropped.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kron/core/error.hpp"
#include "kron/core/record.hpp"
#include "kron/core/sample.hpp"
#include "kron/format/mapped_file.hpp"
#include "kron/format/time_base.hpp"

struct ZSTD_CCtx_s;  // zstd's contexts (zstd.h), kept out of this header
struct ZSTD_DCtx_s;

namespace kron::tracefile {

inline constexpr char kMagic[8] = {'K', 'R', 'O', 'N', 'T', 'R', 'C', '1'};
inline constexpr std::uint32_t kByteOrderMark = 0x01020304;
inline constexpr std::uint16_t kMajor = 1;  // a reader refuses another major
inline constexpr std::uint16_t kMinor =
    7;  // a reader accepts any minor; skips unknown kinds only of a later one (E128)
// Minor versions: 1.0 the first; 1.1 adds FileHeader::late (taken from the reserved bytes, 0 in 1.0 files);
// 1.2 adds kFlagCompressed (chunks of zstd-compressed records) and FileHeader::records_raw_bytes. A 1.0 or
// 1.1 reader given a compressed file would misread it: it never sets the flag those readers ignore
// unless --compress was asked for.
// 1.3 adds record kinds 3, names, and 4, scheduling switches. Names: the name section after the lane table
// (FileHeader::names_offset, name_count, names_lost; record::NameRecord), the names of named probes' sites
// and of threads; a 1.2 reader ignores it (the samples carry the name id in their data word, kFlagNamed).
// Scheduling switches (record::SchedRecord: `kron record --sched`): after the samples, not counted in
// `samples`.
// 1.4 adds phased samples (ERRATUM E180: a Trace or Resource record's header holds the thread's
// phase where 1.3 held the cpu, which moves to the thread field's bits 22-31; a 1.3 file reads as phase 0),
// record kinds 5 (histogram snapshot) and 6 (virtual counter snapshot) among the records, not samples
// (kron/core/stats.hpp), kFlagThreshold samples, and FileHeader::snapshots..stat_cells_lost.
// 1.5 adds MPI recordings (libkron_mpi, kron merge): record kinds 8, MPI calls (record::MpiRecord), and 9,
// clock-offset measurements (record::ClockOffsetRecord), after the samples and not counted in `samples`
// (mpi_records and clock_offsets count them); NameKind::Node entries; the FileHeader fields at 984-1023.
// 1.6 adds the time base (kron/format/time_base.hpp): the FileHeader grows to 1088 bytes (time_source ..
// clock_flags, 1024-1087). A 1.5 reader reads a 1.6 file (it skips header_size bytes; clock_hz is the
// exact rate to the hertz); this reader reads an older file's 1024 bytes, the rest zero (TimeSource::Legacy).
// 1.7 adds the function hooks' name entries (docs/functions.md): NameKind::Function, a site whose samples carry a
// function's address, and NameKind::Module, the load map (ERRATUM E450). A 1.6 reader refuses those entries
// (unknown kind); a file without them is read the same by both. Also 1.7: a rank's end (FileHeader::end_signal,
// taken from the reserved bytes, and RankFlag in merge_flags), which a 1.6 reader ignores.

enum HeaderFlag : std::uint32_t {
  kFlagComplete = 1u << 0,  // counts, records_bytes and the lane table are valid
  kFlagCircular = 1u << 1,  // recorded in circular (flight-recorder) mode
  kFlagWait = 1u << 2,      // recorded with the wait policy (else discard)
  // 1.1: the producer wrote records in timestamp order, but for the `late` ones it counted (the live
  // recorder's hold-back, docs/trace-format.md "Time order"). A complete file with this flag and late 0
  // is in time order: the tools then need no reorder window.
  kFlagTimeOrdered = 1u << 3,
  // 1.2: the record area is a sequence of chunks (ChunkHeader + payload), each holding whole records,
  // zstd-compressed or stored as they are (`kron record --compress`, docs/trace-format.md "Compressed").
  kFlagCompressed = 1u << 4,
};

// Where the samples came from.
enum class Origin : std::uint32_t { Live = 0, Mk1 = 1, Mk2 = 2, Model = 3 };

inline constexpr std::size_t kCounterNameBytes = 32;
inline constexpr std::size_t kProgramBytes = 256;

struct FileHeader {
  char magic[8];
  std::uint32_t byte_order;  // kByteOrderMark as written by the producer
  std::uint16_t major, minor;
  std::uint32_t header_size;        // sizeof(FileHeader) of the producer; records start here
  std::uint32_t flags;              // HeaderFlag
  std::uint64_t clock_hz;           // timestamp ticks per second (TSC rate for live recordings)
  std::uint64_t start_ticks;        // timestamp when recording started
  std::uint64_t start_realtime_ns;  // CLOCK_REALTIME at start_ticks (to align nodes and wall time)
  std::uint32_t node;               // node number (the "node" of "node.process")
  Origin origin;
  std::uint64_t records_bytes;  // length of the record area (complete files)
  // Accounting (complete files): passed_filter == samples + overruns + overwritten.
  std::uint64_t samples;        // records in the file
  std::uint64_t overruns;       // samples dropped because a lane or buffer was full (discard policy)
  std::uint64_t overwritten;    // samples overwritten in circular mode before they were drained
  std::uint64_t passed_filter;  // probes that passed the filter and sampling enable
  std::uint64_t waits;          // probes that were held for room (wait policy)
  std::uint64_t wait_ticks;     // total time held, in timestamp ticks (000's Wait Counter)
  std::uint64_t lanes_offset;   // file offset of the lane table
  std::uint32_t lane_count;
  std::uint32_t lane_entry_size;  // sizeof(LaneEntry) of the producer
  std::uint16_t filter;           // Filter Register when recording ended
  // 1.7, a rank's file (kron record --mpi): the signal that ended the recorded program, 0 when it exited
  // (ERRATUM E441). Reserved and 0 before.
  std::uint16_t end_signal;
  std::uint16_t reserved0[2];
  char counter_names[kResourceCounters][kCounterNameBytes];  // source of each resource counter, "" if unused
  char program[kProgramBytes];                               // command line that was recorded, NUL-terminated
  // 1.1: records written after a record with a later timestamp (the live recorder's time order failed
  // for them: docs/trace-format.md "Time order"). 0 in 1.0 files (reserved bytes were zero).
  std::uint64_t late;
  // 1.2: the records' uncompressed length (complete files; equals records_bytes when not compressed).
  // 0 in 1.0 and 1.1 files.
  std::uint64_t records_raw_bytes;
  // 1.3: the name section, record::NameRecord x name_count right after the lane table (complete files;
  // names_offset 0: none), and the names the board's table had no room for (their samples show no name).
  std::uint64_t names_offset;
  std::uint32_t name_count;
  std::uint32_t name_record_size;  // sizeof(NameRecord) of the producer
  std::uint64_t names_lost;
  // 1.3: the scheduling switches (kind 4) after the samples (kron record --sched); complete files. Tools
  // that need them before the samples (rpt's on-CPU time, ERRATUM E157) read ahead only when it is not 0.
  std::uint64_t sched_switches;
  // 1.4: snapshot records (kinds 5, 6) in the record area (complete files); the board's statistics losses
  // when recording ended: values that found no cell or histogram slot, and threshold crossings; cell
  // requests that found the board's statistics area full.
  std::uint64_t snapshots;
  std::uint64_t stat_lost;
  std::uint64_t thresholds_crossed;
  std::uint64_t stat_cells_lost;
  // 1.5: MPI (libkron_mpi, kron merge; docs/trace-format.md "MPI recordings"). A rank's file: its rank and
  // the world's size (0: not an MPI recording). A merged file: mpi_rank kMergedRank.
  std::uint32_t mpi_rank;
  std::uint32_t mpi_world_size;
  std::uint64_t mpi_records;       // kind 8 records after the samples (complete files)
  std::uint32_t clock_offsets;     // kind 9 records after the samples (complete files)
  std::uint32_t merge_flags;       // MergeFlag (kron merge); a rank's file: RankFlag (1.7)
  std::uint32_t violations_found;  // happened-before violations after the clock alignment, before the CLC pass
  std::uint32_t violations_left;   // and after it (0 once corrected)
  std::uint64_t max_correction;    // the largest correction the CLC pass made, ticks (clock_hz)
  // 1.6: the time base (kron/format/time_base.hpp; docs/trace-format.md "Time base"). From 1.6 on clock_hz
  // is the rate to the hertz (before: calibrated over ~7 ms and rounded to 100 kHz, ERRATUM E302).
  std::uint32_t time_source;  // TimeSource
  std::uint32_t time_shift;   // Kernel: ns = time_zero + ((ticks * time_mult) >> time_shift)
  std::uint32_t time_mult;
  std::uint32_t rate_uncertainty_ppb;  // of the rate (its rounding to the hertz included), parts per 10^9
  std::uint64_t time_zero;
  std::uint64_t anchor0_ticks;  // Anchors: ticks and CLOCK_MONOTONIC_RAW ns at the start
  std::uint64_t anchor0_ns;
  std::uint64_t anchor1_ticks;  // and at the end (0 and 0: none, a file not closed)
  std::uint64_t anchor1_ns;
  std::uint32_t anchor_half_ns;  // the larger of the two anchors' uncertainties
  std::uint32_t clock_flags;     // ClockFlag
};
static_assert(offsetof(FileHeader, end_signal) == 130 && offsetof(FileHeader, counter_names) == 136,
              "FileHeader is a file ABI (1.7's end_signal took reserved bytes)");
static_assert(offsetof(FileHeader, late) == 904 && offsetof(FileHeader, records_raw_bytes) == 912 &&
                  offsetof(FileHeader, names_offset) == 920 && offsetof(FileHeader, names_lost) == 936 &&
                  offsetof(FileHeader, sched_switches) == 944 && offsetof(FileHeader, snapshots) == 952 &&
                  offsetof(FileHeader, stat_lost) == 960 && offsetof(FileHeader, thresholds_crossed) == 968 &&
                  offsetof(FileHeader, stat_cells_lost) == 976,
              "FileHeader is a file ABI");
static_assert(offsetof(FileHeader, mpi_rank) == 984 && offsetof(FileHeader, mpi_world_size) == 988 &&
                  offsetof(FileHeader, mpi_records) == 992 && offsetof(FileHeader, clock_offsets) == 1000 &&
                  offsetof(FileHeader, merge_flags) == 1004 && offsetof(FileHeader, violations_found) == 1008 &&
                  offsetof(FileHeader, violations_left) == 1012 && offsetof(FileHeader, max_correction) == 1016,
              "FileHeader is a file ABI (1.5)");
static_assert(sizeof(FileHeader) == 1088 && offsetof(FileHeader, time_source) == 1024 &&
                  offsetof(FileHeader, time_shift) == 1028 && offsetof(FileHeader, time_mult) == 1032 &&
                  offsetof(FileHeader, rate_uncertainty_ppb) == 1036 && offsetof(FileHeader, time_zero) == 1040 &&
                  offsetof(FileHeader, anchor0_ticks) == 1048 && offsetof(FileHeader, anchor0_ns) == 1056 &&
                  offsetof(FileHeader, anchor1_ticks) == 1064 && offsetof(FileHeader, anchor1_ns) == 1072 &&
                  offsetof(FileHeader, anchor_half_ns) == 1080 && offsetof(FileHeader, clock_flags) == 1084,
              "FileHeader is a file ABI (1.6)");
inline constexpr std::size_t kHeaderBytes15 = 1024;  // the FileHeader of 1.0-1.5
enum ClockFlag : std::uint32_t {
  kClockMerged = 1u << 0,  // kron merge: every rank's ticks mapped onto the reference rank's time base
};
// The time base (1.6): the rate as a real number, its uncertainty, what it came from.
double rate_hz(const FileHeader& h);
double rate_uncertainty_ppm(const FileHeader& h);
TimeSource time_source(const FileHeader& h);
// "kernel perf_event conversion (time_mult 1234, time_shift 31)", "CLOCK_MONOTONIC_RAW anchors over 5.1 s"...
std::string time_source_text(const FileHeader& h);
// The time of the source's kernel clock (Kernel: sched_clock, perf_event's own clock; Anchors:
// CLOCK_MONOTONIC_RAW; KernelClock: CLOCK_MONOTONIC) as ticks of this file: the one conversion that puts
// what the kernel stamps (context switches) on the probes' clock.
std::uint64_t kernel_ns_to_ticks(const FileHeader& h, std::uint64_t ns);
// Anchors: the end anchor; clock_hz and the uncertainty from the two (a no-op for another source).
void close_anchors(FileHeader& h, const Anchor& end);
// Copies time_source .. clock_flags and clock_hz (kron merge: the reference rank's conversion).
void copy_time_base(FileHeader& to, const FileHeader& from);
// The first absurd field of a time base (before 1.6 only clock_hz): nullptr when none, else what is wrong
// and *offset its place.
const char* time_base_problem(const FileHeader& h, std::size_t* offset);
inline constexpr std::uint32_t kMergedRank = 0xffffffffu;
enum MergeFlag : std::uint32_t {
  kMergeMerged = 1u << 0,   // written by kron merge: every rank's samples on rank 0's timeline
  kMergeAligned = 1u << 1,  // the clock alignment was applied (offset and drift, E205)
  kMergeClc = 1u << 2,      // the controlled-logical-clock pass was applied (E206)
};
// 1.7, a rank's file (kron record --mpi, libkron_mpi): how the rank ended (ERRATUM E441). A rank that ended
// early holds what it recorded up to its end: kron merge names it and merges it with the others.
enum RankFlag : std::uint32_t {
  kRankEndedEarly = 1u << 8,  // the rank did not reach MPI_Finalize (killed, MPI_Abort, exit without it)
  kRankAborted = 1u << 9,     // it called MPI_Abort
};

// 1.2, kFlagCompressed: one chunk of the record area. The payload follows (stored_bytes), then zeros to
// the next multiple of 8. stored_bytes < raw_bytes: a zstd frame (with its content checksum) that
// decompresses to exactly raw_bytes; stored_bytes == raw_bytes: the records as they are (ERRATUM E37: a
// chunk that does not shrink is stored raw). Either way the content is `records` whole records in the
// uncompressed layout, never a record split across chunks.
struct ChunkHeader {
  std::uint32_t stored_bytes;
  std::uint32_t raw_bytes;
  std::uint64_t records;
};
static_assert(sizeof(ChunkHeader) == 16);
inline constexpr std::uint32_t kChunkRawBytes = 1u << 20;  // what the writer puts in a chunk (at most)
inline constexpr unsigned kMaxCompressThreads = 64;        // Writer: compression worker threads at most
// --compress-threads when not given: half this machine's CPUs, 1 to 4 (ERRATUM E323).
unsigned default_compress_threads();
inline constexpr std::uint32_t kMaxChunkRawBytes = 4u << 20;  // the most a reader accepts (its buffer)
inline constexpr int kMaxCompressLevel = 19;

// Records: the layout is kron/core/record.hpp (shared with the board's rings, which the recorder copies
// into this file unchanged). size is the whole record in bytes (a multiple of 8), so unknown kinds can be
// skipped; kRecordSize is the size table by kind.
using record::ClockOffsetRecord;
using record::kRecordSize;
using record::MpiRecord;
using record::NameRecord;
using record::RecordHeader;
using record::RecordKind;
using record::ResourceRecord;
using record::SchedRecord;
using record::TraceRecord;
inline constexpr std::uint32_t kMaxNames = 1u << 20;  // the most name records a reader accepts

// Names of a recording: named probes' sites by id, threads by (source, thread). ERRATUM E151: ids are the
// board's; tables of several files are merged, the first entry for an id (or a thread: the last) wins.
class NameTable {
 public:
  void add(const NameRecord& r);
  // The site of id `id` (kind Scope or Event), or nullptr.
  const NameRecord* site(std::uint16_t id) const { return id < sites_.size() && sites_[id].id ? &sites_[id] : nullptr; }
  // The thread's name, "" when none was recorded.
  std::string_view thread(std::uint32_t source, std::uint32_t thread) const;
  // The thread's kernel name (comm) when its entry was made (a Thread entry's `function`, ERRATUM E410): for
  // the main thread, the process's name; "" when unknown (files of kron before it).
  std::string_view comm(std::uint32_t source, std::uint32_t thread) const;
  bool empty() const { return count_ == 0; }
  std::uint16_t max_id() const { return static_cast<std::uint16_t>(sites_.empty() ? 0 : sites_.size() - 1); }
  std::size_t size() const { return count_; }
  // A sample's name: the site's name, "#ID" for an id the table does not hold; "" for an unnamed sample.
  std::string name_of(const Sample& s) const;
  // "file:line function" of a site ("" when unknown).
  static std::string location(const NameRecord& r);

 private:
  std::vector<NameRecord> sites_;                              // indexed by id (id 0 unused)
  std::vector<std::pair<std::uint64_t, NameRecord>> threads_;  // thread_key(source, thread), sorted by key
  std::size_t count_ = 0;
};

// One lane: one writer (a thread of a process) of the board.
struct LaneEntry {
  std::uint32_t pid;
  std::uint32_t tid;
  std::uint64_t samples;
  std::uint64_t overruns;
  std::uint64_t overwritten;
  std::uint64_t waits;
  std::uint64_t wait_ticks;
};
static_assert(sizeof(LaneEntry) == 48);

// A header with magic, version and sizes filled in and everything else zero.
FileHeader make_header();
void set_counter_name(FileHeader& h, unsigned counter, std::string_view name);
void set_program(FileHeader& h, std::string_view program);
std::string_view counter_name(const FileHeader& h, unsigned counter);
std::string_view program(const FileHeader& h);

// What a second writer of `path` is told (ERRATUM E129): by the Writer, and by kron record before it starts its
// program.
std::runtime_error another_writer_error(const std::string& path);

// Streams records to a file; finish() writes the lane table and completes the header.
// With compress_level 1-19 (zstd's levels) the record area is written as chunks of up to kChunkRawBytes
// of records (kFlagCompressed); 0 writes records as they are.
class Writer {
 public:
  // Throws std::runtime_error naming the file (std::invalid_argument for a level outside 0-19 or more than
  // kMaxCompressThreads threads). compress_threads > 0 (with a level): chunks are compressed on that many
  // worker threads and written in order (the same bytes as 0, which compresses on the caller's thread;
  // ERRATUM E323); a worker's failure is thrown by a later append or by finish().
  Writer(const std::string& path, const FileHeader& header, int compress_level = 0, unsigned compress_threads = 0);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void append(const Sample& s);
  // Already-encoded records (a whole number of them), as a recorder's drain copies them.
  void append_records(std::span<const std::uint8_t> records, std::uint64_t count);
  // Scheduling switches (1.3, kind 4), in time order: kept and written by finish() after every sample
  // (they are not samples: `samples` does not count them).
  void append_sched(std::span<const SchedRecord> switches);
  // MPI calls and clock-offset measurements (1.5, kinds 8 and 9): kept and written by finish() after the
  // samples (and the scheduling switches), in the order given; counted in mpi_records and clock_offsets.
  void append_mpi(std::span<const MpiRecord> calls);
  void append_clock(std::span<const ClockOffsetRecord> offsets);
  // Snapshot records (1.4, kinds 5 and 6: kron/core/stats.hpp), written now among the samples, not counted
  // as samples; finish() puts their count in FileHeader::snapshots.
  void append_snapshots(std::span<const std::uint8_t> records, std::uint64_t count);
  // Counts in `header` (samples is filled in by the writer), the lanes and the name section (1.3; the
  // header's names_lost is kept); sets kFlagComplete.
  void finish(FileHeader header, std::span<const LaneEntry> lanes, std::span<const NameRecord> names = {});
  // Hands every record appended so far to the kernel (compressed: to the workers, who write it in their turn),
  // so that a writer killed later (SIGKILL) leaves them in its unclosed file (ERRATUM E441). A live
  // recorder calls it every kSyncInterval.
  void sync();

  std::uint64_t samples() const { return samples_; }
  std::uint64_t bytes() const { return bytes_; }  // records, uncompressed
  std::uint64_t stored_bytes() const;             // the record area on disk so far (compressed: the chunks written)
  bool compressed() const { return cctx_ != nullptr; }

 private:
  void flush();
  void write(const void* p, std::size_t n);
  void write_chunks(std::span<const std::uint8_t> records);  // splits at record boundaries
  void write_chunk(std::span<const std::uint8_t> records, std::uint64_t count);
  static bool whole_chunk(std::span<const std::uint8_t> records, std::uint64_t* count);
  struct CompressPool;
  std::string path_;
  std::FILE* f_ = nullptr;
  std::vector<std::uint8_t> buf_;
  std::uint64_t samples_ = 0, bytes_ = 0, stored_ = 0;
  std::vector<SchedRecord> sched_;        // append_sched: written by finish()
  std::vector<MpiRecord> mpi_;            // append_mpi: written by finish()
  std::vector<ClockOffsetRecord> clock_;  // append_clock: written by finish()
  std::uint64_t snapshots_ = 0;
  ZSTD_CCtx_s* cctx_ = nullptr;         // compressing: one context reused for every chunk
  std::vector<std::uint8_t> zbuf_;      // a chunk's header and compressed payload
  std::unique_ptr<CompressPool> pool_;  // compress_threads > 0
};

// How a Reader treats a file that does not hold what its header says (ERRATUM E128).
struct ReadOptions {
  // false: an unknown record kind (in a file of this reader's minor version or older), a complete file
  // whose record count differs from its header's `samples`, are InputErrors. true (`--salvage`): such
  // records are skipped and counted, a count that differs is a warning; warnings() says what and how many.
  bool salvage = false;
};

// Memory-maps a trace file, validates its header, and iterates its records without copying them.
// Nothing is dropped silently (ERRATUM E128): a record of a kind this reader does not know is an error
// unless the file is of a later minor version (which may add kinds: skipped and counted) or salvaging;
// at the end of a complete file the records read (and skipped) must be the header's `samples`.
class Reader {
 public:
  // Throws InputError naming the file and offset; a FIFO, device or directory is refused.
  explicit Reader(const std::string& path, ReadOptions options = {});
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Validates a header held in memory; `file_size` bounds its offsets. Throws InputError.
  static void validate(const std::string& path, const FileHeader& h, std::uint64_t file_size);
  // True when the first bytes are a kron trace file's magic.
  static bool sniff(std::span<const std::uint8_t> first_bytes);

  const FileHeader& header() const { return header_; }
  const std::vector<LaneEntry>& lanes() const { return lanes_; }
  // The name section (1.3), each record validated; empty for older files.
  const std::vector<NameRecord>& names() const { return names_; }
  const std::string& path() const { return path_; }
  bool complete() const { return header_.flags & kFlagComplete; }
  bool compressed() const { return header_.flags & kFlagCompressed; }
  // Bytes after the last whole record of an incomplete file (a record cut by a crash; in a compressed
  // file, the chunk cut short, from its header on).
  std::uint64_t dropped_tail_bytes() const { return dropped_tail_; }
  // Records of unknown kinds skipped so far (a later minor version's, or --salvage).
  std::uint64_t skipped_records() const { return skipped_; }
  // Scheduling switches (kind 4) met so far, in file order: next() and next_batch() pass over them (they
  // are not samples) and keep them here.
  const std::vector<SchedRecord>& sched_switches() const { return sched_; }
  // MPI calls (kind 8) and clock-offset measurements (kind 9) met so far, in file order (1.5): passed over
  // as the scheduling switches are. read_annex() reads the file to its end for them (and rewinds).
  const std::vector<MpiRecord>& mpi_records() const { return mpi_; }
  const std::vector<ClockOffsetRecord>& clock_offsets() const { return clock_; }
  void read_annex();
  // Snapshot records (1.4, kinds 5 and 6) met so far, back to back as in the file, each validated
  // (stats::snapshot_problem): next() and next_batch() pass over them and keep them here.
  const std::vector<std::uint8_t>& snapshots() const { return snapshots_; }
  std::uint64_t snapshot_count() const { return snapshot_count_; }
  // What a salvaging read met (each with its count and offset), and skipped kinds of a later minor version.
  std::vector<std::string> warnings() const;

  // The next sample; false at the end. Throws InputError (file, offset) on a malformed record.
  bool next(Sample& out);
  // Up to out.size() samples at once, decoded straight from the mapping: the tools' inner loop (one call
  // per batch, not per sample). Returns how many; 0 at the end. A malformed record ends a batch early
  // with the samples before it; the next call throws its InputError, so nothing decoded is lost.
  // `out` is meant to be reused from batch to batch: a Trace sample's counters are zeroed only where
  // the slot held a Resource sample, so the Trace samples passed in must have zero counters (as
  // default-constructed Samples and every batch this fills do).
  std::size_t next_batch(std::span<Sample> out);
  // File offset of the next record; in a compressed file, of the chunk that holds it.
  std::uint64_t offset() const { return compressed() ? (pos_ < end_ ? chunk_at_ : next_chunk_) : pos_; }
  void rewind();

 private:
  std::string path_;
  MappedFile file_;                    // the whole file, read-only
  const std::uint8_t* map_ = nullptr;  // file_.data(), file_.size()
  std::uint64_t size_ = 0;
  FileHeader header_{};
  std::vector<LaneEntry> lanes_;
  std::vector<NameRecord> names_;
  // What the record loops read: rec_[pos_, end_). An uncompressed file: rec_ is the mapping and pos_ a
  // file offset. A compressed one: the current chunk's records (decompressed into chunk_, or in the
  // mapping for a chunk stored raw), pos_ an offset in them; next_chunk() moves on.
  const std::uint8_t* rec_ = nullptr;
  std::uint64_t pos_ = 0, end_ = 0, dropped_tail_ = 0;
  std::uint64_t area_end_ = 0;                   // end of the record area (file offset)
  std::uint64_t chunk_at_ = 0, next_chunk_ = 0;  // file offsets: the current chunk, the next one
  std::vector<std::uint8_t> chunk_;              // at most kMaxChunkRawBytes
  ZSTD_DCtx_s* dctx_ = nullptr;
  ReadOptions options_;
  std::uint64_t read_ = 0, skipped_ = 0;         // records returned, and records of unknown kinds skipped
  std::vector<SchedRecord> sched_;               // kind 4 records passed over
  std::vector<MpiRecord> mpi_;                   // kind 8 records passed over (1.5)
  std::vector<ClockOffsetRecord> clock_;         // kind 9 records passed over (1.5)
  std::uint64_t mpi_seen_ = 0, clock_seen_ = 0;  // kinds 8, 9 passed over since the last rewind
  bool annex_read_ = false;                      // read_annex() filled mpi_ and clock_: the record loops only count
  void keep_annex(const std::uint8_t* rec, RecordKind kind);
  std::vector<std::uint8_t> snapshots_;  // kinds 5 and 6 passed over
  std::uint64_t snapshot_count_ = 0;
  bool phased_ = false;                 // 1.4 or later: samples carry their phase (ERRATUM E180)
  std::uint64_t first_skipped_at_ = 0;  // file offset of the first one skipped
  std::string mismatch_;                // salvaging: the count check's finding
  bool at_end();      // the end of the records: checks the file did not shrink, and the header's count
  bool next_chunk();  // false at the end of the record area (or a cut chunk: dropped_tail_)
  InputError bad_record(const std::string& what) const;  // names the file offset (and the chunk's byte)
  // Pages below this offset have been given back (MADV_DONTNEED): a long sequential read keeps memory
  // flat. The map is read-only and private, so a rewind() simply faults them in again from the file.
  static constexpr std::uint64_t kReleaseBytes = 8u << 20;  // given back 8 MiB at a time
  std::uint64_t released_ = 0;
  std::uint64_t release_at_ = 0;  // the record loops call release_behind() once pos_ reaches it
  void release_behind(std::uint64_t file_pos);
};

}  // namespace kron::tracefile
