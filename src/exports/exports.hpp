// kron export: the recording in formats other programs open. Each format is a sink of the one timeline
// (analysis/timeline.hpp): a class whose members are the format's state, called as the walk goes.
//  - perfetto (perfetto.cpp): Perfetto's protobuf trace (TracePackets with TrackDescriptors, TrackEvents,
//    interned names, incremental timestamps), what ui.perfetto.dev opens at any size.
//  - chrome-json (chrome_json.cpp): Chrome Trace Event JSON (the "JSON Object Format" that chrome://tracing
//    and the Perfetto UI read): one track per stream (process = source identification, thread = the thread
//    or CPU), the intervals as slices, resource counters as counter tracks, every other Trace sample as an
//    instant; scheduling switches (kron record --sched) as a state track per thread (running, preempted,
//    waiting).
//  - csv (csv.cpp): one row a sample.
//  - ctf (ctf.cpp): a Common Trace Format 1.8 trace, a directory (babeltrace2, Trace Compass).
//  - otf2 (otf2.cpp): an OTF2 archive, a directory (Vampir, Score-P's tools), when built with OTF2.
// All stream: a sample in, its events out; nothing per sample is kept. docs/tools.md says how to open them.
// An MPI recording's calls (trace format 1.5) go into every format but CSV.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

#include "analysis/timeline.hpp"

namespace kron::exports {

struct ExportStats {
  std::uint64_t samples = 0, slices = 0, counters = 0, instants = 0;
  std::uint64_t bytes = 0;          // bytes written (the Perfetto export)
  std::uint64_t raw_bytes = 0;      // Perfetto, compressed: the packets' bytes before deflate
  std::uint64_t lanes_reused = 0;   // Perfetto: overlapping slices put on a full lane set (E163)
  std::uint64_t discarded = 0;      // CTF: the recorder's losses written as discarded events (E165)
  std::uint64_t closed_at_end = 0;  // OTF2: scopes still open at the end, left there (E167)
  std::uint64_t cut_by_loss = 0;    // Perfetto, OTF2: named scopes closed at a loss (DECISION D26)
  std::uint64_t mpi_flows = 0;  // Perfetto, chrome-json: matched MPI messages drawn as flows; OTF2, CTF: MPI records
  std::uint64_t clock_offsets = 0;  // OTF2: ClockOffset definitions written (a rank's file, unmerged)
  std::uint64_t sched_slices =
      0;  // thread states drawn from scheduling switches (kron record --sched); CTF: the switches
};

// The timeline's options give the intervals (TimelineOptions::info, may be null: named scopes only) and the
// matcher's options. Counter names come from the first input that names them.
ExportStats export_chrome_json(analysis::Timeline& tl, std::FILE* out);
// ERRATUM E161: the default limit, 2 GiB less one byte: the Perfetto UI reads a trace into the browser's
// memory and refuses larger files; a larger trace is refused with a message (max_bytes), never written.
inline constexpr std::uint64_t kPerfettoMaxBytes = (std::uint64_t{1} << 31) - 1;
struct PerfettoOptions {
  std::uint64_t max_bytes = kPerfettoMaxBytes;
  // ERRATUM E168: batches of packets deflated into TracePacket.compressed_packets at this libdeflate level
  // (1-12); 0 writes the packets as they are.
  int deflate_level = 1;
};
ExportStats export_perfetto(analysis::Timeline& tl, std::FILE* out, const PerfettoOptions& po = {});
ExportStats export_csv(analysis::Timeline& tl, std::FILE* out);
// A CTF 1.8 trace in the directory `dir`, which must exist and be empty.
ExportStats export_ctf(analysis::Timeline& tl, const std::string& dir);
// An OTF2 archive in the directory `dir`, when kron was built with KRON_WITH_OTF2; otherwise it throws,
// saying so. otf2_built_in() tells which.
bool otf2_built_in();
std::string otf2_not_built_in();  // the message that says so, and how to build it in
ExportStats export_otf2(analysis::Timeline& tl, const std::string& dir);

}  // namespace kron::exports
