// kron trace file writer and reader. Format: include/kron/format/trace_file.hpp, docs/trace-format.md.
#include "kron/format/trace_file.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <unistd.h>
#include <zstd.h>

#include "kron/core/codec.hpp"
#include "kron/core/error.hpp"
#include "kron/core/stats.hpp"

namespace kron::tracefile {

static_assert(std::endian::native == std::endian::little, "kron trace files are little-endian; port the writer");

namespace {
constexpr std::size_t kWriteBuffer = 1 << 20;
// An uncompressed piece at least this long is written from the caller's memory (one system call for tens
// of microseconds of a busy recording), shorter ones are gathered into the write buffer first.
constexpr std::size_t kDirectWrite = 64 << 10;
// Copied over a Trace sample's counters: a fixed-size copy compiles to a few vector stores, where
// counters.fill(0) became `rep stos` (tens of cycles to start) in the readers' inner loop.
constexpr std::uint64_t kZeroCounters[kResourceCounters] = {};

std::runtime_error sys_error(const std::string& path, const char* what) {
  return std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
}
std::size_t pad8(std::size_t n) { return (8 - n % 8) % 8; }
}  // namespace

FileHeader make_header() {
  FileHeader h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.byte_order = kByteOrderMark;
  h.major = kMajor;
  h.minor = kMinor;
  h.header_size = sizeof(FileHeader);
  h.lane_entry_size = sizeof(LaneEntry);
  h.filter = 0xffff;
  h.time_source = static_cast<std::uint32_t>(TimeSource::Nominal);  // a live recording says otherwise
  return h;
}

namespace {
void set_string(char* dst, std::size_t cap, std::string_view v) {
  std::memset(dst, 0, cap);
  std::memcpy(dst, v.data(), std::min(v.size(), cap - 1));
}
std::string_view get_string(const char* src, std::size_t cap) { return {src, strnlen(src, cap)}; }
}  // namespace

void set_counter_name(FileHeader& h, unsigned counter, std::string_view name) {
  set_string(h.counter_names[counter], kCounterNameBytes, name);
}
void set_program(FileHeader& h, std::string_view p) { set_string(h.program, kProgramBytes, p); }
std::string_view counter_name(const FileHeader& h, unsigned counter) {
  return get_string(h.counter_names[counter], kCounterNameBytes);
}
std::string_view program(const FileHeader& h) { return get_string(h.program, kProgramBytes); }

// ---- Writer ------------------------------------------------------------------------------------

namespace {
// A zstd context at `level` with checksums (what every chunk of a file is compressed with), or nullptr.
ZSTD_CCtx* make_cctx(int level) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  if (c && (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)))) {
    ZSTD_freeCCtx(c);
    return nullptr;
  }
  return c;
}

// One chunk as the file holds it (docs/trace-format.md "Compressed record area"): its header, the zstd frame
// or, when that does not shrink, the records as they are (ERRATUM E37), padded to 8 bytes; into `out`.
// Returns nullptr, or zstd's error text.
const char* encode_chunk(ZSTD_CCtx* c, std::span<const std::uint8_t> recs, std::uint64_t count,
                         std::vector<std::uint8_t>& out) {
  ChunkHeader ch{0, static_cast<std::uint32_t>(recs.size()), count};
  out.resize(sizeof ch + ZSTD_compressBound(recs.size()) + 8);
  std::uint8_t* const payload = out.data() + sizeof ch;
  const std::size_t z = ZSTD_compress2(c, payload, out.size() - sizeof ch - 8, recs.data(), recs.size());
  if (ZSTD_isError(z)) return ZSTD_getErrorName(z);
  if (z < recs.size()) {
    ch.stored_bytes = static_cast<std::uint32_t>(z);
  } else {
    ch.stored_bytes = ch.raw_bytes;
    if (out.size() < sizeof ch + recs.size() + 8) out.resize(sizeof ch + recs.size() + 8);
    std::memcpy(out.data() + sizeof ch, recs.data(), recs.size());
  }
  std::memcpy(out.data(), &ch, sizeof ch);
  std::memset(out.data() + sizeof ch + ch.stored_bytes, 0, pad8(ch.stored_bytes));
  out.resize(sizeof ch + ch.stored_bytes + pad8(ch.stored_bytes));
  return nullptr;
}
}  // namespace

// --compress-threads (ERRATUM E323): chunks are compressed on worker threads, each with its own context, and
// written in the order they were handed over, by whichever worker finishes the next one; the caller only copies a
// chunk into a free slot (or swaps its buffer in). The file holds the same bytes as compressing on the caller's
// thread: the same chunks, each an independent frame. Slots bound the memory (2 a worker, ~2 MiB each) and make
// a caller that outruns the workers wait.
struct Writer::CompressPool {
  struct Job {
    std::vector<std::uint8_t> raw, out;
    std::uint64_t count = 0;
    bool ready = false;  // compressed, waiting for its turn to be written
  };
  Writer& w;
  std::mutex m;
  std::condition_variable work, done;
  std::vector<Job> slots;
  std::uint64_t submitted = 0, taken = 0, written = 0;
  bool writing = false, stop = false;
  std::exception_ptr error;  // the first failure (zstd, a write): rethrown to the caller
  std::vector<std::thread> threads;

  CompressPool(Writer& writer, int level, unsigned n) : w(writer), slots(2 * std::size_t{n}) {
    std::vector<ZSTD_CCtx*> ctx;
    for (unsigned i = 0; i < n; ++i)
      if (ZSTD_CCtx* c = make_cctx(level))
        ctx.push_back(c);
      else {
        for (ZSTD_CCtx* x : ctx) ZSTD_freeCCtx(x);
        throw std::runtime_error(w.path_ + ": cannot set up zstd compression");
      }
    for (std::size_t i = 0; i < ctx.size(); ++i) try {
        threads.emplace_back([this, c = ctx[i]] { run(c); });
      } catch (const std::system_error& e) {  // no thread to be had: the started ones stop, nothing leaks
        for (std::size_t k = i; k < ctx.size(); ++k) ZSTD_freeCCtx(ctx[k]);
        stop_all();
        throw std::runtime_error(w.path_ + ": cannot start a compression thread: " + e.what());
      }
  }
  ~CompressPool() { stop_all(); }
  void stop_all() {
    {
      std::lock_guard g(m);
      stop = true;
    }
    work.notify_all();
    for (auto& t : threads) t.join();
    threads.clear();
  }

  void rethrow_locked() {
    if (error) std::rethrow_exception(error);
  }
  // A free slot for the next chunk (waits while every slot is in flight); the caller fills it, then submit().
  Job& next_slot() {
    std::unique_lock g(m);
    done.wait(g, [&] { return submitted - written < slots.size() || error; });
    rethrow_locked();
    return slots[submitted % slots.size()];
  }
  void submit(std::uint64_t count) {
    {
      std::lock_guard g(m);
      slots[submitted % slots.size()].count = count;
      ++submitted;
    }
    work.notify_one();
  }
  // Every chunk handed over is in the file (or the first failure is thrown).
  void wait_written() {
    std::unique_lock g(m);
    done.wait(g, [&] { return written == submitted || error; });
    rethrow_locked();
  }
  std::uint64_t stored() {
    std::lock_guard g(m);
    return w.stored_;
  }

  void run(ZSTD_CCtx* c) {
    std::unique_lock g(m);
    for (;;) {
      work.wait(g, [&] { return stop || taken < submitted; });
      if (taken == submitted) break;  // stop, nothing left
      Job& j = slots[taken++ % slots.size()];
      g.unlock();
      std::exception_ptr failed;
      if (const char* why = encode_chunk(c, j.raw, j.count, j.out))
        failed = std::make_exception_ptr(std::runtime_error(w.path_ + ": zstd: " + why));
      g.lock();
      if (failed && !error) error = failed;
      j.ready = true;
      if (writing) continue;  // the worker writing now takes this one in its turn
      writing = true;
      while (written < submitted && slots[written % slots.size()].ready) {
        Job& out = slots[written % slots.size()];
        const bool skip = error != nullptr;  // after a failure nothing more is written; slots are freed
        g.unlock();
        std::exception_ptr wfail;
        if (!skip) try {
            w.write(out.out.data(), out.out.size());
          } catch (...) {
            wfail = std::current_exception();
          }
        g.lock();
        if (wfail && !error) error = wfail;
        if (!skip && !wfail) w.stored_ += out.out.size();
        out.ready = false;
        ++written;
        done.notify_all();
      }
      writing = false;
    }
    ZSTD_freeCCtx(c);
  }
};

std::runtime_error another_writer_error(const std::string& path) {
  return std::runtime_error(path +
                            ": another kron is writing this trace file (it holds its lock): two writers would "
                            "interleave their records; give another output file");
}

unsigned default_compress_threads() { return std::clamp(std::thread::hardware_concurrency() / 2, 1u, 4u); }

Writer::Writer(const std::string& path, const FileHeader& header, int compress_level, unsigned compress_threads)
    : path_(path) {
  if (compress_level < 0 || compress_level > kMaxCompressLevel)
    throw std::invalid_argument(path + ": compression level " + std::to_string(compress_level) + " is not 0-19");
  if (compress_threads > kMaxCompressThreads)
    throw std::invalid_argument(path + ": " + std::to_string(compress_threads) + " compression threads is above " +
                                std::to_string(kMaxCompressThreads));
  FileHeader h = header;
  h.flags &= ~(kFlagComplete | kFlagCompressed);
  if (compress_level > 0) {
    if (!(cctx_ = make_cctx(compress_level))) throw std::runtime_error(path + ": cannot set up zstd compression");
    h.flags |= kFlagCompressed;
  }
  // ERRATUM E129: one writer per file. The file is opened without truncating it, locked (flock, held
  // while this Writer lives and dropped by the kernel however the process ends), and only then emptied:
  // a second writer of the same path is refused before it changes a byte of the first one's file.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    ZSTD_freeCCtx(cctx_);
    throw sys_error(path, "cannot create trace file");
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(fd);
    ZSTD_freeCCtx(cctx_);
    if (e == EWOULDBLOCK) throw another_writer_error(path);
    errno = e;
    throw sys_error(path, "cannot lock trace file");
  }
  // Emptied only when it holds something: on ext4, truncating a file to 0 marks it for writing out at
  // close (auto_da_alloc), which a new file need not pay (a close of a large recording waits for it).
  struct stat st {};
  if (::fstat(fd, &st) != 0 || (st.st_size != 0 && ::ftruncate(fd, 0) != 0) || !(f_ = ::fdopen(fd, "wb"))) {
    const int e = errno;
    ::close(fd);
    ZSTD_freeCCtx(cctx_);
    errno = e;
    throw sys_error(path, "cannot create trace file");
  }
  h.header_size = sizeof(FileHeader);
  if (std::fwrite(&h, sizeof h, 1, f_) != 1) throw sys_error(path, "write failed");
  buf_.reserve(kWriteBuffer);
  if (compress_level > 0 && compress_threads > 0)
    pool_ = std::make_unique<CompressPool>(*this, compress_level, compress_threads);
}

Writer::~Writer() {
  // Without finish() the file stays marked incomplete, but every record appended so far is written:
  // readers treat it as a recording that was cut short.
  if (f_) {
    try {
      flush();
      if (pool_) pool_->wait_written();
    } catch (const std::exception&) {  // a destructor does not throw: what could not be written is lost
    }
    pool_.reset();  // its workers joined before the file is closed
    std::fclose(f_);
  }
  ZSTD_freeCCtx(cctx_);
}

std::uint64_t Writer::stored_bytes() const { return cctx_ ? (pool_ ? pool_->stored() : stored_) : bytes_; }

void Writer::sync() {
  flush();
  if (std::fflush(f_) != 0) throw sys_error(path_, "write failed");
}

void Writer::write(const void* p, std::size_t n) {
  if (n && std::fwrite(p, 1, n, f_) != n) throw sys_error(path_, "write failed");
}

void Writer::flush() {
  if (buf_.empty()) return;
  if (!cctx_)
    write(buf_.data(), buf_.size());
  else if (std::uint64_t n = 0; pool_ && whole_chunk(buf_, &n)) {  // the buffer itself goes: no copy
    CompressPool::Job& j = pool_->next_slot();
    j.raw.swap(buf_);
    pool_->submit(n);
    if (buf_.capacity() < kWriteBuffer) buf_.reserve(kWriteBuffer);
  } else
    write_chunks(buf_);
  buf_.clear();
}

// Whether `recs` are whole records that fit one chunk; *count their number.
bool Writer::whole_chunk(std::span<const std::uint8_t> recs, std::uint64_t* count) {
  if (recs.size() > kChunkRawBytes) return false;
  std::size_t at = 0;
  std::uint64_t n = 0;
  while (at < recs.size()) {
    const std::size_t sz = at + sizeof(RecordHeader) <= recs.size() ? record::size_at(recs.data() + at) : 0;
    if (sz < sizeof(RecordHeader) || sz % 8 != 0 || sz > recs.size() - at) return false;
    at += sz;
    ++n;
  }
  *count = n;
  return true;
}

// Compressed: chunks of up to kChunkRawBytes of whole records, cut at record boundaries (the records are
// the writer's own or a recorder's, already validated; a malformed size ends the walk, and the reader
// will refuse the chunk).
void Writer::write_chunks(std::span<const std::uint8_t> recs) {
  while (!recs.empty()) {
    std::size_t take = 0;
    std::uint64_t n = 0;
    while (take < recs.size()) {
      const std::size_t sz = take + sizeof(RecordHeader) <= recs.size() ? record::size_at(recs.data() + take) : 0;
      if (sz < sizeof(RecordHeader) || sz % 8 != 0 || sz > recs.size() - take) {
        take = std::min<std::size_t>(recs.size(), kChunkRawBytes);
        break;
      }
      if (take + sz > kChunkRawBytes) break;
      take += sz;
      ++n;
    }
    write_chunk(recs.first(take), n);
    recs = recs.subspan(take);
  }
}

void Writer::write_chunk(std::span<const std::uint8_t> recs, std::uint64_t count) {
  if (pool_) {  // a worker compresses and writes it, in its turn
    CompressPool::Job& j = pool_->next_slot();
    j.raw.assign(recs.begin(), recs.end());
    pool_->submit(count);
    return;
  }
  if (const char* why = encode_chunk(cctx_, recs, count, zbuf_)) throw std::runtime_error(path_ + ": zstd: " + why);
  write(zbuf_.data(), zbuf_.size());  // one write: header, frame (or the records, E37), padding
  stored_ += zbuf_.size();
}

void Writer::append(const Sample& s) {
  std::uint8_t rec[codec::kMaxRecordBytes];
  const std::size_t n = codec::encode(s, rec);
  if (buf_.size() + n > kWriteBuffer) flush();
  buf_.insert(buf_.end(), rec, rec + n);
  ++samples_;
  bytes_ += n;
}

void Writer::append_records(std::span<const std::uint8_t> records, std::uint64_t count) {
  // A large piece (a recorder's staged 1 MiB, or a long run of one lane) is written or compressed
  // straight from the caller's memory; small ones are gathered first.
  if (records.size() >= (cctx_ ? kChunkRawBytes / 2 : kDirectWrite)) {
    flush();
    if (cctx_)
      write_chunks(records);
    else
      write(records.data(), records.size());
  } else {
    if (buf_.size() + records.size() > kWriteBuffer) flush();
    buf_.insert(buf_.end(), records.begin(), records.end());
  }
  samples_ += count;
  bytes_ += records.size();
}

void Writer::append_snapshots(std::span<const std::uint8_t> records, std::uint64_t count) {
  const std::uint64_t samples = samples_;  // not samples
  append_records(records, count);
  samples_ = samples;
  snapshots_ += count;
}

void Writer::append_sched(std::span<const SchedRecord> switches) {
  sched_.insert(sched_.end(), switches.begin(), switches.end());
}
void Writer::append_mpi(std::span<const MpiRecord> calls) { mpi_.insert(mpi_.end(), calls.begin(), calls.end()); }
void Writer::append_clock(std::span<const ClockOffsetRecord> offsets) {
  clock_.insert(clock_.end(), offsets.begin(), offsets.end());
}

void Writer::finish(FileHeader header, std::span<const LaneEntry> lanes, std::span<const NameRecord> names) {
  header.sched_switches = sched_.size();
  header.snapshots = snapshots_;
  if (!sched_.empty()) {  // after every sample; not samples (the count is put back)
    const std::uint64_t samples = samples_;
    append_records(std::span(reinterpret_cast<const std::uint8_t*>(sched_.data()), sched_.size() * sizeof(SchedRecord)),
                   sched_.size());
    samples_ = samples;
    sched_.clear();
  }
  // 1.5: the MPI calls, then the clock-offset measurements, after everything else; not samples.
  header.mpi_records = mpi_.size();
  header.clock_offsets = static_cast<std::uint32_t>(clock_.size());
  if (!mpi_.empty() || !clock_.empty()) {
    const std::uint64_t samples = samples_;
    append_records(std::span(reinterpret_cast<const std::uint8_t*>(mpi_.data()), mpi_.size() * sizeof(MpiRecord)),
                   mpi_.size());
    append_records(
        std::span(reinterpret_cast<const std::uint8_t*>(clock_.data()), clock_.size() * sizeof(ClockOffsetRecord)),
        clock_.size());
    samples_ = samples;
    mpi_.clear();
    clock_.clear();
  }
  flush();
  if (pool_) {
    pool_->wait_written();  // every chunk in the file (a worker's failure thrown here)
    pool_.reset();
  }
  if (!cctx_) stored_ = bytes_;
  header.header_size = sizeof(FileHeader);
  header.records_bytes = stored_;
  header.records_raw_bytes = bytes_;
  header.samples = samples_;
  header.lanes_offset = sizeof(FileHeader) + stored_;
  header.flags = cctx_ ? header.flags | kFlagCompressed : header.flags & ~kFlagCompressed;
  header.lane_count = static_cast<std::uint32_t>(lanes.size());
  header.lane_entry_size = sizeof(LaneEntry);
  header.flags |= kFlagComplete;
  if (!lanes.empty() && std::fwrite(lanes.data(), sizeof(LaneEntry), lanes.size(), f_) != lanes.size())
    throw sys_error(path_, "write failed");
  header.names_offset = names.empty() ? 0 : header.lanes_offset + std::uint64_t{header.lane_count} * sizeof(LaneEntry);
  header.name_count = static_cast<std::uint32_t>(std::min<std::size_t>(names.size(), kMaxNames));
  header.name_record_size = sizeof(NameRecord);
  if (header.name_count && std::fwrite(names.data(), sizeof(NameRecord), header.name_count, f_) != header.name_count)
    throw sys_error(path_, "write failed");
  if (std::fseek(f_, 0, SEEK_SET) != 0 || std::fwrite(&header, sizeof header, 1, f_) != 1)
    throw sys_error(path_, "cannot complete header");
  if (std::fclose(f_) != 0) {
    f_ = nullptr;
    throw sys_error(path_, "close failed");
  }
  f_ = nullptr;
}

// ---- NameTable ---------------------------------------------------------------------------------

void NameTable::add(const NameRecord& r) {
  if (r.name_kind == record::NameKind::Thread) {
    const std::uint64_t key = thread_key(r.source, r.thread);
    auto it = std::lower_bound(threads_.begin(), threads_.end(), key,
                               [](const auto& e, std::uint64_t k) { return e.first < k; });
    if (it != threads_.end() && it->first == key) {
      it->second = r;  // the last name a thread took
    } else {
      threads_.insert(it, {key, r});
      ++count_;
    }
    return;
  }
  if (r.id == 0 || r.id == record::kNoNameId) return;
  if (sites_.size() <= r.id) sites_.resize(std::size_t{r.id} + 1);
  if (sites_[r.id].id) return;  // the first entry for an id wins (E151)
  sites_[r.id] = r;
  ++count_;
}

std::string_view NameTable::thread(std::uint32_t source, std::uint32_t thread) const {
  const std::uint64_t key = thread_key(source, thread);
  auto it = std::lower_bound(threads_.begin(), threads_.end(), key,
                             [](const auto& e, std::uint64_t k) { return e.first < k; });
  return it != threads_.end() && it->first == key
             ? std::string_view(it->second.name, strnlen(it->second.name, sizeof it->second.name))
             : std::string_view{};
}

std::string_view NameTable::comm(std::uint32_t source, std::uint32_t thread) const {
  const std::uint64_t key = thread_key(source, thread);
  auto it = std::lower_bound(threads_.begin(), threads_.end(), key,
                             [](const auto& e, std::uint64_t k) { return e.first < k; });
  return it != threads_.end() && it->first == key
             ? std::string_view(it->second.function, strnlen(it->second.function, sizeof it->second.function))
             : std::string_view{};
}

std::string NameTable::name_of(const Sample& s) const {
  if (!(s.flags & kFlagNamed)) return {};
  const std::uint16_t id = record::name_id_of(s.data);
  if (const NameRecord* r = site(id)) return std::string(r->name, strnlen(r->name, sizeof r->name));
  return id == record::kNoNameId ? std::string("#none") : "#" + std::to_string(id);
}

std::string NameTable::location(const NameRecord& r) {
  std::string file(r.file, strnlen(r.file, sizeof r.file)), fn(r.function, strnlen(r.function, sizeof r.function));
  if (file.empty()) return fn;
  std::string loc = file + ":" + std::to_string(r.line);
  return fn.empty() ? loc : loc + " " + fn;
}

// ---- Reader ------------------------------------------------------------------------------------

bool Reader::sniff(std::span<const std::uint8_t> first) {
  return first.size() >= sizeof kMagic && std::memcmp(first.data(), kMagic, sizeof kMagic) == 0;
}

void Reader::validate(const std::string& path, const FileHeader& h, std::uint64_t file_size) {
  auto bad = [&](std::uint64_t off, const std::string& what) { return InputError::at_offset(path, off, what); };
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) throw bad(0, "not a kron trace file (bad magic)");
  if (h.byte_order != kByteOrderMark)
    throw bad(offsetof(FileHeader, byte_order), "byte-order mark is not 0x01020304 (written on another byte order?)");
  if (h.major != kMajor)
    throw bad(offsetof(FileHeader, major), "trace format version " + std::to_string(h.major) +
                                               " is not supported (this kron reads version " + std::to_string(kMajor) +
                                               ")");
  // 1.0-1.5 headers are 1024 bytes; from 1.6 on the whole FileHeader.
  const std::size_t least = h.minor >= 6 ? sizeof(FileHeader) : kHeaderBytes15;
  if (h.header_size < least || h.header_size % 8 != 0 || h.header_size > file_size)
    throw bad(offsetof(FileHeader, header_size), "header size " + std::to_string(h.header_size) + " is invalid");
  if (h.clock_hz == 0) throw bad(offsetof(FileHeader, clock_hz), "timestamp clock rate is 0");
  {  // the time base (ERRATUM E304: an absurd conversion is refused, naming its field; any version's rate)
    std::size_t at = 0;
    if (const char* why = time_base_problem(h, &at)) throw bad(at, why);
  }
  if (h.flags & kFlagComplete) {
    if (h.records_bytes > file_size - h.header_size)
      throw bad(offsetof(FileHeader, records_bytes), "record area runs past the end of the file (truncated?)");
    if (h.lane_entry_size < sizeof(LaneEntry) || h.lane_entry_size % 8 != 0)
      throw bad(offsetof(FileHeader, lane_entry_size), "lane entry size is invalid");
    if (h.lanes_offset < h.header_size || h.lanes_offset > file_size ||
        h.lane_count > (file_size - h.lanes_offset) / h.lane_entry_size)
      throw bad(offsetof(FileHeader, lanes_offset), "lane table runs past the end of the file (truncated?)");
    // ERRATUM E128: the writer puts the lane table right after the record area; anything else means a
    // record area length that does not cover the records (a records_bytes of 0 would read as "no samples").
    if (h.lanes_offset != std::uint64_t{h.header_size} + h.records_bytes)
      throw bad(offsetof(FileHeader, records_bytes), "record area (" + std::to_string(h.records_bytes) +
                                                         " bytes from offset " + std::to_string(h.header_size) +
                                                         ") does not end where the lane table starts (offset " +
                                                         std::to_string(h.lanes_offset) + ")");
    if (h.names_offset) {  // 1.3: the name section follows the lane table
      if (h.name_record_size != sizeof(NameRecord))
        throw bad(offsetof(FileHeader, name_record_size), "name record size is not 256");
      if (h.names_offset != h.lanes_offset + std::uint64_t{h.lane_count} * h.lane_entry_size)
        throw bad(offsetof(FileHeader, names_offset), "name section does not start where the lane table ends");
      if (h.name_count > kMaxNames || h.names_offset > file_size ||
          std::uint64_t{h.name_count} * sizeof(NameRecord) > file_size - h.names_offset)
        throw bad(offsetof(FileHeader, name_count), "name section runs past the end of the file (truncated?)");
    }
    if (h.records_bytes == 0 && h.samples != 0)
      throw bad(offsetof(FileHeader, records_bytes),
                "record area is empty but the header counts " + std::to_string(h.samples) + " samples");
  }
}

Reader::Reader(const std::string& path, ReadOptions options)
    : path_(path), file_(path, MappedFile::Require::Regular), options_(options) {
  size_ = file_.size();
  if (size_ < kHeaderBytes15)
    throw InputError::at_offset(path, size_,
                                "file too short for a kron trace header (" + std::to_string(size_) + " bytes, need " +
                                    std::to_string(kHeaderBytes15) + ")");
  map_ = file_.data();
  // A 1.0-1.5 header is 1024 bytes: the 1.6 fields read as zero (TimeSource::Legacy). header_size is
  // checked by validate() against the file's size and, from 1.6 on, against sizeof(FileHeader).
  std::memset(&header_, 0, sizeof header_);
  std::memcpy(&header_, map_, kHeaderBytes15);
  if (header_.minor >= 6 && size_ >= sizeof header_) std::memcpy(&header_, map_, sizeof header_);
  validate(path, header_, size_);
  phased_ = header_.minor >= 4;
  if (complete()) {
    area_end_ = header_.header_size + header_.records_bytes;
    lanes_.resize(header_.lane_count);
    for (std::uint32_t i = 0; i < header_.lane_count; ++i)
      std::memcpy(&lanes_[i], map_ + header_.lanes_offset + std::uint64_t{i} * header_.lane_entry_size,
                  sizeof(LaneEntry));
    if (header_.names_offset) {
      names_.resize(header_.name_count);
      for (std::uint32_t i = 0; i < header_.name_count; ++i) {
        const std::uint64_t at = header_.names_offset + std::uint64_t{i} * sizeof(NameRecord);
        std::memcpy(&names_[i], map_ + at, sizeof(NameRecord));
        if (const char* why = record::name_record_problem(names_[i], 0))
          throw InputError::at_offset(path, at, std::string("name record ") + std::to_string(i) + ": " + why);
      }
    }
  } else {
    area_end_ = size_;  // an unclosed file: records run to the last whole one (see next())
  }
  // Last: a constructor that throws runs no destructor, so nothing that needs freeing is made before
  // every check above passed (a damaged name section of a compressed file leaked the context).
  if (compressed()) {
    dctx_ = ZSTD_createDCtx();
    if (!dctx_) throw std::runtime_error(path + ": cannot set up zstd decompression");
  }
  rewind();
}

Reader::~Reader() { ZSTD_freeDCtx(dctx_); }

void Reader::rewind() {
  released_ = 0;
  dropped_tail_ = 0;
  read_ = skipped_ = first_skipped_at_ = 0;
  sched_.clear();
  mpi_seen_ = clock_seen_ = 0;
  if (!annex_read_) {
    mpi_.clear();
    clock_.clear();
  }
  snapshots_.clear();
  snapshot_count_ = 0;
  mismatch_.clear();
  if (compressed()) {  // no chunk yet: the record loops call next_chunk() first
    rec_ = nullptr;
    pos_ = end_ = 0;
    chunk_at_ = next_chunk_ = header_.header_size;
    release_at_ = ~std::uint64_t{0};  // released chunk by chunk, in next_chunk()
  } else {
    rec_ = map_;
    pos_ = header_.header_size;
    end_ = area_end_;
    release_at_ = kReleaseBytes;
  }
}

void Reader::release_behind(std::uint64_t file_pos) {
  const std::uint64_t upto = file_pos & ~(kReleaseBytes - 1);
  if (upto > released_) {
    file_.discard(released_, upto);
    released_ = upto;
  }
  if (!compressed()) release_at_ = released_ + kReleaseBytes;
}

InputError Reader::bad_record(const std::string& what) const {
  file_.check();  // zeros where the file shrank under the map: say so, not what they decode to
  if (!compressed()) return InputError::at_offset(path_, pos_, what);
  return InputError::at_offset(path_, chunk_at_,
                               "chunk, record at byte " + std::to_string(pos_) + " of its " + std::to_string(end_) +
                                   " uncompressed bytes: " + what);
}

// A compressed file's next chunk (docs/trace-format.md "Compressed record area"): checks its header
// against the record area and the reader's bound, decompresses it (or points at it, stored raw) and
// checks that it holds exactly `records` whole records. A chunk cut short at the end of an unclosed
// file (or header bytes never written) ends the records: its bytes are counted in dropped_tail_.
bool Reader::next_chunk() {
  if (!compressed()) return false;
  const std::uint64_t at = next_chunk_;
  chunk_at_ = at;
  rec_ = nullptr;
  pos_ = end_ = 0;
  if (at >= area_end_) return false;
  auto bad = [&](const std::string& what) {
    file_.check();
    return InputError::at_offset(path_, at, "compressed chunk: " + what);
  };
  const std::uint64_t left = area_end_ - at;
  ChunkHeader ch{};
  if (left >= sizeof ch) std::memcpy(&ch, map_ + at, sizeof ch);
  const std::uint64_t span = sizeof ch + std::uint64_t{ch.stored_bytes} + pad8(ch.stored_bytes);
  const bool never_written = ch.stored_bytes == 0 && ch.raw_bytes == 0 && ch.records == 0;
  if (!complete() && (left < sizeof ch || span > left || never_written)) {
    dropped_tail_ = left;
    next_chunk_ = area_end_;
    return false;
  }
  if (left < sizeof ch) throw bad("header cut short by the end of the record area");
  if (ch.raw_bytes == 0 || ch.raw_bytes > kMaxChunkRawBytes)
    throw bad("uncompressed size " + std::to_string(ch.raw_bytes) + " is not 1-" + std::to_string(kMaxChunkRawBytes));
  if (ch.stored_bytes == 0 || ch.stored_bytes > ch.raw_bytes)
    throw bad("stored size " + std::to_string(ch.stored_bytes) + " is not 1-" + std::to_string(ch.raw_bytes) +
              " (its uncompressed size)");
  if (span > left)
    throw bad("runs past the end of the record area (" + std::to_string(span) + " bytes, " + std::to_string(left) +
              " left)");
  const std::uint8_t* payload = map_ + at + sizeof ch;
  if (ch.stored_bytes == ch.raw_bytes) {  // stored as it is (ERRATUM E37)
    rec_ = payload;
  } else {
    if (chunk_.size() < ch.raw_bytes) chunk_.resize(ch.raw_bytes);
    const std::size_t n = ZSTD_decompressDCtx(dctx_, chunk_.data(), ch.raw_bytes, payload, ch.stored_bytes);
    if (ZSTD_isError(n)) throw bad(std::string("zstd: ") + ZSTD_getErrorName(n));
    if (n != ch.raw_bytes)
      throw bad("decompressed to " + std::to_string(n) + " bytes, its header says " + std::to_string(ch.raw_bytes));
    rec_ = chunk_.data();
  }
  // Whole records, as many as the header says (their kinds are checked as they are read).
  std::uint64_t count = 0;
  for (std::uint64_t p = 0; p < ch.raw_bytes;) {
    const std::uint64_t sz = ch.raw_bytes - p >= sizeof(RecordHeader) ? record::size_at(rec_ + p) : 0;
    if (sz < sizeof(RecordHeader) || sz % 8 != 0 || sz > ch.raw_bytes - p)
      throw bad("record at byte " + std::to_string(p) + " of its " + std::to_string(ch.raw_bytes) +
                " uncompressed bytes has size " + std::to_string(sz) + " (cut, or invalid)");
    p += sz;
    ++count;
  }
  if (count != ch.records)
    throw bad("holds " + std::to_string(count) + " records, its header says " + std::to_string(ch.records));
  next_chunk_ = at + span;
  end_ = ch.raw_bytes;
  release_behind(at);
  return true;
}

std::size_t Reader::next_batch(std::span<Sample> out) {
  if (pos_ >= end_ && !out.empty() && compressed()) next_chunk();  // (at the end: the general path below)
  std::size_t n = 0;
  const std::uint8_t* const map = rec_;
  std::uint64_t pos = pos_;
  const std::uint64_t end = end_;
  // Whole Trace records back to back (every record but one in 64 in a live recording): fields copied
  // straight from the mapping, no per-record bounds logic beyond the one compare.
  while (n < out.size() && pos < end && end - pos >= sizeof(TraceRecord)) {
    TraceRecord t;
    __builtin_prefetch(map + pos + 2048);  // ahead of the hardware prefetcher, which stops at each page
    std::memcpy(&t, map + pos, sizeof t);
    if (t.h.kind != RecordKind::Trace || t.h.size != sizeof(TraceRecord)) {
      if (t.h.kind != RecordKind::Resource || t.h.size != sizeof(ResourceRecord) || end - pos < sizeof(ResourceRecord))
        break;  // anything else (unknown kind, a bad or cut record): next() decides
      Sample& s = out[n++];
      codec::decode_fields(t, phased_, s);
      std::memcpy(s.counters.data(), map + pos + offsetof(ResourceRecord, counters), sizeof(ResourceRecord::counters));
      pos += sizeof(ResourceRecord);
      continue;
    }
    Sample& s = out[n++];
    if (s.type != SampleType::Trace) std::memcpy(s.counters.data(), kZeroCounters, sizeof kZeroCounters);
    codec::decode_fields(t, phased_, s);
    pos += sizeof(TraceRecord);
  }
  pos_ = pos;
  read_ += n;
  if (pos_ >= release_at_) release_behind(pos_);
  if (n == 0 && !out.empty() && next(out[0])) n = 1;  // the general path: skips, cut tails, errors (throws)
  return n;
}

bool Reader::next(Sample& out) {
  // Fast path, every tool's inner loop: a whole Trace record inside the record area.
  if (end_ - pos_ >= sizeof(TraceRecord) && pos_ < end_) {
    TraceRecord t;
    std::memcpy(&t, rec_ + pos_, sizeof t);
    if (t.h.kind == RecordKind::Trace && t.h.size == sizeof(TraceRecord)) {
      codec::decode_fields(t, phased_, out);
      std::memcpy(out.counters.data(), kZeroCounters, sizeof kZeroCounters);
      pos_ += sizeof(TraceRecord);
      ++read_;
      if (pos_ >= release_at_) release_behind(pos_);
      return true;
    }
  }
  for (;;) {
    if (pos_ >= end_) {
      if (!next_chunk()) return at_end();
      continue;
    }
    const std::uint64_t left = end_ - pos_;
    RecordHeader h{};
    if (left >= sizeof(RecordHeader)) std::memcpy(&h, rec_ + pos_, sizeof h);
    // An unclosed file (the recorder died): a record cut short, zero bytes the writer had reserved but never
    // filled, or what is no record at all (a recorder killed while it wrote the lane table or the names after
    // the records) ends the records; its bytes are counted (dropped_tail), never decoded.
    const bool cut = left < sizeof(RecordHeader) || (h.size > left && h.size >= sizeof(RecordHeader));
    const bool no_record = h.size < sizeof(RecordHeader) || h.size % 8 != 0 ||
                           ((h.kind == RecordKind::Trace || h.kind == RecordKind::Resource) &&
                            h.size != kRecordSize[static_cast<std::size_t>(h.kind)]);
    if (!complete() && !compressed() && (cut || no_record)) {
      dropped_tail_ = left;
      pos_ = end_;
      return at_end();
    }
    if (left < sizeof(RecordHeader)) throw bad_record("record cut short by the end of the record area");
    if (h.size < sizeof(RecordHeader) || h.size % 8 != 0)
      throw bad_record("record size " + std::to_string(h.size) + " is invalid");
    const bool known = h.kind == RecordKind::Trace || h.kind == RecordKind::Resource;
    if (known && h.size != kRecordSize[static_cast<std::size_t>(h.kind)])
      throw bad_record("record of kind " + std::to_string(static_cast<unsigned>(h.kind)) + " has size " +
                       std::to_string(h.size));
    if (h.size > left) throw bad_record("record cut short by the end of the record area");
    if (h.kind == RecordKind::SchedSwitch && header_.minor >= 3) {  // 1.3: not a sample; kept apart
      if (h.size != sizeof(SchedRecord))
        throw bad_record("scheduling switch record has size " + std::to_string(h.size));
      SchedRecord sr;
      std::memcpy(&sr, rec_ + pos_, sizeof sr);
      sched_.push_back(sr);
      pos_ += h.size;
      continue;
    }
    if ((h.kind == RecordKind::Mpi || h.kind == RecordKind::ClockOffset) && header_.minor >= 5) {  // 1.5: kept apart
      if (h.size != kRecordSize[static_cast<std::size_t>(h.kind)])
        throw bad_record("MPI record of kind " + std::to_string(static_cast<unsigned>(h.kind)) + " has size " +
                         std::to_string(h.size));
      keep_annex(rec_ + pos_, h.kind);
      pos_ += h.size;
      continue;
    }
    if ((h.kind == RecordKind::HistSnapshot || h.kind == RecordKind::CounterSnapshot) && header_.minor >= 4) {
      if (const char* why = stats::snapshot_problem(rec_ + pos_, h.size)) throw bad_record(why);  // 1.4: kept apart
      snapshots_.insert(snapshots_.end(), rec_ + pos_, rec_ + pos_ + h.size);
      ++snapshot_count_;
      pos_ += h.size;
      continue;
    }
    if (!known) {
      // ERRATUM E128: only a later minor version may hold kinds this reader does not know; in any other
      // file the kind is damage, an error unless salvaging. Either way it is counted.
      if (header_.minor <= kMinor && !options_.salvage)
        throw bad_record("record kind " + std::to_string(static_cast<unsigned>(h.kind)) +
                         " is not a Trace (1) or Resource (2) record, the only kinds of trace format 1." +
                         std::to_string(header_.minor) + " (damaged file? --salvage skips and counts such records)");
      if (skipped_++ == 0) first_skipped_at_ = offset();
      pos_ += h.size;
      continue;
    }
    // Fixed-size copies (inlined), the counters only for a Resource record: this is every tool's inner loop.
    codec::decode(rec_ + pos_, phased_, out);
    pos_ += h.size;
    ++read_;
    if (pos_ >= release_at_) release_behind(pos_);
    return true;
  }
}

void Reader::keep_annex(const std::uint8_t* rec, RecordKind kind) {
  if (kind == RecordKind::Mpi) {
    ++mpi_seen_;
    if (annex_read_) return;
    MpiRecord m;
    std::memcpy(&m, rec, sizeof m);
    mpi_.push_back(m);
  } else {
    ++clock_seen_;
    if (annex_read_) return;
    ClockOffsetRecord c;
    std::memcpy(&c, rec, sizeof c);
    clock_.push_back(c);
  }
}

void Reader::read_annex() {
  if (annex_read_) return;
  mpi_.clear();
  clock_.clear();
  if (header_.minor < 5 || (complete() && header_.mpi_records == 0 && header_.clock_offsets == 0)) {
    annex_read_ = true;
    return;
  }
  // A complete uncompressed file: the writer put kinds 8 then 9 last in the record area, so they are read
  // straight from its tail; anything else there (or any other file) is read through to the end.
  const std::uint64_t tail =
      header_.mpi_records * sizeof(MpiRecord) + std::uint64_t{header_.clock_offsets} * sizeof(ClockOffsetRecord);
  if (complete() && !compressed() && header_.mpi_records <= area_end_ / sizeof(MpiRecord) &&
      tail <= area_end_ - header_.header_size) {
    std::uint64_t at = area_end_ - tail;
    bool ok = true;
    for (std::uint64_t i = 0; ok && i < header_.mpi_records + header_.clock_offsets; ++i) {
      RecordHeader h;
      std::memcpy(&h, map_ + at, sizeof h);
      const RecordKind want = i < header_.mpi_records ? RecordKind::Mpi : RecordKind::ClockOffset;
      if (h.kind != want || h.size != kRecordSize[static_cast<std::size_t>(want)]) {
        ok = false;
        break;
      }
      keep_annex(map_ + at, want);
      at += h.size;
    }
    if (ok) {
      annex_read_ = true;
      mpi_seen_ = clock_seen_ = 0;
      return;
    }
    mpi_.clear();
    clock_.clear();
  }
  Sample s;
  while (next(s)) {}
  annex_read_ = true;
  rewind();
}

bool Reader::at_end() {
  file_.check();
  if (!complete() || !mismatch_.empty()) return false;
  // `samples` counts the samples written: a skipped record (a later minor's kind, or damage) is not one.
  const std::uint64_t found = read_;
  std::string what;
  if (found != header_.samples)
    what = "the header counts " + std::to_string(header_.samples) + " samples, the record area holds " +
           std::to_string(found);
  std::size_t field = offsetof(FileHeader, samples);
  if (found != header_.samples) {
  } else if (header_.sched_switches != sched_.size()) {  // 1.3; 0 and none in older files
    what = "the header counts " + std::to_string(header_.sched_switches) +
           " scheduling switches, the record area holds " + std::to_string(sched_.size());
    field = offsetof(FileHeader, sched_switches);
  } else if (header_.minor >= 5 && header_.mpi_records != mpi_seen_) {  // 1.5
    what = "the header counts " + std::to_string(header_.mpi_records) + " MPI records, the record area holds " +
           std::to_string(mpi_seen_);
    field = offsetof(FileHeader, mpi_records);
  } else if (header_.minor >= 4 && header_.snapshots != snapshot_count_) {  // ERRATUM E349: 1.4
    what = "the header counts " + std::to_string(header_.snapshots) +
           " histogram and counter snapshots, the record "
           "area holds " +
           std::to_string(snapshot_count_);
    field = offsetof(FileHeader, snapshots);
  } else if (header_.minor >= 5 && header_.clock_offsets != clock_seen_) {
    what = "the header counts " + std::to_string(header_.clock_offsets) +
           " clock-offset records, the record area holds " + std::to_string(clock_seen_);
    field = offsetof(FileHeader, clock_offsets);
  } else {
    return false;
  }
  if (!options_.salvage)
    throw InputError::at_offset(path_, field, what + " (damaged file? --salvage reads what is there and warns)");
  mismatch_ = what;
  return false;
}

std::vector<std::string> Reader::warnings() const {
  std::vector<std::string> w;
  if (skipped_)
    w.push_back(path_ + ": " + std::to_string(skipped_) + " records of unknown kinds skipped (the first at offset " +
                std::to_string(first_skipped_at_) + ")" +
                (header_.minor > kMinor ? " (written by a later trace format 1." + std::to_string(header_.minor) + ")"
                                        : " (salvaged)"));
  if (!mismatch_.empty()) w.push_back(path_ + ": " + mismatch_ + " (salvaged: what was read is reported)");
  if (header_.names_lost)  // 1.3 (ERRATUM E156)
    w.push_back(path_ + ": " + std::to_string(header_.names_lost) +
                " names found no room in the board's name table: their samples show \"#none\" (kron record --names N)");
  if (header_.stat_lost || header_.stat_cells_lost)  // 1.4 (ERRATUM E182)
    w.push_back(path_ + ": " + std::to_string(header_.stat_lost) +
                " histogram and virtual counter values were lost: " + std::to_string(header_.stat_cells_lost) +
                " requests found the board's statistics area full, or a histogram found no name slot (kron record "
                "--stat-cells N, --histograms N)");
  return w;
}

}  // namespace kron::tracefile
