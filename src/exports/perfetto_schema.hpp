// The Perfetto protobuf schema's field numbers kron writes, described once: Perfetto's published schema
// (github.com/google/perfetto protos/perfetto/trace/), listed with the file each comes from in
// tests/exports/perfetto_subset.proto, which the tests decode the output with.
#pragma once
#include <cstdint>

namespace kron::exports::perfetto {

// Field numbers (tests/exports/perfetto_subset.proto, from Perfetto's protos/perfetto/trace/).
enum : std::uint32_t {
  kTracePacket = 1,            // Trace.packet (trace.proto)
  kPktCompressedPackets = 50,  // TracePacket.compressed_packets (trace_packet.proto)
  // TracePacket (trace_packet.proto)
  kPktTimestamp = 8,
  kPktClockId = 58,
  kPktClockSnapshot = 6,
  kPktTrackEvent = 11,
  kPktTrackDescriptor = 60,
  kPktSequenceId = 10,
  kPktInternedData = 12,
  kPktSequenceFlags = 13,
  kPktDefaults = 59,
  // TracePacketDefaults (trace_packet_defaults.proto), TrackEventDefaults (track_event.proto)
  kDefClockId = 58,
  kDefTrackEvent = 11,
  kTedTrackUuid = 11,
  kTedExtraCounterUuids = 31,
  // ClockSnapshot, ClockSnapshot.Clock (clock_snapshot.proto)
  kCsClocks = 1,
  kClkId = 1,
  kClkTimestamp = 2,
  kClkIncremental = 3,
  // TrackEvent (track_event.proto)
  kTeType = 9,
  kTeTrackUuid = 11,
  kTeNameIid = 10,
  kTeName = 23,
  kTeCounterValue = 30,
  kTeExtraCounterValues = 12,
  kTeFlowIds = 47,
  kTeTerminatingFlowIds = 48,
  kTeDebug = 4,
  // DebugAnnotation, DebugAnnotationName (debug_annotation.proto)
  kDaNameIid = 1,
  kDaName = 10,
  kDaUint = 3,
  kDaInt = 4,
  kDaString = 6,
  kDanIid = 1,
  kDanName = 2,
  // InternedData (interned_data.proto), EventName (track_event.proto)
  kIdEventNames = 2,
  kIdDebugNames = 3,
  kEnIid = 1,
  kEnName = 2,
  // TrackDescriptor, ProcessDescriptor, ThreadDescriptor, CounterDescriptor
  kTdUuid = 1,
  kTdParent = 5,
  kTdName = 2,
  kTdProcess = 3,
  kTdThread = 4,
  kTdCounter = 8,
  kPdPid = 1,
  kPdName = 6,
  kThPid = 1,
  kThTid = 2,
  kThName = 5,
  kCdUnitName = 6,
};
enum : std::uint32_t { kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4 };  // TrackEvent.Type
enum : std::uint32_t { kSeqIncrementalStateCleared = 1, kSeqNeedsIncrementalState = 2 };
constexpr std::uint32_t kClockBoottime = 6;  // builtin_clock.proto BUILTIN_CLOCK_BOOTTIME
constexpr std::uint32_t kClockKron = 64;     // the first sequence-scoped clock id (clock_snapshot.proto)
}  // namespace kron::exports::perfetto
