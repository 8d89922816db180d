// kron export: the samples in formats other programs open.
//  - perfetto (export_perfetto.cpp): Perfetto's protobuf trace (TracePackets with TrackDescriptors,
//    TrackEvents, interned names, incremental timestamps), what ui.perfetto.dev opens at any size.
//  - chrome-json: Chrome Trace Event JSON (the "JSON Object Format" that chrome://tracing and the Perfetto UI
//    read): one track per stream (process = source identification, thread = CPU), the intervals of
//    interval.info as slices, resource counters as counter tracks, every other Trace sample as an instant;
//    scheduling switches (kron record --sched) as a state track per thread (running, preempted, waiting).
//  - csv: one row a sample.
//  - ctf (export_ctf.cpp): a Common Trace Format 1.8 trace, a directory (babeltrace2, Trace Compass).
//  - otf2 (export_otf2.cpp): an OTF2 archive, a directory (Vampir, Score-P's tools), when built with OTF2.
// Both stream: a sample in, its events out; nothing per sample is kept. docs/tools.md says how to open them.
// An MPI recording's calls (trace format 1.5) go into every format but CSV (mpi_calls() below).
#pragma once
#include <cstdio>
#include <functional>
#include <string>

#include "analysis/hist.hpp"
#include "analysis/input.hpp"
#include "analysis/interval_info.hpp"
#include "analysis/matcher.hpp"
#include "analysis/merge.hpp"

namespace kron::analysis {

struct ExportStats {
  std::uint64_t samples = 0, slices = 0, counters = 0, instants = 0;
  std::uint64_t bytes = 0;         // bytes written (the Perfetto export)
  std::uint64_t raw_bytes = 0;     // Perfetto, compressed: the packets' bytes before deflate
  std::uint64_t lanes_reused = 0;  // Perfetto: overlapping slices put on a full lane set (E163)
  std::uint64_t discarded = 0;     // CTF: the recorder's losses written as discarded events (E165)
  std::uint64_t closed_at_end = 0;  // OTF2: scopes still open at the end, left there (E167)
  std::uint64_t mpi_flows = 0;     // Perfetto, chrome-json: matched MPI messages drawn as flows; OTF2, CTF: MPI records
  std::uint64_t clock_offsets = 0; // OTF2: ClockOffset definitions written (a rank's file, unmerged)
  std::uint64_t sched_slices = 0;  // thread states drawn from scheduling switches (kron record --sched); CTF: the switches
};

// A thread's scheduling stretch between two of its switches (kron record --sched): "running" from a switch
// in to the next switch out (on `cpu`), then "preempted" (switched out while runnable) or "waiting" (it
// blocked or slept) up to the next switch in. Ticks (full 64-bit board ticks); a stretch that ended by the
// first sample `t0` is not given (one that began before it is, from its switch: a writer draws it from
// t0), nor one whose other end is not in the recording.
struct SchedStretch {
  std::uint32_t source, thread;
  const char* state;
  std::uint64_t begin, end;
  std::uint16_t cpu;
};
// Calls first(source, thread) at each thread's first switch and stretch() for each stretch, thread by thread
// in the order of the switches; returns the stretches given. What every export draws the thread states from.
std::uint64_t for_each_sched_stretch(const Merged& in, std::uint64_t t0,
                                    const std::function<void(std::uint32_t, std::uint32_t)>& first,
                                    const std::function<void(const SchedStretch&)>& stretch);

// One value series of a histogram or virtual counter snapshot (trace format 1.4, issue 12), as every export
// draws them: `series` names it ("hist NAME (thread T, phase P)", "vc I (thread T, phase P)"); a histogram's
// summary (count, p50, p99, max) or a counter's value, at the snapshot's time `when` (ticks).
struct SnapshotSeries {
  std::uint32_t source = 0, thread = 0;
  std::uint64_t when = 0;
  std::string series;
  bool hist = false;
  hist::Summary sum;
  std::uint64_t value = 0;
};
// Calls f() for each series of each snapshot of every input, in file order; returns how many.
std::uint64_t for_each_snapshot_series(const Merged& in, const std::function<void(const SnapshotSeries&)>& f);

// An MPI recording's calls (trace format 1.5: libkron_mpi's rank files, kron merge's merged file), every
// input's (Input::mpi_records(), read ahead when the file has some), with the sends matched to their
// receives and the collectives' members grouped (match_messages, E208). What the exports draw the
// messages from: memory grows with the MPI calls, never with the samples. Empty without MPI records.
struct MpiCalls {
  std::vector<MpiEvent> events;  // input order, then each input's file order
  Matching matching;
};
MpiCalls mpi_calls(const Merged& in);

// The text exporters' sample loop (Perfetto reads in batches): the next sample of `in`, counted in
// st.samples; t0 is the first sample's timestamp, the origin of the export's times.
class SampleLoop {
 public:
  SampleLoop(Merged& in, ExportStats& st) : in_(in), st_(st) {}
  bool next(Sample& s) {
    if (!in_.next(s)) return false;
    ++st_.samples;
    if (!have_t0) {
      have_t0 = true;
      t0 = s.timestamp;
    }
    return true;
  }
  std::uint64_t t0 = 0;
  bool have_t0 = false;

 private:
  Merged& in_;
  ExportStats& st_;
};

// `info` may be null (no interval slices). Counter names come from the first kron trace file's header.
ExportStats export_chrome_json(Merged& in, const IntervalInfo* info, const RptOptions& opt, std::FILE* out);
// ERRATUM E161: the default limit, 2 GiB less one byte: the Perfetto UI reads a trace into the browser's
// memory and refuses larger files; a larger trace is refused with a message (max_bytes), never written.
inline constexpr std::uint64_t kPerfettoMaxBytes = (std::uint64_t{1} << 31) - 1;
struct PerfettoOptions {
  std::uint64_t max_bytes = kPerfettoMaxBytes;
  // ERRATUM E168: batches of packets deflated into TracePacket.compressed_packets at this libdeflate level
  // (1-12); 0 writes the packets as they are.
  int deflate_level = 1;
};
ExportStats export_perfetto(Merged& in, const IntervalInfo* info, const RptOptions& opt, std::FILE* out,
                            const PerfettoOptions& po = {});
ExportStats export_csv(Merged& in, std::FILE* out);
// A CTF 1.8 trace (export_ctf.cpp) in the directory `dir`, which must exist and be empty.
ExportStats export_ctf(Merged& in, const std::string& dir);
// An OTF2 archive (export_otf2.cpp) in the directory `dir`, when kron was built with KRON_WITH_OTF2;
// otherwise it throws, saying so. otf2_built_in() tells which.
bool otf2_built_in();
std::string otf2_not_built_in();  // the message that says so, and how to build it in
ExportStats export_otf2(Merged& in, const std::string& dir);

}  // namespace kron::analysis
