// Fuzz target: the PCI board memory dump reader of `kron rdsample --pci-memory` (src/models/pcib/image.hpp)
// and mk_rdsample's unwrapping (src/toolkit/rdsample.hpp). Byte 0 chooses the options (bit 0: --pointer
// from bytes 1-3; bit 1: --simple; bit 2: --wrapped; bit 3: -s from byte 4), the rest is the file. Any
// bytes either give a stream that decodes to exactly the samples counted, or an InputError.
#include <cstdint>
#include <span>

#include "analysis/input.hpp"
#include "kron/core/error.hpp"
#include "models/pcib/image.hpp"
#include "models/pcib/registers.hpp"
#include "toolkit/rdsample.hpp"

using namespace kron;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 5) return 0;
  const std::uint8_t o = data[0];
  std::optional<std::uint32_t> pointer;
  if (o & 1) pointer = std::uint32_t{data[1]} << 16 | std::uint32_t{data[2]} << 8 | data[3];
  toolkit::RdsampleOptions ro;
  ro.wrapped = o & 4;
  if (o & 8) ro.start = data[4];
  try {
    pcib::MemoryDump m = pcib::parse_memory_dump("fuzz.img", std::span(data + 5, size - 5), pointer, std::nullopt);
    if (o & 2) m.config |= pcib::cfg::kWrapB;
    const auto r = toolkit::rdsample(m, ro);
    analysis::ClassicStream in("out", classic::Chip::Mk2, r.stream, 10'000'000);
    Sample s;
    std::uint64_t n = 0;
    while (in.next(s)) ++n;  // throws if rdsample wrote something that is not whole samples
    if (n != r.trace + r.resource) __builtin_trap();
  } catch (const InputError&) {
  }
  return 0;
}
