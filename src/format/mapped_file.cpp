// A read-only memory map of a whole file: see kron/format/mapped_file.hpp.
#include "kron/format/mapped_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>

#include "kron/core/error.hpp"

namespace kron {

// ---- The SIGBUS guard (ERRATUM E127) -------------------------------------------------------------
// A page of a mapped file that lies past the file's end, because the file shrank after it was mapped,
// faults with SIGBUS. The guard maps anonymous zero pages over the rest of that mapping (so the read
// goes on and sees zeros) and marks the mapping shrunk; the readers check the mark and throw an
// InputError. A SIGBUS outside every registered mapping goes to the handler that was there before.
namespace {

struct Guarded {
  std::atomic<std::uintptr_t> begin{0}, end{0};  // [begin, end) of a live mapping; 0, 0 a free slot
  std::atomic<bool> shrunk{false};
};
constexpr int kGuardSlots = 256;  // live mappings at once; more are simply not guarded
Guarded g_guard[kGuardSlots];
struct sigaction g_previous {};
std::uintptr_t g_page = 4096;
std::once_flag g_installed;

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const auto a = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (Guarded& g : g_guard) {
    const std::uintptr_t b = g.begin.load(std::memory_order_acquire), e = g.end.load(std::memory_order_acquire);
    if (b == 0 || a < b || a >= e) continue;
    const std::uintptr_t from = a & ~(g_page - 1);
    // mmap is a plain system call here (async-signal-safe in practice; POSIX does not list it).
    if (::mmap(reinterpret_cast<void*>(from), e - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
        MAP_FAILED) {
      g.shrunk.store(true, std::memory_order_release);
      return;  // the faulting read runs again and reads zeros
    }
    break;
  }
  // Not ours (or the zero pages could not be mapped): the previous disposition decides.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) return g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    return g_previous.sa_handler(sig);
  }
  ::signal(SIGBUS, SIG_DFL);  // returning re-runs the read: the default action ends the process
}

void install_guard() {
  std::call_once(g_installed, [] {
    g_page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous);
  });
}

int guard(const std::uint8_t* data, std::uint64_t size) {
  install_guard();
  const auto b = reinterpret_cast<std::uintptr_t>(data);
  for (int i = 0; i < kGuardSlots; ++i) {
    std::uintptr_t expect = 0;
    if (g_guard[i].end.load(std::memory_order_relaxed) == 0 &&
        g_guard[i].begin.compare_exchange_strong(expect, b, std::memory_order_acq_rel)) {
      g_guard[i].shrunk.store(false, std::memory_order_relaxed);
      g_guard[i].end.store(b + size, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void unguard(int slot) {
  if (slot < 0) return;
  g_guard[slot].end.store(0, std::memory_order_release);
  g_guard[slot].begin.store(0, std::memory_order_release);
}

std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO (pipe): give it as standard input, -, where a tool reads one";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

}  // namespace

MappedFile::MappedFile(const std::string& path, Require require) : path_(path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below); no effect on a file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw InputError::at_offset(path, 0, std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw InputError::at_offset(path, 0, std::string("cannot stat: ") + std::strerror(e));
  }
  if ((require == Require::Regular || S_ISFIFO(st.st_mode) || S_ISDIR(st.st_mode)) && !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError::at_offset(path, 0, "not a regular file (" + kind_of(st.st_mode) + ")");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > 0) {
    void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int e = errno;
    ::close(fd);
    if (m == MAP_FAILED) throw InputError::at_offset(path, 0, std::string("cannot map: ") + std::strerror(e));
    data_ = static_cast<const std::uint8_t*>(m);
    size_ = size;
    ::madvise(m, size_, MADV_SEQUENTIAL);
    if (S_ISREG(st.st_mode)) slot_ = guard(data_, size_);
  } else {
    ::close(fd);
  }
}

MappedFile::~MappedFile() { reset(); }

MappedFile::MappedFile(MappedFile&& o) noexcept
    : path_(std::move(o.path_)),
      data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      slot_(std::exchange(o.slot_, -1)) {}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    reset();
    path_ = std::move(o.path_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    slot_ = std::exchange(o.slot_, -1);
  }
  return *this;
}

void MappedFile::reset() noexcept {
  unguard(std::exchange(slot_, -1));
  if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

void MappedFile::discard(std::uint64_t from, std::uint64_t to) const {
  if (!data_ || to <= from) return;
  ::madvise(const_cast<std::uint8_t*>(data_) + from, to - from, MADV_DONTNEED);
}

bool MappedFile::shrunk() const { return slot_ >= 0 && g_guard[slot_].shrunk.load(std::memory_order_acquire); }

void MappedFile::check() const {
  struct stat st;
  const bool have = ::stat(path_.c_str(), &st) == 0;
  const std::uint64_t now = have ? static_cast<std::uint64_t>(st.st_size) : 0;
  // ERRATUM E349: a file cut inside its last mapped page raises no SIGBUS (the rest of that page reads as
  // zeros): its size now tells. A file that is gone by its name is still whole under the mapping.
  if (!shrunk() && !(have && S_ISREG(st.st_mode) && now < size_)) return;
  throw InputError::at_offset(path_, now,
                              "the file shrank while it was read (" + std::to_string(size_) + " bytes when opened, " +
                                  std::to_string(now) +
                                  " now): another program truncated or rewrote it; read it again once it is whole");
}

}  // namespace kron
