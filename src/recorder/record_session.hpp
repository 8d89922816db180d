// The work of `kron record` and `kron rdsample --board`, as library calls (the commands parse, call and
// print): run a program on a new board while draining it into a trace file (the toolkit's external
// collection path, 003 sections 1.3 and 2.6), and take what a board holds into a trace file without
// changing it (003's mk_rdsample; also after the program crashed).
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kron/board_ops.hpp"
#include "kron/format/trace_file.hpp"
#include "recorder/board_reader.hpp"
#include "recorder/recorder.hpp"

namespace kron::recorder {

// ---- kron record ----------------------------------------------------------------------------------------
struct RecordOptions {
  board::CreateOptions board;         // the board to create (name, size, lanes, mode, filter, csr, counters)
  std::string output = "kron.trace";  // trace file
  std::vector<std::string> program;   // program and arguments (run with KRON_BOARD, KRON_NODE set)
  double hold_ms = double(Recorder::kDefaultHoldMs);
  int compress_level = 0;          // --compress: zstd level 1-19 for the file's chunks; 0 none
  unsigned compress_threads = 0;   // --compress-threads: zstd workers (0: on the drain's thread)
  bool sched = false;              // --sched: the program's context switches (sched.hpp) into the file
  double snapshot_interval_s = 0;  // --snapshot-interval: histogram/counter snapshots; 0 final only
  // A live watcher (kron top): `tap` gets each lane's records as the drain takes them (Recorder::set_tap);
  // `watch` is called on the drain's thread about every 250 ms with the board being drained (read it, never
  // open it again in this process: that would drop the DrainLock), and once more (final = true) after the
  // program ended and the last records were taken. `program_output`: the program's
  // standard output and error go to this file (created or truncated) and its standard input is /dev/null
  // (a full-screen watcher owns the terminal); "" leaves all three as they are.
  BoardReader::Sink tap;
  std::function<void(BoardReader&, bool final)> watch;
  std::string program_output;
  // Called once the program has ended (however it ended: `wait_status` is waitpid's) and its last records
  // were taken, before the file is finished: may set header fields, append records that are not samples
  // (Writer::append_mpi, append_clock) and add name entries. kron record --mpi: the rank's MPI side area
  // (ERRATUM E440). Also when the program was killed; not after a drain error.
  std::function<void(tracefile::FileHeader&, tracefile::Writer&, std::vector<record::NameRecord>& names,
                     int wait_status)>
      before_finish;
  // >= 0: once a signal has been passed on to the program (its launcher ending it), the program gets SIGKILL
  // if it has not ended this many seconds later, so that the file is finished before the launcher's own
  // SIGKILL ends kron record too (kron record --mpi: 0.5 s, ERRATUM E441). < 0: wait for it however long.
  double stop_grace_s = -1;
  // mpi_world_size > 0: an MPI rank's file (kron record --mpi): the header says so from the start, so that a
  // file left unclosed (kron record killed) is still a rank's file that kron merge --salvage takes.
  std::uint32_t mpi_rank = 0, mpi_world_size = 0;
  // Environment variables set for the program only (kron record's own environment is left as it is).
  std::vector<std::pair<std::string, std::string>> program_env;
};
struct RecordResult {
  int wait_status = 0;  // the program's, as waitpid() returns it
  std::uint64_t records = 0, bytes = 0, late = 0;
  std::uint64_t file_bytes = 0;  // the record area on disk (less than `bytes` when compressed)
  // Every record of the record area uncompressed (samples, snapshots, context switches): the header's
  // records_raw_bytes, as file_bytes is its records_bytes, so kron record's ratio is kron info's (ERRATUM E401).
  std::uint64_t file_raw_bytes = 0;
  Totals totals;
  double seconds = 0;                                // the program's run time
  std::uint64_t clock_hz = 0;                        // the board's timestamp rate
  std::vector<std::string> problems;                 // corrupt lane memory met (each names its offset)
  std::string board_note;                            // --huge-pages: what the board got, or why not
  std::uint64_t sched_switches = 0, sched_lost = 0;  // --sched: switches written; lost by the kernel
  std::uint64_t snapshots = 0;                       // histogram and counter snapshot records written
};
// Called about every 250 ms while the program runs: records and bytes written so far, seconds.
using Progress = std::function<void(std::uint64_t records, std::uint64_t bytes, double seconds)>;
// Creates the board (replacing one of that name), runs the program on it, drains it into the trace file
// while it runs and finishes the file; forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT to the program (and
// drains on until it ends); unlinks the board. The program gets SIGTERM if kron record dies. Throws
// std::runtime_error / InputError when the board, file or process cannot be made, or when the drain fails
// (a write error, a corrupt board): then the program is stopped first (SIGTERM, SIGKILL after 2 s; said
// on standard error) and the file is left marked incomplete with every record written so far.
// With `sched`, the program's context switches too (SchedRecorder); an InputError saying why when perf
// refuses them (the program is not started then).
RecordResult record_program(const RecordOptions& o, const Progress& progress = nullptr);

// ---- kron rdsample --board ------------------------------------------------------------------------------
struct SnapshotOptions {
  std::uint64_t start = 0, end = ~std::uint64_t{0};                     // samples by index in time order (ERRATUM E27)
  std::string program;                                                  // the file header's program text
  std::function<void(const LaneView&, std::uint64_t samples)> on_lane;  // each lane read (verbose)
  std::uint64_t piece_bytes = 1u << 20;  // a lane is copied in pieces of this size, or a block (ERRATUM E348)
};
struct SnapshotResult {
  std::uint64_t written = 0, held = 0;  // samples written; samples the board held
  Totals totals;
  std::vector<std::string> problems;
};
// Writes the samples board `r` holds, in time order, [start, end) of them, to trace file `file`, with the
// board's totals and lanes as the pass that took the records saw them; changes nothing on the board. Its
// memory does not grow with the board (ERRATUM E348): a lane is copied a piece at a time to an unnamed
// spill file beside `file`, the board's pages given back behind the reader, and the lanes' runs merged
// from the spill file, its pages given back as the merge passes them.
SnapshotResult snapshot_to_file(BoardReader& r, const std::string& file, const SnapshotOptions& o);
// The core of snapshot_to_file: the records of `pieces` (each whole, valid records back to back) merged
// by timestamp (stable: equal timestamps keep their order, pieces in their order), [start, end) of them
// appended to `w`. A piece in time order is merged where it lies; another is sorted through an index of
// its own. Returns how many were written; *held (when given) is how many the pieces hold. 64-bit
// throughout: the pieces may hold any number of bytes (tests/recorder/snapshot_test.cpp merges more than
// 4 GiB). `file`: the pieces are those of file fd mapped at base (the spill file); a piece in time order is
// then read from the file a window at a time, never through the map: the merge's memory is its windows.
struct PiecesFile {
  int fd;
  const std::uint8_t* base;
};
std::uint64_t write_in_time_order(tracefile::Writer& w, std::span<const std::span<const std::uint8_t>> pieces,
                                  std::uint64_t start, std::uint64_t end, std::uint64_t* held = nullptr,
                                  const PiecesFile* file = nullptr);

// ---- kron record --board: drain an existing board live ----------------------------------------------------
// One drainer per board: a POSIX record lock (fcntl F_SETLK, write lock on byte 0) on the board's
// /dev/shm file, held while this object lives. The kernel drops it when the process ends however it
// ends, so a crashed drainer never blocks the next one, and F_GETLK names the holder's pid; the board's
// shared-memory layout is untouched (docs/architecture.md "Live attach"). Caveat of POSIX locks: closing
// any descriptor of the same file in this process drops the lock, so take it after the board is mapped
// and open the board no further while holding it.
class DrainLock {
 public:
  // Takes the lock of board `name`; throws std::runtime_error naming the board and the pid of the
  // drainer that holds it (or the board's drainer_pid, when a live drainer without the lock is set there).
  static DrainLock take(const std::string& name);
  DrainLock(DrainLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  DrainLock& operator=(DrainLock&&) = delete;
  ~DrainLock();

 private:
  explicit DrainLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

struct BoardRecordOptions {
  std::string board;  // an existing board (kron board create), written by kron run programs
  std::string output = "kron.trace";
  double hold_ms = double(Recorder::kDefaultHoldMs);
  double until_idle_s = -1;        // >= 0: end once no writer was attached for that long; < 0: on a signal
  int compress_level = 0;          // as RecordOptions
  unsigned compress_threads = 0;   // as RecordOptions
  double snapshot_interval_s = 0;  // as RecordOptions
};
struct BoardRecordResult : RecordResult {
  int signal = 0;             // SIGINT / SIGTERM that ended the recording (0: idle)
  std::uint64_t earlier = 0;  // records an earlier drainer took off the board (not in this file)
  std::uint64_t left = 0;     // records published after the last pass: still on the board
};
// Drains board `o.board` into a trace file until SIGINT/SIGTERM or, with until_idle_s >= 0, until no
// process had the board mapped and no lane had a live owner for that long. Same time order, hold-back
// and accounting as record_program; samples the board kept from before are in the file, and its losses
// since creation are in the accounting. The file's passed_filter leaves out `earlier` and `left` (probes
// not seen to their end: they stay on the board), so that
// passed_filter == samples + overruns + overwritten holds for the file. Throws when the board is missing
// or corrupt (InputError) or another drainer holds it (std::runtime_error naming its pid).
BoardRecordResult record_board(const BoardRecordOptions& o, const Progress& progress = nullptr);

}  // namespace kron::recorder
