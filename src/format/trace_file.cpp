// kron trace file writer and reader. Format: include/kron/format/trace_file.hpp, docs/trace-format.md.
#include "kron/format/trace_file.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "kron/core/error.hpp"

namespace kron::tracefile {

static_assert(std::endian::native == std::endian::little, "kron trace files are little-endian; port the writer");

namespace {
constexpr std::size_t kWriteBuffer = 1 << 20;
// Copied over a Trace sample's counters: a fixed-size copy compiles to a few vector stores, where
// counters.fill(0) became `rep stos` (tens of cycles to start) in the readers' inner loop.
constexpr std::uint64_t kZeroCounters[kResourceCounters] = {};

std::runtime_error sys_error(const std::string& path, const char* what) {
  return std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
}
}  // namespace

FileHeader make_header() {
  FileHeader h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.byte_order = kByteOrderMark;
  h.major = kMajor;
  h.minor = kMinor;
  h.header_size = sizeof(FileHeader);
  h.lane_entry_size = sizeof(LaneEntry);
  h.filter = 0xffff;
  return h;
}

std::size_t to_record(const Sample& s, std::span<std::uint8_t, sizeof(ResourceRecord)> out) {
  ResourceRecord r;
  r.t.h.kind = s.is_resource() ? RecordKind::Resource : RecordKind::Trace;
  r.t.h.size = static_cast<std::uint16_t>(s.is_resource() ? sizeof(ResourceRecord) : sizeof(TraceRecord));
  r.t.h.flags = s.flags;
  r.t.h.group = s.group;
  r.t.h.cpu = s.cpu;
  r.t.source = s.source;
  r.t.thread = s.thread;
  r.t.timestamp = s.timestamp;
  r.t.data = s.data;
  std::copy(s.counters.begin(), s.counters.end(), r.counters);
  std::memcpy(out.data(), &r, r.t.h.size);
  return r.t.h.size;
}

namespace {
// The fields a Trace and a Resource record share, into a decoded sample (every read path uses this).
inline void copy_trace_fields(const TraceRecord& t, Sample& s) {
  s.flags = t.h.flags;
  s.group = t.h.group;
  s.cpu = t.h.cpu;
  s.source = t.source;
  s.thread = t.thread;
  s.timestamp = t.timestamp;
  s.data = t.data;
}
void set_string(char* dst, std::size_t cap, std::string_view v) {
  std::memset(dst, 0, cap);
  std::memcpy(dst, v.data(), std::min(v.size(), cap - 1));
}
std::string_view get_string(const char* src, std::size_t cap) { return {src, strnlen(src, cap)}; }
}  // namespace

void set_counter_name(FileHeader& h, unsigned counter, std::string_view name) {
  set_string(h.counter_names[counter], kCounterNameBytes, name);
}
void set_program(FileHeader& h, std::string_view p) { set_string(h.program, kProgramBytes, p); }
std::string_view counter_name(const FileHeader& h, unsigned counter) {
  return get_string(h.counter_names[counter], kCounterNameBytes);
}
std::string_view program(const FileHeader& h) { return get_string(h.program, kProgramBytes); }

// ---- Writer ------------------------------------------------------------------------------------

Writer::Writer(const std::string& path, const FileHeader& header) : path_(path) {
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) throw sys_error(path, "cannot create trace file");
  FileHeader h = header;
  h.flags &= ~kFlagComplete;
  h.header_size = sizeof(FileHeader);
  if (std::fwrite(&h, sizeof h, 1, f_) != 1) throw sys_error(path, "write failed");
  buf_.reserve(kWriteBuffer);
}

Writer::~Writer() {
  // Without finish() the file stays marked incomplete, but every record appended so far is written:
  // readers treat it as a recording that was cut short.
  if (!f_) return;
  if (!buf_.empty()) (void)std::fwrite(buf_.data(), 1, buf_.size(), f_);
  std::fclose(f_);
}

void Writer::flush() {
  if (buf_.empty()) return;
  if (std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) throw sys_error(path_, "write failed");
  buf_.clear();
}

void Writer::append(const Sample& s) {
  std::uint8_t rec[sizeof(ResourceRecord)];
  const std::size_t n = to_record(s, rec);
  if (buf_.size() + n > kWriteBuffer) flush();
  buf_.insert(buf_.end(), rec, rec + n);
  ++samples_;
  bytes_ += n;
}

void Writer::append_records(std::span<const std::uint8_t> records, std::uint64_t count) {
  if (records.size() >= kWriteBuffer) {
    flush();
    if (std::fwrite(records.data(), 1, records.size(), f_) != records.size()) throw sys_error(path_, "write failed");
  } else {
    if (buf_.size() + records.size() > kWriteBuffer) flush();
    buf_.insert(buf_.end(), records.begin(), records.end());
  }
  samples_ += count;
  bytes_ += records.size();
}

void Writer::finish(FileHeader header, std::span<const LaneEntry> lanes) {
  flush();
  header.header_size = sizeof(FileHeader);
  header.records_bytes = bytes_;
  header.samples = samples_;
  header.lanes_offset = sizeof(FileHeader) + bytes_;
  header.lane_count = static_cast<std::uint32_t>(lanes.size());
  header.lane_entry_size = sizeof(LaneEntry);
  header.flags |= kFlagComplete;
  if (!lanes.empty() && std::fwrite(lanes.data(), sizeof(LaneEntry), lanes.size(), f_) != lanes.size())
    throw sys_error(path_, "write failed");
  if (std::fseek(f_, 0, SEEK_SET) != 0 || std::fwrite(&header, sizeof header, 1, f_) != 1)
    throw sys_error(path_, "cannot complete header");
  if (std::fclose(f_) != 0) {
    f_ = nullptr;
    throw sys_error(path_, "close failed");
  }
  f_ = nullptr;
}

// ---- Reader ------------------------------------------------------------------------------------

bool Reader::sniff(std::span<const std::uint8_t> first) {
  return first.size() >= sizeof kMagic && std::memcmp(first.data(), kMagic, sizeof kMagic) == 0;
}

void Reader::validate(const std::string& path, const FileHeader& h, std::uint64_t file_size) {
  auto bad = [&](std::uint64_t off, const std::string& what) { return InputError::at_offset(path, off, what); };
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) throw bad(0, "not a kron trace file (bad magic)");
  if (h.byte_order != kByteOrderMark)
    throw bad(offsetof(FileHeader, byte_order), "byte-order mark is not 0x01020304 (written on another byte order?)");
  if (h.major != kMajor)
    throw bad(offsetof(FileHeader, major),
              "trace format version " + std::to_string(h.major) + " is not supported (this kron reads version " +
                  std::to_string(kMajor) + ")");
  if (h.header_size < sizeof(FileHeader) || h.header_size % 8 != 0 || h.header_size > file_size)
    throw bad(offsetof(FileHeader, header_size), "header size " + std::to_string(h.header_size) + " is invalid");
  if (h.clock_hz == 0) throw bad(offsetof(FileHeader, clock_hz), "timestamp clock rate is 0");
  if (h.flags & kFlagComplete) {
    if (h.records_bytes > file_size - h.header_size)
      throw bad(offsetof(FileHeader, records_bytes), "record area runs past the end of the file (truncated?)");
    if (h.lane_entry_size < sizeof(LaneEntry) || h.lane_entry_size % 8 != 0)
      throw bad(offsetof(FileHeader, lane_entry_size), "lane entry size is invalid");
    if (h.lanes_offset < h.header_size || h.lanes_offset > file_size ||
        h.lane_count > (file_size - h.lanes_offset) / h.lane_entry_size)
      throw bad(offsetof(FileHeader, lanes_offset), "lane table runs past the end of the file (truncated?)");
  }
}

Reader::Reader(const std::string& path) : path_(path), file_(path) {
  size_ = file_.size();
  if (size_ < sizeof(FileHeader))
    throw InputError::at_offset(path, size_, "file too short for a kron trace header (" + std::to_string(size_) +
                                                 " bytes, need " + std::to_string(sizeof(FileHeader)) + ")");
  map_ = file_.data();
  std::memcpy(&header_, map_, sizeof header_);
  validate(path, header_, size_);
  pos_ = header_.header_size;
  if (complete()) {
    end_ = header_.header_size + header_.records_bytes;
    lanes_.resize(header_.lane_count);
    for (std::uint32_t i = 0; i < header_.lane_count; ++i)
      std::memcpy(&lanes_[i], map_ + header_.lanes_offset + std::uint64_t{i} * header_.lane_entry_size,
                  sizeof(LaneEntry));
  } else {
    end_ = size_;  // an unclosed file: records run to the last whole one (see next())
  }
}

Reader::~Reader() = default;

void Reader::release_behind() {
  const std::uint64_t upto = pos_ & ~(kReleaseBytes - 1);
  if (upto <= released_) return;
  file_.discard(released_, upto);
  released_ = upto;
}

std::size_t Reader::next_batch(std::span<Sample> out) {
  std::size_t n = 0;
  const std::uint8_t* const map = map_;
  std::uint64_t pos = pos_;
  const std::uint64_t end = end_;
  // Whole Trace records back to back (every record but one in 64 in a live recording): fields copied
  // straight from the mapping, no per-record bounds logic beyond the one compare.
  while (n < out.size() && pos < end && end - pos >= sizeof(TraceRecord)) {
    TraceRecord t;
    __builtin_prefetch(map + pos + 2048);  // ahead of the hardware prefetcher, which stops at each page
    std::memcpy(&t, map + pos, sizeof t);
    if (t.h.kind != RecordKind::Trace || t.h.size != sizeof(TraceRecord)) {
      if (t.h.kind != RecordKind::Resource || t.h.size != sizeof(ResourceRecord) || end - pos < sizeof(ResourceRecord))
        break;  // anything else (unknown kind, a bad or cut record): next() decides
      Sample& s = out[n++];
      s.type = SampleType::Resource;
      copy_trace_fields(t, s);
      std::memcpy(s.counters.data(), map + pos + offsetof(ResourceRecord, counters), sizeof(ResourceRecord::counters));
      pos += sizeof(ResourceRecord);
      continue;
    }
    Sample& s = out[n++];
    if (s.type != SampleType::Trace) std::memcpy(s.counters.data(), kZeroCounters, sizeof kZeroCounters);
    s.type = SampleType::Trace;
    copy_trace_fields(t, s);
    pos += sizeof(TraceRecord);
  }
  pos_ = pos;
  if (pos_ - released_ >= kReleaseBytes) release_behind();
  if (n == 0 && !out.empty() && next(out[0])) n = 1;  // the general path: skips, cut tails, errors (throws)
  return n;
}

bool Reader::next(Sample& out) {
  // Fast path, every tool's inner loop: a whole Trace record inside the record area.
  if (end_ - pos_ >= sizeof(TraceRecord) && pos_ < end_) {
    TraceRecord t;
    std::memcpy(&t, map_ + pos_, sizeof t);
    if (t.h.kind == RecordKind::Trace && t.h.size == sizeof(TraceRecord)) {
      out.type = SampleType::Trace;
      copy_trace_fields(t, out);
      std::memcpy(out.counters.data(), kZeroCounters, sizeof kZeroCounters);
      pos_ += sizeof(TraceRecord);
      if (pos_ - released_ >= kReleaseBytes) release_behind();
      return true;
    }
  }
  for (;;) {
    if (pos_ >= end_) return false;
    const std::uint64_t left = end_ - pos_;
    RecordHeader h{};
    if (left >= sizeof(RecordHeader)) std::memcpy(&h, map_ + pos_, sizeof h);
    // An unclosed file (the recorder died): a record cut short, or zero bytes the writer had reserved
    // but never filled, ends the records; its bytes are counted, never decoded.
    const bool cut = left < sizeof(RecordHeader) || (h.size > left && h.size >= sizeof(RecordHeader));
    if (!complete() && (cut || (h.kind == RecordKind{0} && h.size == 0))) {
      dropped_tail_ = left;
      pos_ = end_;
      return false;
    }
    if (left < sizeof(RecordHeader))
      throw InputError::at_offset(path_, pos_, "record cut short by the end of the record area");
    if (h.size < sizeof(RecordHeader) || h.size % 8 != 0)
      throw InputError::at_offset(path_, pos_, "record size " + std::to_string(h.size) + " is invalid");
    const bool known = h.kind == RecordKind::Trace || h.kind == RecordKind::Resource;
    if (known && h.size != kRecordSize[static_cast<std::size_t>(h.kind)])
      throw InputError::at_offset(path_, pos_, "record of kind " + std::to_string(static_cast<unsigned>(h.kind)) +
                                                   " has size " + std::to_string(h.size));
    if (h.size > left) throw InputError::at_offset(path_, pos_, "record cut short by the end of the record area");
    if (!known) {  // a kind from a later minor version: skip it
      pos_ += h.size;
      continue;
    }
    // Fixed-size copies (inlined), the counters only for a Resource record: this is every tool's inner loop.
    TraceRecord t;
    std::memcpy(&t, map_ + pos_, sizeof t);
    out.type = h.kind == RecordKind::Resource ? SampleType::Resource : SampleType::Trace;
    copy_trace_fields(t, out);
    if (out.is_resource())
      std::memcpy(out.counters.data(), map_ + pos_ + offsetof(ResourceRecord, counters), sizeof(ResourceRecord::counters));
    else
      std::memcpy(out.counters.data(), kZeroCounters, sizeof kZeroCounters);
    pos_ += h.size;
    if (pos_ - released_ >= kReleaseBytes) release_behind();
    return true;
  }
}

}  // namespace kron::tracefile
