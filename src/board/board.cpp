// Board create / map / validate and the register writes (include/kron/board_ops.hpp). Library kron_board.
// Sources: 003 sections 1.3, 2.7 and Table 2 (16 MB local memory, WRAPB); 000 Tables B1, B5-B7.
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/statvfs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "kron/board_ops.hpp"
#include "kron/board_pool.hpp"

namespace kron::board {

namespace {
std::uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}
bool cpu_has_invariant_tsc() {
#if defined(__x86_64__) || defined(__i386__)
  std::FILE* f = std::fopen("/proc/cpuinfo", "r");
  if (!f) return false;
  char line[4096];
  bool constant = false, nonstop = false;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "flags", 5) != 0) continue;
    constant = std::strstr(line, " constant_tsc") != nullptr;
    nonstop = std::strstr(line, " nonstop_tsc") != nullptr;
    break;
  }
  std::fclose(f);
  return constant && nonstop;
#else
  return false;
#endif
}
std::uint64_t raw_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}
#if defined(__x86_64__) || defined(__i386__)
// ERRATUM E303: a TSC whose counts differ between CPUs. This thread visits every CPU it may run on, twice,
// reading the TSC on each: a read below the one before it on another CPU is a TSC that is not synchronized.
// An offset smaller than a migration's time (microseconds) is not seen: the kernel's own boot-time check
// (it then stops using the TSC: "Marking TSC unstable") covers those.
bool tsc_warps(std::string* why) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return false;
  std::uint64_t last = 0;
  int last_cpu = -1;
  bool warp = false;
  for (int round = 0; round < 2 && !warp; ++round)
    for (int cpu = 0; cpu < CPU_SETSIZE && cpu < 256 && !warp; ++cpu) {
      if (!CPU_ISSET(cpu, &allowed)) continue;
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      if (sched_setaffinity(0, sizeof one, &one) != 0) continue;
      const std::uint64_t t = __rdtsc();
      if (t < last) {
        warp = true;
        *why = "the TSC of CPU " + std::to_string(cpu) + " reads " + std::to_string(last - t) + " ticks behind CPU " +
               std::to_string(last_cpu) + "'s (not synchronized across CPUs)";
      }
      last = t, last_cpu = cpu;
    }
  sched_setaffinity(0, sizeof allowed, &allowed);
  return warp;
}
#endif
// ERRATUM E300: the kernel's TSC-to-sched_clock conversion from a perf_event mmap page (a software dummy
// event of this process: no counting, no privilege beyond perf_event_paranoid 2). False where the kernel
// offers none (cap_user_time_zero 0: a sched_clock that is not the TSC, a VM's kvm-clock).
bool kernel_conversion(tracefile::KernelConversion* k, std::string* why) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_DUMMY;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  const int fd = static_cast<int>(::syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) {
    *why = std::string("perf_event_open: ") + std::strerror(errno);
    return false;
  }
  const long page = ::sysconf(_SC_PAGESIZE);
  void* m = ::mmap(nullptr, static_cast<std::size_t>(page), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) {
    *why = std::string("perf_event mmap: ") + std::strerror(errno);
    return false;
  }
  const auto* pg = static_cast<const volatile perf_event_mmap_page*>(m);
  bool ok = false;
  for (int tries = 0; tries < 100; ++tries) {  // the page's seqlock (perf_event_open(2), "MMAP layout")
    const std::uint32_t seq = pg->lock;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    ok = pg->cap_user_time && pg->cap_user_time_zero && !pg->cap_user_time_short;
    k->mult = pg->time_mult;
    k->shift = pg->time_shift;
    k->zero = pg->time_zero;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (pg->lock == seq) break;
  }
  ::munmap(const_cast<perf_event_mmap_page*>(pg), static_cast<std::size_t>(page));
  if (ok && (k->mult == 0 || k->shift > 63)) ok = false;
  if (!ok) *why = "the kernel offers no TSC conversion (perf_event cap_user_time_zero is 0)";
  return ok;
}
// No conversion from the kernel: the TSC against CLOCK_MONOTONIC_RAW over ~7 ms, best of three (the
// recorder refines it with anchors at the start and end of each recording, E301).
void calibrate(ClockSource& c) {
#if defined(__x86_64__) || defined(__i386__)
  double best = 0, best_span = 1e18, best_err = 0;
  for (int i = 0; i < 3; ++i) {
    const tracefile::Anchor a = take_anchor(ClockKind::Tsc);
    std::this_thread::sleep_for(std::chrono::milliseconds(7));
    const tracefile::Anchor b = take_anchor(ClockKind::Tsc);
    const double span = double(b.ns - a.ns);
    if (span > 0 && span < best_span)
      best_span = span, best = double(b.ticks - a.ticks) * 1e9 / span, best_err = double(a.half_ns + b.half_ns) + 2;
  }
  c.hz = best > 0 ? std::uint64_t(best + 0.5) : 1;
  c.uncertainty_ppm = best_span > 0 ? best_err / best_span * 1e6 : 1e6;
#else
  (void)c;
#endif
}
const ClockSource& clock_info() {
  static const ClockSource info = [] {
    ClockSource c;
    if (std::getenv(kEnvNoTsc)) {
      c.why = "KRON_NO_TSC is set";
      return c;
    }
#if defined(__x86_64__) || defined(__i386__)
    if (!cpu_has_invariant_tsc()) {
      c.why = "the TSC is not invariant (/proc/cpuinfo lacks constant_tsc or nonstop_tsc)";
      return c;
    }
    if (tsc_warps(&c.why)) return c;
    c.kind = ClockKind::Tsc;
    if (!std::getenv(kEnvClockAnchors) && kernel_conversion(&c.kernel, &c.why)) {
      c.source = tracefile::TimeSource::Kernel;
      c.hz = std::uint64_t(c.kernel.hz() + 0.5);
      c.uncertainty_ppm = 0.5e6 / double(c.kernel.mult);  // the mult's rounding
      c.why.clear();
      return c;
    }
    if (std::getenv(kEnvClockAnchors)) c.why = "KRON_CLOCK_ANCHORS is set";
    c.source = tracefile::TimeSource::Anchors;
    calibrate(c);
    return c;
#else
    c.why = "no TSC on this architecture";
    return c;
#endif
  }();
  return info;
}
bool is_pow2(std::uint64_t v) { return v && !(v & (v - 1)); }
std::uint64_t pow2_floor(std::uint64_t v) {
  while (v & (v - 1)) v &= v - 1;
  return v;
}

std::string read_text(const char* path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
// Bytes of the mapping that starts at `base` mapped with 2 MiB pages (ShmemPmdMapped in /proc/self/smaps).
std::uint64_t huge_mapped_bytes(const void* base) {
  std::ifstream f("/proc/self/smaps");
  char head[32];
  std::snprintf(head, sizeof head, "%lx-", reinterpret_cast<unsigned long>(base));
  std::string line;
  bool in = false;
  while (std::getline(f, line)) {
    if (line.rfind(head, 0) == 0)
      in = true;
    else if (in && line.rfind("ShmemPmdMapped:", 0) == 0)
      return std::stoull(line.substr(15)) << 10;
  }
  return 0;
}
}  // namespace

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL and the loop below does it
#endif
void populate(void* base, std::uint64_t size) noexcept {
  // A kernel without MADV_POPULATE_WRITE answers EINVAL once; then the loop, with no system call per block.
  static std::atomic<bool> no_madvise{false};
  if (!no_madvise.load(std::memory_order_relaxed)) {
    if (::madvise(base, size, MADV_POPULATE_WRITE) == 0) return;
    if (errno == EINVAL) no_madvise.store(true, std::memory_order_relaxed);
  }
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  auto* p = static_cast<std::uint8_t*>(base);
  // A write fault per page without changing a byte: an atomic OR of 0 (other processes may be writing
  // records in these pages right now; a plain store would race with them).
  for (std::uint64_t off = 0; off < size; off += page)
    __atomic_fetch_or(reinterpret_cast<std::uint64_t*>(p + off), std::uint64_t{0}, __ATOMIC_RELAXED);
}

std::string huge_pages_unavailable() {
  const std::string thp = read_text("/sys/kernel/mm/transparent_hugepage/shmem_enabled");
  if (thp.empty()) return "this kernel has no transparent huge pages for shared memory";
  if (thp.find("[deny]") != std::string::npos) return "/sys/kernel/mm/transparent_hugepage/shmem_enabled is deny";
  if (thp.find("[force]") != std::string::npos) return "";
  // POSIX shared memory lives in the tmpfs at /dev/shm: its huge= mount option decides (the last mount wins).
  std::istringstream mounts(read_text("/proc/mounts"));
  std::string dev, dir, type, opts, line, shm_opts;
  bool found = false;
  while (std::getline(mounts, line)) {
    std::istringstream l(line);
    if (l >> dev >> dir >> type >> opts && dir == "/dev/shm") shm_opts = opts, found = true;
  }
  if (!found) return "/dev/shm is not mounted";
  for (const char* ok : {"huge=always", "huge=within_size", "huge=advise"})
    if (shm_opts.find(ok) != std::string::npos) return "";
  return "/dev/shm is mounted without huge=advise, always or within_size (mount -o remount,huge=advise /dev/shm "
         "as root enables them)";
}

const ClockSource& clock_source() { return clock_info(); }
ClockKind clock_kind() { return clock_info().kind; }
std::uint64_t clock_hz() { return clock_info().hz; }
std::uint64_t ticks(ClockKind k) {
#if defined(__x86_64__) || defined(__i386__)
  if (k == ClockKind::Tsc) return __rdtsc();
#endif
  (void)k;
  return mono_ns();
}
tracefile::Anchor take_anchor(ClockKind k) {
  tracefile::Anchor best;
  std::uint64_t width = ~std::uint64_t{0};
  for (int i = 0; i < 5; ++i) {
    const std::uint64_t a = ticks(k), ns = raw_ns(), b = ticks(k);
    if (b >= a && b - a < width) width = b - a, best.ticks = a + (b - a) / 2, best.ns = ns;
  }
  // Half the bracket, in ns (the rate is near 1 GHz or above: a tick is at most a nanosecond).
  best.half_ns = width == ~std::uint64_t{0} ? 1000 : width / 2 + 1;
  return best;
}
std::uint64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > kNameMax) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  return name != "." && name != "..";
}
std::string shm_name(const std::string& name) { return std::string(kShmPrefix) + name; }
std::string shm_dir() {
  const char* d = std::getenv(kEnvShmDir);
  std::string s = d && *d ? d : "/dev/shm";
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}
std::string board_path(const std::string& name) { return shm_dir() + shm_name(name); }
std::string unique_name(const std::string& prefix) {
  std::uint32_t r = 0;
  if (::getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r))  // never blocks once the pool is up
    r = static_cast<std::uint32_t>(realtime_ns() ^ (realtime_ns() >> 32));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s-%d-%08x", prefix.c_str(), static_cast<int>(::getpid()), r);
  return buf;
}

std::uint64_t default_block_bytes(std::uint64_t size, std::uint32_t lanes) {
  // Four blocks per lane header where the memory allows: a lane adopted by a new thread, or a thread
  // crossing into its next block, rarely finds the pool empty on a board that is not full.
  const std::uint64_t per_lane = lanes ? size / (4ull * lanes) : size;
  return std::max(kMinBlockBytes, std::min(kMaxAutoBlockBytes, pow2_floor(per_lane ? per_lane : 1)));
}

namespace {
// One relaxed load of a plain field that another process may be writing (ERRATUM E120).
template <class T>
T once(const T& field) {
  T v;
  __atomic_load(&field, &v, __ATOMIC_RELAXED);
  return v;
}
}  // namespace

Geometry read_geometry(const void* base) noexcept {
  const auto* h = static_cast<const BoardHeader*>(base);
  Geometry g;
  for (unsigned k = 0; k < sizeof g.magic; ++k) g.magic[k] = once(h->magic[k]);
  g.byte_order = once(h->byte_order);
  g.major = once(h->major), g.minor = once(h->minor);
  g.header_size = once(h->header_size);
  g.line_size = once(h->line_size);
  g.segment_size = once(h->segment_size);
  g.lanes_offset = once(h->lanes_offset);
  g.lane_count = once(h->lane_count);
  g.lane_header_size = once(h->lane_header_size);
  g.data_offset = once(h->data_offset);
  g.block_bytes = once(h->block_bytes);
  g.clock_hz = once(h->clock_hz);
  g.clock_kind = once(h->clock_kind);
  g.node = once(h->node);
  g.created_ticks = once(h->created_ticks);
  g.created_realtime_ns = once(h->created_realtime_ns);
  g.creator_pid = once(h->creator_pid);
  g.config = once(h->config);
  g.blocks_offset = once(h->blocks_offset);
  g.block_count = once(h->block_count);
  g.block_header_size = once(h->block_header_size);
  g.sealed_offset = once(h->sealed_offset);
  g.names_offset = once(h->names_offset);
  g.name_slots = once(h->name_slots);
  g.name_slot_size = once(h->name_slot_size);
  if (g.names_offset == 0) g.name_slots = 0;  // a 2.0 board (reserved bytes, zero) or a board made without one
  g.stats_offset = once(h->stats_offset);
  g.cells_offset = once(h->cells_offset);
  g.hist_slots = once(h->hist_slots);
  g.stat_cells = once(h->stat_cells);
  g.hist_slot_size = once(h->hist_slot_size);
  g.cell_desc_size = once(h->cell_desc_size);
  g.cell_bytes = once(h->cell_bytes);
  if (g.minor < 2 || g.stats_offset == 0) g.stats_offset = g.cells_offset = g.hist_slots = g.stat_cells = 0;  // none
  for (unsigned n = 0; n < kCounters; ++n) g.signals[n] = once(h->sources[n].signal);
  return g;
}

// A timestamp clock faster than this is a scribbled rate, not a clock (it also bounds every wait the
// probe computes from the rate: ERRATUM E123).
inline constexpr std::uint64_t kMaxClockHz = 100'000'000'000ull;

Problem validate(const Geometry& g, std::uint64_t size) noexcept {
  auto bad = [](std::uint64_t off, const char* what) { return Problem{false, off, what}; };
  if (size < sizeof(BoardHeader)) return bad(size, "segment too small for a board header");
  if (std::memcmp(g.magic, kMagic, sizeof kMagic) != 0) return bad(0, "not a kron board (bad magic)");
  if (g.byte_order != kByteOrderMark)
    return bad(offsetof(BoardHeader, byte_order), "byte-order mark is not 0x01020304 (another byte order?)");
  if (g.major != kMajor)
    return Problem{false, offsetof(BoardHeader, major),
                   "board format " + std::to_string(g.major) + "." + std::to_string(g.minor) +
                       " is not supported by this kron (board format " + std::to_string(kMajor) + "." +
                       std::to_string(kMinor) + "): recreate the board with this kron"};
  if (g.header_size < sizeof(BoardHeader) || g.header_size % kLine || g.header_size > size)
    return bad(offsetof(BoardHeader, header_size), "header size is invalid");
  if (g.line_size != kLine) return bad(offsetof(BoardHeader, line_size), "cache line size is not 64");
  if (g.segment_size != size)
    return bad(offsetof(BoardHeader, segment_size), "segment size does not match the segment");
  if (g.lane_count == 0 || g.lane_count > kMaxLanes)
    return bad(offsetof(BoardHeader, lane_count), "lane count is invalid");
  if (g.lane_header_size < sizeof(LaneHeader) || g.lane_header_size % kLine || g.lane_header_size > 65536)
    return bad(offsetof(BoardHeader, lane_header_size), "lane header size is invalid");
  if (g.lanes_offset < g.header_size || g.lanes_offset % kLine || g.lanes_offset > size ||
      std::uint64_t{g.lane_count} * g.lane_header_size > size - g.lanes_offset)
    return bad(offsetof(BoardHeader, lanes_offset), "lane table runs past the end of the segment");
  if (!is_pow2(g.block_bytes) || g.block_bytes < kMinBlockBytes || g.block_bytes > kMaxBlockBytes)
    return bad(offsetof(BoardHeader, block_bytes), "block size is not a power of two from 4 KiB to 1 MiB");
  if (g.block_count == 0 || g.block_count >= kNoBlock)
    return bad(offsetof(BoardHeader, block_count), "block count is invalid");
  if (g.block_header_size != sizeof(BlockHeader))
    return bad(offsetof(BoardHeader, block_header_size), "block header size is not 64");
  const std::uint64_t lanes_end = g.lanes_offset + std::uint64_t{g.lane_count} * g.lane_header_size;
  if (g.blocks_offset < lanes_end || g.blocks_offset % kLine || g.blocks_offset > size ||
      std::uint64_t{g.block_count} * sizeof(BlockHeader) > size - g.blocks_offset)
    return bad(offsetof(BoardHeader, blocks_offset), "block table runs past the end of the segment");
  const std::uint64_t blocks_end = g.blocks_offset + std::uint64_t{g.block_count} * sizeof(BlockHeader);
  if (g.sealed_offset < blocks_end || g.sealed_offset % kLine || g.sealed_offset > size ||
      std::uint64_t{g.block_count} * sizeof(SealedCell) > size - g.sealed_offset)
    return bad(offsetof(BoardHeader, sealed_offset), "sealed-block queue runs past the end of the segment");
  const std::uint64_t sealed_end = g.sealed_offset + std::uint64_t{g.block_count} * sizeof(SealedCell);
  std::uint64_t names_end = sealed_end;
  if (g.names_offset) {  // 2.1: the name table, between the sealed queue and the blocks
    if (g.name_slot_size != sizeof(NameSlot))
      return bad(offsetof(BoardHeader, name_slot_size), "name slot size is not 256");
    if (g.name_slots > kMaxNameSlots) return bad(offsetof(BoardHeader, name_slots), "name slot count is above 65534");
    if (g.names_offset < sealed_end || g.names_offset % kLine || g.names_offset > size ||
        std::uint64_t{g.name_slots} * sizeof(NameSlot) > size - g.names_offset)
      return bad(offsetof(BoardHeader, names_offset), "name table runs past the end of the segment");
    names_end = g.names_offset + std::uint64_t{g.name_slots} * sizeof(NameSlot);
  }
  std::uint64_t stats_end = names_end;
  if (g.stats_offset) {  // 2.2: histogram slots, cell descriptors, cells, between the name table and the blocks
    if (g.hist_slot_size != sizeof(HistSlot) || g.cell_desc_size != sizeof(CellDesc) ||
        g.cell_bytes != stats::kCellBytes)
      return bad(offsetof(BoardHeader, hist_slot_size), "statistics area entry sizes are not 64, 32 and 8192");
    if (g.hist_slots > kMaxHistSlots)
      return bad(offsetof(BoardHeader, hist_slots), "histogram slot count is above 4096");
    if (g.stat_cells > kMaxStatCells)
      return bad(offsetof(BoardHeader, stat_cells), "statistics cell count is above 2^20");
    const std::uint64_t table =
        std::uint64_t{g.hist_slots} * sizeof(HistSlot) + std::uint64_t{g.stat_cells} * sizeof(CellDesc);
    if (g.stats_offset < names_end || g.stats_offset % kLine || g.stats_offset > size || table > size - g.stats_offset)
      return bad(offsetof(BoardHeader, stats_offset), "statistics tables run past the end of the segment");
    if (g.cells_offset < g.stats_offset + table || g.cells_offset % kLine || g.cells_offset > size ||
        std::uint64_t{g.stat_cells} * stats::kCellBytes > size - g.cells_offset)
      return bad(offsetof(BoardHeader, cells_offset), "statistics cells run past the end of the segment");
    stats_end = g.cells_offset + std::uint64_t{g.stat_cells} * stats::kCellBytes;
  }
  if (g.data_offset < stats_end || g.data_offset % kLine || g.data_offset > size ||
      g.block_bytes > (size - g.data_offset) / g.block_count)
    return bad(offsetof(BoardHeader, data_offset), "blocks run past the end of the segment");
  if (g.clock_hz == 0 || g.clock_hz > kMaxClockHz)
    return bad(offsetof(BoardHeader, clock_hz), "timestamp clock rate is 0 or above 100 GHz");
  if (g.clock_kind != ClockKind::Tsc && g.clock_kind != ClockKind::Monotonic)
    return bad(offsetof(BoardHeader, clock_kind), "unknown clock kind");
  if (g.config & ~kCfgWrapB) return bad(offsetof(BoardHeader, config), "configuration register has unknown bits");
  for (unsigned n = 0; n < kCounters; ++n) {
    const auto s = g.signals[n];
    if (s != Signal::None && s != Signal::Perf && s != Signal::OnCpu)
      return bad(offsetof(BoardHeader, sources) + n * sizeof(CounterSource), "counter source has an unknown signal");
  }
  return {};
}

Problem validate(const void* base, std::uint64_t size, Geometry* out) noexcept {
  if (size < sizeof(BoardHeader)) return Problem{false, size, "segment too small for a board header"};
  const Geometry g = read_geometry(base);
  Problem p = validate(g, size);
  if (p.ok && out) *out = g;
  return p;
}

std::uint32_t Mapping::lanes_in_use() const { return board::lanes_in_use(*header(), geo_.lane_count); }

namespace {
std::atomic<bool> g_trust{false};
}
void set_trust_boards(bool on) { g_trust.store(on, std::memory_order_relaxed); }
bool trust_boards() {
  if (g_trust.load(std::memory_order_relaxed)) return true;
  const char* e = std::getenv(kEnvTrustBoard);
  return e && std::strcmp(e, "1") == 0;
}

// A board's file while its creator fills it: mode 0 (Mapping::create), its header not yet written. Root can
// open it anyway, others get EACCES; either way it is told apart from a foreign file, and waited for
// (ERRATUM E400): up to kCreationWaitMs for the creator's fchmod, then "being created".
namespace {
constexpr int kCreationWaitMs = 2000;
bool being_created(const struct stat& st) { return S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0; }

// Opens the board's file for reading and writing once its creator has finished it; -1 and *err otherwise.
int open_finished(const std::string& path, const std::string& name, std::string* err) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kCreationWaitMs);
  for (;;) {
    const int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    const int open_errno = errno;
    struct stat st;
    const bool half = fd >= 0 ? ::fstat(fd, &st) == 0 && being_created(st)
                              : open_errno == EACCES && ::stat(path.c_str(), &st) == 0 && being_created(st);
    if (!half) {
      if (fd < 0) *err = "no board '" + name + "' (" + path + "): " + std::strerror(open_errno);
      return fd;
    }
    if (fd >= 0) ::close(fd);
    if (std::chrono::steady_clock::now() >= deadline) {
      *err = "board '" + name + "' (" + path + ") is being created: still mode 0000 after " +
             std::to_string(kCreationWaitMs / 1000) + " s (a creator that died leaves it so: kron board rm " + name +
             "; ERRATUM E400)";
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}
}  // namespace

std::string untrusted_owner(int fd, const std::string& name) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return "board '" + name + "' cannot be examined: " + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "board '" + name + "' is not a regular file";
  if (trust_boards()) return "";
  if (st.st_uid != ::geteuid())
    return "board '" + name + "' belongs to uid " + std::to_string(st.st_uid) + ", not to this user (uid " +
           std::to_string(::geteuid()) +
           "): another user can rewrite it under this process (--trust-board to use it anyway)";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return "board '" + name + "' has mode " + mode +
           ": others can rewrite it under this process (--trust-board to use it anyway, or recreate it with --perms "
           "0600)";
  }
  return "";
}

Mapping::~Mapping() {
  if (base_ && owned_) ::munmap(base_, size_);
}
Mapping::Mapping(Mapping&& o) noexcept : base_(o.base_), size_(o.size_), owned_(o.owned_), geo_(o.geo_) {
  o.base_ = nullptr;
}
Mapping& Mapping::operator=(Mapping&& o) noexcept {
  if (this != &o) {
    if (base_ && owned_) ::munmap(base_, size_);
    base_ = o.base_, size_ = o.size_, owned_ = o.owned_, geo_ = o.geo_;
    o.base_ = nullptr;
  }
  return *this;
}
Mapping Mapping::view(void* base, std::uint64_t size, Problem* problem) {
  Mapping m;
  const Problem p = validate(base, size, &m.geo_);
  if (problem) *problem = p;
  if (!p.ok) return {};
  m.base_ = base, m.size_ = size, m.owned_ = false;
  return m;
}

namespace {
// A new board's lane table (every lane without a block) and pool: every block free, in the free stack in
// index order (block 0 on top); the sealed queue empty.
void init_tables(std::uint8_t* m, std::uint64_t lanes_off, std::uint32_t lanes, std::uint64_t blocks_off,
                 std::uint64_t sealed_off, std::uint32_t blocks) {
  for (std::uint32_t i = 0; i < lanes; ++i) {
    auto* L = new (m + lanes_off + i * sizeof(LaneHeader)) LaneHeader;
    L->first.store(kNoBlock, std::memory_order_relaxed);
    L->cur.store(kNoBlock, std::memory_order_relaxed);
  }
  auto* bh = reinterpret_cast<BlockHeader*>(m + blocks_off);
  auto* cells = reinterpret_cast<SealedCell*>(m + sealed_off);
  for (std::uint32_t b = 0; b < blocks; ++b) {
    new (bh + b) BlockHeader;
    bh[b].lane.store(kNoBlock, std::memory_order_relaxed);
    bh[b].next.store(kNoBlock, std::memory_order_relaxed);
    bh[b].next_free.store(b + 1 < blocks ? b + 1 : kNoBlock, std::memory_order_relaxed);
    new (cells + b) SealedCell;
    cells[b].seq.store(b, std::memory_order_relaxed);
  }
}

}  // namespace

Mapping Mapping::create(const CreateOptions& o, std::string* err, std::string* note) {
  auto fail = [&](const std::string& why) {
    *err = why;
    return Mapping{};
  };
  if (!valid_name(o.name)) return fail("board name '" + o.name + "' is invalid (1-23 of [A-Za-z0-9._-])");
  if (o.lanes == 0 || o.lanes > kMaxLanes) return fail("lane count must be 1-" + std::to_string(kMaxLanes));
  if (o.size > kMaxSegment) return fail("board size is larger than 1 TiB");
  const std::uint64_t block = o.block_bytes ? o.block_bytes : default_block_bytes(o.size, o.lanes);
  if (!is_pow2(block) || block < kMinBlockBytes || block > kMaxBlockBytes)
    return fail("block size " + std::to_string(block) + " is not a power of two from 4 KiB to 1 MiB");
  // The sample memory is `size` bytes in blocks shared by every lane (the header, lane and block tables
  // come on top, as the board's registers sit beside its 16 MB local memory, 003 Table 1).
  if (o.size / block == 0 || o.size / block >= kNoBlock)
    return fail("board memory " + std::to_string(o.size) + " does not hold 1 to 2^32-2 blocks of " +
                std::to_string(block) + " bytes");
  const std::uint32_t blocks = static_cast<std::uint32_t>(o.size / block);
  const std::uint64_t lanes_off = sizeof(BoardHeader);
  const std::uint64_t blocks_off = lanes_off + std::uint64_t{o.lanes} * sizeof(LaneHeader);
  const std::uint64_t sealed_off = blocks_off + std::uint64_t{blocks} * sizeof(BlockHeader);
  if (o.name_slots > kMaxNameSlots) return fail("name table size must be 0-" + std::to_string(kMaxNameSlots));
  const std::uint64_t names_off =
      (sealed_off + std::uint64_t{blocks} * sizeof(SealedCell) + kLine - 1) & ~std::uint64_t{kLine - 1};
  if (o.hist_slots > kMaxHistSlots) return fail("histogram table size must be 0-" + std::to_string(kMaxHistSlots));
  if (o.stat_cells > kMaxStatCells) return fail("statistics cells must be 0-" + std::to_string(kMaxStatCells));
  const std::uint64_t stats_off =
      (names_off + std::uint64_t{o.name_slots} * sizeof(NameSlot) + kLine - 1) & ~std::uint64_t{kLine - 1};
  const std::uint64_t cells_off = (stats_off + std::uint64_t{o.hist_slots} * sizeof(HistSlot) +
                                   std::uint64_t{o.stat_cells} * sizeof(CellDesc) + 4095) &
                                  ~std::uint64_t{4095};
  const std::uint64_t data_off =
      (cells_off + std::uint64_t{o.stat_cells} * stats::kCellBytes + 4095) & ~std::uint64_t{4095};
  const std::uint64_t size = data_off + std::uint64_t{blocks} * block;
  const std::string path = board_path(o.name), dir = shm_dir();
  // ERRATUM E122. The board must fit where it is made: a segment larger than the free space of its tmpfs
  // is created and mapped without complaint and kills the first process that touches a missing page
  // (SIGBUS, in the traced program). Refuse it here, by name and size, and commit the memory below.
  struct statvfs fs;
  if (::statvfs(dir.c_str(), &fs) == 0) {
    const std::uint64_t avail = std::uint64_t{fs.f_bavail} * fs.f_frsize;
    if (size > avail)
      return fail("board '" + o.name + "' needs " + std::to_string((size + (1u << 20) - 1) >> 20) + " MiB but " + dir +
                  " has " + std::to_string(avail >> 20) +
                  " MiB free (a smaller --buffer, or --shm-dir DIR on a larger "
                  "tmpfs)");
  }
  if (o.replace) ::unlink(path.c_str());
  // Created under a temporary name and renamed? Not on every tmpfs user's terms: create exclusively with
  // mode 0 so nobody can open it until the header is complete, then fchmod to the requested permissions.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd < 0) return fail("cannot create board '" + o.name + "' (" + path + "): " + std::strerror(errno));
  auto undo = [&](const std::string& why) {
    ::close(fd);
    ::unlink(path.c_str());
    return fail(why);
  };
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int e = errno;  // EFBIG: the file-size limit (ulimit -f) is below the board's size
    return undo("cannot size board '" + o.name + "' (" + path + ") to " +
                std::to_string((size + (1u << 20) - 1) >> 20) + " MiB: " + std::strerror(e) +
                (e == EFBIG ? " (the file-size limit, ulimit -f, is lower)" : ""));
  }
  // Commit every page in the file system now (tmpfs allocates them): a full /dev/shm is a clear error
  // here, never a SIGBUS later. A file system without fallocate keeps the free-space check above, and the
  // creator commits the pages by writing them (populate below).
  const int fa = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (fa != 0 && fa != EOPNOTSUPP && fa != EINVAL)
    return undo("cannot commit " + std::to_string(size >> 20) + " MiB for board '" + o.name + "' in " + dir + ": " +
                std::strerror(fa) + (fa == ENOSPC ? " (a smaller --buffer, or --shm-dir DIR on a larger tmpfs)" : ""));
  void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return undo("cannot map board '" + o.name + "' (" + path + "): " + std::strerror(errno));
  // Huge pages: a hint before the pages exist (the pages are allocated by populate() just below).
  std::string huge_why;
  if (o.huge_pages) {
    huge_why = huge_pages_unavailable();
    if (huge_why.empty() && ::madvise(m, size, MADV_HUGEPAGE) != 0)
      huge_why = std::string("madvise: ") + std::strerror(errno);
  }
  // ERRATUM E321. The memory is committed once, by posix_fallocate above; no process maps all of it into
  // its page tables (a 1 GiB board cost every process that opened it 0.3 s): a probe maps each block it
  // takes, in its slow path. Only where fallocate is missing does the creator commit by writing, and
  // huge pages are populated here so that the kernel's choice can be reported.
  if (fa != 0 || (o.huge_pages && huge_why.empty())) populate(m, size);
  if (o.huge_pages && huge_why.empty() && size >= (2u << 20) && huge_mapped_bytes(m) == 0)
    huge_why = "the kernel allowed them but gave 4 KiB pages (no free 2 MiB page?)";
  if (o.huge_pages && note)
    *note = huge_why.empty()
                ? "huge pages: " + std::to_string(huge_mapped_bytes(m) >> 20) + " MiB of the board on 2 MiB pages"
                : "huge pages not used: " + huge_why + "; the board uses 4 KiB pages";
  auto* h = new (m) BoardHeader;  // the segment is zero-filled: every counter and lane starts at 0
  std::memcpy(h->magic, kMagic, sizeof kMagic);
  h->byte_order = kByteOrderMark;
  h->major = kMajor, h->minor = kMinor;
  h->header_size = sizeof(BoardHeader);
  h->line_size = kLine;
  h->segment_size = size;
  h->lanes_offset = lanes_off;
  h->lane_count = o.lanes;
  h->lane_header_size = sizeof(LaneHeader);
  h->data_offset = data_off;
  h->block_bytes = block;
  h->blocks_offset = blocks_off;
  h->block_count = blocks;
  h->block_header_size = sizeof(BlockHeader);
  h->sealed_offset = sealed_off;
  h->names_offset = o.name_slots ? names_off : 0;
  h->name_slots = o.name_slots;
  h->name_slot_size = sizeof(NameSlot);
  if (o.stat_cells) {  // 2.2 (ERRATUM E182)
    h->stats_offset = stats_off;
    h->cells_offset = cells_off;
    h->hist_slots = o.hist_slots;
    h->stat_cells = o.stat_cells;
    h->hist_slot_size = sizeof(HistSlot);
    h->cell_desc_size = sizeof(CellDesc);
    h->cell_bytes = stats::kCellBytes;
    h->stat_gen.store(kStatGenMark, std::memory_order_relaxed);
  }
  h->clock_kind = clock_kind();
  h->clock_hz = clock_hz();
  h->node = o.node;
  h->created_ticks = ticks(h->clock_kind);
  h->created_realtime_ns = realtime_ns();
  h->creator_pid = static_cast<std::uint32_t>(::getpid());
  h->config = o.mode == BufferMode::Simple ? kCfgWrapB : 0;
  std::snprintf(h->name, sizeof h->name, "%s", o.name.c_str());
  for (unsigned n = 0; n < kCounters; ++n) h->sources[n] = o.sources[n];
  h->enable_reg.store(regs::kEnableReset, std::memory_order_relaxed);
  h->mode_reg.store(regs::kModeReset, std::memory_order_relaxed);
  h->clock_reg.store(regs::kClockReset, std::memory_order_relaxed);
  init_tables(static_cast<std::uint8_t*>(m), lanes_off, o.lanes, blocks_off, sealed_off, blocks);
  h->free_top.store(0, std::memory_order_relaxed);
  h->control.store(control_word(o.filter, static_cast<std::uint16_t>(o.csr & kCsrStoredMask)),
                   std::memory_order_relaxed);
  Mapping out;
  out.base_ = m, out.size_ = size, out.owned_ = true;
  out.geo_ = read_geometry(m);  // written just above by this process: valid
  write_counter_control(*h, 0, o.mode_reg, o.clock_reg);
  write_counter_control(*h, o.enable, 0, 0);
  // Release: everything above is visible to whoever can open the segment after the fchmod.
  std::atomic_thread_fence(std::memory_order_release);
  if (::fchmod(fd, o.perms) != 0) return undo("cannot set board permissions: " + std::string(std::strerror(errno)));
  ::close(fd);
  return out;
}

Mapping Mapping::open(const std::string& name, std::string* err, std::uint64_t* err_offset) {
  if (err_offset) *err_offset = 0;
  if (!valid_name(name)) {
    *err = "board name '" + name + "' is invalid";
    return {};
  }
  const std::string path = board_path(name);
  const int fd = open_finished(path, name, err);
  if (fd < 0) return {};
  if (const std::string why = untrusted_owner(fd, name); !why.empty()) {
    ::close(fd);
    *err = why;
    return {};
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
    ::close(fd);
    *err = "board '" + name + "' is empty or cannot be examined";
    return {};
  }
  const std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
  void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) {
    *err = "cannot map board '" + name + "': " + std::strerror(errno);
    return {};
  }
  Mapping out;
  out.base_ = m, out.size_ = size, out.owned_ = true;
  // Acquire: pairs with the creator's release fence before it opened the permissions.
  std::atomic_thread_fence(std::memory_order_acquire);
  const Problem p = validate(m, size, &out.geo_);
  if (!p.ok) {
    *err = "board '" + name + "' refused: " + p.what;
    if (err_offset) *err_offset = p.offset;
    return {};
  }
  // ERRATUM E321. Nothing is mapped in advance (opening costs the same for any board size): tools touch
  // only what they read, and a probe maps each block it takes in its slow path (commit_block).
  return out;
}

bool unlink(const std::string& name, std::string* err) {
  if (!valid_name(name) || ::unlink(board_path(name).c_str()) != 0) {
    *err = "cannot remove board '" + name + "': " + (valid_name(name) ? std::strerror(errno) : "invalid name");
    return false;
  }
  return true;
}

// ---- registers ----------------------------------------------------------------------------------------

std::uint16_t filter_of(const BoardHeader& b) {
  return static_cast<std::uint16_t>(b.control.load(std::memory_order_relaxed));
}
std::uint16_t csr_stored(const BoardHeader& b) {
  return static_cast<std::uint16_t>(b.control.load(std::memory_order_relaxed) >> 16);
}
void write_filter(BoardHeader& b, std::uint16_t filter) {
  std::uint32_t c = b.control.load(std::memory_order_relaxed);
  // CAS: `kron csr` may write the other half at the same time; probes only load this word.
  while (!b.control.compare_exchange_weak(c, (c & 0xffff0000u) | filter, std::memory_order_relaxed)) {}
}
void write_csr(BoardHeader& b, std::uint16_t written) {
  std::uint32_t c = b.control.load(std::memory_order_relaxed);
  // CAS, as in write_filter.
  while (!b.control.compare_exchange_weak(
      c, (c & 0xffffu) | (std::uint32_t{csr_write(static_cast<std::uint16_t>(c >> 16), written)} << 16),
      std::memory_order_relaxed)) {}
}

namespace {
bool holder_gone(std::uint32_t pid) {
  return pid && pid <= (1u << 22) && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}
}  // namespace

void arm_hist_threshold(HistSlot& slot, std::uint16_t bucket, std::uint32_t count) {
  slot.threshold_bucket.store(bucket, std::memory_order_relaxed);
  slot.threshold_count.store(count, std::memory_order_release);  // the count arms it: after the bucket
}

void arm_counter_threshold(BoardHeader& b, bool arm, std::uint32_t index, std::uint64_t value) {
  // The value first, then the index that arms it.
  b.counter_threshold.store(arm ? value : 0, std::memory_order_relaxed);
  b.counter_threshold_index.store(arm ? index + 1 : 0, std::memory_order_release);
}

void set_watch(std::atomic<std::uint32_t>& mode, std::atomic<std::uint32_t>& phase, std::uint32_t new_mode,
               std::uint32_t new_phase) {
  phase.store(new_phase, std::memory_order_relaxed);
  mode.store(new_mode, std::memory_order_release);
}

// Every thread refills its cache at its next value and sees the new settings (ERRATUM E186).
void stats_changed(BoardHeader& b) { b.stat_gen.fetch_add(1, std::memory_order_release); }

bool write_counter_control(BoardHeader& b, std::uint64_t enable, std::uint64_t mode, std::uint64_t clock) {
  // ERRATUM E124. A lock word serialises writers (tools and programs, rare; probes never take it). It holds
  // the holder's pid: a holder that died in it (killed between the two stores) is replaced, and a live
  // holder that keeps it for a second (stopped, or a scribbled word naming a live process) makes this
  // write fail (false) rather than hang every control call. By this process's own clock.
  auto now_ns = [] { return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()); };
  if (!pool::lock(b.ctl_lock, static_cast<std::uint32_t>(::getpid()), 1'000'000'000ull, now_ns, holder_gone))
    return false;
  // 000 Tables B5-B7, ERRATUM E13: regs::write_mode / write_clock / write_enable decide which fields change.
  b.mode_reg.store(regs::write_mode(b.mode_reg.load(std::memory_order_relaxed), mode), std::memory_order_relaxed);
  b.clock_reg.store(regs::write_clock(b.clock_reg.load(std::memory_order_relaxed), clock), std::memory_order_relaxed);
  const std::uint64_t now = ticks(b.clock_kind);  // any value of the word gives some clock: never an index
  // Even, rounded up: a holder that died inside its update left the sequence odd.
  const std::uint64_t seq = (b.ctr_seq.load(std::memory_order_relaxed) + 1) & ~std::uint64_t{1};
  b.ctr_seq.store(seq + 1, std::memory_order_relaxed);  // odd: stopwatch state being written
  // Release fence: readers that see a changed stopwatch below also see the odd sequence number.
  std::atomic_thread_fence(std::memory_order_release);
  for (unsigned n = 0; n < kCounters; ++n) {
    const std::uint8_t f = field(enable, n);
    if (enable_of(f) == Enable::Nop) continue;  // Table B7 xx00 leaves the field alone (ERRATUM E13)
    const std::uint64_t since = b.sw_since[n].load(std::memory_order_relaxed);
    switch (enable_of(f)) {
      case Enable::Nop: break;
      case Enable::Disable:  // Table B7 xx01
        if (since)
          b.sw_acc[n].store(b.sw_acc[n].load(std::memory_order_relaxed) + (now - since), std::memory_order_relaxed);
        b.sw_since[n].store(0, std::memory_order_relaxed);
        break;
      case Enable::Enable:  // Table B7 xx10: previous contents intact
        if (!since) b.sw_since[n].store(now ? now : 1, std::memory_order_relaxed);
        break;
      case Enable::ResetEnable:  // Table B7 xx11
        b.sw_acc[n].store(0, std::memory_order_relaxed);
        b.sw_since[n].store(now ? now : 1, std::memory_order_relaxed);
        b.reset_gen[n].store(b.reset_gen[n].load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        break;
    }
  }
  b.enable_reg.store(regs::write_enable(b.enable_reg.load(std::memory_order_relaxed), enable),
                     std::memory_order_relaxed);
  b.ctr_seq.store(seq + 2, std::memory_order_release);  // even: consistent again
  // Release: a thread that sees the new generation re-reads the registers written above.
  b.counter_gen.store(b.counter_gen.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  pool::unlock(b.ctl_lock);  // release
  return true;
}

// ---- counter sources ------------------------------------------------------------------------------------

namespace {
struct Named {
  const char* name;
  std::uint32_t type;
  std::uint64_t config;
};
constexpr Named kPerf[] = {
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
};
}  // namespace

bool parse_source(const std::string& text, SourceSpec* out, std::string* err) {
  *out = SourceSpec{};
  std::snprintf(out->src.name, sizeof out->src.name, "%s", text.c_str());
  // Mode Register (Table B5) and Clock Select (Table B6) field values for each source.
  if (text == "clock" || text == "clock/10" || text == "clock/100" || text == "tsclk") {
    out->mode = static_cast<std::uint8_t>(Mode::Clock);
    out->clock = static_cast<std::uint8_t>(text == "clock"       ? ClockSel::NodeClk
                                           : text == "clock/10"  ? ClockSel::NodeClk10
                                           : text == "clock/100" ? ClockSel::NodeClk100
                                                                 : ClockSel::TsClk);
    return true;
  }
  if (text == "software") {
    out->mode = static_cast<std::uint8_t>(Mode::Software);
    return true;
  }
  if (text == "oncpu") {  // the clock gated by "this thread is on a CPU" (External Enable)
    out->mode = static_cast<std::uint8_t>(Mode::ExternalEnable);
    out->clock = static_cast<std::uint8_t>(ClockSel::NodeClk);
    out->src.signal = Signal::OnCpu;
    out->src.perf_type = PERF_TYPE_SOFTWARE;
    out->src.perf_config = PERF_COUNT_SW_TASK_CLOCK;
    return true;
  }
  for (const auto& p : kPerf)
    if (text == p.name) {
      out->mode = static_cast<std::uint8_t>(Mode::ExternalSignal);
      out->src.signal = Signal::Perf;
      out->src.perf_type = p.type;
      out->src.perf_config = p.config;
      return true;
    }
  std::string names = "clock, clock/10, clock/100, tsclk, software, oncpu";
  for (const auto& p : kPerf) names += std::string(", ") + p.name;
  *err = "unknown counter source '" + text + "' (known: " + names + ")";
  return false;
}

int open_perf_event(const CounterSource& s, int group_leader) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = s.perf_type;
  a.config = s.perf_config;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  a.read_format = PERF_FORMAT_GROUP;
  return static_cast<int>(::syscall(SYS_perf_event_open, &a, 0, -1, group_leader, PERF_FLAG_FD_CLOEXEC));
}

std::string probe_perf(const CounterSource& s) {
  if (s.signal == Signal::None) return "";
  const int fd = open_perf_event(s, -1);
  if (fd < 0) {
    const int e = errno;
    return std::string("perf_event_open failed: ") + std::strerror(e) +
           (s.perf_type == PERF_TYPE_HARDWARE ? " (no hardware PMU here: virtual machines often have none)" : "");
  }
  ::close(fd);
  return "";
}

}  // namespace kron::board
