// Fuzz target: the recorder's option parsers (sizes, masks, counter wiring "N=SOURCE"). Bad text must
// give nullopt or an InputError, never a crash or a value out of range.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kron/core/error.hpp"
#include "kron/core/text.hpp"
#include "recorder/options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (auto v = kron::recorder::parse_size(text); v && *v > kron::board::kMaxSegment) std::abort();
  if (auto v = kron::text::parse_uint(text, 0xffff); v && *v > 0xffff) std::abort();
  kron::board::SourceSpec spec;
  std::string err;
  if (kron::board::parse_source(text, &spec, &err) && spec.mode == 0) std::abort();
  try {
    kron::board::CreateOptions o;
    kron::recorder::apply_counters({text}, o);
  } catch (const kron::InputError&) {
  }
  try {
    (void)kron::recorder::parse_mode(text);
  } catch (const kron::InputError&) {
  }
  return 0;
}
