// kron export: Perfetto's protobuf trace (the default), Chrome Trace Event JSON, CSV, CTF or OTF2: one walk
// of the timeline (src/analysis/timeline.hpp) into the format's sink (src/exports/).
#include <fmt/core.h>
#include <unistd.h>

#include <optional>
#include <stdexcept>

#include "exports/exports.hpp"
#include "tools/atomic_file.hpp"
#include "tools/command.hpp"
#include "tools/input_options.hpp"

namespace kron::tools {
namespace {

struct Args {
  InputArgs in;
  std::string format = "perfetto", output, info_file;
  unsigned event_bits = 32;
  std::uint64_t max_bytes = exports::kPerfettoMaxBytes;
  int deflate = 1;  // perfetto: --compress (ERRATUM E168)
};

int run(const Args& a) {
  // Before any input is read: a kron built without OTF2 says so (export_otf2 throws the message).
  if (a.format == "otf2" && !exports::otf2_built_in()) throw std::runtime_error(exports::otf2_not_built_in());
  std::optional<analysis::IntervalInfo> info;
  if (a.format == "perfetto" || a.format == "chrome-json") {
    // interval.info is optional here: -f FILE must exist; without -f, ./interval.info is used if present.
    if (!a.info_file.empty())
      info = analysis::load_interval_info(a.info_file);
    else if (::access("interval.info", R_OK) == 0)
      info = analysis::load_interval_info("interval.info");
  }
  analysis::Merged in = a.in.open();
  analysis::TimelineOptions to;
  to.info = info ? &*info : nullptr;
  to.rpt.event_bits = a.event_bits;
  analysis::Timeline tl(in, to);
  exports::ExportStats st;
  if (a.format == "otf2") {
    write_dir_atomically(a.output, [&](const std::string& dir) { st = exports::export_otf2(tl, dir); });
    fmt::print("wrote {}/traces.otf2: {} samples, {} scopes, {} counter values, {} data values{}{}\n", a.output,
               st.samples, st.slices, st.counters, st.instants,
               st.mpi_flows ? fmt::format(", {} MPI events", st.mpi_flows) : std::string(),
               st.clock_offsets ? fmt::format(", {} clock offsets", st.clock_offsets) : std::string());
    if (st.closed_at_end)
      fmt::print(stderr, "kron: warning: {} scopes never ended: left at their thread's last sample\n",
                 st.closed_at_end);
    if (st.cut_by_loss)  // DECISION D26
      fmt::print(stderr, "kron: warning: {} scopes cut by lost samples: left where the loss was seen\n",
                 st.cut_by_loss);
    for (const auto& w : in.warnings()) fmt::print(stderr, "kron: warning: {}\n", w);
    return kExitOk;
  }
  if (a.format == "ctf") {
    write_dir_atomically(a.output, [&](const std::string& dir) { st = exports::export_ctf(tl, dir); });
    fmt::print("wrote {}: {} samples, {} counter values, {} named samples, {} discarded events{}{}\n", a.output,
               st.samples, st.counters, st.instants, st.discarded,
               st.sched_slices ? fmt::format(", {} context switches", st.sched_slices) : std::string(),
               st.mpi_flows ? fmt::format(", {} MPI records", st.mpi_flows) : std::string());
    for (const auto& w : in.warnings()) fmt::print(stderr, "kron: warning: {}\n", w);
    return kExitOk;
  }
  write_file_atomically(a.output, [&](std::FILE* f) {
    if (a.format == "csv")
      st = exports::export_csv(tl, f);
    else if (a.format == "chrome-json")
      st = exports::export_chrome_json(tl, f);
    else
      st = exports::export_perfetto(tl, f, {a.max_bytes, a.deflate});
    if (a.format == "perfetto" && st.bytes == 0)  // never an empty file called a success
      throw std::runtime_error(
          "nothing to export: the input holds no samples, context switches, snapshots or MPI "
          "calls; " +
          a.output + " is not written");
  });
  if (a.format == "csv")
    fmt::print("wrote {}: {} samples\n", a.output, st.samples);
  else if (a.format == "perfetto")
    fmt::print("wrote {}: {} samples, {} interval slices, {} counter values, {} instants{}{}; {} bytes{}\n", a.output,
               st.samples, st.slices, st.counters, st.instants,
               st.sched_slices ? fmt::format(", {} thread states", st.sched_slices) : std::string(),
               st.mpi_flows ? fmt::format(", {} MPI message flows", st.mpi_flows) : std::string(), st.bytes,
               st.raw_bytes ? fmt::format(" ({} before deflate)", st.raw_bytes) : std::string());
  else
    fmt::print("wrote {}: {} samples, {} interval slices, {} counter values, {} instants{}{}\n", a.output, st.samples,
               st.slices, st.counters, st.instants,
               st.sched_slices ? fmt::format(", {} thread states", st.sched_slices) : std::string(),
               st.mpi_flows ? fmt::format(", {} MPI message flows", st.mpi_flows) : std::string());
  if (st.cut_by_loss)  // DECISION D26
    fmt::print(stderr, "kron: warning: {} scopes cut by lost samples: ended where the loss was seen (cut_by_loss)\n",
               st.cut_by_loss);
  if (st.lanes_reused)
    fmt::print(stderr,
               "kron: warning: {} interval slices overlapped more than 1024 others of their interval on one "
               "stream and share a track: a viewer may nest them wrongly\n",
               st.lanes_reused);
  for (const auto& w : in.warnings()) fmt::print(stderr, "kron: warning: {}\n", w);
  return kExitOk;
}

KRON_COMMAND(
    "export", "write samples as a Perfetto trace, Chrome Trace Event JSON, CSV, a CTF trace or an OTF2 archive", 42,
    [](CLI::App& app) {
      auto a = std::make_shared<Args>();
      a->in.add(app);
      app.add_option("--format", a->format,
                     "perfetto (Perfetto protobuf, the default), chrome-json (Chrome Trace Event JSON), csv, ctf "
                     "(a CTF 1.8 directory) or otf2 (an OTF2 archive, when built with it)")
          ->check(CLI::IsMember({"perfetto", "chrome-json", "csv", "ctf", "otf2"}));
      app.add_option("--max-bytes", a->max_bytes,
                     "perfetto: refuse a trace larger than this (default 2 GiB - 1, what the Perfetto UI opens)")
          ->check(CLI::PositiveNumber);
      app.add_option("--compress", a->deflate,
                     "perfetto: deflate level of its compressed packets, 1-12 (default 1, the fastest); 0 "
                     "writes plain packets (what protoc --decode reads)")
          ->check(CLI::Range(0, 12));
      app.add_option("-o,--output", a->output, "output file (ctf: a directory, made by the command)")->required();
      app.add_option("-f", a->info_file, "interval description file for slices (default ./interval.info when present)");
      app.add_option("-e", a->event_bits, "event size in bits, as kron rpt -e (default 32)")->check(CLI::Range(1, 64));
      return [a] { return run(*a); };
    });

}  // namespace
}  // namespace kron::tools
