// kron top's screen model: what one refresh shows, built from a live board, apart from how it is drawn.
// A Watcher reads the board (its lanes, block pool, name table and statistics area: BoardReader and
// read_board_stats, as kron status / hist --board / counters --board do) and the records it is handed
// (kron top -- PROGRAM is the board's drainer: every record the drain takes, through Recorder::set_tap;
// kron top --board reads what the board holds, never changing it), pairs named scopes with the matcher
// (analysis/matcher.hpp), and makes a Frame per refresh. layout() turns a Frame into lines of text with
// attributes: the plain frame prints them, the full screen (src/tools/top_screen.cpp, ncurses) draws them;
// to_json() is the --json frame (docs/tools.md "kron top").
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "analysis/matcher.hpp"
#include "kron/format/trace_file.hpp"
#include "recorder/board_reader.hpp"

namespace kron::top {

// ---- the model ------------------------------------------------------------------------------------------
struct Header {
  std::string program, board;
  bool read_only = false;  // kron top --board: another process drains (or nobody does)
  double elapsed_s = 0;    // since kron top started watching
  double interval_s = 0;   // the refresh this frame covers
  double fill = 0;         // the block pool's blocks in use, 0-1
  double drain_rate = 0;   // records taken off the board a second (kron top's drain, or the board's drainer)
  double sample_rate = 0;  // probes that passed filter and enable a second
  std::uint64_t passed = 0, lost = 0;  // lost: overruns + overwritten since the board was made
  double loss_rate = 0;                // lost a second in this refresh
  std::uint32_t drainer_pid = 0;       // the board's drainer (read-only mode), 0 none
};
struct ProcessRow {
  std::uint32_t pid = 0, node = 0;
  std::string program;  // /proc/PID/cmdline while it runs, else its main thread's recorded name
  unsigned threads = 0;
  double sample_rate = 0;
  bool ended = false;
};
struct ThreadRow {
  std::string name;
  std::uint32_t pid = 0, tid = 0, node = 0;  // node: the MPI rank in libkron_mpi's boards (E201)
  std::uint16_t phase = 0;                   // of the thread's last sample seen
  double sample_rate = 0;
  double oncpu = -1;  // --sched: share of the refresh on a CPU (0-1); -1 unknown
  std::string state;  // active, retired, dead; ended: its lane was freed since the last frame (shown once)
};
struct ScopeRow {
  std::string name;
  std::uint64_t count = 0;  // in this refresh (or in all, with totals)
  double rate = 0;          // count a second
  double mean_us = 0, p50_us = 0, p99_us = 0, max_us = 0;
};
struct HistRow {
  std::string name;
  std::uint16_t phase = 0;
  std::uint64_t count = 0;
  double rate = 0;  // values a second in this refresh
  double p50_us = 0, p99_us = 0, p999_us = 0;
  std::string bars;  // a small bar chart of the buckets holding values, lowest first
};
struct CounterRow {
  std::uint32_t index = 0;
  std::uint64_t value = 0;  // summed over threads and phases
  double rate = 0;
};
enum class SortKey { Rate, Mean, P50, P99, Max, Name };
struct Frame {
  Header header;
  std::vector<ProcessRow> processes;
  std::vector<ThreadRow> threads;
  std::vector<ScopeRow> scopes;  // sorted by `sort`, filtered by `filter`
  bool totals = false;           // scopes over the whole watch instead of the last refresh
  SortKey sort = SortKey::Rate;
  std::string filter;
  std::vector<HistRow> hists;
  std::vector<CounterRow> counters;
  bool has_stats = true;           // board format 2.2 or later (histograms and counters)
  bool sched = false;              // the on-CPU column is shown
  std::vector<std::string> notes;  // situations: the program ended, the board removed, paused, ...
};

const char* sort_name(SortKey k);

// ---- building it ----------------------------------------------------------------------------------------
struct WatchOptions {
  std::string program;  // the header's program ("" for the board's own program field)
  bool read_only = false;
  bool sched = false;  // on-CPU share per thread (/proc's schedstat, ERRATUM E431)
};
class Watcher {
 public:
  explicit Watcher(WatchOptions o);
  ~Watcher();
  // The board's clock rate, record format and program; before the first frame (records may come earlier).
  void attach(const recorder::BoardReader& r);
  // Records of one lane (trace-file layout, validated), as the drain took them or as a snapshot holds them.
  void feed(const recorder::LaneView& v, std::span<const std::uint8_t> recs, std::uint64_t n);
  // Read-only: the records the board holds now that no earlier call saw (ERRATUM E430), fed.
  void feed_snapshot(recorder::BoardReader& r);
  // The frame of the refresh since the last call; starts the next refresh.
  Frame frame(recorder::BoardReader& r, SortKey sort, bool totals, const std::string& filter);

 private:
  struct Scope;
  void take_names(const recorder::BoardReader& r);
  void rows_of_lanes(recorder::BoardReader& r, Frame& f, double dt);
  void ended_threads(Frame& f, std::map<std::uint32_t, ProcessRow>& procs, std::vector<std::uint64_t>& present);
  void rows_of_stats(recorder::BoardReader& r, Frame& f, double dt);
  void rows_of_scopes(Frame& f, double dt, SortKey sort, bool totals, const std::string& filter) const;

  WatchOptions o_;
  double us_per_tick_ = 0;
  bool phased_ = true;  // board format 2.2 and later: the phase in the record (what kron top creates)
  std::chrono::steady_clock::time_point start_, last_;
  tracefile::NameTable names_;
  std::size_t names_seen_ = 0;
  std::unique_ptr<analysis::Matcher> matcher_;
  std::map<std::uint16_t, std::unique_ptr<Scope>> scopes_;  // by site id
  struct LaneMemo {
    std::uint32_t source = 0, tid = 0;
    std::uint64_t passed = 0, drained = 0, last_ts = 0, oncpu_ns = 0;
    std::uint16_t phase = 0;
    bool seen = false;  // a snapshot met it (read-only: its older records are history)
  };
  std::map<std::uint64_t, LaneMemo> lanes_;        // by thread key (source, tid)
  std::map<std::uint32_t, std::string> programs_;  // by pid: the command line while it ran
  std::uint64_t fed_ = 0, fed_before_ = 0, passed_before_ = 0, lost_before_ = 0, drained_before_ = 0;
  bool first_ = true;  // the first frame of a read-only watch: a baseline, its rates 0 (a new board has none)
  std::map<std::string, std::uint64_t> hist_before_;  // "name/phase" -> count at the last frame
  std::map<std::uint32_t, std::uint64_t> counter_before_;
};

// ---- showing it -----------------------------------------------------------------------------------------
enum class Attr { Plain, Title, Bold, Alert };
struct Span {
  std::string text;
  Attr attr = Attr::Plain;
};
using Line = std::vector<Span>;
// The frame as lines of at most `width` columns (names shortened to fit; every recorded name made safe for
// a terminal); `max_rows` > 0 keeps the tables within that many lines (the full screen).
std::vector<Line> layout(const Frame& f, unsigned width, unsigned max_rows = 0);
std::string plain_text(const std::vector<Line>& lines);
// One JSON object on one line (docs/tools.md "kron top": format "kron-top", version 1).
std::string to_json(const Frame& f);

}  // namespace kron::top
