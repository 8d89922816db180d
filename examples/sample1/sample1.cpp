// sample1: an instrumented multithreaded program in the spirit of the toolkit's src/sample/sample1.c
// (003 section 3.6): system calls inside a loop, intervals of mk_rpt classes 1, 2 and 3, and a class-4
// send/receive between two threads. The user data of every probe is the event's sequence number, as
// 003's probes wrote it ("mk_ts1 = SEND_EVENT"); interval.info beside this file describes the intervals.
//
//   kron record -o sample1.trace -- build/examples/kron_sample1 [LOOPS]
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>

#include "kron/kron.hpp"

namespace {
// Sequence numbers (interval.info). Groups: 1 program structure, 2 messages, 3 resource samples.
enum : std::uint64_t {
  kProgramBegin = 10, kProgramEnd = 20,            // class 1 "whole program"
  kCheckBegin = 81, kCheckFound = 82, kCheckMissing = 83,  // class 2 "file found" / "file missing"
  kInputBegin = 8, kInputEnd = 17, kOutputEnd = 12,         // class 3 "system calls" / "write output"
  kSend = 27, kReceive = 36,                                // class 4 "message send/receive latency"
  // Resource samples: counter snapshots, numbered apart from every interval so that rpt does not take
  // them for interval starts or ends (003 treats a Resource sample's data like a Trace sample's).
  kCountersBegin = 90, kCountersLoop = 91, kCountersEnd = 92,
};
constexpr unsigned kGroupProgram = 1, kGroupMessage = 2, kGroupResource = 3;
}  // namespace

int main(int argc, char** argv) {
  const int loops = argc > 1 ? std::atoi(argv[1]) : 2000;
  kron::trace(kGroupProgram, kProgramBegin);
  kron::resource(kGroupResource, kCountersBegin);
  int pipefd[2];
  if (::pipe(pipefd) != 0) return 1;
  std::thread receiver([&] {
    int msg;
    for (int i = 0; i < loops; ++i) {
      if (::read(pipefd[0], &msg, sizeof msg) != sizeof msg) break;
      kron::trace(kGroupMessage, kReceive);
    }
  });
  const int devnull = ::open("/dev/null", O_WRONLY);
  char line[64];
  for (int i = 0; i < loops; ++i) {
    kron::trace(kGroupProgram, kInputBegin);  // class 3: first sub-interval, system calls
    const long pid = ::getpid();
    const long ppid = ::getppid();
    const std::time_t now = std::time(nullptr);
    kron::trace(kGroupProgram, kInputEnd);  // ... second sub-interval: write the output
    const int n = std::snprintf(line, sizeof line, "%d %ld %ld %ld\n", i, pid, ppid, static_cast<long>(now));
    if (::write(devnull, line, static_cast<std::size_t>(n)) < 0) return 1;
    kron::trace(kGroupProgram, kOutputEnd);
    kron::trace(kGroupProgram, kCheckBegin);  // class 2: which of two outcomes
    if (::access(i % 3 ? "/dev/null" : "/nonexistent/kron", F_OK) == 0)
      kron::trace(kGroupProgram, kCheckFound);
    else
      kron::trace(kGroupProgram, kCheckMissing);
    kron::count(1, 1);  // resource counter 1, if wired as "software": loops done
    kron::trace(kGroupMessage, kSend);  // class 4: send to the receiver thread
    if (::write(pipefd[1], &i, sizeof i) != sizeof i) return 1;
    if (i % 500 == 0) kron::resource(kGroupResource, kCountersLoop);
  }
  receiver.join();
  ::close(devnull);
  kron::resource(kGroupResource, kCountersEnd);
  kron::trace(kGroupProgram, kProgramEnd);
  std::printf("sample1: %d loops done\n", loops);
  return 0;
}
