// kron counters --board NAME: show and set the three Resource Counter control registers while programs
// run, as `kron filter` does for the Filter Register: Mode (000 Table B5), Clock Select (Table B6) and
// Enable (Table B7), sixteen 4-bit fields each, field n = counter n. A field written 0 is left unchanged
// (000 "Resource Counter Control Registers"; ERRATUM E13: a field whose code bits are 0). Names,
// encodings and the write rule come from include/kron/core/control_regs.hpp; the write itself is
// board::write_counter_control, the one every writer of a board uses (programs re-read it at their next
// Resource sample or count).
//
//   kron counters --board B                               every counter's mode, clock and enable by name
//   kron counters --board B --mode 5=software --enable 5=reset
//   kron counters --board B --mode 0-3=clk --clock 2=nodeclk/10 --enable 3=enable,5=disable
//   kron counters --board B --enable-reg 0x0000000000300000   the 64-bit register as on the chip
// Phase watches and thresholds (004 4.4.1 PhaseID Watch, 4.4.5 negative preload with interrupt on overflow; ERRATA
// E185, E186):
//   kron counters --board B --threshold get=100000:3      3 values of histogram get at or above 100000 ticks
//   kron counters --board B --threshold vc:12=1000        virtual counter 12 reaching 1000
//   kron counters --board B --watch get=only:2 --watch vc=except:1 --threshold get=off
#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cstring>
#include <span>

#include "kron/core/control_regs.hpp"
#include "kron/core/text.hpp"
#include "kron/core/error.hpp"
#include "kron/core/stats.hpp"
#include "recorder/board_reader.hpp"
#include "recorder/options.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {

struct Args {
  std::string board;
  std::vector<std::string> enable, mode, clock;  // N=VALUE,N-M=VALUE,all=VALUE
  std::string enable_reg, mode_reg, clock_reg;   // raw 64-bit writes
  std::vector<std::string> threshold, watch;     // NAME|#ID|vc[:INDEX]=...
};

// ---- thresholds and phase watches on histograms and virtual counters -----------------------------
std::uint64_t number(const std::string& opt, const std::string& text, std::uint64_t max) {
  const auto v = kron::text::parse_uint(text, max);
  if (!v) throw InputError::at_offset(opt, 0, "'" + text + "' is not a number from 0 to " + std::to_string(max));
  return *v;
}
// The slot of histogram NAME or #ID on the board (published), else an InputError naming it.
std::uint32_t hist_index(const recorder::BoardReader& r, const std::string& opt, const std::string& what) {
  const board::Geometry& g = r.geo();
  if (!g.stat_cells)
    throw InputError::at_offset(
        opt, 0, "board format " + std::to_string(g.major) + "." + std::to_string(g.minor) + " has no histograms");
  for (std::uint32_t i = 0; i < g.hist_slots; ++i) {
    const board::HistSlot* s = r.mapping().hist_slot(i);
    if (s->header.load(std::memory_order_acquire) != board::kHistSlotWord) continue;
    const std::string name(s->name, strnlen(s->name, sizeof s->name));
    if (name == what || what == "#" + std::to_string(i + 1)) return i;
  }
  throw InputError::at_offset(opt, 0,
                              r.label() + " has no histogram '" + text::terminal_safe(what) +
                                  "' (a histogram is registered at its first value; #ID names one by id)");
}
struct StatWrite {
  bool counter = false;  // the virtual counters (vc), else a histogram slot
  std::uint32_t slot = 0, index = 0;
  bool off = false;
  std::uint64_t value = 0, count = 1;  // threshold
  std::uint32_t mode = 0, phase = 0;   // watch
};
// "NAME=..." / "vc:INDEX=..." / "vc=...": the target; the part after '=' is returned in *rest.
StatWrite target(const recorder::BoardReader& r, const std::string& opt, const std::string& arg, std::string* rest,
                 bool index) {
  const auto eq = arg.rfind('=');
  if (eq == std::string::npos || eq == 0) throw InputError::at_offset(opt + " " + arg, 0, "expected TARGET=VALUE");
  const std::string t = arg.substr(0, eq);
  *rest = arg.substr(eq + 1);
  StatWrite w;
  if (t == "vc" || t.rfind("vc:", 0) == 0) {
    w.counter = true;
    if (index) {
      if (t.size() < 4)
        throw InputError::at_offset(opt + " " + arg, 0, "a counter threshold names its counter: vc:INDEX=VALUE");
      w.index = static_cast<std::uint32_t>(number(opt + " " + arg, t.substr(3), stats::kVirtualCounters - 1));
    } else if (t != "vc") {  // ERRATUM E349: one watch for all the counters; an index would be ignored
      throw InputError::at_offset(opt + " " + arg, 0, "the virtual counters have one watch for all: vc=..., no index");
    }
  } else {
    w.slot = hist_index(r, opt + " " + arg, t);
  }
  return w;
}
void write_stats(recorder::BoardReader& r, const Args& a) {
  std::vector<StatWrite> thresholds, watches;
  for (const auto& arg : a.threshold) {  // parse all before writing anything
    std::string v;
    StatWrite w = target(r, "--threshold", arg, &v, true);
    if (v == "off") {
      w.off = true;
    } else {
      const auto colon = v.find(':');
      w.value = number("--threshold " + arg, v.substr(0, colon), ~std::uint64_t{0} >> 1);
      if (colon != std::string::npos) w.count = number("--threshold " + arg, v.substr(colon + 1), 0xffffffffu);
      if (w.count == 0 || (w.counter && colon != std::string::npos))
        throw InputError::at_offset("--threshold " + arg, 0,
                                    "a histogram threshold is TICKS[:COUNT>0], a counter's VALUE");
    }
    thresholds.push_back(w);
  }
  for (const auto& arg : a.watch) {
    std::string v;
    StatWrite w = target(r, "--watch", arg, &v, false);
    const auto colon = v.find(':');
    const std::string mode = v.substr(0, colon);
    if (mode == "off" && colon == std::string::npos) {
      w.mode = static_cast<std::uint32_t>(stats::Watch::Off);
    } else if ((mode == "only" || mode == "except") && colon != std::string::npos) {
      w.mode = static_cast<std::uint32_t>(mode == "only" ? stats::Watch::Only : stats::Watch::Except);
      w.phase = static_cast<std::uint32_t>(number("--watch " + arg, v.substr(colon + 1), 0xffff));
    } else {
      throw InputError::at_offset("--watch " + arg, 0, "expected TARGET=only:PHASE, TARGET=except:PHASE or TARGET=off");
    }
    watches.push_back(w);
  }
  board::BoardHeader& h = r.header();
  for (const auto& w : thresholds) {
    if (w.counter)
      board::arm_counter_threshold(h, !w.off, w.index, w.value);
    else
      board::arm_hist_threshold(*r.mapping().hist_slot(w.slot), static_cast<std::uint16_t>(stats::bucket_of(w.value)),
                                w.off ? 0 : static_cast<std::uint32_t>(w.count));
  }
  for (const auto& w : watches) {
    if (w.counter)
      board::set_watch(h.counter_watch, h.counter_watch_phase, w.mode, w.phase);
    else
      board::set_watch(r.mapping().hist_slot(w.slot)->watch, r.mapping().hist_slot(w.slot)->watch_phase, w.mode,
                       w.phase);
  }
  if (!thresholds.empty() || !watches.empty()) board::stats_changed(h);
}
// ERRATUM E347: the bucket is read from the board: one outside 0-975 is said, never given to bucket_range().
std::string threshold_text(std::uint32_t n, std::uint16_t bucket) {
  if (bucket >= stats::kHistBuckets)
    return fmt::format("{} value{} at or above bucket {} (out of range 0-{}: a damaged board; never crossed)", n,
                       n == 1 ? "" : "s", bucket, stats::kHistBuckets - 1);
  return fmt::format("{} value{} at or above {} ticks", n, n == 1 ? "" : "s", stats::bucket_range(bucket).lo);
}
void print_stats(const recorder::BoardReader& r) {
  const board::Geometry& g = r.geo();
  if (!g.stat_cells) return;
  const board::BoardHeader& h = r.header();
  constexpr const char* kWatch[] = {"off", "only", "except"};
  auto watch = [&](std::uint32_t m, std::uint32_t p) {
    return m == 0 ? std::string("off") : m < 3 ? fmt::format("{} phase {}", kWatch[m], p) : std::string("?");
  };
  fmt::print("virtual counters: watch {}, threshold {}\n", watch(h.counter_watch.load(), h.counter_watch_phase.load()),
             h.counter_threshold_index.load()
                 ? fmt::format("counter {} at {}", h.counter_threshold_index.load() - 1, h.counter_threshold.load())
                 : std::string("off"));
  for (std::uint32_t i = 0; i < g.hist_slots; ++i) {
    const board::HistSlot* s = r.mapping().hist_slot(i);
    if (s->header.load(std::memory_order_acquire) != board::kHistSlotWord) continue;
    const std::uint32_t n = s->threshold_count.load();
    fmt::print("histogram #{} {}: watch {}, threshold {}\n", i + 1,
               text::terminal_safe(std::string(s->name, strnlen(s->name, sizeof s->name))),
               watch(s->watch.load(), s->watch_phase.load()),
               n ? threshold_text(n, s->threshold_bucket.load()) : std::string("off"));
  }
}

// "Reset & Enable" -> "reset-enable": lower case, spaces and '&' folded into one '-'.
std::string fold(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '&' || c == '_' || c == '-') {
      if (!out.empty() && out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// One register of Tables B5-B7 as the argument parser sees it: the datasheet's names (control_regs.hpp),
// a few spellings more, the code bits a value may use.
struct Table {
  std::string_view option;                  // "--mode"
  std::string_view source;                  // "000 Table B5"
  std::span<const std::string_view> names;  // by code, 0 = NOP
  std::vector<std::pair<std::string_view, std::uint8_t>> aliases;
  std::uint8_t code;  // code bits (kModeCode, ...); any 4-bit value is accepted as a number
};

const Table& mode_table() {
  static const Table t{"--mode",
                       "000 Table B5",
                       regs::kModeNames,
                       {{"clock", 1}, {"signal", 4}, {"ext-signal", 4}, {"ext-enable", 3}},
                       regs::kModeCode};
  return t;
}
const Table& clock_table() {
  static const Table t{"--clock", "000 Table B6", regs::kClockNames, {{"tsc", 4}}, regs::kClockCode};
  return t;
}
const Table& enable_table() {
  // kEnableNames are the states a write leaves ("disabled"); the datasheet's controls read "Disable
  // counter", "Enable counter", "Reset & Enable counter".
  static const Table t{"--enable",
                       "000 Table B7",
                       regs::kEnableNames,
                       {{"disable", 1}, {"enable", 2}, {"reset", 3}, {"reset-enable", 3}},
                       regs::kEnableCode};
  return t;
}

std::string choices(const Table& t) {
  std::string s;
  for (std::size_t i = 1; i < t.names.size(); ++i) s += (s.empty() ? "" : ", ") + fold(t.names[i]);
  for (const auto& [name, v] : t.aliases) s += ", " + std::string(name);
  return s + ", nop, or a number 0-15";
}

// A field value: a name of the table or a number 0-15. Throws naming the argument and the offset.
std::uint8_t field_value(const Table& t, const std::string& arg, std::size_t at, const std::string& text) {
  const std::string f = fold(text);
  for (std::size_t i = 0; i < t.names.size(); ++i)
    if (f == fold(t.names[i])) return static_cast<std::uint8_t>(i);
  for (const auto& [name, v] : t.aliases)
    if (f == name) return v;
  if (const auto n = kron::text::parse_uint(text, 15)) return static_cast<std::uint8_t>(*n);
  throw InputError::at_offset(std::string(t.option) + " " + arg, at,
                              "unknown " + std::string(t.source) + " value '" + text + "'; expected " + choices(t));
}

// "3=enable,5-7=reset,all=disable": the register value written (fields not named are 0: unchanged).
std::uint64_t parse_fields(const Table& t, const std::vector<std::string>& args, std::uint64_t written) {
  for (const std::string& arg : args) {
    std::size_t at = 0;
    while (at <= arg.size()) {
      const std::size_t comma = std::min(arg.find(',', at), arg.size());
      const std::string item = arg.substr(at, comma - at);
      const std::string where = std::string(t.option) + " " + arg;
      const std::size_t eq = item.find('=');
      if (eq == std::string::npos)
        throw InputError::at_offset(where, at, "expected COUNTER=VALUE (COUNTER 0-15, a range 0-3, or all)");
      const std::string ctr = item.substr(0, eq);
      unsigned lo = 0, hi = regs::kFields - 1;
      if (fold(ctr) != "all") {
        const std::size_t dash = ctr.find('-');
        const auto a = kron::text::parse_uint(ctr.substr(0, dash), regs::kFields - 1);
        const auto b = dash == std::string::npos ? a : kron::text::parse_uint(ctr.substr(dash + 1), regs::kFields - 1);
        if (!a || !b || *b < *a)
          throw InputError::at_offset(where, at, "counter '" + ctr + "' must be 0-15, a range such as 0-3, or all");
        lo = static_cast<unsigned>(*a), hi = static_cast<unsigned>(*b);
      }
      const std::uint8_t v = field_value(t, arg, at + eq + 1, item.substr(eq + 1));
      for (unsigned n = lo; n <= hi; ++n)
        written = (written & ~(std::uint64_t{0xf} << (4 * n))) | (std::uint64_t{v} << (4 * n));
      at = comma + 1;
    }
  }
  return written;
}

std::uint64_t parse_reg(const std::string& option, const std::string& text) {
  if (text.empty()) return 0;
  const auto v = kron::text::parse_uint(text, ~std::uint64_t{0});
  if (!v) throw InputError::at_offset(option + " " + text, 0, "expected a 64-bit value such as 0x0000000000000020");
  return *v;
}

int run(const Args& a) {
  // Parse everything before touching the board: a bad argument changes nothing.
  const std::uint64_t en = parse_fields(enable_table(), a.enable, parse_reg("--enable-reg", a.enable_reg));
  const std::uint64_t mode = parse_fields(mode_table(), a.mode, parse_reg("--mode-reg", a.mode_reg));
  const std::uint64_t clk = parse_fields(clock_table(), a.clock, parse_reg("--clock-reg", a.clock_reg));
  auto r = recorder::BoardReader::open(a.board);
  write_stats(r, a);  // parses its arguments (names are the board's) before it writes
  board::BoardHeader& h = r.header();
  // One write of the three (Mode and Clock Select first, then Enable), under the board's control lock.
  if ((en || mode || clk) && !board::write_counter_control(h, en, mode, clk))
    throw std::runtime_error("board " + a.board + ": its control lock is held by live pid " +
                             std::to_string(h.ctl_lock.load()) + " for more than a second; nothing written");
  const std::uint64_t e = h.enable_reg.load(), m = h.mode_reg.load(), c = h.clock_reg.load();
  fmt::print("Enable Register 0x{:016x}  Mode Register 0x{:016x}  Clock Select Register 0x{:016x}\n", e, m, c);
  fmt::print("{:>7}  {:<15} {:<6} {:<11} {:<15} {}\n", "counter", "mode", "prec.", "clock", "enable", "pin wired to");
  for (unsigned n = 0; n < regs::kFields; ++n) {
    std::string line = fmt::format(
        "{:>7}  {:<15} {:<6} {:<11} {:<15} {}", n, regs::name(regs::mode_of(regs::field(m, n))),
        regs::double_precision(regs::field(m, n)) ? "double" : "single", regs::name(regs::clock_of(regs::field(c, n))),
        regs::name(regs::enable_of(regs::field(e, n))),
        text::terminal_safe(std::string(h.sources[n].name, strnlen(h.sources[n].name, sizeof h.sources[n].name))));
    line.erase(line.find_last_not_of(' ') + 1);
    fmt::print("{}\n", line);
  }
  print_stats(r);
  return kExitOk;
}

KRON_COMMAND("counters",
             "show or set a board's counter registers (000 Tables B5-B7), thresholds and phase watches (004)", 37,
             [](CLI::App& app) {
               auto a = std::make_shared<Args>();
               app.add_option("--board", a->board, "board name")->required();
               add_board_access_options(app);
               app.add_option("--mode", a->mode,
                              "N=VALUE[,...] (N 0-15, a range 0-3, all): clk, software, "
                              "external-enable, external-signal (Table B5)");
               app.add_option("--clock", a->clock, "N=VALUE[,...]: nodeclk, nodeclk/10, nodeclk/100, tsclk (Table B6)");
               app.add_option("--enable", a->enable, "N=VALUE[,...]: disable, enable, reset (& enable) (Table B7)");
               app.add_option("--mode-reg", a->mode_reg, "raw 64-bit Mode Register write (a 0 field is unchanged)");
               app.add_option("--clock-reg", a->clock_reg, "raw 64-bit Clock Select Register write");
               app.add_option("--enable-reg", a->enable_reg, "raw 64-bit Enable Register write");
               app.add_option("--threshold", a->threshold,
                              "arm a threshold: HIST=TICKS[:COUNT] (COUNT values at or above TICKS' bucket), "
                              "vc:INDEX=VALUE, or HIST|vc:INDEX=off; HIST is a name or #ID");
               app.add_option("--watch", a->watch,
                              "phase watch (004 PW): HIST=only:PHASE, HIST=except:PHASE, HIST=off; "
                              "vc=... for the virtual counters");
               return [a] { return run(*a); };
             });

}  // namespace
}  // namespace kron::tools
