// kron's own trace file: what `kron record` writes and every tool reads. A versioned ABI
// (docs/trace-format.md is the prose description; this header is the definition).
//
//   [FileHeader, header_size bytes][records ... records_bytes][LaneEntry x lane_count]
//
// All integers little-endian, all records 8-byte aligned. A file whose header lacks kFlagComplete was not
// closed (the recorder was killed): its counts are zero and its records run to the last whole record;
// the reader says how many trailing bytes it dropped.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kron/core/record.hpp"
#include "kron/core/sample.hpp"
#include "kron/format/mapped_file.hpp"

namespace kron::tracefile {

inline constexpr char kMagic[8] = {'K', 'R', 'O', 'N', 'T', 'R', 'C', '1'};
inline constexpr std::uint32_t kByteOrderMark = 0x01020304;
inline constexpr std::uint16_t kMajor = 1;  // a reader refuses another major
inline constexpr std::uint16_t kMinor = 1;  // a reader accepts any minor, skipping unknown record kinds
// Minor versions: 1.0 the first; 1.1 adds FileHeader::late (taken from the reserved bytes, 0 in 1.0 files).

enum HeaderFlag : std::uint32_t {
  kFlagComplete = 1u << 0,  // counts, records_bytes and the lane table are valid
  kFlagCircular = 1u << 1,  // recorded in circular (flight-recorder) mode
  kFlagWait = 1u << 2,      // recorded with the wait policy (else discard)
  // 1.1: the producer wrote records in timestamp order, but for the `late` ones it counted (the live
  // recorder's hold-back, docs/trace-format.md "Time order"). A complete file with this flag and late 0
  // is in time order: the tools then need no reorder window.
  kFlagTimeOrdered = 1u << 3,
};

// Where the samples came from.
enum class Origin : std::uint32_t { Live = 0, Mk1 = 1, Mk2 = 2, Model = 3 };

inline constexpr std::size_t kCounterNameBytes = 32;
inline constexpr std::size_t kProgramBytes = 256;

struct FileHeader {
  char magic[8];
  std::uint32_t byte_order;         // kByteOrderMark as written by the producer
  std::uint16_t major, minor;
  std::uint32_t header_size;        // sizeof(FileHeader) of the producer; records start here
  std::uint32_t flags;              // HeaderFlag
  std::uint64_t clock_hz;           // timestamp ticks per second (TSC rate for live recordings)
  std::uint64_t start_ticks;        // timestamp when recording started
  std::uint64_t start_realtime_ns;  // CLOCK_REALTIME at start_ticks (to align nodes and wall time)
  std::uint32_t node;               // node number (the "node" of "node.process")
  Origin origin;
  std::uint64_t records_bytes;      // length of the record area (complete files)
  // Accounting (complete files): passed_filter == samples + overruns + overwritten.
  std::uint64_t samples;            // records in the file
  std::uint64_t overruns;           // samples dropped because a lane or buffer was full (discard policy)
  std::uint64_t overwritten;        // samples overwritten in circular mode before they were drained
  std::uint64_t passed_filter;      // probes that passed the filter and sampling enable
  std::uint64_t waits;              // probes that were held for room (wait policy)
  std::uint64_t wait_ticks;         // total time held, in timestamp ticks (000's Wait Counter)
  std::uint64_t lanes_offset;       // file offset of the lane table
  std::uint32_t lane_count;
  std::uint32_t lane_entry_size;    // sizeof(LaneEntry) of the producer
  std::uint16_t filter;             // Filter Register when recording ended
  std::uint16_t reserved0[3];
  char counter_names[kResourceCounters][kCounterNameBytes];  // source of each resource counter, "" if unused
  char program[kProgramBytes];      // command line that was recorded, NUL-terminated
  // 1.1: records written after a record with a later timestamp (the live recorder's time order failed
  // for them: docs/trace-format.md "Time order"). 0 in 1.0 files (reserved bytes were zero).
  std::uint64_t late;
  std::uint8_t reserved[112];
};
static_assert(sizeof(FileHeader) == 1024 && offsetof(FileHeader, late) == 904, "FileHeader is a file ABI");

// Records: the layout is kron/core/record.hpp (shared with the board's rings, which the recorder copies
// into this file unchanged). size is the whole record in bytes (a multiple of 8), so unknown kinds can be
// skipped; kRecordSize is the size table by kind.
using record::kRecordSize;
using record::RecordHeader;
using record::RecordKind;
using record::ResourceRecord;
using record::TraceRecord;

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
// The record form of a sample; returns its size (32 or 160).
std::size_t to_record(const Sample& s, std::span<std::uint8_t, sizeof(ResourceRecord)> out);
void set_counter_name(FileHeader& h, unsigned counter, std::string_view name);
void set_program(FileHeader& h, std::string_view program);
std::string_view counter_name(const FileHeader& h, unsigned counter);
std::string_view program(const FileHeader& h);

// Streams records to a file; finish() writes the lane table and completes the header.
class Writer {
 public:
  Writer(const std::string& path, const FileHeader& header);  // throws std::runtime_error naming the file
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void append(const Sample& s);
  // Already-encoded records (a whole number of them), as a recorder's drain copies them.
  void append_records(std::span<const std::uint8_t> records, std::uint64_t count);
  // Counts in `header` (samples is filled in by the writer) and the lanes; sets kFlagComplete.
  void finish(FileHeader header, std::span<const LaneEntry> lanes);

  std::uint64_t samples() const { return samples_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  void flush();
  std::string path_;
  std::FILE* f_ = nullptr;
  std::vector<std::uint8_t> buf_;
  std::uint64_t samples_ = 0, bytes_ = 0;
};

// Memory-maps a trace file, validates its header, and iterates its records without copying them.
class Reader {
 public:
  explicit Reader(const std::string& path);  // throws InputError naming the file and offset
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Validates a header held in memory; `file_size` bounds its offsets. Throws InputError.
  static void validate(const std::string& path, const FileHeader& h, std::uint64_t file_size);
  // True when the first bytes are a kron trace file's magic.
  static bool sniff(std::span<const std::uint8_t> first_bytes);

  const FileHeader& header() const { return header_; }
  const std::vector<LaneEntry>& lanes() const { return lanes_; }
  const std::string& path() const { return path_; }
  bool complete() const { return header_.flags & kFlagComplete; }
  // Bytes after the last whole record of an incomplete file (a record cut by a crash).
  std::uint64_t dropped_tail_bytes() const { return dropped_tail_; }

  // The next sample; false at the end. Throws InputError (file, offset) on a malformed record.
  bool next(Sample& out);
  // Up to out.size() samples at once, decoded straight from the mapping: the tools' inner loop (one call
  // per batch, not per sample). Returns how many; 0 at the end. A malformed record ends a batch early
  // with the samples before it; the next call throws its InputError, so nothing decoded is lost.
  // `out` is meant to be reused from batch to batch: a Trace sample's counters are zeroed only where
  // the slot held a Resource sample, so the Trace samples passed in must have zero counters (as
  // default-constructed Samples and every batch this fills do).
  std::size_t next_batch(std::span<Sample> out);
  std::uint64_t offset() const { return pos_; }  // file offset of the next record
  void rewind() {
    pos_ = header_.header_size;
    released_ = 0;
  }

 private:
  std::string path_;
  MappedFile file_;  // the whole file, read-only
  const std::uint8_t* map_ = nullptr;  // file_.data(), file_.size(): what the record loops read
  std::uint64_t size_ = 0;
  FileHeader header_{};
  std::vector<LaneEntry> lanes_;
  std::uint64_t pos_ = 0, end_ = 0, dropped_tail_ = 0;
  // Pages below this offset have been given back (MADV_DONTNEED): a long sequential read keeps memory
  // flat. The map is read-only and private, so a rewind() simply faults them in again from the file.
  static constexpr std::uint64_t kReleaseBytes = 8u << 20;  // given back 8 MiB at a time
  std::uint64_t released_ = 0;
  void release_behind();
};

}  // namespace kron::tracefile
