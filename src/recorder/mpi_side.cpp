// The MPI side area: mpi_side.hpp says what it is and why (ERRATUM E440).
#include "recorder/mpi_side.hpp"

#include "kron/board_ops.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>
#include <cstring>
#include <stdexcept>

namespace kron::recorder::mpiside {
namespace {

std::runtime_error sys_error(const std::string& what, const std::string& path) {
  return std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

void init_header(SideHeader& h) {
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.header_size = kHeaderBytes;
  h.slot_bytes = kSlotBytes;
  h.state.store(static_cast<std::uint32_t>(State::Created), std::memory_order_relaxed);
  h.count.store(0, std::memory_order_relaxed);
}

// Maps kMaxBytes of address space over `fd` (of `file_bytes` now): the file grows under it, slots never move.
std::uint8_t* map_writer(int fd, const std::string& path) {
  void* p = ::mmap(nullptr, kMaxBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (p == MAP_FAILED) throw sys_error("cannot map the MPI side area", path);
  return static_cast<std::uint8_t*>(p);
}

}  // namespace

std::string side_path(const std::string& board) { return board::shm_dir() + "/kron-mpi-side." + board; }

void create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw sys_error("cannot create the MPI side area", path);
  SideHeader h{};
  init_header(h);
  const bool ok = ::pwrite(fd, &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h);
  const int err = errno;
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    errno = err;
    throw sys_error("cannot write the MPI side area", path);
  }
}

Writer Writer::open(const std::string& path) {
  Writer w;
  w.fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (w.fd_ < 0) throw sys_error("cannot open the MPI side area", path);
  struct stat st {};
  if (::fstat(w.fd_, &st) != 0) throw sys_error("cannot read the MPI side area", path);
  w.file_bytes_ = static_cast<std::uint64_t>(st.st_size);
  if (w.file_bytes_ < kHeaderBytes) throw std::runtime_error("the MPI side area " + path + " is too short");
  w.base_ = map_writer(w.fd_, path);
  if (std::memcmp(w.header().magic, kMagic, sizeof kMagic) != 0 || w.header().version != kVersion)
    throw std::runtime_error("the MPI side area " + path + " is not one of this kron (magic or version)");
  return w;
}

Writer Writer::anonymous() {
  Writer w;
  w.fd_ = ::memfd_create("kron-mpi-side", MFD_CLOEXEC);
  if (w.fd_ < 0) throw sys_error("cannot make the MPI side area", "(memfd)");
  if (::ftruncate(w.fd_, static_cast<off_t>(kGrowBytes)) != 0) throw sys_error("cannot size", "(memfd)");
  w.file_bytes_ = kGrowBytes;
  w.base_ = map_writer(w.fd_, "(memfd)");
  init_header(w.header());
  return w;
}

Writer& Writer::operator=(Writer&& o) noexcept {
  if (this != &o) {
    this->~Writer();
    fd_ = o.fd_;
    base_ = o.base_;
    file_bytes_ = o.file_bytes_;
    o.fd_ = -1;
    o.base_ = nullptr;
  }
  return *this;
}

Writer::~Writer() {
  if (base_) ::munmap(base_, kMaxBytes);
  if (fd_ >= 0) ::close(fd_);
  base_ = nullptr;
  fd_ = -1;
}

std::uint64_t Writer::append(const void* rec, std::size_t bytes) {
  SideHeader& h = header();
  const std::uint64_t i = h.count.load(std::memory_order_relaxed);
  const std::uint64_t end = kHeaderBytes + (i + 1) * kSlotBytes;
  if (end > kMaxBytes) throw std::runtime_error("the MPI side area is full (a billion records)");
  if (end > file_bytes_) {
    const std::uint64_t grown = (end + kGrowBytes - 1) / kGrowBytes * kGrowBytes;
    // posix_fallocate, not ftruncate alone: a full /dev/shm is an error here, never a SIGBUS at the store.
    if (const int e = ::posix_fallocate(fd_, 0, static_cast<off_t>(grown)); e != 0) {
      errno = e;
      throw sys_error("cannot grow the MPI side area to", std::to_string(grown) + " bytes");
    }
    file_bytes_ = grown;
  }
  std::uint8_t* slot = base_ + kHeaderBytes + i * kSlotBytes;
  std::memset(slot, 0, kSlotBytes);
  std::memcpy(slot, rec, bytes < kSlotBytes ? bytes : kSlotBytes);
  h.count.store(i + 1, std::memory_order_release);
  return i;
}

Contents parse(std::span<const std::uint8_t> bytes, const std::string& name) {
  Contents c;
  if (bytes.size() < kHeaderBytes) {
    c.problem = name + ": offset 0: " + std::to_string(bytes.size()) + " bytes, shorter than the side area's header";
    return c;
  }
  SideHeader h;
  std::memcpy(static_cast<void*>(&h), bytes.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) {
    c.problem = name + ": offset 0: not an MPI side area (magic)";
    return c;
  }
  if (h.version != kVersion || h.header_size != kHeaderBytes || h.slot_bytes != kSlotBytes) {
    c.problem = name + ": offset 8: version " + std::to_string(h.version) + ", header " +
                std::to_string(h.header_size) + ", slot " + std::to_string(h.slot_bytes) + " bytes: not this kron's";
    return c;
  }
  c.state = h.state.load(std::memory_order_acquire);
  c.rank = h.rank;
  c.world_size = h.world_size;
  c.pid = h.pid;
  c.node = h.node;
  c.host.assign(h.host, ::strnlen(h.host, sizeof h.host));
  if (c.state > static_cast<std::uint32_t>(State::Aborted)) {
    c.problem = name + ": offset 20: state " + std::to_string(c.state) + " is none of the side area's";
    return c;
  }
  const std::uint64_t room = (bytes.size() - kHeaderBytes) / kSlotBytes;
  std::uint64_t n = h.count.load(std::memory_order_acquire);
  if (n > room) {
    c.problem = name + ": offset 40: " + std::to_string(n) + " records published, room for " + std::to_string(room);
    n = room;
  }
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint8_t* s = bytes.data() + kHeaderBytes + i * kSlotBytes;
    record::RecordHeader rh;
    std::memcpy(&rh, s, sizeof rh);
    if (rh.kind == record::RecordKind::Mpi && rh.size == sizeof(record::MpiRecord)) {
      record::MpiRecord m;
      std::memcpy(&m, s, sizeof m);
      c.calls.push_back(m);
    } else if (rh.kind == record::RecordKind::ClockOffset && rh.size == sizeof(record::ClockOffsetRecord)) {
      record::ClockOffsetRecord o;
      std::memcpy(&o, s, sizeof o);
      c.offsets.push_back(o);
    } else {
      c.problem += (c.problem.empty() ? "" : "; ") + name + ": offset " +
                   std::to_string(kHeaderBytes + i * kSlotBytes) + ": record " + std::to_string(i) + " of kind " +
                   std::to_string(static_cast<unsigned>(rh.kind)) + ", " + std::to_string(rh.size) +
                   " bytes, is neither an MPI call nor a clock measurement";
      break;
    }
  }
  return c;
}

Contents read_fd(int fd, const std::string& name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw sys_error("cannot read the MPI side area", name);
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size == 0) return parse({}, name);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw sys_error("cannot map the MPI side area", name);
  Contents c = parse(std::span(static_cast<const std::uint8_t*>(p), size), name);
  ::munmap(p, size);
  return c;
}

Contents read(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw sys_error("cannot open the MPI side area", path);
  try {
    Contents c = read_fd(fd, path);
    ::close(fd);
    return c;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

EnvRank rank_from_env() {
  static constexpr std::pair<const char*, const char*> kVars[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMI_RANK", "PMI_SIZE"},
      {"PMIX_RANK", "PMIX_SIZE"},
      {"SLURM_PROCID", "SLURM_NTASKS"},
  };
  EnvRank e;
  auto number = [&e](const char* name, const char* v, long lo) {
    char* end = nullptr;
    errno = 0;
    const long x = std::strtol(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > 1'000'000'000) {
      if (e.problem.empty()) e.problem = std::string("$") + name + "=\"" + v + "\" is not a rank or size";
      return 0;
    }
    return static_cast<int>(x);
  };
  for (const auto& [rv, sv] : kVars)
    if (const char* r = std::getenv(rv); r && *r) {
      e.var = rv;
      e.rank = number(rv, r, 0);
      if (const char* n = std::getenv(sv); n && *n) e.size = number(sv, n, 1);
      return e;
    }
  return e;
}

const char* state_text(std::uint32_t state) {
  switch (static_cast<State>(state)) {
    case State::Created: return "never called MPI_Init";
    case State::Started: return "ended before MPI_Finalize";
    case State::Finalized: return "reached MPI_Finalize";
    case State::Aborted: return "called MPI_Abort";
  }
  return "in an unknown state";
}

}  // namespace kron::recorder::mpiside
