// kron record's run-and-drain loop and rdsample's snapshot (record_session.hpp).
#include "recorder/record_session.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <queue>
#include <stdexcept>

#include "kron/core/record.hpp"
#include "kron/core/error.hpp"
#include "kron/core/text.hpp"
#include "recorder/sched.hpp"

namespace kron::recorder {
namespace {

// ---- kron record -- PROGRAM: the program's signals and its end -------------------------------------------
// The signals that ask kron record to end are the program's to act on: each is passed on to it, and
// kron record goes on draining until the program has ended (then finishes the file). A shell's Ctrl-C
// reaches both (one process group) and the program gets it twice: harmless for the default action, and
// what `kill PID` of kron record alone needs. Blocked from before fork() until g_child is set, so that a
// signal arriving meanwhile is forwarded, not dropped. ERRATUM E135.
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_forwarded = 0;  // a signal was passed on (RecordOptions::stop_grace_s)
void forward(int sig) {
  g_forwarded = 1;
  if (g_child > 0) ::kill(g_child, sig);
}

sigset_t forwarded_set() {
  sigset_t s;
  ::sigemptyset(&s);
  for (int sig : kForwarded) ::sigaddset(&s, sig);
  return s;
}

// How long a program that kron record stops after its own error has to end on SIGTERM before SIGKILL.
constexpr auto kStopGrace = std::chrono::seconds(2);

// kron record cannot go on (the file cannot be written, the board is corrupt): the program must not run
// on unrecorded as an orphan, filling a board nobody drains. SIGTERM, SIGKILL after kStopGrace, reaped,
// and said on standard error, since the error that follows is about the file or the board. ERRATUM E135.
void stop_program(pid_t child, const std::string& name, const std::string& why) {
  std::fprintf(stderr, "kron record: stopping %s (pid %d) after an error: %s\n", name.c_str(), static_cast<int>(child),
               why.c_str());
  ::kill(child, SIGTERM);
  int status = 0;
  const auto give_up = std::chrono::steady_clock::now() + kStopGrace;
  pid_t got;
  while ((got = ::waitpid(child, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < give_up)
    ::usleep(10'000);
  if (got == 0) {
    std::fprintf(stderr, "kron record: %s (pid %d) did not end on SIGTERM: SIGKILL\n", name.c_str(),
                 static_cast<int>(child));
    ::kill(child, SIGKILL);
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The drain loop every live recording shares (kron record -- PROGRAM and kron record --board):
// Recorder::run (passes paced by how full the fullest lane was, `stop()` asked after each pass, then the
// final passes), with the progress line about every 250 ms.
void drain_until(Recorder& rec, const Progress& progress, std::chrono::steady_clock::time_point t0,
                 const std::function<bool()>& stop) {
  rec.run(stop, progress ? std::function<void()>([&] { progress(rec.records(), rec.bytes(), seconds_since(t0)); })
                         : std::function<void()>());
}

// After drain_until: withdraw as the board's drainer, complete the file, and the figures of both.
void finish_recording(BoardReader& reader, Recorder& rec, const tracefile::FileHeader& fh,
                      std::chrono::steady_clock::time_point t0, RecordResult& r,
                      std::span<const record::NameRecord> thread_names = {}) {
  reader.set_drainer(false);
  r.seconds = seconds_since(t0);
  rec.finish(fh, thread_names);
  r.records = rec.records();
  r.bytes = rec.bytes();
  r.file_bytes = rec.file_bytes();
  r.file_raw_bytes = rec.file_raw_bytes();
  r.late = rec.late();
  r.totals = rec.totals();
  r.clock_hz = reader.geo().clock_hz;
  r.problems = reader.problems();
  r.snapshots = rec.snapshots();
}

}  // namespace

namespace {
// ERRATUM E341: the program is found (as execvp() will look for it) before the board is made or the
// output touched, so that `kron record -o OLD -- typo` leaves OLD as it was.
void find_program(const std::string& name) {
  auto runnable = [](const std::string& p, int* err) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return *err = errno, false;
    if (S_ISDIR(st.st_mode)) return *err = EISDIR, false;
    if (::access(p.c_str(), X_OK) != 0) return *err = errno, false;
    return true;
  };
  int err = ENOENT;
  if (name.empty()) throw std::runtime_error("cannot run an empty program name");
  if (name.find('/') != std::string::npos) {
    if (!runnable(name, &err)) throw std::runtime_error("cannot run " + name + ": " + std::strerror(err));
    return;
  }
  const char* env = std::getenv("PATH");
  const std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";  // execvp's default, near enough
  int first = 0;  // a permission problem says more than "not found" (execvp reports EACCES too)
  for (std::size_t a = 0;;) {
    const std::size_t b = path.find(':', a);
    const std::string dir = path.substr(a, b == std::string::npos ? std::string::npos : b - a);
    if (runnable((dir.empty() ? "." : dir) + "/" + name, &err)) return;
    if (err == EACCES && !first) first = EACCES;
    if (b == std::string::npos) break;
    a = b + 1;
  }
  throw std::runtime_error("cannot run " + name + ": " + (first ? std::strerror(first) : "not found in PATH"));
}
}  // namespace

namespace {
// ERRATUM E341: an output that cannot be written is refused before the program starts, and the output is
// neither created nor emptied until the program runs (its exec succeeded, --sched is recording): every
// failure before that leaves an OLD file as it was. An output another kron is writing (it holds the trace
// file's lock, E129) is refused here too, so that the program does not run for nothing; the writer checks
// again when it takes the lock.
void check_output(const std::string& path) {
  if (path.empty()) throw std::runtime_error("the output file name is empty (-o)");
  struct stat st {};
  auto refuse = [&](const char* what) { return std::runtime_error(path + ": " + what + ": " + std::strerror(errno)); };
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return;  // a device or FIFO: the trace file's writer says what it makes of it
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);  // no O_TRUNC: only a check
    if (fd < 0) throw refuse("cannot write the trace file");
    const bool busy = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);  // (and the lock with it)
    if (busy) throw tracefile::another_writer_error(path);
    return;
  }
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) throw refuse("cannot create the trace file");
}

// RecordOptions::program_output opened for the child: {/dev/null for its input, the file for its output},
// close-on-exec (the child's dup2 copies are not); {-1, -1} when the program keeps the terminal.
std::array<int, 2> program_io(const std::string& path) {
  if (path.empty()) return {-1, -1};
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (in < 0 || out < 0) {
    const int e = errno;
    if (in >= 0) ::close(in);
    if (out >= 0) ::close(out);
    throw std::runtime_error("cannot open " + path + " for the program's output: " + std::strerror(e));
  }
  return {in, out};
}
struct ProgramIo {
  std::array<int, 2> fd;
  void close() {
    for (int& f : fd)
      if (f >= 0) ::close(f), f = -1;
  }
  ~ProgramIo() { close(); }
};

// The program, started: forked, its --sched recording set up, and exec'd. A failure anywhere here ends
// the child and throws, with nothing written.
struct Started {
  pid_t child = 0;
  std::unique_ptr<SchedRecorder> sched;
};

[[noreturn]] void child_exec(const RecordOptions& o, pid_t parent, const sigset_t& before, int gate, int exec_fd,
                             const ProgramIo& io) {
  // The program ends with kron record however kron record ends, SIGKILL included (ERRATUM E135).
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(127);  // kron record already gone
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (gate >= 0) {
    char go = 0;
    while (::read(gate, &go, 1) < 0 && errno == EINTR) {}
    if (go != 1) ::_exit(127);  // kron record could not record the switches: it says why
  }
  if (io.fd[0] >= 0 && (::dup2(io.fd[0], 0) < 0 || ::dup2(io.fd[1], 1) < 0 || ::dup2(io.fd[1], 2) < 0)) ::_exit(127);
  ::setenv(board::kEnvBoard, o.board.name.c_str(), 1);
  ::setenv(board::kEnvNode, std::to_string(o.board.node).c_str(), 1);
  for (const auto& [name, value] : o.program_env) ::setenv(name.c_str(), value.c_str(), 1);
  std::vector<char*> argv;
  for (const auto& p : o.program) argv.push_back(const_cast<char*>(p.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  const int e = errno;  // the parent reads it from the close-on-exec pipe and says why
  if (::write(exec_fd, &e, sizeof e) != static_cast<ssize_t>(sizeof e)) {}
  ::_exit(127);
}

Started start_program(const RecordOptions& o, const tracefile::FileHeader& fh, const sigset_t& forwarded) {
  sigset_t before;
  ::pthread_sigmask(SIG_BLOCK, &forwarded, &before);
  const pid_t parent = ::getpid();
  auto fail = [&](const std::string& what) {
    const int e = errno;
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    return std::runtime_error(what + " failed: " + std::strerror(e));
  };
  // --sched: the program waits at this pipe until its context switches are being recorded.
  int gate[2] = {-1, -1}, exec_pipe[2] = {-1, -1};
  if (o.sched && ::pipe2(gate, O_CLOEXEC) != 0) throw fail("pipe");
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) throw fail("pipe");
  ProgramIo io{program_io(o.program_output)};  // before fork: its errors are ours to say
  Started s;
  s.child = ::fork();
  if (s.child < 0) throw fail("fork");
  if (s.child == 0) {
    if (gate[1] >= 0) ::close(gate[1]);
    ::close(exec_pipe[0]);
    child_exec(o, parent, before, gate[0], exec_pipe[1], io);
  }
  ::close(exec_pipe[1]);
  io.close();
  g_child = s.child;
  g_forwarded = 0;
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);  // a signal that came meanwhile is forwarded now
  auto reap = [&] {
    int status = 0;
    while (::waitpid(s.child, &status, 0) < 0 && errno == EINTR) {}
    g_child = 0;
    ::close(exec_pipe[0]);
  };
  if (o.sched) {
    ::close(gate[0]);
    std::string why;
    s.sched = SchedRecorder::open(s.child, o.board.node, tracefile::time_source(fh), &why);
    if (!s.sched) {  // the program never ran: closing the gate ends it
      ::close(gate[1]);
      reap();
      throw InputError::at_offset("--sched", 0, why);
    }
    const std::string& prog = o.program[0];  // the name it is exec'd under: its comm, where perf gives none
    const std::size_t slash = prog.rfind('/');
    s.sched->note_comm(static_cast<std::uint32_t>(s.child), static_cast<std::uint32_t>(s.child),
                       slash == std::string::npos ? prog : prog.substr(slash + 1));
    const char go = 1;
    if (::write(gate[1], &go, 1) != 1) {}
    ::close(gate[1]);
  }
  int exec_errno = 0;  // end of file: the exec succeeded and closed the pipe
  ssize_t n;
  while ((n = ::read(exec_pipe[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {}
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    reap();
    throw std::runtime_error("cannot run " + o.program[0] + ": " + std::strerror(exec_errno));
  }
  ::close(exec_pipe[0]);
  return s;
}
}  // namespace

RecordResult record_program(const RecordOptions& o, const Progress& progress) {
  if (o.program.empty()) throw std::runtime_error("no program to record");
  find_program(o.program[0]);
  check_output(o.output);
  std::string err, note;
  board::Mapping created = board::Mapping::create(o.board, &err, &note);
  if (!created) throw std::runtime_error(err);
  created = board::Mapping{};
  BoardReader reader = BoardReader::open(o.board.name);
  struct Unlink {
    std::string name;
    ~Unlink() {
      std::string e;
      board::unlink(name, &e);
    }
  } unlink_at_end{o.board.name};
  const DrainLock lock = DrainLock::take(o.board.name);  // one drainer per board (kron record --board)

  tracefile::FileHeader fh = reader.file_header();
  const std::string command = text::shell_command(o.program);  // as typed: each word shell-quoted where needed
  tracefile::set_program(fh, command);
  reader.set_program(command);  // for kron rdsample --board on this board
  reader.set_drainer(true);
  if (o.mpi_world_size) {
    fh.mpi_rank = o.mpi_rank;
    fh.mpi_world_size = o.mpi_world_size;
  }

  struct sigaction sa {};
  sa.sa_handler = forward;
  for (int sig : kForwarded) sigaction(sig, &sa, nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  Started started = start_program(o, fh, forwarded_set());
  const pid_t child = started.child;
  RecordResult r;
  r.board_note = note;
  bool reaped = false;
  std::optional<tracefile::Writer> writer;
  std::optional<Recorder> rec;
  std::vector<record::NameRecord> kernel_names;  // the threads' names from the kernel (--sched)
  try {
    // The program runs: now the output is created (or emptied), and the board drained into it.
    writer.emplace(o.output, fh, o.compress_level, o.compress_threads);
    rec.emplace(reader, *writer, static_cast<std::uint64_t>(o.hold_ms * 1e-3 * double(reader.geo().clock_hz)));
    rec->set_snapshot_interval(std::chrono::milliseconds(static_cast<std::int64_t>(o.snapshot_interval_s * 1e3)));
    if (o.tap) rec->set_tap(o.tap);
    const auto& sched = started.sched;
    const Progress watched = !o.watch ? progress : [&](std::uint64_t n, std::uint64_t b, double secs) {
      if (progress) progress(n, b, secs);
      o.watch(reader, false);
    };
    std::optional<std::chrono::steady_clock::time_point> asked;  // when a forwarded signal was first seen
    bool killed = false;
    drain_until(*rec, watched, t0, [&] {
      if (sched) sched->poll();
      if (o.stop_grace_s >= 0 && g_forwarded && !killed) {
        const auto now = std::chrono::steady_clock::now();
        if (!asked) asked = now;
        if (std::chrono::duration<double>(now - *asked).count() >= o.stop_grace_s) killed = ::kill(child, SIGKILL) == 0;
      }
      return reaped = ::waitpid(child, &r.wait_status, WNOHANG) == child;
    });
    if (o.watch) o.watch(reader, true);
    if (sched) {
      sched->poll();
      r.sched_lost = sched->lost();
      reader.close_time_base(fh);  // the end anchor first: the switches convert between the two (E305)
      const auto switches = sched->take_sorted(fh);
      r.sched_switches = switches.size();
      writer->append_sched(switches);
      kernel_names = sched->thread_names();
    }
  } catch (const std::exception& e) {
    g_child = 0;
    if (!reaped) stop_program(child, o.program[0], e.what());  // (the final passes come after the program ended)
    throw;  // the writer's destructor leaves the file marked incomplete, with every record written so far
  }
  g_child = 0;
  if (o.before_finish) o.before_finish(fh, *writer, kernel_names, r.wait_status);
  finish_recording(reader, *rec, fh, t0, r, kernel_names);
  return r;
}

namespace {
// One piece of records in time order, walked by a cursor: the piece itself where its records are in time
// order already (each lane's are, as its thread wrote them), else a stable-sorted index of it (16 bytes a
// record, for that piece alone). A piece in a file and in order is read a window at a time (`fd`).
struct Run {
  const std::uint8_t *at = nullptr, *end = nullptr;                  // a piece in order, or its window
  std::vector<std::pair<std::uint64_t, const std::uint8_t*>> index;  // or its sorted index
  std::size_t next = 0;
  int fd = -1;  // the file the window is read from, [pos, stop) of it still to read
  std::uint64_t pos = 0, stop = 0;
  std::vector<std::uint8_t> window;
  const std::uint8_t* current() const { return index.empty() ? at : index[next].second; }
  bool done() const { return index.empty() ? at >= end : next >= index.size(); }
  void advance() {
    if (!index.empty()) {
      ++next;
      return;
    }
    at += record::size_at(at);
    if (fd >= 0) fill();
  }
  // Keeps a whole record at `at` while the file has more: what is left of the window moves to its start,
  // the rest of the window is read from the file.
  void fill() {
    const std::size_t have = static_cast<std::size_t>(end - at);
    if ((have >= sizeof(std::uint64_t) && have >= record::size_at(at)) || pos >= stop) return;
    std::memmove(window.data(), at, have);
    std::size_t got = have;
    while (got < window.size() && pos < stop) {
      const ssize_t n = ::pread(fd, window.data() + got, std::min<std::uint64_t>(window.size() - got, stop - pos),
                                static_cast<off_t>(pos));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw std::runtime_error(std::string("cannot read back the spill file of the board's records: ") +
                                 (n < 0 ? std::strerror(errno) : "it is shorter than written"));
      got += static_cast<std::size_t>(n);
      pos += static_cast<std::uint64_t>(n);
    }
    at = window.data();
    end = window.data() + got;
  }
  void rewind(std::uint64_t from) {
    pos = from;
    at = end = window.data();
    fill();
  }
};

// `piece`, read through `file` (a window of `window` bytes) where given, else in memory.
Run make_run(std::span<const std::uint8_t> piece, std::uint64_t* count, const PiecesFile* file, std::size_t window) {
  Run run;
  run.at = piece.data();
  run.end = piece.data() + piece.size();
  const std::uint64_t offset = file ? static_cast<std::uint64_t>(piece.data() - file->base) : 0;
  if (file) {
    run.fd = file->fd;
    run.stop = offset + piece.size();
    run.window.resize(window);
    run.rewind(offset);
  }
  bool ordered = true;
  std::uint64_t last = 0, n = 0;
  for (; !run.done(); run.advance(), ++n) {
    const std::uint64_t t = record::timestamp_at(run.at);
    ordered &= t >= last;
    last = t;
  }
  *count += n;
  if (ordered) {
    if (file)
      run.rewind(offset);
    else
      run.at = piece.data();
    return run;
  }
  // Out of order (never seen from a thread's own clock): sorted through an index, read through the map.
  run = Run{};
  run.index.reserve(n);
  for (const std::uint8_t* p = piece.data(); p < piece.data() + piece.size(); p += record::size_at(p))
    run.index.emplace_back(record::timestamp_at(p), p);
  std::stable_sort(run.index.begin(), run.index.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  return run;
}
}  // namespace

std::uint64_t write_in_time_order(tracefile::Writer& w, std::span<const std::span<const std::uint8_t>> pieces,
                                  std::uint64_t start, std::uint64_t end, std::uint64_t* held, const PiecesFile* file) {
  // A merge of the pieces' runs by timestamp; equal timestamps in piece order, then in their order within
  // a piece, which is what a stable sort of all the pieces one after the other gives. No index of every
  // record: a board holds more than 4 GiB of records (64-bit positions throughout). Read from a file, the
  // runs' windows are 8 MiB in all, 64 KiB a run beyond 128 runs, however large the pieces (ERRATUM E348).
  const std::size_t window = std::max<std::size_t>(64u << 10, (8u << 20) / std::max<std::size_t>(pieces.size(), 1));
  std::vector<Run> runs;
  runs.reserve(pieces.size());
  std::uint64_t count = 0;
  for (const auto& piece : pieces) runs.push_back(make_run(piece, &count, file, window));
  if (held) *held = count;
  using Head = std::pair<std::uint64_t, std::size_t>;  // (timestamp, run): the smallest first
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  for (std::size_t k = 0; k < runs.size(); ++k)
    if (!runs[k].done()) heads.emplace(record::timestamp_at(runs[k].current()), k);
  std::uint64_t i = 0, written = 0;
  for (; !heads.empty() && i < end; ++i) {
    Run& run = runs[heads.top().second];
    const std::size_t k = heads.top().second;
    heads.pop();
    const std::uint8_t* rec = run.current();
    if (i >= start) {
      w.append_records(std::span<const std::uint8_t>(rec, record::size_at(rec)), 1);
      ++written;
    }
    run.advance();
    if (!run.done()) heads.emplace(record::timestamp_at(run.current()), k);
  }
  return written;
}

namespace {
// The snapshot's lanes, spilled to an unnamed file beside the output a piece at a time as the reader passes
// over each: the memory of `kron rdsample --board` is a piece of a lane, then the merge's windows over the
// file, whatever the board's size (ERRATUM E348).
class Spill {
 public:
  explicit Spill(const std::string& output) {
    const std::size_t slash = output.rfind('/');
    dir_ = slash == std::string::npos ? "." : slash == 0 ? "/" : output.substr(0, slash);
    fd_ = ::open(dir_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd_ < 0) {  // a file system without O_TMPFILE: a named one, unlinked at once
      std::string name = dir_ + "/.kron-rdsample-XXXXXX";
      fd_ = ::mkostemp(name.data(), O_CLOEXEC);
      if (fd_ < 0) throw fail("cannot create a spill file");
      ::unlink(name.c_str());
    }
  }
  Spill(const Spill&) = delete;
  Spill& operator=(const Spill&) = delete;
  ~Spill() {
    if (map_) ::munmap(map_, size_);
    ::close(fd_);
  }
  // Records of lane `lane`: a lane's pieces, handed one after the other, make one run.
  void append(std::uint32_t lane, std::span<const std::uint8_t> recs) {
    for (std::size_t done = 0; done < recs.size();) {
      const ssize_t n = ::write(fd_, recs.data() + done, recs.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw fail("cannot write the spill file");
      done += static_cast<std::size_t>(n);
    }
    if (pieces_.empty() || lane != lane_)
      pieces_.push_back({size_, recs.size()});
    else
      pieces_.back().second += recs.size();
    lane_ = lane;
    size_ += recs.size();
  }
  // Where the pieces lie: read from the file (the mapping serves a piece out of order, sorted by index).
  PiecesFile file() const { return {fd_, static_cast<const std::uint8_t*>(map_)}; }
  // The lanes' records, mapped back: one piece a lane.
  std::vector<std::span<const std::uint8_t>> pieces() {
    std::vector<std::span<const std::uint8_t>> out;
    if (size_ == 0) return out;
    void* m = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_, 0);
    if (m == MAP_FAILED) throw fail("cannot map the spill file");
    map_ = m;
    for (const auto& [off, n] : pieces_) out.emplace_back(static_cast<const std::uint8_t*>(map_) + off, n);
    return out;
  }

 private:
  std::runtime_error fail(const std::string& what) const {
    return std::runtime_error(dir_ + ": " + what +
                              " (the board's records are merged through it): " + std::strerror(errno));
  }
  std::string dir_;
  int fd_ = -1;
  void* map_ = nullptr;
  std::uint64_t size_ = 0;
  std::uint32_t lane_ = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pieces_;
};
}  // namespace

SnapshotResult snapshot_to_file(BoardReader& r, const std::string& file, const SnapshotOptions& o) {
  Spill spill(file);
  // The pass gives back the board's pages it has read as it goes: rdsample's memory does not grow with the
  // board (ERRATUM E348).
  r.drop_pages_behind(true);
  std::optional<LaneView> lane;  // the lane being spilled, and its records so far (-v: a line a lane)
  std::uint64_t lane_records = 0;
  auto lane_done = [&] {
    if (lane && o.on_lane) o.on_lane(*lane, lane_records);
  };
  const std::vector<LaneView> lanes = r.snapshot(
      [&](const LaneView& v, std::span<const std::uint8_t> recs, std::uint64_t n) {
        if (!lane || lane->index != v.index) lane_done(), lane = v, lane_records = 0;
        lane_records += n;
        spill.append(v.index, recs);
      },
      std::max<std::uint64_t>(o.piece_bytes, 1));
  lane_done();
  const std::vector<std::span<const std::uint8_t>> pieces = spill.pieces();
  tracefile::FileHeader fh = r.file_header();
  tracefile::set_program(fh, o.program);
  tracefile::Writer w(file, fh);
  SnapshotResult res;
  const PiecesFile in_file = spill.file();
  res.written = write_in_time_order(w, pieces, o.start, o.end, &res.held, &in_file);
  res.totals = r.totals(lanes);  // the figures of the pass that took the records: the file adds up
  fill_totals(fh, res.totals);
  std::uint64_t bad = 0;
  const auto names = r.names(&fh.names_lost, &bad);
  fh.names_lost += bad;
  std::vector<std::string> problems;
  append_board_stats(w, r, &fh, &problems);  // the histograms and counters, also of a killed program
  w.finish(fh, BoardReader::lane_entries(lanes), names);
  res.problems = r.problems();
  res.problems.insert(res.problems.end(), problems.begin(), problems.end());
  return res;
}

// ---- kron record --board ----------------------------------------------------------------------------------

DrainLock DrainLock::take(const std::string& name) {
  const std::string shm = board::board_path(name);
  const int fd = ::open(shm.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);  // children never hold it
  if (fd < 0)
    throw std::runtime_error("board " + name + ": cannot open " + shm + " to lock it: " + std::strerror(errno));
  auto busy = [&](pid_t pid) {
    ::close(fd);
    return std::runtime_error("board " + name + " is already being drained by " +
                              (pid > 0 ? "pid " + std::to_string(pid) : std::string("another process")) +
                              " (one drainer per board: stop that kron record first)");
  };
  struct flock l {};
  l.l_type = F_WRLCK, l.l_whence = SEEK_SET, l.l_start = 0, l.l_len = 1;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (::fcntl(fd, F_SETLK, &l) == 0) return DrainLock(fd);
    if (errno != EACCES && errno != EAGAIN) {
      const int e = errno;
      ::close(fd);
      throw std::runtime_error("board " + name + ": cannot lock " + shm + ": " + std::strerror(e));
    }
    struct flock q = l;
    if (::fcntl(fd, F_GETLK, &q) == 0 && q.l_type != F_UNLCK) throw busy(q.l_pid);
    // The holder let go between the two calls: try again.
  }
  throw busy(0);
}

DrainLock::~DrainLock() {
  if (fd_ >= 0) ::close(fd_);  // drops the lock
}

namespace {

volatile sig_atomic_t g_stop = 0;
void note_stop(int sig) { g_stop = sig; }

bool process_alive(std::uint32_t pid) { return pid && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

// Whether a process other than this one maps `path` (/proc/PID/maps): every program that attached to a
// board keeps it mapped until it ends (src/probe/probe.cpp), whether or not its threads hold lanes now.
bool mapped_elsewhere(const std::string& path) {
  DIR* d = ::opendir("/proc");
  if (!d) return false;
  const std::string self = std::to_string(::getpid());
  bool found = false;
  std::string line;
  while (!found) {
    const dirent* e = ::readdir(d);
    if (!e) break;
    if (e->d_name[0] < '1' || e->d_name[0] > '9' || self == e->d_name) continue;
    std::ifstream maps(std::string("/proc/") + e->d_name + "/maps");
    while (!found && std::getline(maps, line)) {
      const auto at = line.find(path);
      found = at != std::string::npos &&
              (at + path.size() == line.size() || line.compare(at + path.size(), 10, " (deleted)") == 0);
    }
  }
  ::closedir(d);
  return found;
}

// A writer is attached: the board's attaches moved since the last look, a lane is Active with a live
// owner, or some other process maps the board. ERRATUM E322: from board 2.3 the header's `attached` counts
// the processes attached now, but a process killed (or exec'd) never takes itself off, so a count above 0
// is checked against /proc; a count of 0 is trusted (every process that attached has said it left), which
// spares the walk over /proc. A 2.2 board's `attached` counts arrivals only (it never goes down).
std::uint32_t arrivals_of(const board::Mapping& m) {
  const board::BoardHeader& h = *m.header();
  return m.geometry().minor >= 3 ? h.arrivals.load(std::memory_order_relaxed)
                                 : h.attached.load(std::memory_order_relaxed);
}
bool writer_attached(const board::Mapping& m, std::uint32_t& arrivals_seen, const std::string& path) {
  const std::uint32_t a = arrivals_of(m);
  if (a != arrivals_seen) {
    arrivals_seen = a;
    return true;
  }
  for (std::uint32_t i = 0; i < m.lanes_in_use(); ++i) {
    const board::LaneHeader* L = m.lane(i);
    // Acquire: the owner's pid was written before the state was published.
    if (L->state.load(std::memory_order_acquire) == board::LaneState::Active && process_alive(L->pid)) return true;
  }
  if (m.geometry().minor >= 3 && m.header()->attached.load(std::memory_order_relaxed) == 0) return false;
  return mapped_elsewhere(path);
}

}  // namespace

BoardRecordResult record_board(const BoardRecordOptions& o, const Progress& progress) {
  BoardReader reader = BoardReader::open(o.board);  // validates; InputError naming the board when refused
  const DrainLock lock = DrainLock::take(o.board);  // after the mapping: see DrainLock's caveat
  const std::uint32_t other = reader.header().drainer_pid.load(std::memory_order_relaxed);
  if (other && other != static_cast<std::uint32_t>(::getpid()) && process_alive(other))  // a drainer without the lock
    throw std::runtime_error("board " + o.board + " is already being drained by pid " + std::to_string(other) +
                             " (one drainer per board: stop that kron record first)");
  BoardRecordResult r;
  // Records earlier drainers took off the lanes: counted by the board as recorded, but not in this file.
  for (std::uint32_t i = 0; i < reader.mapping().lanes_in_use(); ++i)
    r.earlier += reader.mapping().lane(i)->drained.load(std::memory_order_relaxed);

  g_stop = 0;
  struct sigaction sa {};
  sa.sa_handler = note_stop;  // replaces the SIG_IGN a shell gives background jobs
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  {
    tracefile::FileHeader fh = reader.file_header();
    tracefile::set_program(fh, "kron record --board " + o.board);
    tracefile::Writer writer(o.output, fh, o.compress_level, o.compress_threads);
    Recorder rec(reader, writer, static_cast<std::uint64_t>(o.hold_ms * 1e-3 * double(reader.geo().clock_hz)));
    rec.set_snapshot_interval(std::chrono::milliseconds(static_cast<std::int64_t>(o.snapshot_interval_s * 1e3)));
    reader.set_drainer(true);

    const std::string path = board::board_path(o.board);
    std::uint32_t attached_seen = arrivals_of(reader.mapping());
    auto last_look = t0, last_writer = t0;
    drain_until(rec, progress, t0, [&] {
      if (g_stop) return true;
      if (o.until_idle_s < 0) return false;
      const auto now = std::chrono::steady_clock::now();
      if (now - last_look < std::chrono::milliseconds(50)) return false;
      last_look = now;
      if (writer_attached(reader.mapping(), attached_seen, path)) last_writer = now;
      return std::chrono::duration<double>(now - last_writer).count() >= o.until_idle_s;
    });
    finish_recording(reader, rec, fh, t0, r);
  }
  r.signal = g_stop;
  // finish() took the board's figures, in which `passed` also counts the records earlier drainers took
  // and the probes this drain did not see to their end (published after its last pass, or still being
  // written while the writers go on): those stay on the board for the next drainer or rdsample. The
  // file keeps its own identity: passed_filter = its samples + the board's overruns + overwritten.
  const Totals& t = r.totals;
  const std::uint64_t accounted = r.records + t.overruns + t.overwritten;
  const std::uint64_t fileable = t.passed > r.earlier ? t.passed - r.earlier : 0;
  r.left = fileable > accounted ? fileable - accounted : 0;
  if (r.earlier || r.left) {
    r.totals.passed = accounted;
    r.totals.recorded = r.records;
    const int fd = ::open(o.output.c_str(), O_RDWR | O_CLOEXEC);
    tracefile::FileHeader h{};
    if (fd < 0 || ::pread(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h) ||
        (h.passed_filter = accounted, ::pwrite(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h))) {
      const int e = errno;
      if (fd >= 0) ::close(fd);
      throw std::runtime_error(o.output + ": cannot update the header's passed_filter: " + std::strerror(e));
    }
    ::close(fd);
  }
  return r;
}

}  // namespace kron::recorder
