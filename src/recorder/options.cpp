// Option parsing for the recorder's commands (options.hpp).
#include "recorder/options.hpp"

#include <cctype>

#include "kron/core/error.hpp"
#include "kron/core/text.hpp"
#include "kron/format/trace_file.hpp"

namespace kron::recorder {

std::optional<std::uint64_t> parse_size(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0 || i > 15) return std::nullopt;
  std::uint64_t v = *kron::text::parse_uint(std::string_view(text).substr(0, i));  // at most 15 digits
  std::string unit = text.substr(i);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  unsigned shift = 0;
  if (unit.empty() || unit == "B")
    shift = 0;
  else if (unit == "K" || unit == "KB" || unit == "KIB")
    shift = 10;
  else if (unit == "M" || unit == "MB" || unit == "MIB")
    shift = 20;
  else if (unit == "G" || unit == "GB" || unit == "GIB")
    shift = 30;
  else if (unit == "T" || unit == "TB" || unit == "TIB")
    shift = 40;
  else
    return std::nullopt;
  if (v > (board::kMaxSegment >> shift)) return std::nullopt;
  return v << shift;
}

int parse_compress_level(const std::string& text) {
  if (text.empty()) return 1;
  const auto v = kron::text::parse_uint(text, 1000);
  if (!v || *v < 1 || *v > tracefile::kMaxCompressLevel)
    throw InputError::at_offset("--compress=" + text, 0, "expected a zstd level from 1 to 19 (1 when omitted)");
  return static_cast<int>(*v);
}

board::BufferMode parse_mode(const std::string& text) {
  if (text == "simple") return board::BufferMode::Simple;
  if (text == "circular") return board::BufferMode::Circular;
  throw InputError::at_offset("--mode " + text, 0, "buffer mode must be simple or circular");
}

void apply_counters(const std::vector<std::string>& specs, board::CreateOptions& o) {
  for (const std::string& spec : specs) {
    const std::string where = "--counter " + spec;
    const auto eq = spec.find('=');
    if (eq == std::string::npos) throw InputError::at_offset(where, 0, "expected N=SOURCE (N 0-15)");
    const auto n = kron::text::parse_uint(spec.substr(0, eq), board::kCounters - 1);
    if (!n) throw InputError::at_offset(where, 0, "counter number must be 0-15");
    board::SourceSpec s;
    std::string err;
    if (!board::parse_source(spec.substr(eq + 1), &s, &err)) throw InputError::at_offset(where, eq + 1, err);
    const std::string why = board::probe_perf(s.src);
    if (!why.empty())
      throw InputError::at_offset(where, eq + 1,
                                  "event '" + spec.substr(eq + 1) + "' cannot be counted on this machine: " + why);
    const unsigned c = static_cast<unsigned>(*n);
    o.sources[c] = s.src;
    o.mode_reg |= std::uint64_t{s.mode} << (4 * c);
    o.clock_reg |= std::uint64_t{s.clock} << (4 * c);
    o.enable |= std::uint64_t{static_cast<std::uint8_t>(board::Enable::ResetEnable)} << (4 * c);
  }
}

void apply_board_options(const std::string& buffer, std::uint32_t lanes, const std::string& block,
                         const std::string& mode, const std::string& filter, board::CreateOptions& o) {
  const auto size = parse_size(buffer);
  if (!size) throw InputError::at_offset("--buffer " + buffer, 0, "expected a size such as 16M or 1G");
  o.size = *size;
  if (lanes == 0 || lanes > board::kMaxLanes)
    throw InputError::at_offset("--lanes " + std::to_string(lanes), 0,
                                "expected 1 to " + std::to_string(board::kMaxLanes));
  o.lanes = lanes;
  if (block != "auto") {
    const auto b = parse_size(block);
    if (!b || *b < board::kMinBlockBytes || *b > board::kMaxBlockBytes || (*b & (*b - 1)))
      throw InputError::at_offset("--block-size " + block, 0, "expected auto or a power of two from 4K to 1M");
    o.block_bytes = *b;
  }
  o.mode = parse_mode(mode);
  const auto mask = kron::text::parse_uint(filter, 0xffff);
  if (!mask) throw InputError::at_offset("--filter " + filter, 0, "expected a 16-bit mask such as 0xffff");
  o.filter = static_cast<std::uint16_t>(*mask);
}

}  // namespace kron::recorder
