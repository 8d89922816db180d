// The kron board: a named POSIX shared-memory segment that plays the PCI toolkit board of 003 for the
// live recorder. This header is the shared-memory ABI (docs/board-format.md is its prose); the probe side
// (kron.hpp, mk.h, src/probe) and the trace side (src/recorder) both include it. No third-party dependency.
//
// Sources:
//   003 (NISTIR 5993) section 1.3 "Output Data Collection", 2.7 "Toolkit Board Local Memory", Table 2
//     (Configuration Register bit 14 WRAPB: 1 simple buffer, 0 circular buffer), 16 MB local memory.
//   000 (NISTIR 5571) Table B1 (CSR), "Filter Register", "Wait Error Counter", "Overrun Error Counter",
//     Tables B3a (wait or discard), B5 (Mode), B6 (Clock Select), B7 (Enable), "Source Address Registers".
// Not modelled (the modern equivalent on purpose): the chip's FIFO and shadow registers (a lane
//   is the FIFO), the 32-bit mode (bit 14/15 kept as status only), the CPU ID lines (the CPU number comes
//   from rseq), the network output, test mode, the board's external cable and DIS_STATE machinery.
//
// Layout, format 2.3 (every offset is checked against segment_size before use; no pointer is ever stored):
//   [BoardHeader][LaneHeader x lane_count][BlockHeader x block_count][SealedCell x block_count]
//   [NameSlot x name_slots][HistSlot x hist_slots][CellDesc x stat_cells][cells][blocks]
// The sample memory is one pool of block_count fixed-size blocks (block_bytes, a power of two) that the
// lanes draw from as they fill and give back when drained (simple board) or that the board recycles
// oldest-first across all lanes (circular board): no static split between lanes.
// Records in a block are the trace file's records (kron/core/record.hpp: TraceRecord, 32 bytes = one
// slot; ResourceRecord, 160 bytes = 5 slots), so the drain copies them to the file unchanged; a record
// never straddles two blocks. ERRATUM E20: lanes replace the chip's one FIFO. Positions (head, read, tail)
// count 32-byte slots from the lane's start and never wrap (2^64 slots); a block covers the positions
// [start, start + B) of its lane (B = block_bytes / 32, start a multiple of B), so the slot of position p
// in its block is p & (B - 1) and the probe's fast path is the one of a ring.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "kron/core/control_regs.hpp"
#include "kron/core/record.hpp"
#include "kron/core/stats.hpp"
#include "kron/core/toolkit_regs.hpp"

namespace kron::board {

inline constexpr char kMagic[8] = {'K', 'R', 'O', 'N', 'B', 'R', 'D', '1'};
inline constexpr std::uint32_t kByteOrderMark = 0x01020304;
inline constexpr std::uint16_t kMajor = 2;  // a reader refuses another major (2.0: the block pool)
inline constexpr std::uint16_t kMinor = 3;  // and accepts any minor (fields only ever appended)
// Minor versions: 2.0 the block pool; 2.1 adds the name table (names_offset..names_used: named probes and
// thread names) and `program` (the command that last ran on the board). A 2.0 board has names_offset 0: no
// table, named probes record with no name; and an empty program. 2.2 adds phased samples (the phase in the
// record header, the cpu in the thread field: ERRATUM E180; a 2.1 board's records are rewritten by the
// reader), `stat_gen` on the registers' line, and the statistics area (stats_offset..stat_lost: histograms
// and virtual counters, kron/core/stats.hpp). A 2.1 board has stats_offset 0: no histograms, no counters.
// 2.3: `attached` counts the processes attached now (ERRATUM E322: down again when one exits), `arrivals`
// the attaches ever (what `attached` counted until 2.2; a 2.2 board's arrivals read 0); a circular board
// keeps every lane's newest block (ERRATUM E320; no field changes); no process maps a board's memory when it
// opens it (ERRATUM E321).
inline constexpr std::uint32_t kLine = 64;                  // cache line: hot and cold fields never share one
inline constexpr std::uint32_t kSlot = record::kSlotBytes;  // ring unit = one Trace record (32 bytes)
inline constexpr std::uint32_t kResourceSlots = record::kResourceSlots;  // a Resource record (160 bytes)
inline constexpr std::uint32_t kCounters = 16;  // resource counters per board (000 "RESOURCE COUNTERS")

inline constexpr std::uint64_t kDefaultSize = 16ull << 20;  // 003: "16 megabytes" of local memory
// Lane headers carry no memory of their own (192 bytes each): 4096 threads at once by default.
inline constexpr std::uint32_t kDefaultLanes = 4096;
inline constexpr std::uint32_t kMaxLanes = 65536;
inline constexpr std::uint64_t kMinBlockBytes = 4096;  // 128 slots
inline constexpr std::uint64_t kMaxBlockBytes = 1u << 20;
inline constexpr std::uint64_t kMaxAutoBlockBytes = 64u << 10;  // the default's upper bound (see CreateOptions)
// ERRATUM E22. Write Wait on Overrun with a live drainer: a thread runs at most this far ahead of what the
// drain has given back before its probe waits (the drain then copies records still in the cache).
inline constexpr std::uint64_t kWaitLagBytes = 1u << 20;
inline constexpr std::uint32_t kNoBlock = 0xffffffffu;  // "no block" in a block index field
inline constexpr std::uint64_t kMaxSegment = 1ull << 40;
// ERRATUM E156. The name table (2.1): named probes' sites and thread names, 256 bytes a slot, on top of the
// sample memory.
inline constexpr std::uint32_t kDefaultNameSlots = 1024;
inline constexpr std::uint32_t kMaxNameSlots = 65534;  // ids 1-65534 (65535 is KRON_NAME_NONE)
// ERRATUM E182. The statistics area (2.2): histogram names (64 bytes a slot) and cells of 8 KiB, each one
// thread's histogram or page of 1024 virtual counters in one phase, taken as threads first record.
inline constexpr std::uint32_t kDefaultHistSlots = 256;
inline constexpr std::uint32_t kMaxHistSlots = 4096;
inline constexpr std::uint32_t kDefaultStatCells = 256;  // 2 MiB of cells, on top of the sample memory
inline constexpr std::uint32_t kMaxStatCells = 1u << 20;
// stat_gen: bit 47 marks a board's value (a probe's cache entry made from it never matches the value a
// probe sees without a board, kNoBoardGen); bits 0-46 count the watch writes.
inline constexpr std::uint64_t kStatGenMark = std::uint64_t{1} << 47;
inline constexpr std::uint64_t kNoBoardGen = std::uint64_t{1} << 46;

// Environment: the board MK_DEFAULT_MAP()/kron::attach() map; KRON_NODE is set by kron record for the
// program's information (samples take the node from the board header: one board per node).
inline constexpr const char* kEnvBoard = "KRON_BOARD";
inline constexpr const char* kEnvNode = "KRON_NODE";

// ---- The CSR, 000 Table B1 (include/kron/core/control_regs.hpp) ---------------------------------------
// Status bits as a read returns them. The board stores the control state (bits 0, 2, 4, 14) and computes
// bits 6-9 from the lanes when read; bits 10, 12 and 15 are the chip's and read 0 here.
enum CsrBit : std::uint16_t {
  kCsrSamplingEnabled = regs::csr::bit(regs::csr::kSamplingEnable),  // bit 0 Sampling Enabled
  kCsrWriteWait = regs::csr::bit(regs::csr::kWaitOnOverrun),         // bit 2 Write Wait on Overrun
  kCsrReadWait = regs::csr::bit(regs::csr::kReadWait),               // bit 4 (kept; kron never blocks reads)
  kCsrFifoFull = regs::csr::bit(regs::csr::kFifoFull),               // bit 6: some lane is full now
  kCsrShadowFull = regs::csr::bit(regs::csr::kShadowFull),           // bit 7: always 0 (no shadow registers)
  kCsrFifoOverrun = regs::csr::bit(regs::csr::kFifoOverrun),         // bit 8: some Trace sample was dropped
  kCsrShadowOverrun = regs::csr::bit(regs::csr::kShadowOverrun),     // bit 9: some Resource sample dropped
  kCsr32Bit = regs::csr::bit(regs::csr::kMode32),                    // bit 14 32 bit mode; kept, has no effect
};
inline constexpr std::uint16_t kCsrReset = regs::csr::kReset;
inline constexpr std::uint16_t kCsrReadOnlyMask = regs::csr::kReadOnly;
// The stored (writable) status bits; 6-9 are computed from the lanes when read.
inline constexpr std::uint16_t kCsrStoredMask = regs::csr::kControl;
// Every bit a board's CSR read can show (kron status prints these).
inline constexpr std::uint16_t kCsrReadMask =
    kCsrStoredMask | kCsrFifoFull | kCsrShadowFull | kCsrFifoOverrun | kCsrShadowOverrun;

// Applies a CSR write (000 Table B1, ERRATUM E13) to the stored status bits.
constexpr std::uint16_t csr_write(std::uint16_t status, std::uint16_t written) {
  return regs::csr::write(status, written);
}

// The control word every probe reads: Filter Register in bits 0-15, CSR status in bits 16-31.
constexpr std::uint32_t control_word(std::uint16_t filter, std::uint16_t csr) {
  return std::uint32_t{filter} | (std::uint32_t{csr} << 16);
}
inline constexpr std::uint32_t kCtlEnable = std::uint32_t{kCsrSamplingEnabled} << 16;
inline constexpr std::uint32_t kCtlWait = std::uint32_t{kCsrWriteWait} << 16;

// ---- Configuration Register (003 Table 2, include/kron/core/toolkit_regs.hpp), only the bit kron models --
inline constexpr std::uint32_t kCfgWrapB = regs::toolkit::cfg::kWrapB;  // 1 = simple buffer (keep oldest), 0 = circular

// ---- Resource counter control, 000 Tables B5-B7 (include/kron/core/control_regs.hpp) -------------------
// Sixteen 4-bit fields, field n = counter n. ERRATUM E26: NodeClk is the TSC; TSclk, the timestamp clock,
// is the same TSC; counters are 64 bits.
using regs::all_fields;
using regs::clock_of;
using regs::ClockSel;
using regs::Enable;
using regs::enable_of;
using regs::field;
using regs::kModeDouble;
using regs::Mode;
using regs::mode_of;
// Reset values of one field (the "**" defaults of Tables B5-B7): External Signal, TSclk, Disabled.
inline constexpr std::uint8_t kModeReset = regs::kModeResetField, kClockReset = regs::kClockResetField,
                              kEnableReset = regs::kEnableResetField;

// What drives a counter's External Signal pin (the board wiring, like 003's DEVSEL# to counters 0 and 2).
enum class Signal : std::uint32_t { None = 0, Perf = 1, OnCpu = 2 };
struct CounterSource {
  Signal signal;
  std::uint32_t perf_type;    // perf_event_attr.type when signal == Perf / OnCpu
  std::uint64_t perf_config;  // perf_event_attr.config
  char name[32];              // as given to --counter, for tools ("page-faults", "clock", ...)
};
static_assert(sizeof(CounterSource) == 48);

enum class ClockKind : std::uint32_t { Tsc = 0, Monotonic = 1 };
enum class LaneState : std::uint32_t { Free = 0, Claiming = 1, Active = 2, Retired = 3 };
// A block: Free (in the free stack), Writing (a lane's current block), Sealed (its writer moved on or
// retired), Recycling (a circular board's writer is taking it over).
enum class BlockState : std::uint32_t { Free = 0, Writing = 1, Sealed = 2, Recycling = 3 };

// ---- The board header ---------------------------------------------------------------------------------
struct alignas(kLine) BoardHeader {
  // Line 0-1: identity. Written once by the creator before the name is published; read-only after.
  char magic[8];
  std::uint32_t byte_order;
  std::uint16_t major, minor;
  std::uint32_t header_size;   // sizeof(BoardHeader) of the creator
  std::uint32_t line_size;     // kLine
  std::uint64_t segment_size;  // bytes of the whole segment
  std::uint64_t lanes_offset;  // LaneHeader table
  std::uint32_t lane_count;
  std::uint32_t lane_header_size;  // sizeof(LaneHeader) of the creator
  std::uint64_t data_offset;       // block 0's memory (page aligned)
  std::uint64_t block_bytes;       // per block: a power of two, kMinBlockBytes-kMaxBlockBytes
  // line 1
  std::uint64_t clock_hz;       // timestamp ticks per second, calibrated once at creation
  ClockKind clock_kind;         // Tsc: rdtsc; Monotonic: clock_gettime(CLOCK_MONOTONIC) ns
  std::uint32_t node;           // node number of "node.process"
  std::uint64_t created_ticks;  // timestamp at creation
  std::uint64_t created_realtime_ns;
  std::uint32_t creator_pid;
  std::uint32_t config;  // Configuration Register (003 Table 2): kCfgWrapB; fixed at creation
  char name[24];         // the board's name, for tools

  // Line 2: the registers every probe reads. Written only by tools and control calls (kron filter, csr).
  alignas(kLine) std::atomic<std::uint32_t> control;  // Filter Register | CSR << 16 (relaxed loads)
  std::atomic<std::uint32_t> counter_gen;             // bumped after every counter control write (threads re-plan)
  // 2.2: kStatGenMark | watch writes. Read by every record_latency/vcount (relaxed): a change empties the
  // threads' cell caches, so that a new phase watch takes effect (0 in a 2.1 board: no statistics).
  std::atomic<std::uint64_t> stat_gen;

  // Line 3: board-wide counters written only in slow paths.
  alignas(kLine) std::atomic<std::uint64_t> no_lane;  // probes that passed but found no free lane (overruns)
  std::atomic<std::uint32_t> drainer_pid;             // 0 when no reader drains the board
  // 2.3: processes attached now (+1 at attach or a forked child's first lane, -1 at its normal exit; a
  // process killed or exec'd stays counted: ERRATUM E322). Until 2.2 the attaches ever (now `arrivals`).
  std::atomic<std::uint32_t> attached;
  std::atomic<std::uint64_t> drainer_beat;      // drainer's last heartbeat, in ticks
  std::atomic<std::uint32_t> ctl_lock;          // serialises counter-control writers (tools, API)
  std::atomic<std::uint32_t> trace_overrun;     // CSR bit 8 (sticky): some Trace sample dropped
  std::atomic<std::uint32_t> resource_overrun;  // CSR bit 9 (sticky): some Resource sample dropped
  // 2.0: one past the highest lane ever claimed (raised by a claim before it publishes the lane Active).
  // Readers look at lanes below it only: thousands of lane headers cost a drain pass nothing unused.
  std::atomic<std::uint32_t> lane_hwm;
  std::atomic<std::uint32_t> arrivals;  // 2.3: processes that ever attached (0 on a 2.2 board: padding)

  // Lines 4-: resource counter control (000 Tables B5-B7) and board-wide counter state.
  alignas(kLine) std::atomic<std::uint64_t> enable_reg;  // Enable Register, fields as written (Table B7, E13)
  std::atomic<std::uint64_t> mode_reg;                   // Mode Register
  std::atomic<std::uint64_t> clock_reg;                  // Clock Select Register
  std::atomic<std::uint64_t> ctr_seq;                    // seqlock over stopwatch state below: odd while being written
  // Per counter: stopwatch accumulated ticks while enabled, enable time (0 = disabled), reset generation.
  std::atomic<std::uint64_t> sw_acc[kCounters];
  std::atomic<std::uint64_t> sw_since[kCounters];
  std::atomic<std::uint32_t> reset_gen[kCounters];
  CounterSource sources[kCounters];  // the wiring of each External Signal pin; fixed at creation

  // The block pool (2.0). Geometry: written once by the creator.
  alignas(kLine) std::uint64_t blocks_offset;  // BlockHeader table
  std::uint32_t block_count;
  std::uint32_t block_header_size;  // sizeof(BlockHeader) of the creator
  std::uint64_t sealed_offset;      // SealedCell x block_count: the circular board's sealed-block queue
  // The free-block stack (Treiber): ABA tag << 32 | top block index (kNoBlock: empty). Popped by writers
  // when they cross into a new block, pushed by the drainer when it gives a drained block back.
  alignas(kLine) std::atomic<std::uint64_t> free_top;
  // The sealed-block queue (circular boards): a bounded MPMC ring (per-cell sequence numbers) of the
  // blocks in the order their writers sealed them, oldest first. Enqueued by the sealing writer.
  alignas(kLine) std::atomic<std::uint64_t> sealed_enq;
  // Dequeued only under pool_lock, by a writer that found no free block (it recycles the oldest).
  alignas(kLine) std::atomic<std::uint64_t> sealed_deq;
  std::atomic<std::uint32_t> pool_lock;  // circular boards: pid of the process recycling or detaching; 0 free
  std::uint32_t reserved_pool;
  std::atomic<std::uint64_t> recycled;    // blocks recycled (statistics)
  std::atomic<std::uint64_t> pool_waits;  // probes that waited for a free block (statistics)

  // 2.1: the name table. Geometry written once by the creator (names_offset 0: none, a 2.0 board).
  alignas(kLine) std::uint64_t names_offset;  // NameSlot table
  std::uint32_t name_slots;                   // capacity
  std::uint32_t name_slot_size;               // sizeof(NameSlot) of the creator
  // Slots taken: a registering probe's fetch_add (slow path). Beyond name_slots nothing is written and the
  // excess counts the names that found no room (they record as KRON_NAME_NONE: never lost uncounted).
  std::atomic<std::uint64_t> names_used;
  // 2.1: the command of the program that last ran on the board (kron record, kron run), shell-quoted,
  // NUL-terminated; written by those tools before the program starts, "" when none did. Tools only:
  // kron rdsample --board puts it in the trace file's header (ERRATUM E148).
  alignas(kLine) char program[256];
  std::uint8_t reserved21[64];

  // 2.2: the statistics area (ERRATUM E182). Geometry written once by the creator (stats_offset 0: none).
  alignas(kLine) std::uint64_t stats_offset;  // HistSlot x hist_slots, then CellDesc x stat_cells
  std::uint32_t hist_slots;
  std::uint32_t stat_cells;
  std::uint64_t cells_offset;    // stat_cells cells of kCellBytes (page aligned)
  std::uint32_t hist_slot_size;  // sizeof(HistSlot) of the creator
  std::uint32_t cell_desc_size;  // sizeof(CellDesc)
  std::uint32_t cell_bytes;      // stats::kCellBytes
  // The phase watch of the virtual counters (stats::Watch, a phase); written by tools, bumps stat_gen.
  std::atomic<std::uint32_t> counter_watch;
  std::atomic<std::uint32_t> counter_watch_phase;
  // An armed virtual-counter threshold (ERRATUM E185): counter index + 1 (0: none) and the value at which a
  // thread's counter (in a phase) crosses it. Written by tools, then stat_gen.
  std::atomic<std::uint32_t> counter_threshold_index;
  std::atomic<std::uint64_t> counter_threshold;
  // 2.2: taken in slow paths (one fetch_add each). Past the capacity nothing is written, and the records
  // that found no room are counted in stat_lost (never lost uncounted).
  alignas(kLine) std::atomic<std::uint64_t> hists_used;  // histogram names registered (slots taken)
  std::atomic<std::uint64_t> cells_used;                 // cells taken
  std::atomic<std::uint64_t> stat_lost;                  // record_latency/vcount calls that found no cell or slot
  std::atomic<std::uint64_t> thresholds_crossed;         // threshold crossings (each also a sample, ERRATUM E185)
  std::uint8_t reserved[4096 - 2176];
};
static_assert(sizeof(BoardHeader) == 4096, "BoardHeader is a shared-memory ABI: one page");
static_assert(offsetof(BoardHeader, control) == 128 && offsetof(BoardHeader, no_lane) == 192);
static_assert(offsetof(BoardHeader, arrivals) == 232 && offsetof(BoardHeader, enable_reg) == 256);
static_assert(offsetof(BoardHeader, enable_reg) == 256 && offsetof(BoardHeader, sources) == 608);
static_assert(offsetof(BoardHeader, blocks_offset) == 1408 && offsetof(BoardHeader, free_top) == 1472 &&
              offsetof(BoardHeader, sealed_enq) == 1536 && offsetof(BoardHeader, sealed_deq) == 1600);
static_assert(offsetof(BoardHeader, names_offset) == 1664 && offsetof(BoardHeader, names_used) == 1680);
static_assert(offsetof(BoardHeader, program) == 1728);
static_assert(offsetof(BoardHeader, stat_gen) == 136 && offsetof(BoardHeader, stats_offset) == 2048 &&
              offsetof(BoardHeader, counter_watch) == 2084 && offsetof(BoardHeader, counter_threshold) == 2096 &&
              offsetof(BoardHeader, hists_used) == 2112 && offsetof(BoardHeader, thresholds_crossed) == 2136);

// ---- A lane: one writer (a thread), a chain of blocks --------------------------------------------------
struct alignas(kLine) LaneHeader {
  // Line 0: owner. Written when a thread claims or retires the lane, or crosses into a block (slow path).
  std::atomic<LaneState> state;  // claimed by CAS Free -> Claiming; published Active with release
  std::uint32_t pid, tid;
  std::uint32_t source;  // "node.process" Source Address of the owner
  std::uint64_t claim_ticks;
  std::atomic<std::uint32_t> occupancy;  // bumped at every claim: tells tools a lane was reused
  // The chain: `first` is the oldest block not given back (or recycled), `cur` the newest (being written,
  // or sealed when the lane retired). Blocks link forward through BlockHeader::next. kNoBlock: none.
  std::atomic<std::uint32_t> first;
  std::atomic<std::uint32_t> cur;
  std::uint32_t reserved0[7];

  // Line 1: writer-hot. Only the owning thread stores (plain relaxed stores, never an atomic RMW).
  alignas(kLine) std::atomic<std::uint64_t> head;  // slots published; release store, acquire load
  std::atomic<std::uint64_t> passed;               // probes past filter+enable; stored before the record is written
  std::atomic<std::uint64_t> overruns;             // samples dropped for a full lane (000 Overrun Error Counter)
  std::atomic<std::uint64_t> waits;                // probes held for room
  std::atomic<std::uint64_t> wait_ticks;           // time held, ticks (000 Wait Error Counter counts clocks)
  // Circular boards: written by whichever writer recycles one of this lane's blocks, under pool_lock.
  std::atomic<std::uint64_t> tail_seq;  // circular: seqlock over (tail, evicted), odd while written
  std::atomic<std::uint64_t> tail;      // circular: end of the newest recycled block (a block bound)
  std::atomic<std::uint64_t> evicted;   // circular: records before tail (ever recycled)

  // Line 2: reader-owned. Only the drainer stores; the writer loads `read` when its lane looks full.
  alignas(kLine) std::atomic<std::uint64_t> read;  // slots drained; release store after the copy
  std::atomic<std::uint64_t> read_records;         // records before `read` (drained + overwritten)
  std::atomic<std::uint64_t> drained;              // records copied out
  std::atomic<std::uint64_t> overwritten;          // circular: records overwritten before drained
  std::atomic<std::uint64_t> torn;                 // a record cut by the owner's death (0 or 1)
  std::atomic<std::uint64_t> returned;             // simple boards: positions below it are given back (release store)
  std::uint64_t reserved2[2];
};
static_assert(sizeof(LaneHeader) == 192 && offsetof(LaneHeader, head) == 64 && offsetof(LaneHeader, read) == 128);

// ---- A block of the pool: one cache line of header, block_bytes of records elsewhere ----------------------
// Fields are atomics because a reader of a circular board may read a header while a recycler rewrites it
// (it then sees `gen` changed and discards what it read).
struct alignas(kLine) BlockHeader {
  std::atomic<BlockState> state;
  std::atomic<std::uint32_t> gen;   // circular boards, a seqlock: +1 (odd) when the block is recycled,
                                    // +1 (even) once its new header is written; readers check it
  std::atomic<std::uint32_t> lane;  // the lane it belongs to (kNoBlock: detached from a freed lane)
  std::uint32_t reserved0;
  std::atomic<std::uint64_t> start;      // first lane position it covers (a multiple of B)
  std::atomic<std::uint64_t> end;        // where writing stopped; set when sealed (<= start + B)
  std::atomic<std::uint64_t> records;    // records in it; set when sealed
  std::atomic<std::uint32_t> next;       // the lane's next block (release store), or kNoBlock
  std::atomic<std::uint32_t> next_free;  // free stack link
  std::uint64_t reserved[2];
};
static_assert(sizeof(BlockHeader) == 64);
// A cell of the sealed-block queue.
struct alignas(16) SealedCell {
  std::atomic<std::uint64_t> seq;  // position + 1 when full, position + count when free for the next lap
  std::atomic<std::uint32_t> block;
  std::uint32_t reserved;
};
static_assert(sizeof(SealedCell) == 16);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free);

// ---- A slot of the name table (2.1): one record::NameRecord, published by its header word -----------------
// The registering thread fills the body, then stores the header word (kind Names, size 256) with release;
// a reader that acquires that word reads a complete entry. Slot i holds id i + 1; entries are never changed
// once published. A reader validates every field (kind, id, strings) as it copies them.
struct alignas(kLine) NameSlot {
  std::atomic<std::uint64_t> header;  // 0 while unwritten; record::name_header_word() when published
  std::uint8_t body[sizeof(record::NameRecord) - 8];
};
static_assert(sizeof(NameSlot) == sizeof(record::NameRecord));

// ---- The statistics area (2.2, ERRATUM E182) ------------------------------------------------------------
// A histogram's name and watch. Slot i is histogram id i + 1, published by its header word (release) once
// the name is in; ids are never reused. The watch and the threshold are written by tools (then stat_gen).
struct alignas(kLine) HistSlot {
  std::atomic<std::uint64_t> header;       // 0 while unwritten; kHistSlotWord when published
  char name[40];                           // NUL-padded (stats::kHistNameBytes)
  std::atomic<std::uint32_t> watch;        // stats::Watch
  std::atomic<std::uint32_t> watch_phase;  // compared with the thread's phase (004 PW)
  // Armed threshold (ERRATUM E185): a bucket and a count (0: not armed). When a thread's cell (in a phase)
  // has counted threshold_count values in buckets >= threshold_bucket, it emits one Trace sample
  // (kFlagThreshold) at that moment.
  std::atomic<std::uint16_t> threshold_bucket;
  std::uint16_t reserved0;
  std::atomic<std::uint32_t> threshold_count;
};
static_assert(sizeof(HistSlot) == 64 && offsetof(HistSlot, watch) == 48 && offsetof(HistSlot, threshold_count) == 60);
inline constexpr std::uint64_t kHistSlotWord = 0x4849535431ull;  // "1TSIH": a published slot
// A cell's descriptor: its key (stats::cell_key; 0 while unwritten, release store once the cell is
// initialised) and its owner.
struct alignas(32) CellDesc {
  std::atomic<std::uint64_t> key;
  std::uint32_t source;       // "node.process" of the owner
  std::uint32_t thread;       // its thread id
  std::uint64_t first_ticks;  // when the cell was taken
  std::uint64_t reserved;
};
static_assert(sizeof(CellDesc) == 32);

// The lanes a reader needs to look at: those below the high-water mark of claims (a scribbled mark is
// bounded by `lane_count`, the reader's validated copy of the header's, never the live field: ERRATUM E120).
// Acquire: pairs with the claim's release of the mark.
inline std::uint32_t lanes_in_use(const BoardHeader& h, std::uint32_t lane_count) {
  const std::uint32_t m = h.lane_hwm.load(std::memory_order_acquire);
  return m < lane_count ? m : lane_count;
}

// The POSIX shared-memory name of board `name` ("/kron.NAME").
inline constexpr const char* kShmPrefix = "/kron.";
inline constexpr std::size_t kNameMax = 23;

// Source identification "node.process" in 32 bits: node in bits 22-31, process id in bits 0-21
// (Linux pid_max is at most 2^22). ERRATUM E21: 000 does not say how the two are packed.
constexpr std::uint32_t source_id(std::uint32_t node, std::uint32_t pid) { return (node << 22) | (pid & 0x3fffffu); }
constexpr std::uint32_t source_node(std::uint32_t s) { return s >> 22; }
constexpr std::uint32_t source_pid(std::uint32_t s) { return s & 0x3fffffu; }

}  // namespace kron::board
