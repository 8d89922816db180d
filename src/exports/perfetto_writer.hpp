// The Perfetto export's output (perfetto.cpp): whole packets batched, each batch written as it is or, by
// default, deflated on a second thread into one TracePacket.compressed_packets (ERRATUM E168).
#pragma once
#include <libdeflate.h>

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "exports/exports.hpp"

namespace kron::exports {

// The output: packets are built into a batch of about kBatch bytes (whole packets only). Uncompressed,
// a full batch is written as it is. Compressed (ERRATUM E168), a full batch is handed to a second thread
// that deflates it (libdeflate, zlib format) into one TracePacket.compressed_packets and writes that, while
// this thread builds the next batch: one batch in flight, so memory stays two batches and a compressor.
class PerfettoWriter {
 public:
  PerfettoWriter(std::FILE* f, const PerfettoOptions& o);
  ~PerfettoWriter();
  PerfettoWriter(const PerfettoWriter&) = delete;
  PerfettoWriter& operator=(const PerfettoWriter&) = delete;
  std::string& b() { return b_; }
  void maybe_flush() {
    if (b_.size() >= kBatch) flush();
  }
  // Hands the batch on (compressed: to the worker, after the previous one is written).
  void flush();
  // The last batch written, the worker gone; throws what went wrong on either thread.
  void finish() {
    flush();
    stop();
    rethrow();
  }
  std::uint64_t written() const { return written_; }
  std::uint64_t raw_bytes() const { return raw_; }

 private:
  static constexpr std::size_t kBatch = 1 << 20;
  void write(const char* p, std::size_t n);
  void run();  // the worker: deflates and writes each batch handed to it
  void stop();
  void rethrow() {
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

  std::FILE* f_;
  std::uint64_t max_bytes_, written_ = 0, raw_ = 0;
  int level_;
  std::string b_;
  // Compressed: the batch in flight (in_), guarded by mu_ while busy_ says whose it is.
  libdeflate_compressor* z_ = nullptr;
  std::string in_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool busy_ = false, quit_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace kron::exports
