// A decoded sample: the one in-memory form that every reader produces and every tool consumes,
// whether it came from a classic MultiKron / MultiKron II stream, a device model or a kron trace file.
#pragma once
#include <array>
#include <cstdint>

#include "kron/core/vocabulary.hpp"

namespace kron {

// One thread of one process ("node.process" source, thread id) as a map key: the key every table of
// per-thread state uses (switches, names, snapshots).
constexpr std::uint64_t thread_key(std::uint32_t source, std::uint32_t thread) {
  return std::uint64_t{source} << 32 | thread;
}

// Every field of a sample but the resource counters: what the reorder window moves (a whole Sample is 168
// bytes) and what the codec (kron/core/codec.hpp) encodes into a record's first 32 bytes.
struct SampleFields {
  SampleType type = SampleType::Trace;
  std::uint8_t flags = 0;              // SampleFlag bits
  std::uint8_t group = kGroupUnknown;  // filter level 0-15 when known (kron files); classic streams do not carry it
  std::uint16_t cpu = 0;               // processor within the node (3 bits in classic samples)
  std::uint16_t phase = 0;             // trace format 1.4: the thread's phase (kron::phase, 004's PhaseID); 0 before
  std::uint32_t source = 0;            // Source identification: "node.process" (000 "Source Address Registers")
  std::uint32_t thread = 0;            // live recorder: the thread id; 0 for classic samples
  std::uint64_t timestamp = 0;         // ticks of the stream's timestamp clock (56 bits MK II, 40 bits MK)
  std::uint64_t data = 0;              // user-written data (64 bits MK II, 48 bits MK)

  static constexpr std::uint8_t kGroupUnknown = 0xff;

  bool is_resource() const { return type == SampleType::Resource; }
  bool operator==(const SampleFields&) const = default;
};

struct Sample : SampleFields {
  std::array<std::uint64_t, kResourceCounters> counters{};  // valid when type == Resource

  bool operator==(const Sample&) const = default;
};

}  // namespace kron
