// kcompress: a parallel gzip compressor, instrumented with kron's named probes the way a real program is
// (pigz's design in small): the main thread reads the input in blocks and queues them, N worker threads
// compress one block each into a gzip member (zlib's deflate), and a writer thread writes the members in
// input order to standard output (concatenated gzip members are one valid gzip stream: gzip -d, zcat).
//
//   kcompress [-p THREADS] [-b BLOCK_KIB] [--synthetic MIB] < in > out.gz
//
// --synthetic MIB compresses generated text instead of standard input (deterministic, of varying
// compressibility: some blocks take longer than others, as real data does).
//
// The probes: KRON_SCOPE_V("read", block), KRON_SCOPE_V("compress", block) with KRON_SCOPE("deflate")
// nested in it, KRON_SCOPE_V("write", block),
// KRON_SCOPE("wait for block") (the writer waiting for the next block in order), KRON_SCOPE("wait for work")
// (a worker with nothing to do), KRON_EVENT("bytes out", n); every thread is named (kron::thread_name).
// Under `kron record` the names, values and source locations go into the recording; `kron rpt` pairs the
// scopes by name and `kron export` draws them (docs/walkthrough.md). Without a board every probe is a load
// and a return.
#include <unistd.h>
#include <zlib.h>

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kron/kron.hpp"

namespace {

struct Block {
  std::uint64_t index = 0;
  std::vector<unsigned char> in, out;
};

// The work queue (blocks read, not yet compressed) and the done map (compressed, not yet written).
std::mutex g_mu;
std::condition_variable g_work_cv, g_done_cv;
std::deque<Block> g_work;
std::map<std::uint64_t, Block> g_done;
bool g_eof = false;
std::uint64_t g_blocks = 0;  // blocks read in all (valid once g_eof)
bool g_failed = false;

void compress_block(Block& b) {
  KRON_SCOPE_V("compress", b.index);
  z_stream z{};
  // windowBits 15 + 16: a gzip member (header and CRC-32) per block.
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    g_failed = true;
    return;
  }
  b.out.resize(deflateBound(&z, b.in.size()));
  z.next_in = b.in.data();
  z.avail_in = static_cast<uInt>(b.in.size());
  z.next_out = b.out.data();
  z.avail_out = static_cast<uInt>(b.out.size());
  {
    KRON_SCOPE("deflate");  // nested in "compress": the time zlib itself takes
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) g_failed = true;
  }
  b.out.resize(z.total_out);
  deflateEnd(&z);
}

void worker(unsigned n) {
  kron::thread_name(("compress " + std::to_string(n)).c_str());
  for (;;) {
    Block b;
    {
      KRON_SCOPE("wait for work");
      std::unique_lock<std::mutex> lock(g_mu);
      g_work_cv.wait(lock, [] { return !g_work.empty() || g_eof; });
      if (g_work.empty()) return;
      b = std::move(g_work.front());
      g_work.pop_front();
    }
    g_work_cv.notify_all();  // the reader may be waiting for room in the queue
    compress_block(b);
    {
      std::lock_guard<std::mutex> lock(g_mu);
      g_done.emplace(b.index, std::move(b));
    }
    g_done_cv.notify_all();
  }
}

void writer() {
  kron::thread_name("writer");
  for (std::uint64_t next = 0;; ++next) {
    Block b;
    {
      KRON_SCOPE("wait for block");
      std::unique_lock<std::mutex> lock(g_mu);
      g_done_cv.wait(lock, [&] { return g_done.count(next) || (g_eof && next >= g_blocks); });
      if (!g_done.count(next)) return;
      b = std::move(g_done.at(next));
      g_done.erase(next);
    }
    KRON_SCOPE_V("write", b.index);
    if (std::fwrite(b.out.data(), 1, b.out.size(), stdout) != b.out.size()) g_failed = true;
    KRON_EVENT("bytes out", b.out.size());
  }
}

// Deterministic text of varying compressibility: runs of repeated words, numbers and noise.
struct Synthetic {
  std::uint64_t left, state = 0x9e3779b97f4a7c15u;
  std::uint64_t rnd() {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  }
  std::size_t fill(unsigned char* p, std::size_t n) {
    static const char* words[] = {"kron ", "probe ", "sample ", "board ", "lane ", "interval ", "trace ", "filter "};
    const std::size_t total = n = static_cast<std::size_t>(std::min<std::uint64_t>(n, left));
    while (n) {
      const std::uint64_t r = rnd();
      std::size_t k = 0;
      if ((r & 0xff) < 200) {  // a word
        const char* w = words[(r >> 8) & 7];
        k = std::min(n, std::strlen(w));
        std::memcpy(p, w, k);
      } else {  // noise: costs deflate more
        k = std::min<std::size_t>(n, 16 + ((r >> 8) & 63));
        for (std::size_t i = 0; i < k; ++i) p[i] = static_cast<unsigned char>(rnd());
      }
      p += k, n -= k;
    }
    left -= total;
    return total;
  }
};

}  // namespace

int main(int argc, char** argv) {
  unsigned threads = 2;
  std::size_t block_bytes = 128 << 10;
  std::uint64_t synthetic_mib = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-p" && i + 1 < argc) threads = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    else if (a == "-b" && i + 1 < argc) block_bytes = std::strtoull(argv[++i], nullptr, 10) << 10;
    else if (a == "--synthetic" && i + 1 < argc) synthetic_mib = std::strtoull(argv[++i], nullptr, 10);
    else {
      std::fprintf(stderr, "usage: kcompress [-p THREADS] [-b BLOCK_KIB] [--synthetic MIB] < in > out.gz\n");
      return 2;
    }
  }
  if (threads == 0 || block_bytes == 0) {
    std::fprintf(stderr, "kcompress: -p and -b must be at least 1\n");
    return 2;
  }
  if (isatty(STDOUT_FILENO)) {
    std::fprintf(stderr, "kcompress: standard output is a terminal; redirect it to a file\n");
    return 2;
  }
  kron::thread_name("reader");
  std::vector<std::thread> pool;
  for (unsigned n = 0; n < threads; ++n) pool.emplace_back(worker, n);
  std::thread w(writer);
  Synthetic syn{synthetic_mib << 20};
  for (std::uint64_t index = 0;; ++index) {
    Block b;
    b.index = index;
    b.in.resize(block_bytes);
    std::size_t got = 0;
    {
      KRON_SCOPE_V("read", index);
      if (synthetic_mib) {
        got = syn.fill(b.in.data(), block_bytes);
      } else {
        while (got < block_bytes) {
          const std::size_t n = std::fread(b.in.data() + got, 1, block_bytes - got, stdin);
          if (n == 0) break;
          got += n;
        }
      }
    }
    b.in.resize(got);
    std::unique_lock<std::mutex> lock(g_mu);
    if (got == 0) {
      g_eof = true;
      g_blocks = index;
      break;
    }
    // At most two blocks queued per worker: the reader never runs far ahead (memory stays bounded).
    g_work_cv.wait(lock, [&] { return g_work.size() < 2 * threads; });
    g_work.push_back(std::move(b));
    lock.unlock();
    g_work_cv.notify_all();
  }
  g_work_cv.notify_all();
  g_done_cv.notify_all();
  for (auto& t : pool) t.join();
  w.join();
  if (std::fflush(stdout) != 0 || g_failed) {
    std::fprintf(stderr, "kcompress: compression or output failed\n");
    return 1;
  }
  return 0;
}
