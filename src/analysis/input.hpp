// Streaming sample inputs for the analysis tools (expand, rpt, export): kron trace files, raw classic
// MultiKron II streams (20/84-byte samples back to back, 000 Table B2) and raw classic MultiKron streams
// (16/80-byte samples, 001 Tables 5-7), merged in time order. Every input yields kron::Sample one at a
// time from a memory map (kron/format/mapped_file.hpp); nothing per sample is kept in memory. `-` is one
// more input: a raw classic stream on standard input (a pipe from a collector, e.g.
// `kron sim --board pci script | kron expand --input-format mk2 -`), read as it comes through a bounded
// buffer (a pipe cannot be mapped; ERRATUM E130) and decoded by the same decoder; messages name it
// "<stdin>". A named FIFO or device is refused (MappedFile): give it as standard input.
//
// Sources: 003 section 3.5 (mk_rdsample writes the board's memory as it is: samples back to back, which
// is what a raw stream is here; mk_expand and mk_rpt read it); 000 Table B2; 001 Tables 5-7.
// Bad input: an InputError naming the file and the byte offset of the sample that is wrong. A reader
// never yields a sample it has not fully decoded, so whatever a tool printed before the error is right.
#pragma once
#include <cstddef>
#include <cstdint>
#include <exception>
#include <istream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kron/core/record.hpp"
#include "kron/core/sample.hpp"
#include "analysis/reorder.hpp"
#include "kron/format/classic.hpp"
#include "kron/format/trace_file.hpp"

namespace kron::analysis {

enum class InputFormat : std::uint8_t { Auto, Kron, Mk1, Mk2 };
// ERRATUM E50: 16384 samples (2.6 MiB): a straggler that many samples late is still put in its place.
inline constexpr std::size_t kDefaultReorderWindow = 16384;
// "auto", "kron", "mk1", "mk2"; throws std::invalid_argument otherwise.
InputFormat parse_input_format(const std::string& s);
const char* name(InputFormat f);

struct InputOptions {
  // Auto: a file starting with the kron magic is a kron trace file; anything else needs mk1 or mk2.
  // A kron trace file is recognised by its header whatever the format says.
  InputFormat format = InputFormat::Auto;
  // A raw stream's timestamp clock. 003 section 1.2: 40 MHz NODECLK / 4 = 10 MHz by default.
  std::uint64_t ts_hz = 10'000'000;
  // ERRATUM E50: samples held by the merge's reorder window (0: none, the inputs' order as it is).
  std::size_t reorder_window = kDefaultReorderWindow;
  // kron trace files: read a damaged file for what it holds, with warnings (tracefile::ReadOptions, E128).
  bool salvage = false;
};

// One input: a source of samples in the order the file holds them.
class Input {
 public:
  virtual ~Input() = default;
  // The next sample; false at the end. Throws InputError (file, offset) on a malformed sample.
  virtual bool next(Sample& out) = 0;
  // Up to out.size() samples at once (the tools' inner loop); 0 at the end. A malformed sample ends a
  // batch early with the samples before it, and the next call throws: nothing decoded is lost. The
  // default calls next(), which must leave the input where it was when it throws. As for
  // tracefile::Reader::next_batch, the Trace samples in `out` must have zero counters (reuse one buffer).
  virtual std::size_t next_batch(std::span<Sample> out);
  const std::string& path() const { return path_; }
  InputFormat format() const { return format_; }
  std::uint64_t clock_hz() const { return clock_hz_; }
  // Mask of the timestamp field's width (56 bits MK II, 40 bits MK, 64 kron files): durations are
  // computed modulo this width so that a counter that wrapped still gives the right interval.
  std::uint64_t ts_mask() const { return ts_mask_; }
  // Chip whose header layout describes this input's samples (kron files: MultiKron II).
  classic::Chip chip() const { return chip_; }
  // Byte offset of the next sample (for messages).
  virtual std::uint64_t offset() const = 0;
  std::uint64_t samples() const { return samples_; }
  // What resource counter `i` counted, when the file says (kron trace files); "" otherwise.
  virtual std::string counter_name(unsigned) const { return {}; }
  // The name section of a kron trace file (1.3): named probes' sites and thread names; empty otherwise.
  virtual const std::vector<record::NameRecord>* name_records() const { return nullptr; }
  // The scheduling switches read so far (kron trace files of `kron record --sched`); all of them once the
  // samples were read to the end. Empty for other inputs.
  virtual std::span<const record::SchedRecord> sched_switches() const { return {}; }
  // All of the scheduling switches before the samples are read: one extra pass over the file (a second
  // reader), only when its header counts some. What the Timeline reads ahead for on-CPU time per interval.
  virtual std::vector<record::SchedRecord> switches_ahead() const { return {}; }
  // The trace file behind a kron input (its header, lanes, names, what its reader warned of); null otherwise.
  virtual const tracefile::Reader* trace_file() const { return nullptr; }
  // The histogram and virtual counter snapshots read so far (trace format 1.4 kinds 5 and 6, validated, back
  // to back); all of them once the samples were read to the end. Empty for other inputs.
  virtual std::span<const std::uint8_t> snapshots() const { return {}; }
  // An MPI recording's calls (kind 8) and clock-offset measurements (kind 9) (trace format 1.5, libkron_mpi
  // or kron merge), all of them from the start: a kron trace file whose header counts some reads them
  // ahead when opened (Reader::read_annex(): one pass over the file; memory grows with the MPI calls, never
  // with the samples). Empty for other inputs.
  virtual std::span<const record::MpiRecord> mpi_records() const { return {}; }
  virtual std::span<const record::ClockOffsetRecord> clock_offsets() const { return {}; }
  // True for a file written by kron merge: its times are already on one timeline (rank 0's).
  virtual bool mpi_merged() const { return false; }
  // What the input says was lost or cut (a recording not closed, samples the recorder dropped), for the
  // tools to print once they have read it: nothing lost goes uncounted.
  virtual std::vector<std::string> warnings() const { return {}; }
  // Wall time of the input's clock, when the file says (kron trace files: the header's start_ticks and
  // start_realtime_ns); false otherwise.
  virtual bool wall_clock(std::uint64_t& /*start_ticks*/, std::uint64_t& /*start_realtime_ns*/) const { return false; }
  // Samples the recorder lost per lane (kron trace files' lane table: overruns + overwritten), as
  // (pid, tid, lost); empty otherwise.
  struct LaneLoss {
    std::uint32_t pid, tid;
    std::uint64_t lost;
  };
  virtual std::vector<LaneLoss> lane_losses() const { return {}; }
  // True when the input vouches that its samples are in timestamp order (a complete kron file whose
  // producer set kFlagTimeOrdered and counted no late record). Merged needs no reorder window for it.
  virtual bool time_ordered() const { return false; }

 protected:
  std::string path_;
  InputFormat format_ = InputFormat::Kron;
  std::uint64_t clock_hz_ = 0;
  std::uint64_t ts_mask_ = ~std::uint64_t{0};
  classic::Chip chip_ = classic::Chip::Mk2;
  std::uint64_t samples_ = 0;
};

// A raw classic stream held in memory (a span the caller keeps alive): the reader that open_input()
// uses over a memory map, and that the fuzz target drives directly. `name` appears in messages.
class ClassicStream final : public Input {
 public:
  ClassicStream(std::string name, classic::Chip chip, std::span<const std::uint8_t> bytes, std::uint64_t ts_hz,
                std::uint64_t base_offset = 0);
  bool next(Sample& out) override;
  std::uint64_t offset() const override { return base_ + pos_; }

 private:
  std::span<const std::uint8_t> bytes_;
  std::uint64_t pos_ = 0, base_ = 0;
};

inline constexpr const char* kStdinName = "<stdin>";

// A raw classic stream read from a std::istream as it comes (standard input), through a buffer of
// kStreamBufferBytes: memory stays bounded whatever the stream's length (ERRATUM E130). The fuzz target
// fuzz_raw_stdin drives it directly.
inline constexpr std::size_t kStreamBufferBytes = 1u << 20;
class StreamClassic final : public Input {
 public:
  // buffer_bytes: at least classic::kMaxSampleBytes (a smaller one is taken as that).
  StreamClassic(std::istream& in, std::string name, classic::Chip chip, std::uint64_t ts_hz,
                std::size_t buffer_bytes = kStreamBufferBytes);
  bool next(Sample& out) override;
  std::uint64_t offset() const override { return consumed_ + pos_; }
  std::span<const std::uint8_t> peek() const;  // the bytes buffered, not yet decoded

 private:
  void fill();
  std::istream& in_;
  std::vector<std::uint8_t> buf_;
  std::size_t pos_ = 0, len_ = 0;  // buf_[pos_, len_) not yet decoded
  std::uint64_t consumed_ = 0;     // stream bytes before buf_[0]
  bool eof_ = false;
};

// Opens one file: a kron trace file (kron::tracefile::Reader) or a raw classic stream (memory-mapped);
// `-` is standard input (open_stdin(std::cin)). Throws InputError naming the file.
std::unique_ptr<Input> open_input(const std::string& path, const InputOptions& opt);
// A raw classic stream read from `in` as it comes (StreamClassic), named "<stdin>". A kron trace file is
// read by mapping a named file, so on standard input it is refused with a message, as is a missing
// --input-format.
std::unique_ptr<Input> open_stdin(std::istream& in, const InputOptions& opt);

// ERRATUM E395: the MPI rank of each process of a recording (trace format 1.5): a Node name entry (E201) says
// which rank a process (`source`) was and on which host; without one (a rank that wrote none), where every
// input is an MPI recording of at most 1024 ranks, the node part of the source is its rank (E201: a rank's
// board has node number = its world rank), host unknown. Merged::ranks() holds the inputs'; every output
// takes a stream's rank from there (reports, exports, kron info and kron hist).
class Ranks {
 public:
  struct Rank {
    std::uint32_t rank;
    std::string node;  // the host, "" when unknown
  };
  void add(const record::NameRecord& r);  // a Node entry (others are ignored); the first of a source wins
  void set_mpi_world(std::uint32_t world) { world_ = world; }
  std::optional<Rank> of(std::uint32_t source) const;
  // The rank of the one process of pid `pid` that a Node entry names (a lane table names pids only); nullopt
  // when none does, or several ranks on different hosts had that pid.
  std::optional<std::uint32_t> of_pid(std::uint32_t pid) const;
  bool any() const { return !by_source_.empty() || world_ != 0; }

 private:
  std::unordered_map<std::uint32_t, Rank> by_source_;
  std::uint32_t world_ = 0;  // every input an MPI recording of this many ranks at most (0: not so)
};

// ERRATUM E49. Several inputs merged in time order: a k-way merge on timestamps (each input is taken to be in time
// order, as a board's memory and a recorder's file are), then a bounded reorder window (E50,
// reorder.hpp) that puts a straggler in its place when it arrives within `reorder_window` samples of it
// (counted in reordered()); a sample earlier than the one delivered before it is still delivered, and
// counted in out_of_order(). All inputs must share one timestamp clock.
class Merged {
 public:
  // Throws InputError on differing clocks.
  explicit Merged(std::vector<std::unique_ptr<Input>> inputs, std::size_t reorder_window = kDefaultReorderWindow);
  bool next(Sample& out);
  // Up to out.size() samples in merged order; 0 at the end (see Input::next_batch). With one input this
  // is that input's batch, no merge; with several it is one sample a call.
  std::size_t next_batch(std::span<Sample> out);
  // Index of the input the last sample came from.
  std::size_t last_input() const { return last_; }
  const std::vector<std::unique_ptr<Input>>& inputs() const { return inputs_; }
  // Every input's names (ERRATUM E151: merged, the first input's entry for an id wins).
  const tracefile::NameTable& names() const { return names_; }
  const Ranks& ranks() const { return ranks_; }
  std::uint64_t clock_hz() const { return clock_hz_; }
  std::uint64_t ts_mask() const { return ts_mask_; }
  std::uint64_t samples() const { return samples_; }
  std::uint64_t out_of_order() const { return out_of_order_; }
  std::uint64_t reordered() const { return window_ ? window_->reordered() : 0; }
  // Every input's warnings(), samples put back in time order, and samples out of time order.
  std::vector<std::string> warnings() const;

 private:
  struct Head {
    Sample s;
    std::size_t input;
  };
  void push(std::size_t i);
  bool next_raw(Sample& out, std::size_t& input);  // the k-way merge, before the window
  std::vector<std::unique_ptr<Input>> inputs_;
  tracefile::NameTable names_;
  Ranks ranks_;
  std::unique_ptr<ReorderWindow> window_;  // null: no window
  bool raw_done_ = false;
  // A bad input met while reading ahead into the window: raised once the samples before it are out, so
  // that what a tool prints before the error is still everything before the bad sample.
  std::exception_ptr error_;
  std::vector<Head> heap_;  // min-heap on (timestamp, input)
  std::uint64_t clock_hz_ = 0, ts_mask_ = ~std::uint64_t{0};
  std::uint64_t samples_ = 0, out_of_order_ = 0, last_ts_ = 0;
  std::size_t last_ = 0;
  bool started_ = false;
};

// Opens every path and merges them. An empty list means 003's default data file, mk.dat; `-` (at most
// once) is standard input.
Merged open_inputs(const std::vector<std::string>& paths, const InputOptions& opt);

}  // namespace kron::analysis
