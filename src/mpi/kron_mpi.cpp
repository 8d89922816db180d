// libkron_mpi: records an MPI program rank by rank through the MPI profiling interface (PMPI). Two ways, both
// with nothing changed in the program (README "Record an MPI job"):
//
//   mpirun -np 4 kron record --mpi -o run -- ./app                        # run.rank-0.kron ... run.rank-3.kron
//   mpirun -np 4 -x LD_PRELOAD=libkron_mpi.so -x KRON_MPI_OUT=run ./app   # the same files, no kron process
//   mpiexec.hydra -np 4 -genv LD_PRELOAD libkron_mpi_mpich.so -genv KRON_MPI_OUT run ./app   # MPICH (E436)
//   kron merge run.rank-*.kron -o run.kron                                # one timeline
//
// Under kron record --mpi (ERRATUM E440) kron record made the rank's board (node number = its rank, so that
// sources "node.process" tell the ranks apart, ERRATUM E201), runs the program on it with this library
// preloaded, and drains the board into the rank's file; this library's probe and the program's own write
// to it. Recording on its own, this library makes the board itself: at load, when the launcher named the
// rank (ERRATUM E442), so that the program's own probes attach to it too, else at MPI_Init; and drains it
// from a thread of its own into OUT.rank-N.kron (the recorder of `kron record`, in process). Every wrapped
// call is a named scope on that board ("MPI_Send" begin and end: Trace samples); a call that moves a message,
// or a collective, is also one MpiRecord (kind 8: peer, tag, communicator, size, begin and completion)
// published in the side area the moment it completes (a non-blocking one when it is posted, then completed
// in place), so that a rank killed by SIGKILL or MPI_Abort keeps them (ERRATA E202, E440, E441). Clock
// offsets to rank 0 are measured at MPI_Init, at MPI_Finalize and every KRON_MPI_SYNC_S seconds at a
// collective on MPI_COMM_WORLD (ERRATUM E204) and kept there too as ClockOffsetRecords (kind 9). The header
// carries the rank, the world's size and how the rank ended; the name section the node's name
// (NameKind::Node).
//
// Settings (environment): KRON_MPI_OUT (file prefix, default "kron-mpi"; kron record --mpi: -o), KRON_MPI_SYNC_S
// (seconds between clock measurements, 0 = only at Init and Finalize, at most 86400), KRON_MPI_PINGS
// (ping-pongs per measurement, 10, 1-1000): rank 0's two decide for every rank (ERRATUM E345);
// KRON_MPI_BOARD_MB (board size, 16, 1-65536; the board is kron-mpi-PID-RANDOM, ERRATUM E343; kron record
// --mpi: --buffer), KRON_MPI_TEST_CLOCK_FAULT (test only: "OFFSET_NS:DRIFT_PPM,..." one pair per rank, added
// to every timestamp this rank records, ERRATUM E207), KRON_MPI_TEST_SLOW_PINGS (test only: rank 0 answers
// every second ping-pong of a measurement that many milliseconds late, 0-1000, E207). KRON_MPI_SIDE is kron
// record's, never the user's.
//
// Uses only the MPI standard's C bindings, built once per MPI library (libkron_mpi.so for Open MPI,
// libkron_mpi_mpich.so for MPICH: their ABIs differ). Recorded: point-to-point calls (blocking, non-blocking
// and persistent, matched probes' receives), their completions, the blocking, `v` and non-blocking
// collectives. Not recorded (ERRATUM E209): the Fortran bindings, one-sided and I/O calls, neighbourhood and
// persistent collectives, communicators other than through their group (see E203).
#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "kron/board.hpp"
#include "kron/board_ops.hpp"
#include "kron/format/trace_file.hpp"
#include "kron/kron.hpp"
#include "recorder/board_reader.hpp"
#include "recorder/mpi_side.hpp"
#include "kron/process_attach.hpp"
#include "recorder/recorder.hpp"

// ERRATUM E322: the program's copy of the probe and this library's count the process once in `attached`.
KRON_DEFINE_PROCESS_ATTACH();

namespace kron::mpi {
namespace {

using record::ClockOffsetRecord;
using record::MpiCall;
using record::MpiRecord;

// ---- Settings ------------------------------------------------------------------------------------------
std::string env_or(const char* name, const char* dflt) {
  const char* v = std::getenv(name);
  return v && *v ? v : dflt;
}

// ERRATUM E207: the test-only clock fault. t' = t + offset + drift * (t - origin), origin the rank's clock
// at MPI_Init before the fault (its file's start_ticks is origin + offset): strictly increasing for
// |drift| < 1, so each rank's order is kept.
struct Fault {
  bool on = false;
  double offset_ticks = 0, drift = 0;
  std::uint64_t origin = 0;
  std::uint64_t operator()(std::uint64_t t) const {
    if (!on) return t;
    const double d = double(std::int64_t(t - origin)) * drift + offset_ticks;
    return t + static_cast<std::uint64_t>(static_cast<std::int64_t>(std::llround(d)));
  }
};

// The fault of `rank` from "OFF_NS:PPM,OFF_NS:PPM,...": the rank-th pair (none past the list's end).
bool parse_fault(const std::string& s, int rank, double& off_ns, double& ppm) {
  std::size_t at = 0;
  for (int i = 0; i < rank; ++i) {
    at = s.find(',', at);
    if (at == std::string::npos) return false;
    ++at;
  }
  char* end = nullptr;
  off_ns = std::strtod(s.c_str() + at, &end);
  if (*end != ':') return false;
  ppm = std::strtod(end + 1, &end);
  return *end == 0 || *end == ',';
}

// ---- State of this rank -----------------------------------------------------------------------------
struct CommInfo {
  std::uint32_t id = 0;
  std::vector<int> world;  // world rank of each member
  std::uint32_t seq = 0;   // collectives called on it so far
};

struct Rank {
  bool on = false;
  pid_t pid = 0;  // the process that called MPI_Init (a forked child that exits finishes nothing)
  // ERRATUM E440: kron record --mpi runs this rank: its board (KRON_BOARD) is drained by kron record, which
  // also reads the side area after the program ended, however it ended. Otherwise this library records on
  // its own: a board it made (at load when the launcher named the rank, else at MPI_Init) drained by a thread
  // of its own, and an anonymous side area read at MPI_Finalize.
  bool under_record = false;
  int rank = 0, size = 1;
  std::string node, out, board;
  std::unique_ptr<recorder::BoardReader> reader;
  std::unique_ptr<tracefile::Writer> writer;
  std::unique_ptr<recorder::Recorder> rec;
  tracefile::FileHeader fh{};
  std::thread drainer;
  std::atomic<bool> stop{false};
  Fault fault;
  std::mutex mu;  // what follows: MPI_THREAD_MULTIPLE programs call from several threads
  // Every MPI call's record and clock measurement, published as it exists (ERRATUM E440).
  recorder::mpiside::Writer side;
  bool side_full = false;
  // Posted, not yet completed: the slots of their records (published with kMpiIncomplete). ERRATUM E202: an
  // MPI library may hand out one handle for several requests at once (Open MPI gives eagerly completed sends
  // a shared one): each handle keeps its slots in posting order, and each completion of that handle takes
  // the oldest.
  std::unordered_map<MPI_Request, std::deque<std::uint64_t>> pending;
  // Persistent requests (MPI_Send_init, MPI_Recv_init, ...): each handle's record, posted anew by every
  // MPI_Start (the handle stays valid after its completion), dropped at MPI_Request_free.
  std::unordered_map<MPI_Request, MpiRecord> persistent;
  // Messages matched by MPI_Mprobe/MPI_Improbe, not yet received: the communicator each came on (an
  // MPI_Message does not say, and MPI_Mrecv needs it to translate the status's source).
  std::unordered_map<MPI_Message, MPI_Comm> messages;
  std::unordered_map<MPI_Comm, CommInfo> comms;
  MPI_Comm sync_comm = MPI_COMM_NULL;
  double sync_s = 0;
  int pings = 10;
  int slow_ping_ms = 0;  // ERRATUM E207, test only
  std::chrono::steady_clock::time_point last_sync;
};
Rank* g = nullptr;  // set by MPI_Init when recording is on

std::uint64_t now() { return g->fault(kron::detail::now()); }

// The board this library made at load, before MPI_Init (ERRATUM E440): its name, node and the launcher's rank.
// A plain array, not a std::string: the load-time constructor may run before this file's dynamic
// initialisation, which would then empty it.
struct Early {
  char board[64];
  std::uint32_t node;
  int rank;
};
Early g_early{};  // constant-initialised: zeros before any code runs
// Its reader, opened as it was made: the board is this process's through the mapping whatever becomes of its
// name (a process this one starts before MPI_Init removes the name, ERRATUM E440). Set at load.
recorder::BoardReader* g_early_reader = nullptr;
// getpid() and gettid() are system calls (glibc caches neither): taken once, per process and per thread.
std::uint32_t source_of() {
  static const std::uint32_t source =
      board::source_id(!g_early.board[0] ? static_cast<std::uint32_t>(g->rank) & 1023u : g_early.node,
                       static_cast<std::uint32_t>(::getpid()));
  return source;
}
std::uint32_t thread_id() {
  static thread_local const std::uint32_t tid = static_cast<std::uint32_t>(::gettid());
  return tid;
}

// ERRATUM E203: a communicator's id is a hash of its members' world ranks (FNV-1a), equal on every member
// without any communication; MPI_COMM_WORLD is 0. Two communicators of the same members (a dup) share it.
CommInfo& comm_info(MPI_Comm comm) {
  auto it = g->comms.find(comm);
  if (it != g->comms.end()) return it->second;
  CommInfo c;
  int n = 0;
  PMPI_Comm_size(comm, &n);
  c.world.resize(static_cast<std::size_t>(n));
  if (comm == MPI_COMM_WORLD) {
    for (int i = 0; i < n; ++i) c.world[static_cast<std::size_t>(i)] = i;
  } else {
    MPI_Group wg, cg;
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Comm_group(comm, &cg);
    std::vector<int> ranks(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) ranks[static_cast<std::size_t>(i)] = i;
    PMPI_Group_translate_ranks(cg, n, ranks.data(), wg, c.world.data());
    PMPI_Group_free(&cg);
    PMPI_Group_free(&wg);
    std::uint32_t h = 2166136261u;
    for (int w : c.world)
      for (int b = 0; b < 4; ++b) h = (h ^ ((static_cast<std::uint32_t>(w) >> (8 * b)) & 0xffu)) * 16777619u;
    c.id = h ? h : 1;
  }
  return g->comms.emplace(comm, std::move(c)).first->second;
}

int world_of(CommInfo& c, int r) {
  return r >= 0 && static_cast<std::size_t>(r) < c.world.size() ? c.world[static_cast<std::size_t>(r)] : -1;
}

std::uint64_t type_bytes(int count, MPI_Datatype t) {
  int sz = 0;
  if (count <= 0 || PMPI_Type_size(t, &sz) != MPI_SUCCESS || sz < 0) return 0;
  return std::uint64_t(count) * std::uint64_t(sz);
}

MpiRecord make(MpiCall call, std::uint64_t t0, MPI_Comm comm, int peer_comm_rank, int tag, std::uint64_t bytes) {
  MpiRecord m{};
  m.h.kind = record::RecordKind::Mpi;
  m.h.size = sizeof(MpiRecord);
  m.h.group = 0xff;
  const int cpu = ::sched_getcpu();
  m.h.cpu = static_cast<std::uint16_t>(cpu < 0 ? 0 : cpu);
  m.source = source_of();
  m.thread = thread_id();
  m.timestamp = t0;
  m.end = t0;
  m.bytes = bytes;
  CommInfo& c = comm_info(comm);
  m.comm = c.id;
  m.comm_size = static_cast<std::uint32_t>(c.world.size());
  m.peer = peer_comm_rank >= 0 ? world_of(c, peer_comm_rank) : -1;
  m.tag = tag;
  m.rank = static_cast<std::uint32_t>(g->rank);
  m.call = call;
  return m;
}

// Publishes a record in the side area (ERRATUM E440): its slot, or -1. A memory that cannot grow ends the
// rank's MPI records there, said once (what was published stays); the samples go on.
std::int64_t publish(const void* rec, std::size_t bytes) {
  if (!g->side || g->side_full) return -1;
  try {
    return static_cast<std::int64_t>(g->side.append(rec, bytes));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libkron_mpi: rank %d: %s: no more MPI records are kept\n", g->rank, e.what());
    g->side_full = true;
    return -1;
  }
}

// A finished call's record.
void keep(const MpiRecord& m) { publish(&m, sizeof m); }

// A non-blocking request's record, published at its posting flagged incomplete, its slot kept until a Wait
// or Test completes it (completed()): a rank that never gets there leaves it flagged.
void post(MPI_Request req, MpiRecord m) {
  m.h.flags |= record::kMpiIncomplete;
  if (const std::int64_t i = publish(&m, sizeof m); i >= 0) g->pending[req].push_back(static_cast<std::uint64_t>(i));
}

// The bytes of `n` counts (a `v` collective's per-member counts) of type `t`.
std::uint64_t counts_bytes(const int* counts, int n, MPI_Datatype t) {
  std::uint64_t b = 0;
  for (int i = 0; counts && i < n; ++i) b += type_bytes(counts[i], t);
  return b;
}

int members(MPI_Comm comm) { return static_cast<int>(comm_info(comm).world.size()); }

// A completed receive: the source, tag and size are the status's (MPI_ANY_SOURCE, MPI_ANY_TAG).
void fill_recv(MpiRecord& m, const MPI_Status& st, MPI_Comm comm) {
  CommInfo& c = comm_info(comm);
  m.peer = world_of(c, st.MPI_SOURCE);
  m.tag = st.MPI_TAG;
  int n = 0;
  if (PMPI_Get_count(&st, MPI_BYTE, &n) == MPI_SUCCESS && n != MPI_UNDEFINED && n >= 0) m.bytes = std::uint64_t(n);
}

// ---- Clock offsets (ERRATUM E204) --------------------------------------------------------------------
// Rank 0 answers `pings` ping-pongs of every other rank in turn; each rank keeps the exchange with the
// smallest round trip: rank 0's clock read `reference` at about this rank's midpoint, within rtt / 2.
void measure_offsets() {
  constexpr int kTag = 0x6b72;  // on the private duplicate of MPI_COMM_WORLD: no program message meets it
  ClockOffsetRecord r{};
  r.h.kind = record::RecordKind::ClockOffset;
  r.h.size = sizeof(ClockOffsetRecord);
  r.h.group = 0xff;
  r.rank = static_cast<std::uint32_t>(g->rank);
  r.reference_rank = 0;
  if (g->rank == 0) {
    for (int peer = 1; peer < g->size; ++peer)
      for (int k = 0; k < g->pings; ++k) {
        char ping = 0;
        PMPI_Recv(&ping, 1, MPI_CHAR, peer, kTag, g->sync_comm, MPI_STATUS_IGNORE);
        if (g->slow_ping_ms && k % 2) std::this_thread::sleep_for(std::chrono::milliseconds(g->slow_ping_ms));
        const std::uint64_t t = now();
        PMPI_Send(&t, 1, MPI_UINT64_T, peer, kTag, g->sync_comm);
      }
    r.timestamp = r.reference = now();
    r.rtt = 0;
    r.exchanges = 0;
  } else {
    std::uint64_t best = ~std::uint64_t{0};
    for (int k = 0; k < g->pings; ++k) {
      char ping = 0;
      std::uint64_t ref = 0;
      const std::uint64_t t1 = now();
      PMPI_Send(&ping, 1, MPI_CHAR, 0, kTag, g->sync_comm);
      PMPI_Recv(&ref, 1, MPI_UINT64_T, 0, kTag, g->sync_comm, MPI_STATUS_IGNORE);
      const std::uint64_t t2 = now();
      if (t2 - t1 < best) {
        best = t2 - t1;
        r.timestamp = t1 + (t2 - t1) / 2;
        r.reference = ref;
        r.rtt = t2 - t1;
      }
    }
    r.exchanges = static_cast<std::uint64_t>(g->pings);
  }
  {
    std::lock_guard<std::mutex> lk(g->mu);
    publish(&r, sizeof r);
  }
  g->last_sync = std::chrono::steady_clock::now();
}

// At a collective on MPI_COMM_WORLD: every rank is in it, so every rank takes the same decision (rank 0's,
// broadcast) and the measurement runs on the program's own thread, at a call boundary.
void maybe_sync(MPI_Comm comm) {
  if (g->sync_s <= 0 || comm != MPI_COMM_WORLD) return;
  int go = 0;
  if (g->rank == 0)
    go = std::chrono::duration<double>(std::chrono::steady_clock::now() - g->last_sync).count() >= g->sync_s;
  PMPI_Bcast(&go, 1, MPI_INT, 0, g->sync_comm);
  if (go) measure_offsets();
}

// ---- Start and end -------------------------------------------------------------------------------------
// ERRATUM E345: a setting read from the environment, as a number within [lo, hi]; anything else is the
// default or the nearest bound, said once on standard error.
double bounded(const char* name, double dflt, double lo, double hi) {
  const std::string v = env_or(name, "");
  if (v.empty()) return dflt;
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (*end != '\0' || !(x == x)) {
    std::fprintf(stderr, "libkron_mpi: %s=%s is not a number: using %g\n", name, v.c_str(), dflt);
    return dflt;
  }
  if (x >= lo && x <= hi) return x;
  const double b = x < lo ? lo : hi;
  std::fprintf(stderr, "libkron_mpi: %s=%s is outside %g-%g: using %g\n", name, v.c_str(), lo, hi, b);
  return b;
}

// ERRATUM E345: the settings every rank must agree on (the clock exchange is collective) are rank 0's,
// broadcast at MPI_Init; a rank whose own environment differs says so and follows rank 0.
void shared_settings() {
  double mine[2] = {bounded("KRON_MPI_SYNC_S", 0, 0, 86400), bounded("KRON_MPI_PINGS", 10, 1, 1000)};
  double rank0[2] = {mine[0], mine[1]};
  PMPI_Bcast(rank0, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (g->rank != 0 && (rank0[0] != mine[0] || rank0[1] != mine[1]))
    std::fprintf(stderr,
                 "libkron_mpi: rank %d: KRON_MPI_SYNC_S/KRON_MPI_PINGS here (%g, %g) differ from rank 0's (%g, %g): "
                 "rank 0's are used\n",
                 g->rank, mine[0], mine[1], rank0[0], rank0[1]);
  g->sync_s = rank0[0];
  g->pings = static_cast<int>(rank0[1]);
  if (g->rank == 0) g->slow_ping_ms = static_cast<int>(bounded("KRON_MPI_TEST_SLOW_PINGS", 0, 0, 1000));
}

// The board this library drains on its own: made at load (make_board_early) or now. Throws std::runtime_error.
std::string own_board(std::uint32_t node) {
  board::CreateOptions o;
  // ERRATUM E343: kron-mpi-PID-RANDOM, created O_EXCL (never replacing a board), as kron record's.
  o.name = board::unique_name("kron-mpi");
  o.node = node;  // ERRATUM E201
  o.size = std::uint64_t(bounded("KRON_MPI_BOARD_MB", 16, 1, 65536)) << 20;
  o.lanes = 16;
  std::string err, note;
  board::Mapping created = board::Mapping::create(o, &err, &note);
  if (!created) throw std::runtime_error(err);
  return o.name;
}

// Recording on its own (no kron record --mpi): the board, the file OUT.rank-N.kron and the drain thread.
void start_own() {
  if (!g_early.board[0]) {
    g->board = own_board(static_cast<std::uint32_t>(g->rank) & 1023u);
  } else {
    g->board = g_early.board;
    if (g_early.rank != g->rank)
      std::fprintf(stderr,
                   "libkron_mpi: rank %d: the launcher said rank %d when the board was made: its samples carry node "
                   "%u (ERRATUM E201)\n",
                   g->rank, g_early.rank, g_early.node);
  }
  if (g_early_reader) {
    g->reader.reset(g_early_reader);
    g_early_reader = nullptr;
  } else {
    g->reader = std::make_unique<recorder::BoardReader>(recorder::BoardReader::open(g->board));
  }
  if (!kron::attach(g->board.c_str())) throw std::runtime_error("cannot attach to board " + g->board);
  // Every probe of this process is attached now (the program's own took the board at its start-up): the
  // name goes, so that a rank killed by SIGKILL leaves no board behind (ERRATUM E440).
  std::string err;
  board::unlink(g->board, &err);
  ::unsetenv(board::kEnvBoard);
  ::unsetenv("KRON_MPI_BOARD_PID");
  const std::uint64_t hz = g->reader->geo().clock_hz;
  const std::string fault = env_or("KRON_MPI_TEST_CLOCK_FAULT", "");
  double off_ns = 0, ppm = 0;
  if (!fault.empty() && parse_fault(fault, g->rank, off_ns, ppm)) {
    g->fault.on = true;
    g->fault.offset_ticks = off_ns * 1e-9 * double(hz);
    g->fault.drift = ppm * 1e-6;
    g->fault.origin = kron::detail::now();
  }
  g->side = recorder::mpiside::Writer::anonymous();
  g->fh = g->reader->file_header();
  if (g->fault.on) g->fh.start_ticks = g->fault(g->fault.origin);
  g->fh.mpi_rank = static_cast<std::uint32_t>(g->rank);
  g->fh.mpi_world_size = static_cast<std::uint32_t>(g->size);
  char cmd[256] = {};
  std::snprintf(cmd, sizeof cmd, "MPI rank %d of %d on %s (libkron_mpi)", g->rank, g->size, g->node.c_str());
  tracefile::set_program(g->fh, cmd);
  g->writer = std::make_unique<tracefile::Writer>(g->out, g->fh);
  g->rec = std::make_unique<recorder::Recorder>(*g->reader, *g->writer);
  if (g->fault.on) {
    const Fault f = g->fault;
    g->rec->set_timestamp_map([f](std::uint64_t t) { return f(t); });
  }
  g->reader->set_drainer(true);
  g->drainer = std::thread([] {
    try {
      g->rec->run([] { return g->stop.load(std::memory_order_acquire); });
    } catch (const std::exception& e) {
      std::fprintf(stderr, "libkron_mpi: rank %d: the drain failed: %s\n", g->rank, e.what());
    }
  });
}

// Under kron record --mpi: the side area it made; the board is its (KRON_BOARD), drained by it.
void start_under_record(const std::string& side) {
  g->side = recorder::mpiside::Writer::open(side);
  if (!kron::attach(nullptr)) throw std::runtime_error("cannot attach to the board of kron record ($KRON_BOARD)");
  if (!env_or("KRON_MPI_TEST_CLOCK_FAULT", "").empty())
    std::fprintf(stderr,
                 "libkron_mpi: rank %d: KRON_MPI_TEST_CLOCK_FAULT is for libkron_mpi recording on its own; "
                 "ignored under kron record --mpi (ERRATUM E207)\n",
                 g->rank);
}

void start() {
  auto r = std::make_unique<Rank>();
  g = r.get();
  g->pid = ::getpid();
  PMPI_Comm_rank(MPI_COMM_WORLD, &g->rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g->size);
  char node[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int len = 0;
  PMPI_Get_processor_name(node, &len);
  g->node.assign(node, static_cast<std::size_t>(std::max(len, 0)));
  g->out = env_or("KRON_MPI_OUT", "kron-mpi") + ".rank-" + std::to_string(g->rank) + ".kron";
  shared_settings();
  PMPI_Comm_dup(MPI_COMM_WORLD, &g->sync_comm);
  const std::string side = env_or("KRON_MPI_SIDE", "");
  try {
    g->under_record = !side.empty();
    if (g->under_record) {
      start_under_record(side);
    } else if (!g_early.board[0] && !env_or(board::kEnvBoard, "").empty()) {
      throw std::runtime_error(
          "KRON_BOARD is set (the program runs under kron record or kron run): its MPI calls are scopes on that "
          "board; record the rank with kron record --mpi for its rank file (ERRATUM E440)");
    } else {
      start_own();
    }
    recorder::mpiside::SideHeader& h = g->side.header();
    h.rank = static_cast<std::uint32_t>(g->rank);
    h.world_size = static_cast<std::uint32_t>(g->size);
    h.pid = static_cast<std::uint32_t>(::getpid());
    h.node = board::source_node(source_of());
    std::snprintf(h.host, sizeof h.host, "%s", g->node.c_str());
    h.state.store(static_cast<std::uint32_t>(recorder::mpiside::State::Started), std::memory_order_release);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libkron_mpi: rank %d records nothing: %s\n", g->rank, e.what());
    if (g->drainer.joinable()) {
      g->stop.store(true, std::memory_order_release);
      g->drainer.join();
    }
    g->rec.reset();
    g->writer.reset();
    g->reader.reset();
    g->side = recorder::mpiside::Writer{};
    std::string err;
    if (!g->board.empty() && !g->under_record) board::unlink(g->board, &err);
    // The clock exchange still runs, so that every rank takes part in it.
    g->on = false;
    measure_offsets();
    r.release();  // g stays valid for the exchanges at Finalize
    return;
  }
  g->on = true;
  measure_offsets();
  r.release();
}

// The end of this rank's recording. `how`: Finalized (MPI_Finalize, after the last clock measurement),
// Aborted (MPI_Abort) or Started (the process exits without MPI_Finalize). Under kron record --mpi only the
// state is set (kron record reads the side area); on its own this library finishes the file.
void finish(recorder::mpiside::State how) {
  if (!g->on) return;
  g->on = false;
  kron::release_lane();
  {
    std::lock_guard<std::mutex> lk(g->mu);
    g->side.header().state.store(static_cast<std::uint32_t>(how), std::memory_order_release);
  }
  if (g->under_record) return;
  g->stop.store(true, std::memory_order_release);
  g->drainer.join();
  try {
    std::lock_guard<std::mutex> lk(g->mu);
    const recorder::mpiside::Contents c = recorder::mpiside::read_fd(g->side.fd(), "the MPI side area");
    if (!c.problem.empty()) std::fprintf(stderr, "libkron_mpi: rank %d: %s\n", g->rank, c.problem.c_str());
    g->writer->append_mpi(c.calls);
    g->writer->append_clock(c.offsets);
    if (how != recorder::mpiside::State::Finalized) g->fh.merge_flags |= tracefile::kRankEndedEarly;
    if (how == recorder::mpiside::State::Aborted) g->fh.merge_flags |= tracefile::kRankAborted;
    record::NameRecord n{};
    n.h.kind = record::RecordKind::Names;
    n.h.size = sizeof n;
    n.name_kind = record::NameKind::Node;
    n.source = source_of();
    n.thread = static_cast<std::uint32_t>(g->rank);
    std::snprintf(n.name, sizeof n.name, "%s", g->node.c_str());
    std::snprintf(n.function, sizeof n.function, "rank %d of %d", g->rank, g->size);
    g->reader->set_drainer(false);
    g->rec->finish(g->fh, std::span(&n, 1));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libkron_mpi: rank %d: %s: %s\n", g->rank, g->out.c_str(), e.what());
  }
}

// ---- Load and exit -----------------------------------------------------------------------------------
// ERRATUM E440: loaded into a rank its launcher named (E442), this library makes its board now, before the
// program's constructors run, and names it in KRON_BOARD: the program's own probes (its copy of kron_probe
// attaches at start-up) then write to the board this library drains into the rank's file. Not under kron
// record --mpi (its board is KRON_BOARD already), not when KRON_BOARD is set by someone else, and not in a
// process no launcher started (mpirun itself, a shell): those make no board here.
//
// A board this library made at load is marked with its process (KRON_MPI_BOARD_PID), so that a wrapper the
// launcher starts in front of the program (`env VAR=1 ./app`, `sh -c ...`), which loads this library too,
// does not take the rank's recording with it: the program exec'd in its place (same pid) takes the board
// over; a program it forked (another pid) removes the inherited board's name (its maker holds its mapping,
// and a wrapper such as dash ends with _exit, never removing it) and makes its own (ERRATUM E440).
constexpr const char* kEnvBoardPid = "KRON_MPI_BOARD_PID";
__attribute__((constructor)) void kron_mpi_load() {
  if (!env_or("KRON_MPI_SIDE", "").empty()) return;
  const recorder::mpiside::EnvRank e = recorder::mpiside::rank_from_env();
  if (e.var.empty() || !e.problem.empty()) return;
  const std::string set = env_or(board::kEnvBoard, ""), maker = env_or(kEnvBoardPid, "");
  if (!set.empty() && maker.empty()) return;  // the user's, kron record's or kron run's board
  try {
    g_early.rank = e.rank;
    g_early.node = static_cast<std::uint32_t>(e.rank) & 1023u;
    if (!set.empty() && maker == std::to_string(::getpid())) {  // exec'd by the process image that made it
      std::snprintf(g_early.board, sizeof g_early.board, "%s", set.c_str());
      g_early_reader = new recorder::BoardReader(recorder::BoardReader::open(set));
      if (!kron::attach(g_early.board)) throw std::runtime_error("cannot attach to board " + set);
      return;
    }
    if (!set.empty()) {  // a board another process's libkron_mpi made (a wrapper that forked this one)
      std::string err;
      board::unlink(set, &err);
    }
    const std::string name = own_board(g_early.node);
    std::snprintf(g_early.board, sizeof g_early.board, "%s", name.c_str());
    g_early_reader = new recorder::BoardReader(recorder::BoardReader::open(name));
    ::setenv(kEnvBoardPid, std::to_string(::getpid()).c_str(), 1);
    ::setenv(board::kEnvBoard, g_early.board, 1);
    if (!kron::attach(g_early.board)) throw std::runtime_error("cannot attach to board " + name);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "libkron_mpi: rank %d: %s: the program's own probes are not recorded\n", e.rank, ex.what());
    if (g_early.board[0]) {
      std::string err;
      board::unlink(g_early.board, &err);
      ::unsetenv(board::kEnvBoard);
      ::unsetenv(kEnvBoardPid);
    }
    delete g_early_reader;
    g_early_reader = nullptr;
    g_early = Early{};
  }
}

// A process that ends without MPI_Finalize (exit() after an error): its file is finished, marked as a rank
// that ended early (ERRATUM E441). A process that never called MPI_Init removes the board it made.
__attribute__((destructor)) void kron_mpi_exit() {
  if (g && g->on && g->pid == ::getpid()) {
    finish(recorder::mpiside::State::Started);
  } else if (!g && g_early.board[0]) {
    std::string err;
    board::unlink(g_early.board, &err);
  }
}

// ---- Completion of non-blocking requests -------------------------------------------------------------
// `st` null: no status (a request freed while active, ERRATUM E435: kept with `end` its posting and
// flagged kMpiIncomplete, as one never completed).
void completed(MPI_Request req, const MPI_Status* st, std::uint64_t t_end) {
  auto it = g->pending.find(req);
  if (it == g->pending.end()) return;  // not ours (posted before MPI_Init), or an inactive persistent one
  const std::uint64_t slot = it->second.front();
  it->second.pop_front();
  if (it->second.empty()) g->pending.erase(it);
  // Completed in its slot: the fields first, the flag last (a reader after a SIGKILL between the two sees
  // the request still incomplete, never a record half updated and called complete).
  MpiRecord& m = g->side.mpi(slot);
  if (!st) return;  // freed while active: stays as posted, flagged incomplete (end = its posting)
  m.end = t_end;
  if (record::mpi_is_recv(m.call)) {  // Irecv, Imrecv, a persistent receive
    // The communicator's members are in the record's comm id only: translate through the cache.
    for (auto& [comm, c] : g->comms)
      if (c.id == m.comm && c.world.size() == m.comm_size) {
        const int w = world_of(c, st->MPI_SOURCE);
        m.peer = w;
        break;
      }
    m.tag = st->MPI_TAG;
    int n = 0;
    if (PMPI_Get_count(st, MPI_BYTE, &n) == MPI_SUCCESS && n != MPI_UNDEFINED && n >= 0) m.bytes = std::uint64_t(n);
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  m.h.flags = static_cast<std::uint8_t>(m.h.flags & ~record::kMpiIncomplete);
}

// MPI_Sendrecv and MPI_Sendrecv_replace: the send half and the receive half, each a record of the call's
// times (a half to MPI_PROC_NULL has none); the receive's source, tag and size are the status's.
void keep_sendrecv(std::uint64_t t0, std::uint64_t t1, MPI_Comm comm, int dest, int stag, std::uint64_t sbytes,
                   int source, int rtag, int rc, const MPI_Status& st) {
  std::lock_guard<std::mutex> lk(g->mu);
  if (dest != MPI_PROC_NULL) {
    MpiRecord s = make(MpiCall::SendrecvSend, t0, comm, dest, stag, sbytes);
    s.end = t1;
    keep(s);
  }
  if (source != MPI_PROC_NULL) {
    MpiRecord r = make(MpiCall::SendrecvRecv, t0, comm, source, rtag, 0);
    r.end = t1;
    if (rc == MPI_SUCCESS) fill_recv(r, st, comm);
    keep(r);
  }
}

// A blocking send: `send` (the PMPI call) timed, and its record kept (inside the caller's named scope).
template <class Send>
int blocking_send(Send send, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const std::uint64_t t0 = now();
  const int rc = send();
  const std::uint64_t t1 = now();
  std::lock_guard<std::mutex> lk(g->mu);
  MpiRecord m = make(MpiCall::Send, t0, comm, dest, tag, type_bytes(count, type));
  m.end = t1;
  keep(m);
  return rc;
}

}  // namespace
}  // namespace kron::mpi

using namespace kron::mpi;

// ---- The wrappers ------------------------------------------------------------------------------------------
// Each is a named scope (begin and end samples on the rank's board) around the PMPI call, plus, for a call
// that moves data, its MpiRecord.
#define KRON_MPI_ON (g && g->on)
// ERRATUM E396: the scope's site names the library, not a file: the wrapper's own source path (kron's build) means
// nothing to the program's reader, and the program's call site is not known here. Its location reads "libkron_mpi".
#define KRON_MPI_SCOPE(name)                                                                              \
  static ::kron_site KRON_CAT_(mpi_site_, __LINE__){(name), "", "libkron_mpi", 0, KRON_SITE_SCOPE, 0, 0}; \
  ::kron::NamedScope KRON_CAT_(mpi_scope_, __LINE__)(KRON_CAT_(mpi_site_, __LINE__), 0)

// The library is built with hidden visibility: only the MPI_* wrappers below are exported.
#pragma GCC visibility push(default)
extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) start();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) start();
  return rc;
}

int MPI_Finalize(void) {
  if (g) {
    measure_offsets();  // every rank, recording or not: the exchange is collective
    finish(kron::recorder::mpiside::State::Finalized);
    if (g->sync_comm != MPI_COMM_NULL) PMPI_Comm_free(&g->sync_comm);
  }
  return PMPI_Finalize();
}

// ERRATUM E441: a rank that aborts keeps what it recorded (its file finished here when this library records
// on its own; kron record --mpi reads the side area after the rank ended). No clock exchange: the other ranks
// are not there for it.
int MPI_Abort(MPI_Comm comm, int errorcode) {
  if (g) finish(kron::recorder::mpiside::State::Aborted);
  return PMPI_Abort(comm, errorcode);
}

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!KRON_MPI_ON) return PMPI_Send(buf, count, type, dest, tag, comm);
  KRON_MPI_SCOPE("MPI_Send");
  return blocking_send([&] { return PMPI_Send(buf, count, type, dest, tag, comm); }, count, type, dest, tag, comm);
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!KRON_MPI_ON) return PMPI_Ssend(buf, count, type, dest, tag, comm);
  KRON_MPI_SCOPE("MPI_Ssend");
  return blocking_send([&] { return PMPI_Ssend(buf, count, type, dest, tag, comm); }, count, type, dest, tag, comm);
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!KRON_MPI_ON) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  KRON_MPI_SCOPE("MPI_Recv");
  MPI_Status st;
  const std::uint64_t t0 = now();
  const int rc = PMPI_Recv(buf, count, type, source, tag, comm, &st);
  const std::uint64_t t1 = now();
  if (status != MPI_STATUS_IGNORE) *status = st;
  std::lock_guard<std::mutex> lk(g->mu);
  MpiRecord m = make(MpiCall::Recv, t0, comm, source, tag, 0);
  m.end = t1;
  if (rc == MPI_SUCCESS) fill_recv(m, st, comm);
  keep(m);
  return rc;
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  if (!KRON_MPI_ON) return PMPI_Isend(buf, count, type, dest, tag, comm, req);
  KRON_MPI_SCOPE("MPI_Isend");
  const std::uint64_t t0 = now();
  const int rc = PMPI_Isend(buf, count, type, dest, tag, comm, req);
  std::lock_guard<std::mutex> lk(g->mu);
  if (rc == MPI_SUCCESS) post(*req, make(MpiCall::Isend, t0, comm, dest, tag, type_bytes(count, type)));
  return rc;
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* req) {
  if (!KRON_MPI_ON) return PMPI_Irecv(buf, count, type, source, tag, comm, req);
  KRON_MPI_SCOPE("MPI_Irecv");
  const std::uint64_t t0 = now();
  const int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
  std::lock_guard<std::mutex> lk(g->mu);
  if (rc == MPI_SUCCESS) post(*req, make(MpiCall::Irecv, t0, comm, source, tag, 0));
  return rc;
}

int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
                 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status* status) {
  if (!KRON_MPI_ON)
    return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
  KRON_MPI_SCOPE("MPI_Sendrecv");
  MPI_Status st;
  const std::uint64_t t0 = now();
  const int rc = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, &st);
  const std::uint64_t t1 = now();
  if (status != MPI_STATUS_IGNORE) *status = st;
  keep_sendrecv(t0, t1, comm, dest, stag, type_bytes(scount, stype), source, rtag, rc, st);
  return rc;
}

// MPI_Bsend and MPI_Rsend are sends as MPI_Send (call Send); MPI_Ibsend, MPI_Issend and MPI_Irsend as
// MPI_Isend (call Isend): the mode changes when a send may complete, not which receive matches it.
int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!KRON_MPI_ON) return PMPI_Bsend(buf, count, type, dest, tag, comm);
  KRON_MPI_SCOPE("MPI_Bsend");
  return blocking_send([&] { return PMPI_Bsend(buf, count, type, dest, tag, comm); }, count, type, dest, tag, comm);
}

int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!KRON_MPI_ON) return PMPI_Rsend(buf, count, type, dest, tag, comm);
  KRON_MPI_SCOPE("MPI_Rsend");
  return blocking_send([&] { return PMPI_Rsend(buf, count, type, dest, tag, comm); }, count, type, dest, tag, comm);
}

#define KRON_MPI_ISEND(NAME, PMPI_CALL)                                                                  \
  if (!KRON_MPI_ON) return PMPI_CALL;                                                                    \
  KRON_MPI_SCOPE(NAME);                                                                                  \
  const std::uint64_t t0 = now();                                                                        \
  const int rc = PMPI_CALL;                                                                              \
  std::lock_guard<std::mutex> lk(g->mu);                                                                 \
  if (rc == MPI_SUCCESS) post(*req, make(MpiCall::Isend, t0, comm, dest, tag, type_bytes(count, type))); \
  return rc;

int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_ISEND("MPI_Ibsend", PMPI_Ibsend(buf, count, type, dest, tag, comm, req))
}

int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_ISEND("MPI_Issend", PMPI_Issend(buf, count, type, dest, tag, comm, req))
}

int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_ISEND("MPI_Irsend", PMPI_Irsend(buf, count, type, dest, tag, comm, req))
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int stag, int source, int rtag,
                         MPI_Comm comm, MPI_Status* status) {
  if (!KRON_MPI_ON) return PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, status);
  KRON_MPI_SCOPE("MPI_Sendrecv_replace");
  MPI_Status st;
  const std::uint64_t t0 = now();
  const int rc = PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, &st);
  const std::uint64_t t1 = now();
  if (status != MPI_STATUS_IGNORE) *status = st;
  keep_sendrecv(t0, t1, comm, dest, stag, type_bytes(count, type), source, rtag, rc, st);
  return rc;
}

// ---- Probes and matched receives (MPI 3.1 section 3.8) ---------------------------------------------------
// MPI_Probe and MPI_Iprobe move nothing: scopes only. MPI_Mprobe and MPI_Improbe are scopes that remember
// the communicator of the message they matched; its MPI_Mrecv or MPI_Imrecv is the receive (record Mrecv,
// Imrecv: source, tag and size from the status, as MPI_Recv's).
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!KRON_MPI_ON) return PMPI_Probe(source, tag, comm, status);
  KRON_MPI_SCOPE("MPI_Probe");
  return PMPI_Probe(source, tag, comm, status);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  if (!KRON_MPI_ON) return PMPI_Iprobe(source, tag, comm, flag, status);
  KRON_MPI_SCOPE("MPI_Iprobe");
  return PMPI_Iprobe(source, tag, comm, flag, status);
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (!KRON_MPI_ON) return PMPI_Mprobe(source, tag, comm, message, status);
  KRON_MPI_SCOPE("MPI_Mprobe");
  const int rc = PMPI_Mprobe(source, tag, comm, message, status);
  std::lock_guard<std::mutex> lk(g->mu);
  if (rc == MPI_SUCCESS && *message != MPI_MESSAGE_NULL && *message != MPI_MESSAGE_NO_PROC)
    g->messages[*message] = comm;
  return rc;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  if (!KRON_MPI_ON) return PMPI_Improbe(source, tag, comm, flag, message, status);
  KRON_MPI_SCOPE("MPI_Improbe");
  const int rc = PMPI_Improbe(source, tag, comm, flag, message, status);
  std::lock_guard<std::mutex> lk(g->mu);
  if (rc == MPI_SUCCESS && *flag && *message != MPI_MESSAGE_NULL && *message != MPI_MESSAGE_NO_PROC)
    g->messages[*message] = comm;
  return rc;
}

int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  if (!KRON_MPI_ON) return PMPI_Mrecv(buf, count, type, message, status);
  KRON_MPI_SCOPE("MPI_Mrecv");
  const MPI_Message msg = *message;
  MPI_Status st;
  const std::uint64_t t0 = now();
  const int rc = PMPI_Mrecv(buf, count, type, message, &st);
  const std::uint64_t t1 = now();
  if (status != MPI_STATUS_IGNORE) *status = st;
  std::lock_guard<std::mutex> lk(g->mu);
  auto it = g->messages.find(msg);
  if (it == g->messages.end()) return rc;  // MPI_MESSAGE_NO_PROC, or matched before MPI_Init
  const MPI_Comm comm = it->second;
  g->messages.erase(it);
  MpiRecord m = make(MpiCall::Mrecv, t0, comm, -1, 0, 0);
  m.end = t1;
  if (rc == MPI_SUCCESS) fill_recv(m, st, comm);
  keep(m);
  return rc;
}

int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* req) {
  if (!KRON_MPI_ON) return PMPI_Imrecv(buf, count, type, message, req);
  KRON_MPI_SCOPE("MPI_Imrecv");
  const MPI_Message msg = *message;
  const std::uint64_t t0 = now();
  const int rc = PMPI_Imrecv(buf, count, type, message, req);
  std::lock_guard<std::mutex> lk(g->mu);
  auto it = g->messages.find(msg);
  if (it == g->messages.end()) return rc;
  const MPI_Comm comm = it->second;
  g->messages.erase(it);
  if (rc == MPI_SUCCESS) post(*req, make(MpiCall::Imrecv, t0, comm, -1, 0, 0));
  return rc;
}

// ---- Persistent requests (MPI 3.1 section 3.9) -----------------------------------------------------------
// MPI_*_init makes the request's record (its peer, tag, size: fixed at init); every MPI_Start posts a copy,
// begun then, completed by the MPI_Wait*/MPI_Test* that completes that start, as MPI_Isend's. The handle
// stays valid after completion: its record is kept until MPI_Request_free (ERRATUM E435).
#define KRON_MPI_PERSISTENT(CALL, NAME, PEER, BYTES, PMPI_CALL)                       \
  if (!KRON_MPI_ON) return PMPI_CALL;                                                 \
  KRON_MPI_SCOPE(NAME);                                                               \
  const int rc = PMPI_CALL;                                                           \
  std::lock_guard<std::mutex> lk(g->mu);                                              \
  if (rc == MPI_SUCCESS) g->persistent[*req] = make(CALL, 0, comm, PEER, tag, BYTES); \
  return rc;

int MPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_PERSISTENT(MpiCall::PsendStart, "MPI_Send_init", dest, type_bytes(count, type),
                      PMPI_Send_init(buf, count, type, dest, tag, comm, req))
}

int MPI_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_PERSISTENT(MpiCall::PsendStart, "MPI_Ssend_init", dest, type_bytes(count, type),
                      PMPI_Ssend_init(buf, count, type, dest, tag, comm, req))
}

int MPI_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_PERSISTENT(MpiCall::PsendStart, "MPI_Bsend_init", dest, type_bytes(count, type),
                      PMPI_Bsend_init(buf, count, type, dest, tag, comm, req))
}

int MPI_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_PERSISTENT(MpiCall::PsendStart, "MPI_Rsend_init", dest, type_bytes(count, type),
                      PMPI_Rsend_init(buf, count, type, dest, tag, comm, req))
}

int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_PERSISTENT(MpiCall::PrecvStart, "MPI_Recv_init", source, 0,
                      PMPI_Recv_init(buf, count, type, source, tag, comm, req))
}

}  // extern "C"
namespace {
// One MPI_Start of a request this library made a record for (a persistent point-to-point one): posted.
void started(MPI_Request req, std::uint64_t t0) {
  auto it = g->persistent.find(req);
  if (it == g->persistent.end()) return;  // not ours (made before MPI_Init, or a persistent collective)
  MpiRecord m = it->second;
  const int cpu = ::sched_getcpu();
  m.h.cpu = static_cast<std::uint16_t>(cpu < 0 ? 0 : cpu);
  m.thread = thread_id();
  m.timestamp = m.end = t0;
  post(req, m);
}
}  // namespace
extern "C" {

int MPI_Start(MPI_Request* req) {
  if (!KRON_MPI_ON) return PMPI_Start(req);
  KRON_MPI_SCOPE("MPI_Start");
  const std::uint64_t t0 = now();
  const int rc = PMPI_Start(req);
  std::lock_guard<std::mutex> lk(g->mu);
  if (rc == MPI_SUCCESS) started(*req, t0);
  return rc;
}

int MPI_Startall(int n, MPI_Request reqs[]) {
  if (!KRON_MPI_ON) return PMPI_Startall(n, reqs);
  KRON_MPI_SCOPE("MPI_Startall");
  const std::uint64_t t0 = now();
  const int rc = PMPI_Startall(n, reqs);
  std::lock_guard<std::mutex> lk(g->mu);
  if (rc == MPI_SUCCESS)
    for (int i = 0; i < n; ++i) started(reqs[i], t0);
  return rc;
}

// A freed request's handle may be reused for another: its persistent record is dropped, and a record still
// pending under it (a request freed while active: its completion is never seen) is written now, flagged
// incomplete (ERRATUM E435).
int MPI_Request_free(MPI_Request* req) {
  if (!KRON_MPI_ON) return PMPI_Request_free(req);
  KRON_MPI_SCOPE("MPI_Request_free");
  const MPI_Request r0 = *req;
  const int rc = PMPI_Request_free(req);
  std::lock_guard<std::mutex> lk(g->mu);
  if (rc == MPI_SUCCESS) {
    g->persistent.erase(r0);
    completed(r0, nullptr, 0);  // the oldest record of the handle, as a completion takes it (E202)
  }
  return rc;
}

int MPI_Wait(MPI_Request* req, MPI_Status* status) {
  if (!KRON_MPI_ON) return PMPI_Wait(req, status);
  KRON_MPI_SCOPE("MPI_Wait");
  const MPI_Request r0 = *req;
  MPI_Status st;
  const int rc = PMPI_Wait(req, &st);
  const std::uint64_t t1 = now();
  if (status != MPI_STATUS_IGNORE) *status = st;
  std::lock_guard<std::mutex> lk(g->mu);
  if (rc == MPI_SUCCESS && r0 != MPI_REQUEST_NULL) completed(r0, &st, t1);
  return rc;
}

int MPI_Test(MPI_Request* req, int* flag, MPI_Status* status) {
  if (!KRON_MPI_ON) return PMPI_Test(req, flag, status);
  KRON_MPI_SCOPE("MPI_Test");
  const MPI_Request r0 = *req;
  MPI_Status st;
  const int rc = PMPI_Test(req, flag, &st);
  const std::uint64_t t1 = now();
  if (status != MPI_STATUS_IGNORE) *status = st;
  std::lock_guard<std::mutex> lk(g->mu);
  if (rc == MPI_SUCCESS && *flag && r0 != MPI_REQUEST_NULL) completed(r0, &st, t1);
  return rc;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
  if (!KRON_MPI_ON) return PMPI_Waitall(n, reqs, statuses);
  KRON_MPI_SCOPE("MPI_Waitall");
  std::vector<MPI_Request> r0(reqs, reqs + std::max(n, 0));
  std::vector<MPI_Status> st(static_cast<std::size_t>(std::max(n, 0)));
  const int rc = PMPI_Waitall(n, reqs, st.data());
  const std::uint64_t t1 = now();
  if (statuses != MPI_STATUSES_IGNORE) std::copy(st.begin(), st.end(), statuses);
  std::lock_guard<std::mutex> lk(g->mu);
  if (rc == MPI_SUCCESS)
    for (std::size_t i = 0; i < r0.size(); ++i)
      if (r0[i] != MPI_REQUEST_NULL) completed(r0[i], &st[i], t1);
  return rc;
}

int MPI_Testall(int n, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  if (!KRON_MPI_ON) return PMPI_Testall(n, reqs, flag, statuses);
  KRON_MPI_SCOPE("MPI_Testall");
  std::vector<MPI_Request> r0(reqs, reqs + std::max(n, 0));
  std::vector<MPI_Status> st(static_cast<std::size_t>(std::max(n, 0)));
  const int rc = PMPI_Testall(n, reqs, flag, st.data());
  const std::uint64_t t1 = now();
  if (statuses != MPI_STATUSES_IGNORE) std::copy(st.begin(), st.end(), statuses);
  std::lock_guard<std::mutex> lk(g->mu);
  if (rc == MPI_SUCCESS && *flag)
    for (std::size_t i = 0; i < r0.size(); ++i)
      if (r0[i] != MPI_REQUEST_NULL) completed(r0[i], &st[i], t1);
  return rc;
}

int MPI_Waitany(int n, MPI_Request reqs[], int* index, MPI_Status* status) {
  if (!KRON_MPI_ON) return PMPI_Waitany(n, reqs, index, status);
  KRON_MPI_SCOPE("MPI_Waitany");
  std::vector<MPI_Request> r0(reqs, reqs + std::max(n, 0));
  MPI_Status st;
  const int rc = PMPI_Waitany(n, reqs, index, &st);
  const std::uint64_t t1 = now();
  if (status != MPI_STATUS_IGNORE) *status = st;
  std::lock_guard<std::mutex> lk(g->mu);
  if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED && *index >= 0 && *index < n)
    completed(r0[static_cast<std::size_t>(*index)], &st, t1);
  return rc;
}

int MPI_Testany(int n, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  if (!KRON_MPI_ON) return PMPI_Testany(n, reqs, index, flag, status);
  KRON_MPI_SCOPE("MPI_Testany");
  std::vector<MPI_Request> r0(reqs, reqs + std::max(n, 0));
  MPI_Status st;
  const int rc = PMPI_Testany(n, reqs, index, flag, &st);
  const std::uint64_t t1 = now();
  if (status != MPI_STATUS_IGNORE) *status = st;
  std::lock_guard<std::mutex> lk(g->mu);
  if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED && *index >= 0 && *index < n)
    completed(r0[static_cast<std::size_t>(*index)], &st, t1);
  return rc;
}

}  // extern "C"
namespace {
// MPI_Waitsome and MPI_Testsome after their scope: the call, then each request it completed.
int some_completed(int (*call)(int, MPI_Request[], int*, int[], MPI_Status[]), int n, MPI_Request reqs[], int* outcount,
                   int indices[], MPI_Status statuses[]) {
  std::vector<MPI_Request> r0(reqs, reqs + std::max(n, 0));
  std::vector<MPI_Status> st(static_cast<std::size_t>(std::max(n, 0)));
  const int rc = call(n, reqs, outcount, indices, st.data());
  const std::uint64_t t1 = now();
  if (statuses != MPI_STATUSES_IGNORE && *outcount != MPI_UNDEFINED)
    std::copy(st.begin(), st.begin() + std::max(*outcount, 0), statuses);
  std::lock_guard<std::mutex> lk(g->mu);
  if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
    for (int i = 0; i < *outcount; ++i)
      if (indices[i] >= 0 && indices[i] < n)
        completed(r0[static_cast<std::size_t>(indices[i])], &st[static_cast<std::size_t>(i)], t1);
  return rc;
}
}  // namespace
extern "C" {

int MPI_Waitsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!KRON_MPI_ON) return PMPI_Waitsome(n, reqs, outcount, indices, statuses);
  KRON_MPI_SCOPE("MPI_Waitsome");
  return some_completed(PMPI_Waitsome, n, reqs, outcount, indices, statuses);
}

int MPI_Testsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!KRON_MPI_ON) return PMPI_Testsome(n, reqs, outcount, indices, statuses);
  KRON_MPI_SCOPE("MPI_Testsome");
  return some_completed(PMPI_Testsome, n, reqs, outcount, indices, statuses);
}

// Collectives: one record per rank and call; tag is the call's sequence number on the communicator.
#define KRON_MPI_COLLECTIVE(CALL, NAME, ROOT, BYTES, PMPI_CALL)                        \
  if (!KRON_MPI_ON) return PMPI_CALL;                                                  \
  maybe_sync(comm);                                                                    \
  KRON_MPI_SCOPE(NAME);                                                                \
  const std::uint64_t t0 = now();                                                      \
  const int rc = PMPI_CALL;                                                            \
  const std::uint64_t t1 = now();                                                      \
  std::lock_guard<std::mutex> lk(g->mu);                                               \
  CommInfo& c = comm_info(comm);                                                       \
  MpiRecord m = make(CALL, t0, comm, ROOT, static_cast<std::int32_t>(c.seq++), BYTES); \
  m.end = t1;                                                                          \
  keep(m);                                                                             \
  return rc;

int MPI_Barrier(MPI_Comm comm) { KRON_MPI_COLLECTIVE(MpiCall::Barrier, "MPI_Barrier", -1, 0, PMPI_Barrier(comm)) }

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::Bcast, "MPI_Bcast", root, type_bytes(count, type),
                      PMPI_Bcast(buf, count, type, root, comm))
}

int MPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::Reduce, "MPI_Reduce", root, type_bytes(count, type),
                      PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm))
}

int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::Allreduce, "MPI_Allreduce", -1, type_bytes(count, type),
                      PMPI_Allreduce(sbuf, rbuf, count, type, op, comm))
}

int MPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::Gather, "MPI_Gather", root, type_bytes(scount, stype),
                      PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm))
}

int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::Allgather, "MPI_Allgather", -1, type_bytes(scount, stype),
                      PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm))
}

int MPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::Scatter, "MPI_Scatter", root, type_bytes(rcount, rtype),
                      PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm))
}

int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::Alltoall, "MPI_Alltoall", -1, type_bytes(scount, stype),
                      PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm))
}

// `v` collectives, MPI_Reduce_scatter*, MPI_Scan, MPI_Exscan (MPI 3.1 sections 5.5-5.11): bytes are this
// rank's send buffer as for the others (MPI_Scatterv: its share, as MPI_Scatter), ERRATUM E434.
int MPI_Gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::Gatherv, "MPI_Gatherv", root, type_bytes(scount, stype),
                      PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm))
}

int MPI_Scatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void* rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::Scatterv, "MPI_Scatterv", root, type_bytes(rcount, rtype),
                      PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm))
}

int MPI_Allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::Allgatherv, "MPI_Allgatherv", -1, type_bytes(scount, stype),
                      PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm))
}

int MPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::Alltoallv, "MPI_Alltoallv", -1, counts_bytes(scounts, members(comm), stype),
                      PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm))
}

int MPI_Reduce_scatter(const void* sbuf, void* rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::ReduceScatter, "MPI_Reduce_scatter", -1, counts_bytes(rcounts, members(comm), type),
                      PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm))
}

int MPI_Reduce_scatter_block(const void* sbuf, void* rbuf, int rcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::ReduceScatterBlock, "MPI_Reduce_scatter_block", -1,
                      type_bytes(rcount, type) * std::uint64_t(members(comm)),
                      PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm))
}

int MPI_Scan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::Scan, "MPI_Scan", -1, type_bytes(count, type),
                      PMPI_Scan(sbuf, rbuf, count, type, op, comm))
}

int MPI_Exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  KRON_MPI_COLLECTIVE(MpiCall::Exscan, "MPI_Exscan", -1, type_bytes(count, type),
                      PMPI_Exscan(sbuf, rbuf, count, type, op, comm))
}

// Non-blocking collectives (MPI 3.1 section 5.12): one record per rank and call, its sequence number on the
// communicator taken at posting (MPI orders a communicator's collectives by the order they are called,
// blocking and non-blocking alike), posted as MPI_Isend's and completed by the MPI_Wait*/MPI_Test* that
// completes it. No clock measurement is made at them (ERRATUM E433).
#define KRON_MPI_ICOLLECTIVE(CALL, NAME, ROOT, BYTES, PMPI_CALL)             \
  if (!KRON_MPI_ON) return PMPI_CALL;                                        \
  KRON_MPI_SCOPE(NAME);                                                      \
  const std::uint64_t t0 = now();                                            \
  const int rc = PMPI_CALL;                                                  \
  std::lock_guard<std::mutex> lk(g->mu);                                     \
  CommInfo& c = comm_info(comm);                                             \
  const auto seq = static_cast<std::int32_t>(c.seq++);                       \
  if (rc == MPI_SUCCESS) post(*req, make(CALL, t0, comm, ROOT, seq, BYTES)); \
  return rc;

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_ICOLLECTIVE(MpiCall::Ibarrier, "MPI_Ibarrier", -1, 0, PMPI_Ibarrier(comm, req))
}

int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_ICOLLECTIVE(MpiCall::Ibcast, "MPI_Ibcast", root, type_bytes(count, type),
                       PMPI_Ibcast(buf, count, type, root, comm, req))
}

int MPI_Ireduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request* req) {
  KRON_MPI_ICOLLECTIVE(MpiCall::Ireduce, "MPI_Ireduce", root, type_bytes(count, type),
                       PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, req))
}

int MPI_Iallreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* req) {
  KRON_MPI_ICOLLECTIVE(MpiCall::Iallreduce, "MPI_Iallreduce", -1, type_bytes(count, type),
                       PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, req))
}

int MPI_Igather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_ICOLLECTIVE(MpiCall::Igather, "MPI_Igather", root, type_bytes(scount, stype),
                       PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req))
}

int MPI_Iallgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_ICOLLECTIVE(MpiCall::Iallgather, "MPI_Iallgather", -1, type_bytes(scount, stype),
                       PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req))
}

int MPI_Iscatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                 MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_ICOLLECTIVE(MpiCall::Iscatter, "MPI_Iscatter", root, type_bytes(rcount, rtype),
                       PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req))
}

int MPI_Ialltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_ICOLLECTIVE(MpiCall::Ialltoall, "MPI_Ialltoall", -1, type_bytes(scount, stype),
                       PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req))
}

int MPI_Igatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_ICOLLECTIVE(MpiCall::Igatherv, "MPI_Igatherv", root, type_bytes(scount, stype),
                       PMPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, req))
}

int MPI_Iscatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void* rbuf, int rcount,
                  MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_ICOLLECTIVE(MpiCall::Iscatterv, "MPI_Iscatterv", root, type_bytes(rcount, rtype),
                       PMPI_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, req))
}

int MPI_Iallgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
                    const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_ICOLLECTIVE(MpiCall::Iallgatherv, "MPI_Iallgatherv", -1, type_bytes(scount, stype),
                       PMPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req))
}

int MPI_Ialltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  KRON_MPI_ICOLLECTIVE(MpiCall::Ialltoallv, "MPI_Ialltoallv", -1, counts_bytes(scounts, members(comm), stype),
                       PMPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, req))
}

// A freed communicator's handle may be reused for another: forget what was cached under it.
int MPI_Comm_free(MPI_Comm* comm) {
  if (g) {
    std::lock_guard<std::mutex> lk(g->mu);
    g->comms.erase(*comm);
  }
  return PMPI_Comm_free(comm);
}

}  // extern "C"
#pragma GCC visibility pop
