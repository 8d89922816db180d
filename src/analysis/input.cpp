// Streaming sample inputs: see input.hpp.
#include "analysis/input.hpp"
#include "analysis/functions.hpp"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <utility>

#include <fmt/core.h>

#include "kron/core/error.hpp"
#include "kron/format/mapped_file.hpp"
#include "kron/format/trace_file.hpp"

namespace kron::analysis {

// ---- Ranks (ERRATUM E395): each process's MPI rank, from the inputs' node entries -------------------
void Ranks::add(const record::NameRecord& r) {
  if (r.name_kind == record::NameKind::Node)
    by_source_.try_emplace(r.source, Rank{r.thread, std::string(r.name, strnlen(r.name, sizeof r.name))});
}

std::optional<Ranks::Rank> Ranks::of(std::uint32_t source) const {
  if (const auto it = by_source_.find(source); it != by_source_.end()) return it->second;
  const std::uint32_t node = source >> 22;  // "node.process": node in bits 22-31 (board::source_node)
  if (world_ && world_ <= 1024 && node < world_ && (source & 0x3fffffu)) return Rank{node, {}};  // pid 0: none
  return std::nullopt;
}

std::optional<std::uint32_t> Ranks::of_pid(std::uint32_t pid) const {
  std::optional<std::uint32_t> found;
  for (const auto& [source, r] : by_source_)
    if ((source & 0x3fffffu) == pid) {
      if (found && *found != r.rank) return std::nullopt;
      found = r.rank;
    }
  return found;
}

InputFormat parse_input_format(const std::string& s) {
  if (s == "auto") return InputFormat::Auto;
  if (s == "kron") return InputFormat::Kron;
  if (s == "mk1") return InputFormat::Mk1;
  if (s == "mk2") return InputFormat::Mk2;
  throw std::invalid_argument("input format must be auto, kron, mk1 or mk2, not '" + s + "'");
}

const char* name(InputFormat f) {
  switch (f) {
    case InputFormat::Auto: return "auto";
    case InputFormat::Kron: return "kron";
    case InputFormat::Mk1: return "mk1";
    case InputFormat::Mk2: return "mk2";
  }
  return "?";
}

std::size_t Input::next_batch(std::span<Sample> out) {
  std::size_t n = 0;
  try {
    while (n < out.size() && next(out[n])) ++n;
  } catch (const InputError&) {
    if (n == 0) throw;  // else: the samples before it first; the next call throws it again
  }
  return n;
}

// ---- Raw classic streams -----------------------------------------------------------------------

ClassicStream::ClassicStream(std::string name, classic::Chip chip, std::span<const std::uint8_t> bytes,
                             std::uint64_t ts_hz, std::uint64_t base_offset)
    : bytes_(bytes), base_(base_offset) {
  path_ = std::move(name);
  format_ = chip == classic::Chip::Mk1 ? InputFormat::Mk1 : InputFormat::Mk2;
  chip_ = chip;
  clock_hz_ = ts_hz;
  ts_mask_ = classic::ts_mask(chip);
}

bool ClassicStream::next(Sample& out) {
  if (pos_ >= bytes_.size()) return false;
  const auto r = classic::decode(chip_, bytes_.subspan(pos_), out);
  if (r.status == classic::DecodeStatus::Ok) {
    pos_ += r.size;
    ++samples_;
    return true;
  }
  const std::uint8_t h = bytes_[pos_];
  if (r.status == classic::DecodeStatus::BadHeader)
    throw InputError::at_offset(
        path_, offset(),
        fmt::format("byte 0x{:02x} does not start a {} sample: its sample type bits are {:02b}, "
                    "neither 10 (Trace) nor 11 (Resource) (000 Table B2, 001 Table 5); "
                    "wrong --input-format, or a corrupted stream",
                    h, classic::name(chip_), (h >> 3) & 3));
  throw InputError::at_offset(path_, offset(),
                              fmt::format("{} sample cut short: it needs {} bytes, the stream ends after {} "
                                          "(truncated file?)",
                                          classic::name(chip_), r.size, bytes_.size() - pos_));
}

namespace {

// A raw classic stream from a file's memory map (pages already read are given back, so that memory
// stays flat).
class RawClassic final : public Input {
 public:
  RawClassic(const std::string& name, classic::Chip chip, std::uint64_t ts_hz, MappedFile file)
      : file_(std::move(file)), stream_(name, chip, file_.bytes(), ts_hz) {
    path_ = name;
    format_ = stream_.format();
    chip_ = chip;
    clock_hz_ = ts_hz;
    ts_mask_ = stream_.ts_mask();
  }
  bool next(Sample& out) override {
    try {
      if (!stream_.next(out)) {
        file_.check();  // zeros read where the file shrank under the map end the stream: say so
        return false;
      }
    } catch (const InputError&) {
      file_.check();
      throw;
    }
    ++samples_;
    // Give back the pages already read: a mapped file's pages count as the process's memory.
    const std::uint64_t pos = stream_.offset();
    if (pos - released_ >= kRelease) {
      const std::uint64_t upto = pos & ~(kRelease - 1);
      file_.discard(released_, upto);
      released_ = upto;
    }
    return true;
  }
  std::uint64_t offset() const override { return stream_.offset(); }

 private:
  static constexpr std::uint64_t kRelease = 8u << 20;
  MappedFile file_;
  ClassicStream stream_;
  std::uint64_t released_ = 0;
};

class KronFile final : public Input {
 public:
  KronFile(const std::string& path, bool salvage) : r_(path, tracefile::ReadOptions{salvage}), salvage_(salvage) {
    path_ = path;
    format_ = InputFormat::Kron;
    chip_ = classic::Chip::Mk2;
    clock_hz_ = r_.header().clock_hz;
    ts_mask_ = ~std::uint64_t{0};
    const auto& h = r_.header();
    if (h.minor >= 5 && (h.mpi_records || h.clock_offsets)) r_.read_annex();  // the exports' MPI records
    // The function hooks' samples (1.7): each address its own named scope (functions.hpp).
    if (h.minor >= 7 && (functions_ = FunctionNames::scan(path, r_, salvage))) {
      names_ = r_.names();
      names_.insert(names_.end(), functions_->names().begin(), functions_->names().end());
    }
  }
  bool next(Sample& out) override {
    if (!r_.next(out)) return false;
    if (functions_) functions_->rename({&out, 1});
    ++samples_;
    return true;
  }
  std::size_t next_batch(std::span<Sample> out) override {
    const std::size_t n = r_.next_batch(out);
    if (functions_) functions_->rename(out.first(n));
    samples_ += n;
    return n;
  }
  std::uint64_t offset() const override { return r_.offset(); }
  bool time_ordered() const override {
    const auto& h = r_.header();
    return r_.complete() && (h.flags & tracefile::kFlagTimeOrdered) && h.late == 0;
  }
  std::vector<std::string> warnings() const override {
    std::vector<std::string> w;
    const auto& h = r_.header();
    if (!r_.complete())
      w.push_back(
          fmt::format("{}: the recording was not closed (recorder killed?): read to the last whole record, "
                      "{} trailing bytes of a cut record dropped",
                      path_, r_.dropped_tail_bytes()));
    else if (h.overruns || h.overwritten)
      w.push_back(
          fmt::format("{}: the recorder lost {} samples before they reached the file ({} overruns, {} "
                      "overwritten in circular mode)",
                      path_, h.overruns + h.overwritten, h.overruns, h.overwritten));
    for (auto& x : r_.warnings()) w.push_back(std::move(x));  // skipped records, a salvaged count (E128)
    if (functions_ && functions_->unnamed())
      w.push_back(
          fmt::format("{}: {} functions have no symbol and show as OBJECT+0xOFFSET: the program or a library "
                      "is stripped, or its file moved since the recording (build with -g and keep the "
                      "binary; docs/functions.md \"Names\")",
                      path_, functions_->unnamed()));
    if (functions_ && functions_->no_id())
      w.push_back(fmt::format("{}: {} functions found no name id (65534 names in all) and show as (functions)", path_,
                              functions_->no_id()));
    if (h.late)  // trace format 1.1 (E33)
      w.push_back(
          fmt::format("{}: the recorder wrote {} samples late, after a sample with a later timestamp "
                      "(their probe was held longer than the recorder's hold-back)",
                      path_, h.late));
    return w;
  }
  std::string counter_name(unsigned i) const override {
    return i < kResourceCounters ? std::string(tracefile::counter_name(r_.header(), i)) : std::string();
  }
  const std::vector<record::NameRecord>* name_records() const override { return functions_ ? &names_ : &r_.names(); }
  bool wall_clock(std::uint64_t& start_ticks, std::uint64_t& start_realtime_ns) const override {
    start_ticks = r_.header().start_ticks;
    start_realtime_ns = r_.header().start_realtime_ns;
    return start_realtime_ns != 0;
  }
  std::vector<LaneLoss> lane_losses() const override {
    std::vector<LaneLoss> v;
    for (const auto& l : r_.lanes())
      if (l.overruns + l.overwritten) v.push_back({l.pid, l.tid, l.overruns + l.overwritten});
    return v;
  }
  std::span<const record::SchedRecord> sched_switches() const override { return r_.sched_switches(); }
  std::vector<record::SchedRecord> switches_ahead() const override {
    tracefile::Reader r(path_, tracefile::ReadOptions{salvage_});  // --salvage reads ahead as it reads the samples
    if (r.header().sched_switches == 0) return {};
    std::vector<Sample> batch(4096);
    while (r.next_batch(batch) != 0) {}
    return r.sched_switches();
  }
  const tracefile::Reader* trace_file() const override { return &r_; }
  std::span<const std::uint8_t> snapshots() const override { return r_.snapshots(); }
  std::span<const record::MpiRecord> mpi_records() const override { return r_.mpi_records(); }
  std::span<const record::ClockOffsetRecord> clock_offsets() const override { return r_.clock_offsets(); }
  bool mpi_merged() const override {
    return r_.header().minor >= 5 && (r_.header().merge_flags & tracefile::kMergeMerged);
  }

 private:
  tracefile::Reader r_;
  bool salvage_;
  std::unique_ptr<FunctionNames> functions_;  // null: no function hooks' samples
  std::vector<record::NameRecord> names_;     // with functions_: the file's names and the functions'
};

}  // namespace

namespace {

classic::Chip raw_chip(const InputOptions& opt) {
  if (opt.ts_hz == 0) throw std::invalid_argument("--ts-hz must be positive");
  return opt.format == InputFormat::Mk1 ? classic::Chip::Mk1 : classic::Chip::Mk2;
}

}  // namespace

std::unique_ptr<Input> open_input(const std::string& path, const InputOptions& opt) {
  if (path == "-") return open_stdin(std::cin, opt);
  MappedFile file(path, MappedFile::Require::Regular);
  const bool is_kron = tracefile::Reader::sniff(file.bytes());
  if (is_kron || opt.format == InputFormat::Kron) return std::make_unique<KronFile>(path, opt.salvage);
  if (opt.format == InputFormat::Auto)
    throw InputError::at_offset(path, 0,
                                "not a kron trace file (no KRONTRC1 magic); for a raw classic stream give "
                                "--input-format mk2 (20/84-byte samples) or mk1 (16/80-byte samples)");
  const auto chip = raw_chip(opt);
  return std::make_unique<RawClassic>(path, chip, opt.ts_hz, std::move(file));
}

// Standard input: read as it comes, through a buffer of kStreamBufferBytes (ERRATUM E130): an endless
// or huge stream costs no more memory than that, and bad bytes stop it at once.
StreamClassic::StreamClassic(std::istream& in, std::string name, classic::Chip chip, std::uint64_t ts_hz,
                             std::size_t buffer_bytes)
    : in_(in), buf_(std::max(buffer_bytes, classic::kMaxSampleBytes)) {
  path_ = std::move(name);
  format_ = chip == classic::Chip::Mk1 ? InputFormat::Mk1 : InputFormat::Mk2;
  chip_ = chip;
  clock_hz_ = ts_hz;
  ts_mask_ = classic::ts_mask(chip);
  fill();
}

void StreamClassic::fill() {
  if (pos_ > 0) {  // keep the bytes not yet decoded at the front
    std::memmove(buf_.data(), buf_.data() + pos_, len_ - pos_);
    consumed_ += pos_;
    len_ -= pos_;
    pos_ = 0;
  }
  while (!eof_ && len_ < buf_.size()) {
    in_.read(reinterpret_cast<char*>(buf_.data() + len_), static_cast<std::streamsize>(buf_.size() - len_));
    const auto got = static_cast<std::size_t>(in_.gcount());
    len_ += got;
    if (!in_) eof_ = true;
    if (got == 0) break;
  }
}

std::span<const std::uint8_t> StreamClassic::peek() const { return {buf_.data() + pos_, len_ - pos_}; }

bool StreamClassic::next(Sample& out) {
  if (len_ - pos_ < classic::kMaxSampleBytes && !eof_) fill();
  if (pos_ >= len_) return false;
  ClassicStream one(path_, chip_, peek(), clock_hz_, offset());
  if (!one.next(out)) return false;  // (never: bytes are left)
  pos_ += static_cast<std::size_t>(one.offset() - offset());
  ++samples_;
  return true;
}

std::unique_ptr<Input> open_stdin(std::istream& in, const InputOptions& opt) {
  if (opt.format == InputFormat::Auto || opt.format == InputFormat::Kron) {
    char first[sizeof tracefile::kMagic] = {};
    in.read(first, sizeof first);
    if (tracefile::Reader::sniff({reinterpret_cast<const std::uint8_t*>(first), static_cast<std::size_t>(in.gcount())}))
      throw InputError::at_offset(kStdinName, 0, "a kron trace file is read from a named file, not standard input");
    throw InputError::at_offset(kStdinName, 0,
                                "standard input is read as a raw classic stream: give --input-format mk2 (20/84-byte "
                                "samples) or mk1 (16/80-byte samples)");
  }
  const auto chip = raw_chip(opt);
  auto s = std::make_unique<StreamClassic>(in, kStdinName, chip, opt.ts_hz);
  if (tracefile::Reader::sniff(s->peek()))
    throw InputError::at_offset(kStdinName, 0, "a kron trace file is read from a named file, not standard input");
  return s;
}

// ---- Merging -----------------------------------------------------------------------------------

Merged::Merged(std::vector<std::unique_ptr<Input>> inputs, std::size_t reorder_window) : inputs_(std::move(inputs)) {
  for (const auto& in : inputs_)
    if (const auto* names = in->name_records())
      for (const auto& r : *names) names_.add(r), ranks_.add(r);
  // ERRATUM E395: where every input is an MPI recording, a source without a Node entry is named by its node part.
  std::uint32_t world = 0;
  for (const auto& in : inputs_) {
    const tracefile::Reader* r = in->trace_file();
    const std::uint32_t w = r && r->header().minor >= 5 ? r->header().mpi_world_size : 0;
    if (w == 0) {
      world = 0;
      break;
    }
    world = std::max(world, w);
  }
  ranks_.set_mpi_world(world);
  for (const auto& in : inputs_) {
    if (clock_hz_ == 0) clock_hz_ = in->clock_hz();
    if (in->clock_hz() != clock_hz_)
      throw InputError::at_offset(in->path(), 0,
                                  fmt::format("timestamp clock {} Hz differs from {} Hz of {}: kron merges only "
                                              "inputs of one clock (give --ts-hz for raw streams)",
                                              in->clock_hz(), clock_hz_, inputs_.front()->path()));
    ts_mask_ &= in->ts_mask();
  }
  if (inputs_.size() > 1) {
    heap_.reserve(inputs_.size());
    for (std::size_t i = 0; i < inputs_.size(); ++i) push(i);
  }
  // Inputs that are each in time order merge into time order: the window would only cost time. (A
  // sample that still arrives early is counted in out_of_order(), never dropped.)
  const bool all_ordered =
      std::all_of(inputs_.begin(), inputs_.end(), [](const auto& in) { return in->time_ordered(); });
  if (reorder_window && !all_ordered) window_ = std::make_unique<ReorderWindow>(reorder_window, ts_mask_);
}

void Merged::push(std::size_t i) {
  Head h;
  h.input = i;
  if (inputs_[i]->next(h.s)) heap_.push_back(h);
}

bool Merged::next_raw(Sample& out, std::size_t& input) {
  if (inputs_.size() == 1) {  // the common case: no merge
    if (!inputs_[0]->next(out)) return false;
    input = 0;
    return true;
  }
  if (heap_.empty()) return false;
  // Few inputs (one per node): a linear scan beats a heap. Ties go to the earlier input.
  std::size_t best = 0;
  for (std::size_t k = 1; k < heap_.size(); ++k)
    if (heap_[k].s.timestamp < heap_[best].s.timestamp ||
        (heap_[k].s.timestamp == heap_[best].s.timestamp && heap_[k].input < heap_[best].input))
      best = k;
  out = heap_[best].s;
  input = heap_[best].input;
  if (!inputs_[input]->next(heap_[best].s)) heap_.erase(heap_.begin() + static_cast<std::ptrdiff_t>(best));
  return true;
}

bool Merged::next(Sample& out) {
  if (!window_) {
    if (!next_raw(out, last_)) return false;
  } else {
    // Keep the window full (each sample read into `out`, then its place in the window), then release
    // the oldest into `out`.
    while (!raw_done_ && !window_->full()) {
      std::size_t in = 0;
      bool got = false;
      try {
        got = next_raw(out, in);
      } catch (...) {
        error_ = std::current_exception();
      }
      if (!got) {
        raw_done_ = true;
        break;
      }
      window_->insert(out, static_cast<std::uint32_t>(in));
    }
    if (window_->empty()) {
      if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
      return false;
    }
    window_->front(out);
    last_ = window_->front_input();
    window_->pop();
  }
  if (started_ && out.timestamp < last_ts_) ++out_of_order_;
  started_ = true;
  last_ts_ = out.timestamp;
  ++samples_;
  return true;
}

// The one-input fast path beside next(): the input's own batch, then the bookkeeping next() does.
std::size_t Merged::next_batch(std::span<Sample> out) {
  // Several inputs, or a reorder window to apply: one sample a call through next().
  if (inputs_.size() != 1 || window_) return !out.empty() && next(out[0]) ? 1 : 0;
  const std::size_t n = inputs_[0]->next_batch(out);
  if (n == 0) return 0;
  last_ = 0;
  std::uint64_t last_ts = started_ ? last_ts_ : out[0].timestamp;
  std::uint64_t late = 0;
  for (std::size_t k = 0; k < n; ++k) {
    late += out[k].timestamp < last_ts;
    last_ts = out[k].timestamp;
  }
  out_of_order_ += late;
  started_ = true;
  last_ts_ = last_ts;
  samples_ += n;
  return n;
}

std::vector<std::string> Merged::warnings() const {
  std::vector<std::string> w;
  for (const auto& in : inputs_)
    for (auto& x : in->warnings()) w.push_back(std::move(x));
  if (reordered())
    w.push_back(
        fmt::format("{} samples arrived after a later sample and were put back in time order (reorder "
                    "window of {} samples)",
                    reordered(), window_->capacity()));
  if (out_of_order_)
    w.push_back(fmt::format(
        "{} samples were earlier than the sample merged before them (an input not in time order{})", out_of_order_,
        window_ ? fmt::format(", by more than the reorder window of {} samples", window_->capacity()) : std::string()));
  return w;
}

Merged open_inputs(const std::vector<std::string>& paths, const InputOptions& opt) {
  if (std::count(paths.begin(), paths.end(), "-") > 1)
    throw InputError::at_offset(kStdinName, 0, "standard input (-) can be named only once");
  std::vector<std::unique_ptr<Input>> v;
  if (paths.empty()) v.push_back(open_input("mk.dat", opt));  // 003 section 3.5: mk_rdsample's default file
  for (const auto& p : paths) v.push_back(open_input(p, opt));
  return Merged(std::move(v), opt.reorder_window);
}

}  // namespace kron::analysis
