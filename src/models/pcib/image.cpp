// The board memory file formats of image.hpp: writer and bounds-checked reader.
#include "models/pcib/image.hpp"

#include <fmt/core.h>

#include <cstring>

#include "kron/core/error.hpp"
#include "models/pcib/registers.hpp"

namespace kron::pcib {
namespace {
std::uint32_t le32(std::span<const std::uint8_t> b, std::size_t at) {
  return std::uint32_t{b[at]} | std::uint32_t{b[at + 1]} << 8 | std::uint32_t{b[at + 2]} << 16 |
         std::uint32_t{b[at + 3]} << 24;
}
std::uint16_t le16(std::span<const std::uint8_t> b, std::size_t at) {
  return static_cast<std::uint16_t>(b[at] | b[at + 1] << 8);
}
void put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
}  // namespace

std::vector<std::uint8_t> encode_memory_image(std::uint32_t config, std::uint32_t pointer, std::uint32_t first,
                                              std::span<const std::uint32_t> words) {
  std::vector<std::uint8_t> out(std::begin(kImageMagic), std::end(kImageMagic));
  out.reserve(kImageHeaderSize + 4 * words.size());
  put32(out, kImageByteOrder);
  put32(out, std::uint32_t{kImageMajor} | std::uint32_t{kImageMinor} << 16);
  put32(out, kImageHeaderSize);
  put32(out, config);
  put32(out, pointer & kPointerMask);
  put32(out, first);
  put32(out, static_cast<std::uint32_t>(words.size()));
  put32(out, 0);
  for (const std::uint32_t w : words)
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(w >> s));  // ERRATUM E70
  return out;
}

MemoryDump parse_memory_dump(const std::string& name, std::span<const std::uint8_t> bytes,
                             std::optional<std::uint32_t> pointer, std::optional<std::uint32_t> config) {
  MemoryDump m;
  m.name = name;
  const auto fail = [&](std::uint64_t off, const std::string& what) { return InputError::at_offset(name, off, what); };
  const bool image =
      bytes.size() >= sizeof kImageMagic && std::memcmp(bytes.data(), kImageMagic, sizeof kImageMagic) == 0;
  if (image) {
    m.image = true;
    if (bytes.size() < kImageHeaderSize)
      throw fail(bytes.size(),
                 fmt::format("board memory image header cut short ({} of {} bytes)", bytes.size(), kImageHeaderSize));
    if (le32(bytes, 8) != kImageByteOrder)
      throw fail(8, fmt::format("byte-order mark 0x{:08x}, expected 0x{:08x} written little-endian", le32(bytes, 8),
                                kImageByteOrder));
    if (le16(bytes, 12) != kImageMajor)
      throw fail(12, fmt::format("board memory image version {}.{}: this kron reads major version {}", le16(bytes, 12),
                                 le16(bytes, 14), kImageMajor));
    const std::uint32_t header = le32(bytes, 16);
    if (header < kImageHeaderSize || header > bytes.size())
      throw fail(
          16, fmt::format("header size {} outside {}..{} (the file's size)", header, kImageHeaderSize, bytes.size()));
    m.config = le32(bytes, 20);
    m.pointer = le32(bytes, 24);
    if (m.pointer > kPointerMask)
      throw fail(24, fmt::format("memory address pointer 0x{:x} wider than 24 bits", m.pointer));
    m.first_word = le32(bytes, 28);
    const std::uint32_t count = le32(bytes, 32);
    if (m.first_word > kMemoryWords || count > kMemoryWords - m.first_word)
      throw fail(28, fmt::format("words 0x{:x} + 0x{:x} exceed the 4M-word local memory", m.first_word, count));
    if (bytes.size() - header != 4ull * count)
      throw fail(bytes.size(), fmt::format("the header announces {} memory words ({} bytes) after offset {}, the file "
                                           "holds {} bytes there",
                                           count, 4ull * count, header, bytes.size() - header));
    m.data_offset = header;
    m.words = bytes.subspan(header);
  } else {
    if (bytes.size() % 4)
      throw fail(bytes.size() - bytes.size() % 4,
                 fmt::format("a raw memory dump is whole 32-bit words; {} bytes left over", bytes.size() % 4));
    if (bytes.size() > 4ull * kMemoryWords)
      throw fail(4ull * kMemoryWords, "a raw memory dump larger than the board's 16 MB local memory");
    if (!pointer)
      throw fail(0, "a raw memory dump (no KRONPCIM header) carries no memory address pointer: give --pointer");
    m.config = cfg::kDefault;  // 003 1.3 "Default Configuration"
    m.words = bytes;
  }
  if (pointer) {
    if (*pointer > kPointerMask)
      throw fail(0, fmt::format("--pointer 0x{:x} is wider than the 24-bit pointer", *pointer));
    m.pointer = *pointer;
  }
  if (config) m.config = *config;
  return m;
}

}  // namespace kron::pcib
