// `-` as an analysis input. See stdin_input.hpp.
#include "analysis/stdin_input.hpp"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <iterator>

#include "kron/core/error.hpp"
#include "kron/format/trace_file.hpp"

namespace kron::analysis {
namespace {

class StdinClassic final : public Input {
 public:
  StdinClassic(std::vector<std::uint8_t> bytes, classic::Chip chip, std::uint64_t ts_hz) : bytes_(std::move(bytes)) {
    stream_ = std::make_unique<ClassicStream>(kStdinName, chip, std::span<const std::uint8_t>(bytes_), ts_hz);
    path_ = kStdinName;
    format_ = stream_->format();
    chip_ = chip;
    clock_hz_ = ts_hz;
    ts_mask_ = stream_->ts_mask();
  }
  bool next(Sample& out) override {
    if (!stream_->next(out)) return false;
    ++samples_;
    return true;
  }
  std::uint64_t offset() const override { return stream_->offset(); }

 private:
  std::vector<std::uint8_t> bytes_;
  std::unique_ptr<ClassicStream> stream_;
};

}  // namespace

std::unique_ptr<Input> open_stdin(std::istream& in, const InputOptions& opt) {
  std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
  if (bytes.size() >= sizeof tracefile::kMagic && tracefile::Reader::sniff(std::span<const std::uint8_t>(bytes).first(sizeof tracefile::kMagic)))
    throw InputError::at_offset(kStdinName, 0, "a kron trace file is read from a named file, not standard input");
  if (opt.format == InputFormat::Auto || opt.format == InputFormat::Kron)
    throw InputError::at_offset(kStdinName, 0,
                                "standard input is read as a raw classic stream: give --input-format mk2 (20/84-byte "
                                "samples) or mk1 (16/80-byte samples)");
  if (opt.ts_hz == 0) throw std::invalid_argument("--ts-hz must be positive");
  return std::make_unique<StdinClassic>(std::move(bytes),
                                        opt.format == InputFormat::Mk1 ? classic::Chip::Mk1 : classic::Chip::Mk2, opt.ts_hz);
}

Merged open_inputs_or_stdin(const std::vector<std::string>& paths, const InputOptions& opt) {
  if (std::find(paths.begin(), paths.end(), "-") == paths.end()) return open_inputs(paths, opt);
  if (std::count(paths.begin(), paths.end(), "-") > 1)
    throw InputError::at_offset(kStdinName, 0, "standard input (-) can be named only once");
  std::vector<std::unique_ptr<Input>> v;
  for (const auto& p : paths) v.push_back(p == "-" ? open_stdin(std::cin, opt) : open_input(p, opt));
  return Merged(std::move(v), opt.reorder_window);
}

}  // namespace kron::analysis
