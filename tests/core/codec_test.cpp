// The record codec (kron/core/codec.hpp, DECISION D1, D2): every field of a sample into a record and back,
// at its extremes, for both kinds; the 1.3 layout (ERRATUM E180); what the layout cannot carry.
#include "kron/core/codec.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace kron {
namespace {

// Samples with every field at the extremes the file format carries (E180: thread 22 bits, cpu 0-1023).
std::vector<Sample> extremes() {
  std::vector<Sample> out;
  const std::uint16_t cpus[] = {0, 1, 1023};
  const std::uint16_t phases[] = {0, 1, 0xffff};
  const std::uint32_t threads[] = {0, 1, record::kThreadMask};
  const std::uint32_t sources[] = {0, 0x00010002u, 0xffffffffu};
  const std::uint64_t words[] = {0, 1, 0x8000000000000000ull, ~std::uint64_t{0}};
  unsigned k = 0;
  for (const SampleType type : {SampleType::Trace, SampleType::Resource})
    for (const std::uint16_t cpu : cpus)
      for (const std::uint16_t phase : phases)
        for (const std::uint32_t thread : threads) {
          Sample s;
          s.type = type;
          s.cpu = cpu;
          s.phase = phase;
          s.thread = thread;
          s.source = sources[k % 3];
          s.flags = static_cast<std::uint8_t>(1u << (k % 8) | (k % 5 == 0 ? 0xff : 0));
          s.group = static_cast<std::uint8_t>(k % 17 == 16 ? Sample::kGroupUnknown : k % 17);
          s.timestamp = words[k % 4];
          s.data = words[(k + 1) % 4];
          if (type == SampleType::Resource)
            for (unsigned c = 0; c < kResourceCounters; ++c) s.counters[c] = words[(k + c) % 4];
          out.push_back(s);
          ++k;
        }
  return out;
}

TEST(Codec, EveryFieldAtItsExtremesComesBackEqual) {  // DECISION D1
  for (const Sample& s : extremes()) {
    std::uint8_t rec[codec::kMaxRecordBytes];
    std::memset(rec, 0xa5, sizeof rec);
    const std::size_t n = codec::encode(s, rec);
    EXPECT_EQ(n, s.is_resource() ? sizeof(record::ResourceRecord) : sizeof(record::TraceRecord));
    EXPECT_EQ(record::size_at(rec), n);
    EXPECT_EQ(record::valid_slots(record::header_word_at(rec)), n / record::kSlotBytes);
    EXPECT_EQ(codec::decode(rec, true), s) << "cpu " << s.cpu << " phase " << s.phase << " thread " << s.thread;
  }
}

TEST(Codec, ThePhasedLayoutIsTheBoardsAndTheProbesOwn) {  // ERRATUM E180: phase in bits 48-63, cpu in the thread field
  Sample s;
  s.cpu = 5, s.phase = 7, s.thread = 1234, s.source = 0x00020003u, s.group = 3, s.flags = kFlagNamed;
  std::uint8_t rec[codec::kMaxRecordBytes];
  codec::encode(s, rec);
  const std::uint64_t w0 = record::header_word_at(rec);
  EXPECT_EQ(w0, record::header_word(record::RecordKind::Trace) | record::flag_bits(kFlagNamed) | record::group_bits(3) |
                    record::phase_bits(7));
  std::uint64_t w1;
  std::memcpy(&w1, rec + 8, sizeof w1);
  EXPECT_EQ(w1, record::ids_word(0x00020003u, 1234) | record::ids_cpu_bits(5));  // what the probe stores
}

TEST(Codec, AnUnphasedRecordKeepsItsCpuInTheHeaderAndReadsAsPhaseZero) {  // ERRATUM E180: 1.3 files, 2.1 boards
  record::ResourceRecord r{};
  r.t.h = {record::RecordKind::Resource, sizeof(record::ResourceRecord), kFlagFifoOverrun, 4, {9}};
  r.t.source = 11, r.t.thread = 0x00c00001u, r.t.timestamp = 100, r.t.data = 200;
  for (unsigned c = 0; c < kResourceCounters; ++c) r.counters[c] = c * 3;
  const Sample s = codec::decode(reinterpret_cast<const std::uint8_t*>(&r), false);
  EXPECT_EQ(s.type, SampleType::Resource);
  EXPECT_EQ(s.cpu, 9);
  EXPECT_EQ(s.phase, 0);
  EXPECT_EQ(s.thread, 0x00c00001u);  // a 1.3 thread field is all thread
  EXPECT_EQ(s.flags, kFlagFifoOverrun);
  EXPECT_EQ(s.group, 4);
  EXPECT_EQ(s.counters[15], 45u);
}

TEST(Codec, WhatTheLayoutCannotCarryIsClampedAsDecided) {  // DECISION D2
  Sample s;
  s.cpu = 4000, s.thread = (1u << 22) | 17;
  std::uint8_t rec[codec::kMaxRecordBytes];
  codec::encode(s, rec);
  const Sample back = codec::decode(rec, true);
  EXPECT_EQ(back.cpu, record::kMaxPhasedCpu);
  EXPECT_EQ(back.thread, 17u);
  s.counters[3] = 9;  // a Trace sample's counters are not stored
  codec::encode(s, rec);
  EXPECT_EQ(codec::decode(rec, true).counters[3], 0u);
}

TEST(Codec, DecodingATraceRecordClearsTheCountersOfTheSampleReused) {  // readers reuse one Sample
  Sample r;
  r.type = SampleType::Resource;
  r.counters.fill(77);
  Sample t;
  std::uint8_t rec[codec::kMaxRecordBytes];
  codec::encode(t, rec);
  codec::decode(rec, true, r);
  EXPECT_EQ(r, t);
}

}  // namespace
}  // namespace kron
