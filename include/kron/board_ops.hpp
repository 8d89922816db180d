// Operations on boards shared by the probe library and the tools: create, map, validate, and the
// register writes with the chip's semantics. Library kron_board (src/board/): no third-party dependency,
// no start-up code (linking it never attaches to a board).
#pragma once
#include <cstdint>
#include <string>

#include "kron/board.hpp"
#include "kron/format/time_base.hpp"

namespace kron::board {

enum class BufferMode : std::uint8_t { Simple, Circular };

struct CreateOptions {
  std::string name;                     // board name; segment "/kron.NAME"
  std::uint64_t size = kDefaultSize;    // sample memory (the block pool), bytes
  std::uint32_t lanes = kDefaultLanes;  // lane headers: threads writing at once
  // Bytes per block, a power of two (kMinBlockBytes-kMaxBlockBytes); 0 chooses: the largest power of two
  // up to kMaxAutoBlockBytes that gives every lane header four blocks (size / (4 * lanes)), at least 4 KiB.
  std::uint64_t block_bytes = 0;
  BufferMode mode = BufferMode::Simple;
  std::uint16_t filter = 0xffff;            // Filter Register at creation
  std::uint16_t csr = kCsrSamplingEnabled;  // CSR status at creation (003's initialisation enables sampling)
  std::uint32_t node = 0;
  unsigned perms = 0600;
  bool replace = false;                                   // unlink an existing board of that name first
  CounterSource sources[kCounters]{};                     // External Signal wiring
  std::uint64_t enable = 0, mode_reg = 0, clock_reg = 0;  // counter control written at creation
  bool huge_pages = false;  // back the board with 2 MiB pages where the kernel allows (--huge-pages)
  std::uint32_t name_slots = kDefaultNameSlots;  // name table entries (0: none), 256 bytes each, on top of `size`
  // 2.2 statistics area (ERRATUM E182), on top of `size`: histogram names (64 bytes each) and cells of 8 KiB
  // (one thread's histogram or 1024 virtual counters, in one phase). stat_cells 0: none.
  std::uint32_t hist_slots = kDefaultHistSlots;
  std::uint32_t stat_cells = kDefaultStatCells;
};

// What a validation found: ok, or the byte offset in the segment and what is wrong there.
struct Problem {
  bool ok = true;
  std::uint64_t offset = 0;
  std::string what;
};

// ERRATUM E120. The board is untrusted shared memory: any process that can map it may rewrite its header at
// any time, also after it was validated. Every reader therefore copies the header's fixed fields once
// (read_geometry), validates the copy, and uses only the copy (Mapping::geometry()); the live header is
// read only for the words that change by design (registers, counters, positions), and every index or
// position taken from those is bounds-checked where it is used. docs/board-format.md "Trust model".
struct Geometry {
  std::uint64_t segment_size = 0, lanes_offset = 0, data_offset = 0, block_bytes = 0, blocks_offset = 0;
  std::uint64_t sealed_offset = 0, clock_hz = 0, created_ticks = 0, created_realtime_ns = 0;
  std::uint32_t header_size = 0, line_size = 0, lane_count = 0, lane_header_size = 0, block_count = 0;
  std::uint32_t block_header_size = 0, config = 0, node = 0, creator_pid = 0, byte_order = 0;
  std::uint16_t major = 0, minor = 0;
  std::uint64_t names_offset = 0;  // 2.1 name table (0: none)
  std::uint32_t name_slots = 0, name_slot_size = 0;
  std::uint64_t stats_offset = 0, cells_offset = 0;  // 2.2 statistics area (0: none)
  std::uint32_t hist_slots = 0, stat_cells = 0, hist_slot_size = 0, cell_desc_size = 0, cell_bytes = 0;
  ClockKind clock_kind = ClockKind::Tsc;
  char magic[8] = {};
  Signal signals[kCounters] = {};
  bool circular() const { return !(config & kCfgWrapB); }
  std::uint64_t block_slots() const { return block_bytes / kSlot; }
};
// Copies the fixed fields of the header at `base` (at least sizeof(BoardHeader) bytes), each read once.
Geometry read_geometry(const void* base) noexcept;
// Checks a copy against a segment of `size` bytes: magic, byte order, version, sizes and every offset
// (overflow-safe).
Problem validate(const Geometry& g, std::uint64_t size) noexcept;
// Copies and checks the header of a board image of `size` bytes; the validated copy goes to *out. Never
// reads past `size`. The lane and block contents (positions, block indices) are checked by their readers
// as they go.
Problem validate(const void* base, std::uint64_t size, Geometry* out = nullptr) noexcept;

// ERRATUM E121. Who may be trusted to have written a board: its segment must belong to this process's
// effective user and be writable by nobody else, unless the user says otherwise (--trust-board, or
// KRON_TRUST_BOARD=1 in the environment of a program that attaches). "" when trusted, else why not.
std::string untrusted_owner(int fd, const std::string& name);
inline constexpr const char* kEnvTrustBoard = "KRON_TRUST_BOARD";
// The tools' --trust-board: accept boards that fail the owner/mode check in this process.
void set_trust_boards(bool on);
bool trust_boards();

// A mapped board (creator, attacher or reader). Unmaps on destruction.
class Mapping {
 public:
  Mapping() = default;
  ~Mapping();
  Mapping(Mapping&& o) noexcept;
  Mapping& operator=(Mapping&& o) noexcept;
  BoardHeader* header() const { return static_cast<BoardHeader*>(base_); }
  std::uint8_t* bytes() const { return static_cast<std::uint8_t*>(base_); }
  std::uint64_t size() const { return size_; }
  explicit operator bool() const { return base_ != nullptr; }
  // The header's fixed fields as validated when the board was mapped (ERRATUM E120): the places below are
  // computed from this copy, never from the live header.
  const Geometry& geometry() const { return geo_; }
  // Lane i (i < geometry().lane_count: the caller checks an index it took from shared memory).
  LaneHeader* lane(std::uint32_t i) const {
    return reinterpret_cast<LaneHeader*>(bytes() + geo_.lanes_offset + std::uint64_t{i} * geo_.lane_header_size);
  }
  BlockHeader* blocks() const { return reinterpret_cast<BlockHeader*>(bytes() + geo_.blocks_offset); }
  SealedCell* sealed_cells() const { return reinterpret_cast<SealedCell*>(bytes() + geo_.sealed_offset); }
  // Name slot i (i < geometry().name_slots: the caller checks).
  NameSlot* name_slot(std::uint32_t i) const {
    return reinterpret_cast<NameSlot*>(bytes() + geo_.names_offset + std::uint64_t{i} * sizeof(NameSlot));
  }
  // The statistics area (2.2): histogram slot i (i < hist_slots), cell descriptor and cell i (i < stat_cells).
  HistSlot* hist_slot(std::uint32_t i) const {
    return reinterpret_cast<HistSlot*>(bytes() + geo_.stats_offset + std::uint64_t{i} * sizeof(HistSlot));
  }
  CellDesc* cell_desc(std::uint32_t i) const {
    return reinterpret_cast<CellDesc*>(bytes() + geo_.stats_offset + std::uint64_t{geo_.hist_slots} * sizeof(HistSlot) +
                                       std::uint64_t{i} * sizeof(CellDesc));
  }
  std::uint64_t* cell(std::uint32_t i) const {
    return reinterpret_cast<std::uint64_t*>(bytes() + geo_.cells_offset + std::uint64_t{i} * stats::kCellBytes);
  }
  // Block b's memory (b < geometry().block_count: the caller checks).
  std::uint8_t* block_data(std::uint32_t b) const {
    return bytes() + geo_.data_offset + std::uint64_t{b} * geo_.block_bytes;
  }
  // The lanes a reader needs to look at: below the claims' high-water mark, bounded by the validated count.
  std::uint32_t lanes_in_use() const;

  // Creates and maps a board, its memory committed (every page allocated in the file system by
  // posix_fallocate; ERRATUM E321: not mapped into the page tables, which the probes do block by block).
  // Returns an empty mapping and sets *err on failure. *note (when given)
  // receives a line for the user when --huge-pages could not be honoured, and why.
  static Mapping create(const CreateOptions& o, std::string* err, std::string* note = nullptr);
  // Maps an existing board read-write and validates it, in constant time: no page is mapped in advance
  // (ERRATUM E321; a probe maps each block it takes with populate()). Empty mapping + *err on failure
  // (*err_offset is the segment offset of a validation problem).
  static Mapping open(const std::string& name, std::string* err, std::uint64_t* err_offset = nullptr);
  // Adopts an image already in memory (tests, fuzzing); does not own it. Validates it: an empty mapping
  // and *problem when refused.
  static Mapping view(void* base, std::uint64_t size, Problem* problem = nullptr);
  // Whether this process mapped the board itself (create, open: MAP_SHARED of the board's file), so that
  // the pages a reader has passed may be given back (madvise MADV_DONTNEED drops them from this process's
  // page tables; the records stay in the file). A view's memory is the caller's: never.
  bool shared() const { return owned_; }

 private:
  void* base_ = nullptr;
  std::uint64_t size_ = 0;
  bool owned_ = false;
  Geometry geo_{};
};

bool unlink(const std::string& name, std::string* err);

// The default block size for `size` bytes of sample memory and `lanes` lane headers (CreateOptions).
std::uint64_t default_block_bytes(std::uint64_t size, std::uint32_t lanes);

// Commits and maps every page of [base, base + size) for writing in this process: MADV_POPULATE_WRITE
// (Linux 5.14), else one atomic no-op write (fetch_or 0) per page, safe while other processes write there.
// The probe calls it for each block it takes (slow path), so that its fast path takes no page fault.
void populate(void* base, std::uint64_t size) noexcept;
// Why 2 MiB pages cannot back a board here ("" when they can): the /dev/shm mount's huge= option and
// /sys/kernel/mm/transparent_hugepage/shmem_enabled (deny/force) decide for POSIX shared memory.
std::string huge_pages_unavailable();
bool valid_name(const std::string& name);
std::string shm_name(const std::string& name);
// ERRATUM E122. Where boards live: the directory in KRON_SHM_DIR (set by --shm-dir, inherited by the traced
// program), else /dev/shm, POSIX shared memory's tmpfs. A board is the file DIR/kron.NAME, opened with
// O_NOFOLLOW (a symlink is never followed).
inline constexpr const char* kEnvShmDir = "KRON_SHM_DIR";
std::string shm_dir();
std::string board_path(const std::string& name);
// A board name no other process can be using, in any PID namespace: PREFIX-PID-RANDOM (32 random bits);
// the creator's O_EXCL refuses the rare collision rather than replacing the other board.
std::string unique_name(const std::string& prefix);

// Register writes with the chip's semantics, safe while programs run.
void write_filter(BoardHeader& b, std::uint16_t filter);
void write_csr(BoardHeader& b, std::uint16_t written);  // 000 Table B1
// Counter control (Tables B5-B7) under the board's ctl_lock. False, nothing written, when the lock's
// holder is alive and keeps it for a second (ERRATUM E124).
bool write_counter_control(BoardHeader& b, std::uint64_t enable, std::uint64_t mode, std::uint64_t clock);
// The statistics area's thresholds and phase watches (004 section 4.5's overflow interrupts and count-enable
// circuits, ERRATUM E185/E186), armed from outside while programs run: `slot` a histogram slot, or null for
// the virtual counters (`index` then names the counter). A threshold of count 0 (or a counter threshold
// with arm false) is off. Each write is published with release; stats_changed() then makes every thread
// refill its cached settings at its next value.
void arm_hist_threshold(HistSlot& slot, std::uint16_t bucket, std::uint32_t count);
void arm_counter_threshold(BoardHeader& b, bool arm, std::uint32_t index, std::uint64_t value);
void set_watch(std::atomic<std::uint32_t>& mode, std::atomic<std::uint32_t>& phase, std::uint32_t new_mode,
               std::uint32_t new_phase);
void stats_changed(BoardHeader& b);
std::uint16_t filter_of(const BoardHeader& b);
std::uint16_t csr_stored(const BoardHeader& b);

// Timestamp clock: chosen once and cached for the process (docs/trace-format.md "Time base", E300-E304).
// The TSC where /proc/cpuinfo reports constant_tsc and nonstop_tsc and its counts agree across CPUs (a
// short check, E303), else CLOCK_MONOTONIC ns. The TSC's conversion: the kernel's (perf_event mmap page,
// cap_user_time_zero), else a calibration against CLOCK_MONOTONIC_RAW that the recorder refines with
// anchors. Environment: KRON_NO_TSC=1 (CLOCK_MONOTONIC timestamps), KRON_CLOCK_ANCHORS=1 (the TSC with
// anchors even where the kernel offers its conversion: the fallback, testable everywhere).
inline constexpr const char* kEnvNoTsc = "KRON_NO_TSC";
inline constexpr const char* kEnvClockAnchors = "KRON_CLOCK_ANCHORS";
struct ClockSource {
  ClockKind kind = ClockKind::Monotonic;
  std::uint64_t hz = 1000000000ull;
  tracefile::TimeSource source = tracefile::TimeSource::KernelClock;
  tracefile::KernelConversion kernel;  // source Kernel
  double uncertainty_ppm = 0;          // of hz (a calibration's; refined by the recorder's anchors)
  std::string why;                     // why not the TSC, or not the kernel's conversion ("" when it is)
};
const ClockSource& clock_source();
ClockKind clock_kind();
std::uint64_t clock_hz();
std::uint64_t ticks(ClockKind k);
std::uint64_t realtime_ns();
// Ticks of clock `k` and CLOCK_MONOTONIC_RAW side by side (the tightest of a few tries).
tracefile::Anchor take_anchor(ClockKind k);

// Named counter sources for --counter N=SOURCE: fills `src`, mode/clock fields; false if unknown.
struct SourceSpec {
  CounterSource src{};
  std::uint8_t mode = 0, clock = 0;
};
bool parse_source(const std::string& text, SourceSpec* out, std::string* err);
// Tries to open the perf event of a source on this thread: "" when it works, else why not.
std::string probe_perf(const CounterSource& s);
// Opens counter source `s` as a perf event of the calling thread, in the group of `group_leader` (-1: a
// new group), user space only, read as a group. Returns the fd, or -1 with errno set.
int open_perf_event(const CounterSource& s, int group_leader);

}  // namespace kron::board
