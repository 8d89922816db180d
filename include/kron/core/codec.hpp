// The record codec, written once: a decoded kron::Sample to a Trace or Resource record (core/record.hpp) and
// back. Every reader, writer, merge, reorder window, live view and selftest goes through these functions;
// no other file copies a sample's fields into a record or out of one (DECISION D1).
//
// Records are written in the phased layout of trace format 1.4 / board 2.2 (ERRATUM E180): the phase in the
// header word's bits 48-63, the cpu in bits 22-31 of the thread field. A 1.3 file or a 2.1 board is decoded
// with `phased` false: phase 0, the cpu where it was. What the layout cannot carry (DECISION D2): a thread
// id of 2^22 or more keeps its low 22 bits, a cpu above 1022 is stored as 1023; a Trace sample's counters
// are not stored (they read as 0).
//
// No third-party dependency: the probe side may include it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "kron/core/record.hpp"
#include "kron/core/sample.hpp"

namespace kron::codec {

// The most bytes one encoded sample takes (a Resource record).
inline constexpr std::size_t kMaxRecordBytes = sizeof(record::ResourceRecord);

// The record kind and size of a sample of this type.
constexpr record::RecordKind kind_of(SampleType t) {
  return t == SampleType::Resource ? record::RecordKind::Resource : record::RecordKind::Trace;
}

// The first 32 bytes of a sample's record: its Trace record (with a Resource sample's kind and size).
constexpr record::TraceRecord trace_record(const SampleFields& s) {
  record::TraceRecord t{};
  t.h.kind = kind_of(s.type);
  t.h.size = static_cast<std::uint16_t>(record::size_of(t.h.kind));
  t.h.flags = s.flags;
  t.h.group = s.group;
  t.h.phase = s.phase;
  t.source = s.source;
  t.thread = (s.thread & record::kThreadMask) | static_cast<std::uint32_t>(record::ids_cpu_bits(s.cpu) >> 32);
  t.timestamp = s.timestamp;
  t.data = s.data;
  return t;
}

// Encodes `s` at `out` (room for kMaxRecordBytes, any alignment); returns the record's size.
inline std::size_t encode(const Sample& s, std::uint8_t* out) {
  const record::TraceRecord t = trace_record(s);
  std::memcpy(out, &t, sizeof t);
  if (!s.is_resource()) return sizeof t;
  std::memcpy(out + offsetof(record::ResourceRecord, counters), s.counters.data(), sizeof s.counters);
  return sizeof(record::ResourceRecord);
}
inline std::size_t encode(const Sample& s, std::span<std::uint8_t, kMaxRecordBytes> out) {
  return encode(s, out.data());
}

// The fields of a Trace or Resource record's first 32 bytes (not the counters). `phased`: a 1.4 file or a
// 2.2 board.
inline void decode_fields(const record::TraceRecord& t, bool phased, SampleFields& s) {
  s.type = t.h.kind == record::RecordKind::Resource ? SampleType::Resource : SampleType::Trace;
  s.flags = t.h.flags;
  s.group = t.h.group;
  const record::PhasedFields f = record::phased_fields(t.h.cpu, t.thread, phased);
  s.cpu = f.cpu;
  s.phase = f.phase;
  s.source = t.source;
  s.thread = f.thread;
  s.timestamp = t.timestamp;
  s.data = t.data;
}

// Decodes the Trace or Resource record at `rec` (any alignment; its kind and size already checked).
inline void decode(const std::uint8_t* rec, bool phased, Sample& s) {
  record::TraceRecord t;
  std::memcpy(&t, rec, sizeof t);
  decode_fields(t, phased, s);
  if (s.is_resource())
    std::memcpy(s.counters.data(), rec + offsetof(record::ResourceRecord, counters), sizeof s.counters);
  else
    std::memset(s.counters.data(), 0, sizeof s.counters);  // fixed size: vector stores (fill() became rep stos)
}
inline Sample decode(const std::uint8_t* rec, bool phased) {
  Sample s;
  decode(rec, phased, s);
  return s;
}

}  // namespace kron::codec
