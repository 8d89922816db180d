// kron export: Chrome Trace Event JSON (Perfetto UI, chrome://tracing) or CSV. Work in src/analysis/export.cpp.
#include <fmt/core.h>
#include <unistd.h>

#include <optional>

#include "analysis/export.hpp"
#include "tools/atomic_file.hpp"
#include "tools/command.hpp"
#include "tools/input_options.hpp"

namespace kron::tools {
namespace {

struct Args {
  InputArgs in;
  std::string format = "perfetto", output, info_file;
  unsigned event_bits = 32;
};

int run(const Args& a) {
  std::optional<analysis::IntervalInfo> info;
  if (a.format == "perfetto") {
    // interval.info is optional here: -f FILE must exist; without -f, ./interval.info is used if present.
    if (!a.info_file.empty())
      info = analysis::load_interval_info(a.info_file);
    else if (::access("interval.info", R_OK) == 0)
      info = analysis::load_interval_info("interval.info");
  }
  analysis::Merged in = a.in.open();
  analysis::RptOptions ro;
  ro.event_bits = a.event_bits;
  analysis::ExportStats st;
  write_file_atomically(a.output, [&](std::FILE* f) {
    st = a.format == "csv" ? analysis::export_csv(in, f)
                           : analysis::export_perfetto(in, info ? &*info : nullptr, ro, f);
  });
  if (a.format == "csv")
    fmt::print("wrote {}: {} samples\n", a.output, st.samples);
  else
    fmt::print("wrote {}: {} samples, {} interval slices, {} counter values, {} instants{}\n", a.output, st.samples,
               st.slices, st.counters, st.instants,
               st.sched_slices ? fmt::format(", {} thread states", st.sched_slices) : std::string());
  for (const auto& w : in.warnings()) fmt::print(stderr, "kron: warning: {}\n", w);
  return kExitOk;
}

KRON_COMMAND("export", "write samples as Chrome Trace Event JSON (Perfetto UI, chrome://tracing) or CSV", 42,
             [](CLI::App& app) {
               auto a = std::make_shared<Args>();
               a->in.add(app);
               app.add_option("--format", a->format, "perfetto (Chrome Trace Event JSON) or csv")
                   ->check(CLI::IsMember({"perfetto", "csv"}));
               app.add_option("-o,--output", a->output, "output file")->required();
               app.add_option("-f", a->info_file,
                              "interval description file for slices (default ./interval.info when present)");
               app.add_option("-e", a->event_bits, "event size in bits, as kron rpt -e (default 32)")
                   ->check(CLI::Range(1, 64));
               return [a] { return run(*a); };
             });

}  // namespace
}  // namespace kron::tools
