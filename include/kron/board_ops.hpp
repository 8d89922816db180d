// Operations on boards shared by the probe library and the tools: create, map, validate, and the
// register writes with the chip's semantics. Library kron_board (src/board/): no third-party dependency,
// no start-up code (linking it never attaches to a board).
#pragma once
#include <cstdint>
#include <string>

#include "kron/board.hpp"

namespace kron::board {

enum class BufferMode : std::uint8_t { Simple, Circular };

struct CreateOptions {
  std::string name;                        // board name; segment "/kron.NAME"
  std::uint64_t size = kDefaultSize;       // sample memory (the block pool), bytes
  std::uint32_t lanes = kDefaultLanes;     // lane headers: threads writing at once
  // Bytes per block, a power of two (kMinBlockBytes-kMaxBlockBytes); 0 chooses: the largest power of two
  // up to kMaxAutoBlockBytes that gives every lane header four blocks (size / (4 * lanes)), at least 4 KiB.
  std::uint64_t block_bytes = 0;
  BufferMode mode = BufferMode::Simple;
  std::uint16_t filter = 0xffff;           // Filter Register at creation
  std::uint16_t csr = kCsrSamplingEnabled; // CSR status at creation (003's initialisation enables sampling)
  std::uint32_t node = 0;
  unsigned perms = 0600;
  bool replace = false;                    // unlink an existing board of that name first
  CounterSource sources[kCounters]{};      // External Signal wiring
  std::uint64_t enable = 0, mode_reg = 0, clock_reg = 0;  // counter control written at creation
  bool huge_pages = false;                 // back the board with 2 MiB pages where the kernel allows (--huge-pages)
};

// What a validation found: ok, or the byte offset in the segment and what is wrong there.
struct Problem {
  bool ok = true;
  std::uint64_t offset = 0;
  std::string what;
};

// Checks a board image of `size` bytes: magic, byte order, version, sizes and every offset against the
// segment (overflow-safe). Never reads past `size`. The lane and block contents (positions, block indices)
// are checked by their readers as they go.
Problem validate(const void* base, std::uint64_t size) noexcept;

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
  LaneHeader* lane(std::uint32_t i) const {
    return reinterpret_cast<LaneHeader*>(bytes() + header()->lanes_offset + std::uint64_t{i} * header()->lane_header_size);
  }
  BlockHeader* blocks() const { return reinterpret_cast<BlockHeader*>(bytes() + header()->blocks_offset); }
  SealedCell* sealed_cells() const { return reinterpret_cast<SealedCell*>(bytes() + header()->sealed_offset); }
  std::uint8_t* block_data(std::uint32_t b) const { return bytes() + header()->data_offset + std::uint64_t{b} * header()->block_bytes; }

  // Creates and maps a board, its memory committed (every page allocated and mapped: no probe takes a
  // page fault on first touch). Returns an empty mapping and sets *err on failure. *note (when given)
  // receives a line for the user when --huge-pages could not be honoured, and why.
  static Mapping create(const CreateOptions& o, std::string* err, std::string* note = nullptr);
  // Maps an existing board read-write, validates it and maps every page into this process (populate), so
  // that the probes of an attaching program take no page fault. Empty mapping + *err on failure
  // (*err_offset is the segment offset of a validation problem).
  static Mapping open(const std::string& name, std::string* err, std::uint64_t* err_offset = nullptr);
  // Adopts an image already in memory (tests, fuzzing); does not own it.
  static Mapping view(void* base, std::uint64_t size);

 private:
  void* base_ = nullptr;
  std::uint64_t size_ = 0;
  bool owned_ = false;
};

bool unlink(const std::string& name, std::string* err);

// The default block size for `size` bytes of sample memory and `lanes` lane headers (CreateOptions).
std::uint64_t default_block_bytes(std::uint64_t size, std::uint32_t lanes);

// Commits and maps every page of [base, base + size) for writing in this process: MADV_POPULATE_WRITE
// (Linux 5.14), else one atomic no-op write (fetch_or 0) per page, safe while other processes write there.
void populate(void* base, std::uint64_t size) noexcept;
// Why 2 MiB pages cannot back a board here ("" when they can): the /dev/shm mount's huge= option and
// /sys/kernel/mm/transparent_hugepage/shmem_enabled (deny/force) decide for POSIX shared memory.
std::string huge_pages_unavailable();
bool valid_name(const std::string& name);
std::string shm_name(const std::string& name);

// Register writes with the chip's semantics, safe while programs run.
void write_filter(BoardHeader& b, std::uint16_t filter);
void write_csr(BoardHeader& b, std::uint16_t written);  // 000 Table B1
void write_counter_control(BoardHeader& b, std::uint64_t enable, std::uint64_t mode, std::uint64_t clock);
std::uint16_t filter_of(const BoardHeader& b);
std::uint16_t csr_stored(const BoardHeader& b);

// Timestamp clock: calibrated once (TSC against CLOCK_MONOTONIC) and cached for the process.
ClockKind clock_kind();
std::uint64_t clock_hz();
std::uint64_t ticks(ClockKind k);
std::uint64_t realtime_ns();

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
