// kron's shared vocabulary: the words the device models, the live recorder and the tools all use.
// Sources: 000 (NISTIR 5571, MultiKron II) sections "Event Tracing", "Filter Register", "SAMPLING",
// Table B2; 001 (NISTIR 4737, MultiKron) Table 5.
#pragma once
#include <cstdint>
#include <string_view>

namespace kron {

// A sample is either a Trace sample (user data + time + source) or a Resource sample (a Trace sample
// with the sixteen resource counters of one instant appended). The numeric values are the 2-bit
// "Sample Type" header field: 000 Table B2 and 001 Table 5 say 10 = Trace, 11 = Resource.
// ERRATUM E1: 000's body text says the opposite; the tables win (docs/errata.md).
enum class SampleType : std::uint8_t { Trace = 0b10, Resource = 0b11 };

constexpr std::string_view name(SampleType t) { return t == SampleType::Trace ? "trace" : "resource"; }

// Filter levels (groups): a trigger names one of sixteen; the 16-bit Filter Register enables a
// subset (000 "Filter Register": bit n set = level n sampled).
inline constexpr unsigned kFilterLevels = 16;
// Resource counters: sixteen per chip / per board (000 "RESOURCE COUNTERS").
inline constexpr unsigned kResourceCounters = 16;
// CPU ID lines: up to eight processors per node, encoded in 3 header bits (000 "Source Address Registers").
inline constexpr unsigned kCpuLines = 8;

// Sample flags carried in a decoded sample. The first three are the classic header's error flags
// (000 Table B2, 001 Table 5): each says "previous sample(s) lost" and is cleared by the next
// successful sample. The live recorder reuses fifo_overrun for "this lane dropped samples before
// this one" and adds its own below.
enum SampleFlag : std::uint8_t {
  kFlagFifoOverrun = 1u << 0,    // FIFO overrun: a previous Trace/Resource sample was lost
  kFlagShadowOverrun = 1u << 1,  // Shadow register overrun: a previous Resource sample was lost
  kFlagReadError = 1u << 2,      // MultiKron (first chip) only: RSRC read error (001 Table 5)
  kFlagOverwritten = 1u << 3,    // live recorder, circular mode: older samples of this lane were overwritten
  // Named probes (KRON_SCOPE, KRON_EVENT): the data word is a name id (bits 48-63) and a value (bits 0-47),
  // kron/core/record.hpp named_data(). Per record, never pending: unlike the error flags above they say what
  // this sample is, not what happened before it.
  kFlagNamed = 1u << 4,       // a named probe's sample: alone, a named event
  kFlagScopeEnd = 1u << 5,    // with kFlagNamed: the end of a named scope
  kFlagScopeBegin = 1u << 6,  // with kFlagNamed: the beginning of a named scope
  // Trace format 1.4: a threshold crossing (kron counters --threshold, ERRATUM E185): the data word is
  // stats::threshold_data() (kron/core/stats.hpp). Per record.
  kFlagThreshold = 1u << 7,
};

}  // namespace kron
