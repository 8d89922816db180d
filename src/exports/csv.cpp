// kron export --format csv: one row a sample, in time order (exports.hpp), with its name, kind, value, thread
// name and MPI rank beside the record's fields (docs/tools.md "CSV").
#include <fmt/format.h>

#include <optional>
#include <string_view>

#include "exports/exports.hpp"
#include "exports/sink.hpp"
#include "exports/text_out.hpp"

namespace kron::exports {
namespace {

// begin, end (a named scope's ends), instant (a named event, any other Trace sample), counter (Resource).
const char* kind(const Sample& s) {
  if (s.is_resource()) return "counter";
  if (!(s.flags & kFlagNamed)) return "instant";
  return (s.flags & kFlagScopeBegin) ? "begin" : (s.flags & kFlagScopeEnd) ? "end" : "instant";
}

// A text field as RFC 4180 writes it: quoted (quotes doubled) when it holds a comma, a quote or a line end.
void field(std::string& b, std::string_view v) {
  if (v.find_first_of(",\"\r\n") == std::string_view::npos) {
    b += v;
    return;
  }
  b += '"';
  for (const char c : v) {
    if (c == '"') b += '"';
    b += c;
  }
  b += '"';
}

class Csv final : public analysis::TimelineSink {
 public:
  Csv(std::FILE* f, ExportStats& st) : out_(f), st_(st) {}
  Needs needs() const override { return Needs().in_batches(); }
  void begin(analysis::Timeline& tl) override {
    tl_ = &tl;
    std::string& b = out_.buf();
    b += "type,cpu,source,thread,group,flags,timestamp,time_us,data";
    for (unsigned c = 0; c < kResourceCounters; ++c) fmt::format_to(std::back_inserter(b), ",c{}", c);
    // phase: the thread's (trace format 1.4; 0 in older files and raw streams); then what the other formats
    // show of a sample (docs/tools.md "CSV")
    b += ",phase,kind,name,value,thread_name,rank\n";
  }
  void samples(std::span<const Sample> batch) override {
    std::string& b = out_.buf();
    auto it = std::back_inserter(b);
    const std::uint64_t t0 = tl_->t0(), mask = tl_->ts_mask();
    const double clock = static_cast<double>(tl_->clock_hz());
    for (const Sample& s : batch) {
      // time_us: microseconds since the first sample.
      fmt::format_to(it, "{},{},0x{:08x},{},{},{},{},{:.4f},{}", name(s.type), s.cpu, s.source, s.thread,
                     s.group == Sample::kGroupUnknown ? std::string() : std::to_string(s.group), s.flags, s.timestamp,
                     static_cast<double>((s.timestamp - t0) & mask) * 1e6 / clock, s.data);
      if (s.is_resource())
        for (unsigned c = 0; c < kResourceCounters; ++c) fmt::format_to(it, ",{}", s.counters[c]);
      else
        b.append(kResourceCounters, ',');
      fmt::format_to(it, ",{},{},", s.phase, kind(s));
      const bool named = s.flags & kFlagNamed;
      field(b, named ? tl_->names().name_of(s) : std::string());
      if (named)  // signed (DECISION D30); the raw data word otherwise
        fmt::format_to(it, ",{},", record::named_value_of(s.data));
      else
        fmt::format_to(it, ",{},", s.data);
      if (s.thread) {  // runs of one thread are the common case: one lookup a run
        const std::uint64_t key = thread_key(s.source, s.thread);
        if (!have_name_ || key != name_key_) name_ = tl_->names().thread(s.source, s.thread), name_key_ = key;
        have_name_ = true;
        field(b, name_);
      }
      if (s.source != rank_source_ || !have_rank_)  // an MPI rank's (ERRATUM E395); runs of one source are common
        rank_ = tl_->rank(s.source), rank_source_ = s.source, have_rank_ = true;
      if (rank_)
        fmt::format_to(it, ",{}\n", *rank_);
      else
        b += ",\n";
      ++st_.samples;
      out_.maybe_flush();
    }
  }
  void end() override { out_.flush(); }

 private:
  TextOut out_;
  ExportStats& st_;
  analysis::Timeline* tl_ = nullptr;
  std::optional<std::uint32_t> rank_;  // the last source's MPI rank (trace format 1.5)
  std::uint32_t rank_source_ = 0;
  bool have_rank_ = false;
  std::string_view name_;  // the last thread's name (the name table outlives the walk)
  std::uint64_t name_key_ = 0;
  bool have_name_ = false;
};

}  // namespace

ExportStats export_csv(analysis::Timeline& tl, std::FILE* out) { return run_sink<Csv>(tl, out); }

}  // namespace kron::exports
