// The Perfetto export's output (perfetto_writer.hpp).
#include "exports/perfetto_writer.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "exports/perfetto_schema.hpp"
#include "exports/protowire.hpp"

namespace kron::exports {

using namespace perfetto;

PerfettoWriter::PerfettoWriter(std::FILE* f, const PerfettoOptions& o)
    : f_(f), max_bytes_(o.max_bytes), level_(o.deflate_level) {
  b_.reserve(kBatch + 65536);
  if (level_ > 0) {
    z_ = libdeflate_alloc_compressor(level_);
    if (!z_) throw std::runtime_error(fmt::format("cannot make a deflate compressor of level {}", level_));
    in_.reserve(kBatch + 65536);
    worker_ = std::thread([this] { run(); });
  }
}

PerfettoWriter::~PerfettoWriter() {
  stop();
  if (z_) libdeflate_free_compressor(z_);
}

// Hands the batch on (compressed: to the worker, after the previous one is written).
void PerfettoWriter::flush() {
  if (b_.empty()) return;
  if (!z_) {
    write(b_.data(), b_.size());
    b_.clear();
    return;
  }
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !busy_; });
  rethrow();
  in_.swap(b_);
  b_.clear();
  busy_ = true;
  cv_.notify_all();
}

void PerfettoWriter::write(const char* p, std::size_t n) {
  // ERRATUM E161: a trace larger than max_bytes is refused, not split or written unopenable.
  if (written_ + n > max_bytes_)
    throw std::runtime_error(
        fmt::format("the Perfetto trace would be larger than {} bytes, the most the Perfetto UI opens in a browser "
                    "(refused after {} bytes); export part of the recording, or use --format ctf",
                    max_bytes_, written_ + n));
  if (n && std::fwrite(p, 1, n, f_) != n)
    throw std::runtime_error(std::string("write failed: ") + std::strerror(errno));
  written_ += n;
}
void PerfettoWriter::run() {
  std::string out;
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return busy_ || quit_; });
    if (!busy_) return;
    lock.unlock();
    try {
      // One packet: Trace.packet { compressed_packets: zlib(deflate(the batch's packets, each with its tag)) }.
      const std::size_t bound = libdeflate_zlib_compress_bound(z_, in_.size());
      out.resize(bound + 16);
      const std::size_t head = 16;  // room for the two tags and lengths, filled in front of the data
      const std::size_t n = libdeflate_zlib_compress(z_, in_.data(), in_.size(), out.data() + head, bound);
      if (n == 0) throw std::runtime_error("deflate of a Perfetto batch failed");
      std::string pre;
      pb::tag(pre, kPktCompressedPackets, pb::kLengthDelimited);
      pb::varint(pre, n);
      std::string outer;
      pb::tag(outer, kTracePacket, pb::kLengthDelimited);
      pb::varint(outer, pre.size() + n);
      outer += pre;
      std::memcpy(out.data() + head - outer.size(), outer.data(), outer.size());
      raw_ += in_.size();
      write(out.data() + head - outer.size(), outer.size() + n);
    } catch (...) {
      lock.lock();
      error_ = std::current_exception();
      busy_ = false;
      cv_.notify_all();
      continue;
    }
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

void PerfettoWriter::stop() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

}  // namespace kron::exports
