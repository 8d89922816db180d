// The MPI side area (ERRATUM E440): where libkron_mpi puts each MPI call's record (record::MpiRecord, kind 8)
// and each clock measurement (record::ClockOffsetRecord, kind 9) the moment it exists, so that a rank killed
// by SIGKILL or ended by MPI_Abort leaves every one of them behind. The board holds the samples, in lanes
// that must stay in time order; an MPI call's record is known only when the call completes, long after its
// begin, so it cannot go into a lane (ERRATUM E202). The side area is a file of its own beside the board:
//
//   [SideHeader, 256 bytes][slot 0][slot 1]...      each slot 64 bytes: one record, zero padded
//
// One writer (the rank's libkron_mpi, under its own lock), one reader after the writer has ended or stopped
// (kron record --mpi once the program ended; libkron_mpi itself at MPI_Finalize). A record is written into
// its slot first and `count` raised after it (release), so a reader never sees a slot half written. A
// non-blocking request's record is published when it is posted (flag kMpiIncomplete) and completed in its
// slot when a Wait or Test completes it: a rank killed with requests in flight leaves them flagged. The file
// grows a MiB at a time; the writer maps kMaxBytes of address space once, so slots never move.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kron/core/record.hpp"

namespace kron::recorder::mpiside {

inline constexpr char kMagic[8] = {'K', 'R', 'O', 'N', 'M', 'P', 'I', '1'};
inline constexpr std::uint32_t kVersion = 1;
inline constexpr std::size_t kHeaderBytes = 256;
inline constexpr std::size_t kSlotBytes = 64;
inline constexpr std::uint64_t kGrowBytes = 1u << 20;
inline constexpr std::uint64_t kMaxBytes = std::uint64_t{64} << 30;  // a billion records

// Where the rank got to: kron record --mpi says how a rank ended from it.
enum class State : std::uint32_t {
  Created = 0,    // kron record made it; the program has not (yet) called MPI_Init
  Started = 1,    // MPI_Init: rank, world size and node are set
  Finalized = 2,  // MPI_Finalize reached (its clock measurement is in)
  Aborted = 3,    // MPI_Abort called
};

struct SideHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_size;  // kHeaderBytes
  std::uint32_t slot_bytes;   // kSlotBytes
  std::atomic<std::uint32_t> state;
  std::uint32_t rank, world_size;    // set at MPI_Init (State::Started)
  std::uint32_t pid;                 // the rank's process
  std::uint32_t node;                // the board's node number (E201)
  std::atomic<std::uint64_t> count;  // slots published
  char host[128];                    // MPI_Get_processor_name
  std::uint8_t reserved[80];
};
static_assert(sizeof(SideHeader) == kHeaderBytes && offsetof(SideHeader, count) == 40 &&
                  offsetof(SideHeader, host) == 48,
              "the side area is a shared-memory ABI");
static_assert(sizeof(record::MpiRecord) <= kSlotBytes && sizeof(record::ClockOffsetRecord) <= kSlotBytes);

// The writer's view (libkron_mpi). Not thread-safe: the caller serialises.
class Writer {
 public:
  Writer() = default;
  // Opens the side area kron record --mpi made at `path` (an existing file); throws std::runtime_error naming it.
  static Writer open(const std::string& path);
  // An anonymous side area (memfd), private to this process: libkron_mpi recording on its own.
  static Writer anonymous();
  Writer(Writer&& o) noexcept { *this = std::move(o); }
  Writer& operator=(Writer&& o) noexcept;
  Writer(const Writer&) = delete;
  ~Writer();

  explicit operator bool() const { return base_ != nullptr; }
  SideHeader& header() { return *reinterpret_cast<SideHeader*>(base_); }
  // Publishes one record (kind Mpi or ClockOffset, its h.size bytes) in the next slot; returns the slot's
  // index. Throws std::runtime_error when the file cannot grow (the memory is full).
  std::uint64_t append(const void* rec, std::size_t bytes);
  // The record in slot `i` (published), to be completed in place.
  record::MpiRecord& mpi(std::uint64_t i) {
    return *reinterpret_cast<record::MpiRecord*>(base_ + kHeaderBytes + i * kSlotBytes);
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::uint8_t* base_ = nullptr;
  std::uint64_t file_bytes_ = 0;
};

// Where kron record --mpi keeps the side area of its board `board`: beside it in the board directory
// (board::shm_dir()), named kron-mpi-side.BOARD (never taken for a board: boards are kron.NAME).
std::string side_path(const std::string& board);

// Makes the side area at `path` for a rank (kron record --mpi, before the program starts): a header in state
// Created, no slots. Throws std::runtime_error naming the path.
void create(const std::string& path);

// What a side area holds, read by the one reader.
struct Contents {
  std::uint32_t state = 0, rank = 0, world_size = 0, pid = 0, node = 0;
  std::string host;
  std::vector<record::MpiRecord> calls;
  std::vector<record::ClockOffsetRecord> offsets;
  std::string problem;  // "" or what was wrong (naming the offset): the records before it are kept
};
// Reads a side area's bytes (a file's contents, or a fuzz input). `name` names it in a problem.
Contents parse(std::span<const std::uint8_t> bytes, const std::string& name);
// Reads the side area at `path`; throws std::runtime_error when it cannot be opened.
Contents read(const std::string& path);
// The side area's contents behind an open descriptor (libkron_mpi's anonymous one).
Contents read_fd(int fd, const std::string& name);

const char* state_text(std::uint32_t state);

// ERRATUM E442: a rank's place in its job, from the variables its launcher set: OMPI_COMM_WORLD_RANK/_SIZE
// (Open MPI's mpirun), PMI_RANK/PMI_SIZE (MPICH's hydra and other PMI launchers), PMIX_RANK/PMIX_SIZE (PMIx
// launchers), SLURM_PROCID/SLURM_NTASKS (srun), the first one set. `var` "": none (a singleton, or a
// launcher kron does not know); `problem`: a variable set to something that is not a number (naming it).
struct EnvRank {
  int rank = 0, size = 0;  // size 0: the launcher did not say
  std::string var, problem;
};
EnvRank rank_from_env();

}  // namespace kron::recorder::mpiside
