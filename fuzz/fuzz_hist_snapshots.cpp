// Fuzz target: the histogram and virtual counter snapshot records (trace format 1.4 kinds 5 and 6)
// and the board's statistics area. The first byte chooses: 0, the bytes are snapshot records back to back
// (each checked by stats::snapshot_problem before it is merged, as the trace file reader does); 1, a trace
// file (the reader keeps the snapshots it validated: merged and rendered); 2, a board image (its statistics
// area read as kron hist --board does). Never a crash, a hang or a read out of bounds.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "analysis/hist.hpp"
#include "recorder/stats_reader.hpp"
#include "kron/board_ops.hpp"
#include "kron/core/error.hpp"
#include "kron/format/trace_file.hpp"

namespace {
void merge_and_render(std::span<const std::uint8_t> records) {
  kron::analysis::SnapshotSum m;
  m.add(records);
  const kron::analysis::SnapshotTotals r = m.result();
  (void)kron::analysis::render_hist_text(r, {});
  (void)kron::analysis::render_hist_json(r, {}, 0, 0);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t mode = data[0] % 3;
  ++data, --size;
  if (mode == 0) {
    std::vector<std::uint8_t> ok;
    for (std::size_t at = 0; at + sizeof(kron::record::RecordHeader) <= size;) {
      kron::record::RecordHeader h;
      std::memcpy(&h, data + at, sizeof h);
      if (h.size < sizeof h || h.size % 8 || h.size > size - at) break;
      if (!kron::stats::snapshot_problem(data + at, h.size)) ok.insert(ok.end(), data + at, data + at + h.size);
      at += h.size;
    }
    merge_and_render(ok);
  } else if (mode == 1) {
    static const int fd = memfd_create("kron-fuzz-hist", 0);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
    try {
      kron::tracefile::Reader r("/proc/self/fd/" + std::to_string(fd));
      std::vector<kron::Sample> batch(256);
      while (r.next_batch(batch) > 0) {
      }
      // Everything the reader kept passed the check.
      const auto& s = r.snapshots();
      for (std::size_t at = 0; at < s.size();) {
        std::uint16_t n;
        std::memcpy(&n, s.data() + at + 2, sizeof n);
        if (kron::stats::snapshot_problem(s.data() + at, n)) __builtin_trap();
        at += n;
      }
      merge_and_render(s);
    } catch (const kron::InputError&) {
    }
  } else {
    // A board image, 8-byte aligned copy (the board's atomics).
    std::vector<std::uint64_t> img((size + 7) / 8 + 1);
    std::memcpy(img.data(), data, size);
    kron::board::Problem p;
    kron::board::Mapping m = kron::board::Mapping::view(img.data(), size, &p);
    if (!m) return 0;
    const kron::recorder::BoardStats s = kron::recorder::read_board_stats(m, 0);
    for (std::size_t at = 0; at < s.records.size();) {
      std::uint16_t n;
      std::memcpy(&n, s.records.data() + at + 2, sizeof n);
      if (kron::stats::snapshot_problem(s.records.data() + at, n)) __builtin_trap();  // it writes only valid records
      at += n;
    }
    merge_and_render(s.records);
  }
  return 0;
}
