// Options every analysis tool shares (expand, rpt, export): the input files and how to read raw streams.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "analysis/input.hpp"

namespace kron::tools {

struct InputArgs {
  std::vector<std::string> files;
  std::string format = "auto";
  std::uint64_t ts_hz = 10'000'000;
  std::size_t reorder_window = analysis::kDefaultReorderWindow;
  bool salvage = false;

  void add(CLI::App& app) {
    app.add_option("files", files,
                   "input files, merged in time order: kron trace files, or raw classic streams with "
                   "--input-format (- for standard input; default: mk.dat, 003's data file)");
    app.add_option("--input-format", format,
                   "auto (kron trace files), mk2 (raw MultiKron II stream, 20/84-byte samples) or mk1 (raw "
                   "MultiKron stream, 16/80-byte samples)")
        ->check(CLI::IsMember({"auto", "kron", "mk1", "mk2"}));
    app.add_option("--ts-hz", ts_hz, "timestamp clock of a raw stream, Hz (default 10 MHz, 003 section 1.2)")
        ->check(CLI::PositiveNumber);
    app.add_option("--reorder-window", reorder_window,
                   "samples the merge holds to put a straggler back in time order (0: none)")
        ->capture_default_str()
        ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 24));
    app.add_flag("--salvage", salvage,
                 "read a damaged kron trace file for what it holds: records of unknown kinds skipped and a "
                 "record count that differs from the header's are warnings with counts, not errors");
  }
  analysis::Merged open() const {
    analysis::InputOptions o;
    o.format = analysis::parse_input_format(format);
    o.ts_hz = ts_hz;
    o.reorder_window = reorder_window;
    o.salvage = salvage;
    return analysis::open_inputs(files, o);  // "-" is standard input
  }
};

}  // namespace kron::tools
