// kron record's run-and-drain loop and rdsample's snapshot (record_session.hpp).
#include "recorder/record_session.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
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
void forward(int sig) {
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

RecordResult record_program(const RecordOptions& o, const Progress& progress) {
  if (o.program.empty()) throw std::runtime_error("no program to record");
  find_program(o.program[0]);
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
  tracefile::Writer writer(o.output, fh, o.compress_level);
  Recorder rec(reader, writer, static_cast<std::uint64_t>(o.hold_ms * 1e-3 * double(reader.geo().clock_hz)));
  rec.set_snapshot_interval(std::chrono::milliseconds(static_cast<std::int64_t>(o.snapshot_interval_s * 1e3)));
  reader.set_drainer(true);

  struct sigaction sa {};
  sa.sa_handler = forward;
  for (int sig : kForwarded) sigaction(sig, &sa, nullptr);
  const sigset_t forwarded = forwarded_set();
  sigset_t before;
  ::pthread_sigmask(SIG_BLOCK, &forwarded, &before);
  const pid_t parent = ::getpid();
  const auto t0 = std::chrono::steady_clock::now();
  // --sched: the program waits at this pipe until its context switches are being recorded.
  int gate[2] = {-1, -1};
  if (o.sched && ::pipe2(gate, O_CLOEXEC) != 0) {
    const int e = errno;
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    throw std::runtime_error(std::string("pipe failed: ") + std::strerror(e));
  }
  const pid_t child = ::fork();
  if (child < 0) {
    const int e = errno;
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    throw std::runtime_error(std::string("fork failed: ") + std::strerror(e));
  }
  if (child == 0) {
    // The program ends with kron record however kron record ends, SIGKILL included (ERRATUM E135).
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // kron record already gone
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    if (gate[0] >= 0) {
      ::close(gate[1]);
      char go = 0;
      while (::read(gate[0], &go, 1) < 0 && errno == EINTR) {}
      if (go != 1) ::_exit(127);  // kron record could not record the switches: it says why
    }
    ::setenv(board::kEnvBoard, o.board.name.c_str(), 1);
    ::setenv(board::kEnvNode, std::to_string(o.board.node).c_str(), 1);
    std::vector<char*> argv;
    for (const auto& p : o.program) argv.push_back(const_cast<char*>(p.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "kron record: cannot run %s: %s\n", o.program[0].c_str(), std::strerror(errno));
    ::_exit(127);
  }
  g_child = child;
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);  // a signal that came meanwhile is forwarded now
  std::unique_ptr<SchedRecorder> sched;
  if (o.sched) {
    ::close(gate[0]);
    std::string why;
    sched = SchedRecorder::open(child, o.board.node, tracefile::time_source(fh), &why);
    if (!sched) {  // the program never ran: closing the gate ends it
      ::close(gate[1]);
      int status = 0;
      while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
      g_child = 0;
      throw InputError::at_offset("--sched", 0, why);
    }
    const std::string& prog = o.program[0];  // the name it is exec'd under: its comm, where perf gives none
    const std::size_t slash = prog.rfind('/');
    sched->note_comm(static_cast<std::uint32_t>(child), static_cast<std::uint32_t>(child),
                     slash == std::string::npos ? prog : prog.substr(slash + 1));
    const char go = 1;
    if (::write(gate[1], &go, 1) != 1) {}
    ::close(gate[1]);
  }
  RecordResult r;
  r.board_note = note;
  bool reaped = false;
  std::vector<record::NameRecord> kernel_names;  // the threads' names from the kernel (--sched)
  try {
    drain_until(rec, progress, t0, [&] {
      if (sched) sched->poll();
      return reaped = ::waitpid(child, &r.wait_status, WNOHANG) == child;
    });
    if (sched) {
      sched->poll();
      r.sched_lost = sched->lost();
      reader.close_time_base(fh);  // the end anchor first: the switches convert between the two (E305)
      const auto switches = sched->take_sorted(fh);
      r.sched_switches = switches.size();
      writer.append_sched(switches);
      kernel_names = sched->thread_names();
    }
  } catch (const std::exception& e) {
    g_child = 0;
    if (!reaped) stop_program(child, o.program[0], e.what());  // (the final passes come after the program ended)
    throw;  // the writer's destructor leaves the file marked incomplete, with every record written so far
  }
  g_child = 0;
  finish_recording(reader, rec, fh, t0, r, kernel_names);
  return r;
}

std::uint64_t write_in_time_order(tracefile::Writer& w, std::span<const std::span<const std::uint8_t>> pieces,
                                  std::uint64_t start, std::uint64_t end, std::uint64_t* held) {
  // (timestamp, record) per record: pointers into the pieces, never 32-bit offsets (issue 16: a board
  // holds more than 4 GiB of records, and nothing is copied to sort them).
  std::vector<std::pair<std::uint64_t, const std::uint8_t*>> index;
  for (const auto& piece : pieces)
    for (std::uint64_t off = 0; off < piece.size(); off += record::size_at(piece.data() + off))
      index.emplace_back(record::timestamp_at(piece.data() + off), piece.data() + off);
  std::stable_sort(index.begin(), index.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  if (held) *held = index.size();
  std::uint64_t written = 0;
  for (std::uint64_t i = start; i < std::min<std::uint64_t>(end, index.size()); ++i, ++written)
    w.append_records(std::span<const std::uint8_t>(index[i].second, record::size_at(index[i].second)), 1);
  return written;
}

SnapshotResult snapshot_to_file(BoardReader& r, const std::string& file, const SnapshotOptions& o) {
  // Each lane's records, in the reader's per-lane buffers: they stay valid until the next pass over that
  // lane, and a snapshot passes over each lane once. The reader validated every record's kind and size.
  std::vector<std::span<const std::uint8_t>> pieces;
  r.snapshot([&](const LaneView& v, std::span<const std::uint8_t> recs, std::uint64_t n) {
    if (o.on_lane) o.on_lane(v, n);
    pieces.push_back(recs);
  });
  tracefile::FileHeader fh = r.file_header();
  tracefile::set_program(fh, o.program);
  tracefile::Writer w(file, fh);
  SnapshotResult res;
  res.written = write_in_time_order(w, pieces, o.start, o.end, &res.held);
  res.totals = r.totals();
  fill_totals(fh, res.totals);
  std::uint64_t bad = 0;
  const auto names = r.names(&fh.names_lost, &bad);
  fh.names_lost += bad;
  std::vector<std::string> problems;
  append_board_stats(w, r, &fh, &problems);  // the histograms and counters, also of a killed program
  w.finish(fh, r.lane_entries(), names);
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
    tracefile::Writer writer(o.output, fh, o.compress_level);
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
