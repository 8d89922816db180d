// kron export --format csv: one row a sample, in time order (exports.hpp).
#include <fmt/format.h>

#include "exports/exports.hpp"
#include "exports/sink.hpp"
#include "exports/text_out.hpp"

namespace kron::exports {
namespace {

class Csv final : public analysis::TimelineSink {
 public:
  Csv(std::FILE* f, ExportStats& st) : out_(f), st_(st) {}
  Needs needs() const override { return Needs().in_batches(); }
  void begin(analysis::Timeline& tl) override {
    tl_ = &tl;
    std::string& b = out_.buf();
    b += "type,cpu,source,thread,group,flags,timestamp,time_us,data";
    for (unsigned c = 0; c < kResourceCounters; ++c) fmt::format_to(std::back_inserter(b), ",c{}", c);
    b += ",phase\n";  // the thread's phase (trace format 1.4; 0 in older files and raw streams)
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
      fmt::format_to(it, ",{}\n", s.phase);
      ++st_.samples;
      out_.maybe_flush();
    }
  }
  void end() override { out_.flush(); }

 private:
  TextOut out_;
  ExportStats& st_;
  const analysis::Timeline* tl_ = nullptr;
};

}  // namespace

ExportStats export_csv(analysis::Timeline& tl, std::FILE* out) { return run_sink<Csv>(tl, out); }

}  // namespace kron::exports
