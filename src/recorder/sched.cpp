// kron record --sched: context switches from perf_event's PERF_RECORD_SWITCH (see sched.hpp).
// Source: perf_event_open(2), "context_switch" (since Linux 4.3), "use_clockid" (4.1), "MMAP layout",
// PERF_RECORD_SWITCH and PERF_RECORD_MISC_SWITCH_OUT_PREEMPT (4.17), PERF_RECORD_LOST.
#include "recorder/sched.hpp"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kron/board.hpp"

namespace kron::recorder {
namespace {

std::uint64_t thread_key(std::uint32_t pid, std::uint32_t tid) { return std::uint64_t{pid} << 32 | tid; }

constexpr std::size_t kDataPages = 32;  // per CPU: 128 KiB with 4 KiB pages, inside perf_event_mlock_kb's 516

#ifndef PERF_RECORD_MISC_SWITCH_OUT_PREEMPT
#define PERF_RECORD_MISC_SWITCH_OUT_PREEMPT (1 << 14)
#endif

}  // namespace

std::unique_ptr<SchedRecorder> SchedRecorder::open(pid_t pid, std::uint32_t node, tracefile::TimeSource source,
                                                   std::string* why) {
  std::unique_ptr<SchedRecorder> s(new SchedRecorder);
  s->node_ = node;
  const long page = ::sysconf(_SC_PAGESIZE);
  s->data_bytes_ = kDataPages * static_cast<std::size_t>(page);
  s->map_bytes_ = s->data_bytes_ + static_cast<std::size_t>(page);
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_DUMMY;  // counts nothing: only the side-band switch records
  a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  a.sample_id_all = 1;  // the switch records carry (pid, tid) and time
  a.context_switch = 1;
  // The threads' kernel names (ERRATUM E410): PERF_RECORD_COMM at an exec or a rename, PERF_RECORD_FORK for
  // a thread or child that keeps its parent's name.
  a.comm = 1;
  a.comm_exec = 1;
  a.task = 1;
  a.inherit = 1;  // every thread and child the program makes
  a.disabled = 1;
  a.enable_on_exec = 1;  // from the program's exec on (not kron record's code between fork and exec)
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  // The time base's kernel clock (sched.hpp): perf's default clock is sched_clock, the kernel's TSC
  // conversion's own (ERRATUM E300).
  if (source != tracefile::TimeSource::Kernel) {
    a.use_clockid = 1;
    a.clockid = source == tracefile::TimeSource::Anchors ? CLOCK_MONOTONIC_RAW : CLOCK_MONOTONIC;
  }
  const long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
  int first_error = 0;
  for (long cpu = 0; cpu < cpus; ++cpu) {
    const int fd =
        static_cast<int>(::syscall(SYS_perf_event_open, &a, pid, static_cast<int>(cpu), -1, PERF_FLAG_FD_CLOEXEC));
    if (fd < 0) {
      if (errno == ENODEV) continue;  // an offline CPU
      if (!first_error) first_error = errno;
      continue;
    }
    void* m = ::mmap(nullptr, s->map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      if (!first_error) first_error = errno;
      ::close(fd);
      continue;
    }
    s->rings_.push_back(Ring{fd, m, static_cast<std::uint32_t>(cpu)});
  }
  if (first_error || s->rings_.empty()) {
    *why = std::string("perf_event_open (context switches of pid ") + std::to_string(pid) +
           ") failed: " + std::strerror(first_error ? first_error : ENODEV);
    if (first_error == EACCES || first_error == EPERM) {
      std::string paranoid = "?";
      if (FILE* f = std::fopen("/proc/sys/kernel/perf_event_paranoid", "r")) {
        char buf[16] = {};
        if (std::fgets(buf, sizeof buf, f)) paranoid = std::string(buf, std::strcspn(buf, "\n"));
        std::fclose(f);
      }
      *why += " (kernel.perf_event_paranoid is " + paranoid +
              "; a user's own programs need it at 2 or below, or CAP_PERFMON: sysctl kernel.perf_event_paranoid=2)";
    } else if (first_error == ENOSYS || first_error == ENOENT) {
      *why += " (no perf_event in this kernel or container)";
    } else if (first_error == ENOMEM || first_error == EPERM) {
      *why += " (the perf buffer is over perf_event_mlock_kb)";
    }
    return nullptr;  // the destructor closes what was opened
  }
  return s;
}

SchedRecorder::~SchedRecorder() {
  for (const Ring& r : rings_) {
    ::munmap(r.base, map_bytes_);
    ::close(r.fd);
  }
}

void SchedRecorder::poll() {
  for (const Ring& r : rings_) {
    auto* pg = static_cast<perf_event_mmap_page*>(r.base);
    // Acquire: the records up to data_head are written before the kernel publishes it.
    const std::uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
    std::uint64_t tail = pg->data_tail;
    const auto* data = static_cast<const std::uint8_t*>(r.base) + (map_bytes_ - data_bytes_);
    std::uint8_t rec[256];
    while (tail < head) {
      perf_event_header h;
      for (std::size_t i = 0; i < sizeof h; ++i)
        reinterpret_cast<std::uint8_t*>(&h)[i] = data[(tail + i) % data_bytes_];
      if (h.size < sizeof h || tail + h.size > head) break;  // damaged or not whole: stop here
      const std::size_t n = std::min<std::size_t>(h.size, sizeof rec);
      for (std::size_t i = 0; i < n; ++i) rec[i] = data[(tail + i) % data_bytes_];
      if (h.type == PERF_RECORD_SWITCH && n >= sizeof h + 16) {
        std::uint32_t pid, tid;
        std::uint64_t t;
        std::memcpy(&pid, rec + sizeof h, 4);
        std::memcpy(&tid, rec + sizeof h + 4, 4);
        std::memcpy(&t, rec + sizeof h + 8, 8);
        record::SchedRecord sr{};
        sr.h.kind = record::RecordKind::SchedSwitch;
        sr.h.size = sizeof sr;
        sr.h.flags =
            static_cast<std::uint8_t>((h.misc & PERF_RECORD_MISC_SWITCH_OUT ? record::kSchedOut : 0) |
                                      (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT ? record::kSchedPreempt : 0));
        sr.h.group = 0xff;
        sr.h.cpu = static_cast<std::uint16_t>(r.cpu);
        sr.source = board::source_id(node_, pid);
        sr.thread = tid;
        sr.timestamp = t;  // the kernel clock's ns: take_sorted() converts

        out_.push_back(sr);
        if (seen_.insert(thread_key(pid, tid)).second && !comm_.count(thread_key(pid, tid)) &&
            !parent_.count(thread_key(pid, tid)))
          read_proc_comm(pid, tid);  // a thread that ran before the events began: its name now
      } else if (h.type == PERF_RECORD_COMM && n > sizeof h + 8) {
        std::uint32_t pid, tid;
        std::memcpy(&pid, rec + sizeof h, 4);
        std::memcpy(&tid, rec + sizeof h + 4, 4);
        const char* c = reinterpret_cast<const char*>(rec + sizeof h + 8);
        comm_[thread_key(pid, tid)] = std::string(c, strnlen(c, std::min<std::size_t>(n - sizeof h - 8, 15)));
      } else if (h.type == PERF_RECORD_FORK && n >= sizeof h + 16) {
        std::uint32_t ids[4];  // pid, ppid, tid, ptid
        std::memcpy(ids, rec + sizeof h, sizeof ids);
        parent_.try_emplace(thread_key(ids[0], ids[2]), thread_key(ids[1], ids[3]));
      } else if (h.type == PERF_RECORD_LOST && n >= sizeof h + 16) {
        std::uint64_t lost;
        std::memcpy(&lost, rec + sizeof h + 8, 8);
        lost_ += lost;
      }
      tail += h.size;
    }
    // Release: the kernel may overwrite what was read only after the reads above.
    __atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
  }
}

void SchedRecorder::read_proc_comm(std::uint32_t pid, std::uint32_t tid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%u/task/%u/comm", pid, tid);
  if (FILE* f = std::fopen(path, "re")) {
    char buf[32] = {};
    if (std::fgets(buf, sizeof buf, f)) comm_.try_emplace(thread_key(pid, tid), buf, std::strcspn(buf, "\n"));
    std::fclose(f);
  }
}

void SchedRecorder::note_comm(std::uint32_t pid, std::uint32_t tid, const std::string& comm) {
  fallback_.try_emplace(thread_key(pid, tid), comm.substr(0, 15));
}

std::vector<record::NameRecord> SchedRecorder::thread_names() const {
  std::vector<record::NameRecord> out;
  for (const std::uint64_t key : seen_) {
    // Its own name, else the name of the thread it was forked from (a few generations at most).
    std::uint64_t k = key;
    const std::string* name = nullptr;
    for (int up = 0; !name && up < 16; ++up) {
      if (const auto c = comm_.find(k); c != comm_.end()) name = &c->second;
      const auto p = parent_.find(k);
      if (name || p == parent_.end()) break;
      k = p->second;
    }
    if (const auto f = fallback_.find(key); !name && f != fallback_.end()) name = &f->second;
    if (!name || name->empty()) continue;
    record::NameRecord r{};
    r.h.kind = record::RecordKind::Names;
    r.h.size = sizeof r;
    r.name_kind = record::NameKind::Thread;
    r.source = board::source_id(node_, static_cast<std::uint32_t>(key >> 32));
    r.thread = static_cast<std::uint32_t>(key);
    const std::size_t len = std::min<std::size_t>(name->size(), 15);
    std::memcpy(r.name, name->data(), len);
    std::memcpy(r.function, name->data(), len);
    out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](const record::NameRecord& x, const record::NameRecord& y) {
    return thread_key(x.source, x.thread) < thread_key(y.source, y.thread);
  });
  return out;
}

std::vector<record::SchedRecord> SchedRecorder::take_sorted(const tracefile::FileHeader& time_base) {
  for (auto& sr : out_) sr.timestamp = tracefile::kernel_ns_to_ticks(time_base, sr.timestamp);
  std::stable_sort(out_.begin(), out_.end(), [](const record::SchedRecord& x, const record::SchedRecord& y) {
    return x.timestamp < y.timestamp;
  });
  return std::move(out_);
}

}  // namespace kron::recorder
