// Fuzz target: the probe's statistics path (kron::record_latency, kron::vcount, phases) on a board whose
// statistics words are rewritten with arbitrary values between the calls, as any process that maps the
// board may (docs/board-format.md "Trust model"): stat_gen (ERRATUM E340), the watches and thresholds of
// the histograms and of the virtual counters, hists_used and cells_used. Each 9 bytes of input are one
// step: an operation byte and a 64-bit value. Never a crash, a hang or a write outside a cell; afterwards
// the statistics area reads back as kron hist --board reads it.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "analysis/hist.hpp"
#include "recorder/stats_reader.hpp"
#include "kron/board.hpp"
#include "kron/kron.hpp"

namespace {
using namespace kron;
using namespace kron::board;

// One board for the whole run (a process attaches once), in a private directory.
Mapping& the_board() {
  static Mapping m = [] {
    static char dir[] = "/tmp/kron-fuzz-stats-XXXXXX";
    if (!::mkdtemp(dir)) std::abort();
    ::setenv(kEnvShmDir, dir, 1);
    CreateOptions o;
    o.name = "fz-stats";
    o.size = 16 * kMinBlockBytes;
    o.lanes = 4;
    o.hist_slots = 8;
    o.stat_cells = 64;
    std::string err;
    Mapping made = Mapping::create(o, &err);
    if (!made || !kron::attach(o.name.c_str())) std::abort();
    return made;
  }();
  return m;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Mapping& m = the_board();
  BoardHeader& h = *m.header();
  static kron::histogram a("fuzz-a"), b("fuzz-b");
  const std::uint32_t slots = m.geometry().hist_slots;
  for (std::size_t at = 0; at + 9 <= size; at += 9) {
    std::uint64_t v;
    std::memcpy(&v, data + at + 1, sizeof v);
    switch (data[at] % 10) {
      case 0: h.stat_gen.store(v); break;
      case 1: {
        HistSlot* s = m.hist_slot(static_cast<std::uint32_t>(v % slots));
        s->watch.store(static_cast<std::uint32_t>(v >> 8) % 4);
        s->watch_phase.store(static_cast<std::uint32_t>(v >> 16) & 0xffff);
        break;
      }
      case 2: {
        HistSlot* s = m.hist_slot(static_cast<std::uint32_t>(v % slots));
        s->threshold_bucket.store(static_cast<std::uint16_t>(v >> 8));
        s->threshold_count.store(static_cast<std::uint32_t>(v >> 24) % 8);
        break;
      }
      case 3:
        h.counter_watch.store(static_cast<std::uint32_t>(v) % 4);
        h.counter_watch_phase.store(static_cast<std::uint32_t>(v >> 8) & 0xffff);
        break;
      case 4:
        h.counter_threshold_index.store(static_cast<std::uint32_t>(v) % 9000);
        h.counter_threshold.store(v >> 16);
        break;
      case 5: (v & 1 ? h.hists_used : h.cells_used).store(v >> 1); break;
      case 6: kron::phase(static_cast<std::uint16_t>(v)); break;
      case 7: kron::record_latency(v & 1 ? a : b, v >> 1); break;
      case 8: kron::vcount(static_cast<unsigned>(v % 9000), v >> 16); break;
      default: {
        kron::phase_scope p(static_cast<std::uint16_t>(v >> 48));
        kron::record_latency(a, v & 0xffff);
        kron::vcount(static_cast<unsigned>(v % 8192));
      }
    }
  }
  const kron::recorder::BoardStats s = kron::recorder::read_board_stats(m, 0);
  kron::analysis::SnapshotSum merger;
  merger.add(s.records);
  (void)kron::analysis::render_hist_text(merger.result(), {});
  return 0;
}
