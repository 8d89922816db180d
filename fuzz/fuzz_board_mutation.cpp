// Fuzz target: a board rewritten while it is being drained (the board is untrusted shared
// memory). A valid board with records in several lanes (a simple and a circular one, built once) is
// copied; the input is a script of 8-byte writes anywhere in the segment, each made at a chosen moment:
// before the board is opened, right after it was validated (the header's offsets and sizes rewritten
// under the reader), or between two steps of the drain (inside a lane's sink call, between
// passes). The reader must never leave the segment, loop forever or hand out a record that is not one
// (ASan/UBSan watch); whatever it reports, it reports by a problem naming an offset or an InputError.
// Deterministic: the writes interleave with the drain at fixed points, not from another thread.
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kron/board_ops.hpp"
#include "kron/board_pool.hpp"
#include "board_records.hpp"
#include "kron/core/error.hpp"
#include "recorder/board_reader.hpp"

namespace {
using namespace kron::board;

// Writes `n` Trace records (a Resource record every seventh) into lane i of `m`, crossing blocks as a
// probe's slow path does: header, seal of the previous block, link.
void fill_lane(Mapping& m, std::uint32_t i, std::uint32_t n, bool retire) {
  const std::uint64_t B = m.geometry().block_slots();
  LaneHeader* L = m.lane(i);
  L->pid = static_cast<std::uint32_t>(::getpid());
  L->tid = 2000 + i;
  L->source = source_id(1, L->pid);
  std::uint32_t cur = kNoBlock;
  std::uint64_t head = 0, recs = 0, passed = 0;
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint64_t slots = k % 7 == 6 ? kResourceSlots : 1;
    if (cur == kNoBlock || head + slots > m.blocks()[cur].start.load() + B) {
      const std::uint32_t y = pool::pop_free(m.header()->free_top, m.blocks(), m.geometry().block_count);
      if (y == kNoBlock) break;
      BlockHeader& Y = m.blocks()[y];
      const std::uint64_t start = cur == kNoBlock ? 0 : m.blocks()[cur].start.load() + B;
      Y.lane.store(i), Y.start.store(start), Y.end.store(start), Y.records.store(0), Y.next.store(kNoBlock);
      Y.state.store(BlockState::Writing);
      if (cur == kNoBlock) {
        L->first.store(y);
      } else {
        BlockHeader& X = m.blocks()[cur];
        X.end.store(head), X.records.store(recs), X.next.store(y), X.state.store(BlockState::Sealed);
        if (m.geometry().circular())
          pool::enqueue_sealed(m.header()->sealed_enq, m.sealed_cells(), m.geometry().block_count, cur);
      }
      cur = y, head = start, recs = 0;
      L->cur.store(y);
    }
    auto* p = reinterpret_cast<std::uint64_t*>(m.block_data(cur)) + (head - m.blocks()[cur].start.load()) * 4;
    std::memset(p, 0, slots * kSlot);
    p[0] = slots == 1 ? (1u | (32u << 16)) : (2u | (160u << 16));
    p[1] = std::uint64_t{L->source} | (std::uint64_t{L->tid} << 32);
    p[2] = 1000 + k;
    p[3] = k;
    head += slots, ++recs, ++passed;
  }
  L->passed.store(passed + 3);
  L->overruns.store(3);
  L->head.store(head);
  if (retire && cur != kNoBlock) {
    BlockHeader& X = m.blocks()[cur];
    X.end.store(head), X.records.store(recs), X.state.store(BlockState::Sealed);
    if (m.geometry().circular()) pool::enqueue_sealed(m.header()->sealed_enq, m.sealed_cells(), m.geometry().block_count, cur);
  }
  L->state.store(retire ? LaneState::Retired : LaneState::Active);
  if (m.header()->lane_hwm.load() < i + 1) m.header()->lane_hwm.store(i + 1);
}

// The two base boards, built once in a private directory and kept as bytes.
std::vector<std::uint8_t> make_base(BufferMode mode) {
  static char dir[] = "/tmp/kron-fuzz-XXXXXX";
  static const bool made = ::mkdtemp(dir) != nullptr;
  if (!made) std::abort();
  ::setenv(kEnvShmDir, dir, 1);
  CreateOptions o;
  o.name = mode == BufferMode::Simple ? "fz-simple" : "fz-circular";
  o.mode = mode;
  o.size = 12 * kMinBlockBytes;
  o.lanes = 6;
  o.replace = true;
  std::string err;
  Mapping m = Mapping::create(o, &err);
  if (!m) std::abort();
  fill_lane(m, 0, 300, false);
  fill_lane(m, 1, 40, true);
  fill_lane(m, 3, 200, false);
  std::vector<std::uint8_t> bytes(m.bytes(), m.bytes() + m.size());
  unlink(o.name, &err);
  return bytes;
}

struct Write {
  std::uint8_t when;  // 0: before open; 1: right after; 2..: the n-th step of the drain
  std::uint32_t offset;
  std::uint64_t value;
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::uint8_t> bases[2] = {make_base(BufferMode::Simple), make_base(BufferMode::Circular)};
  if (size < 1) return 0;
  const std::vector<std::uint8_t>& base = bases[data[0] & 1];
  std::vector<Write> script;
  for (std::size_t at = 1; at + 13 <= size && script.size() < 64; at += 13) {
    Write w;
    w.when = data[at] % 16;
    std::memcpy(&w.offset, data + at + 1, 4);
    std::memcpy(&w.value, data + at + 5, 8);
    w.offset = static_cast<std::uint32_t>((w.offset % base.size()) & ~7u);  // an aligned word of the segment
    script.push_back(w);
  }
  auto* image = static_cast<std::uint8_t*>(std::aligned_alloc(64, base.size()));
  std::memcpy(image, base.data(), base.size());
  unsigned step = 0;
  auto tick = [&] {  // the writes due at this moment
    for (const Write& w : script)
      if (w.when == step) std::memcpy(image + w.offset, &w.value, sizeof w.value);
    ++step;
  };
  try {
    tick();  // 0: before the reader validates
    auto r = kron::recorder::BoardReader::view(image, base.size(), "fuzz");
    tick();  // 1: the header rewritten after validation
    auto sink = [&](const kron::recorder::LaneView&, std::span<const std::uint8_t> recs, std::uint64_t n) {
      check_board_records(recs, n);
      tick();  // a write while the drain is in the middle of a pass
    };
    std::vector<kron::tracefile::LaneEntry> finished;
    for (int pass = 0; pass < 3; ++pass) {
      r.drain(sink, &finished);
      tick();
    }
    r.snapshot(sink);
    (void)r.totals();
    (void)r.pool();
    (void)r.csr_read();
    (void)r.file_header();
    (void)r.lane_entries();
  } catch (const kron::InputError&) {
  }
  std::free(image);
  return 0;
}
