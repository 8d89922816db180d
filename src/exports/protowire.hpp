// A small Protocol Buffers wire-format encoder for the Perfetto export: varints, tags, length-delimited
// fields and nested messages appended to a std::string. Wire format: "Encoding" in the Protocol Buffers
// documentation (protobuf.dev/programming-guides/encoding): a field is a tag varint (field << 3 | wire
// type) then its value; wire type 0 varint, 1 fixed 64-bit, 2 length-delimited (a length varint, then the
// bytes). No libprotobuf: the writer needs only this, and it keeps the export streaming.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace kron::exports::pb {

enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };

// Bytes a varint of v takes (1..10).
constexpr unsigned varint_size(std::uint64_t v) {
  unsigned n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

[[gnu::always_inline]] inline void varint(std::string& b, std::uint64_t v) {
  if (v < 0x80) [[likely]] {  // most tags, types, ids and time deltas
    b.push_back(static_cast<char>(v));
    return;
  }
  char tmp[10];
  unsigned n = 0;
  while (v >= 0x80) {
    tmp[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  tmp[n++] = static_cast<char>(v);
  b.append(tmp, n);
}

[[gnu::always_inline]] inline void tag(std::string& b, std::uint32_t field, WireType wt) {
  varint(b, std::uint64_t{field} << 3 | wt);
}

[[gnu::always_inline]] inline void uint_field(std::string& b, std::uint32_t field, std::uint64_t v) {
  tag(b, field, kVarint);
  varint(b, v);
}
// int32/int64 fields: two's complement as a 64-bit varint (a negative value takes 10 bytes).
inline void int_field(std::string& b, std::uint32_t field, std::int64_t v) {
  uint_field(b, field, static_cast<std::uint64_t>(v));
}
inline void fixed64_field(std::string& b, std::uint32_t field, std::uint64_t v) {
  tag(b, field, kFixed64);
  char le[8];
  for (unsigned i = 0; i < 8; ++i) le[i] = static_cast<char>(v >> (8 * i));
  b.append(le, 8);
}
inline void bytes_field(std::string& b, std::uint32_t field, std::string_view v) {
  tag(b, field, kLengthDelimited);
  varint(b, v.size());
  b.append(v);
}

// A nested message: open() writes the tag and one length byte and returns where the message starts;
// close() writes the length, moving the message up when the length needs more than one byte (rare: the
// export's packets are mostly below 128 bytes).
inline std::size_t open(std::string& b, std::uint32_t field) {
  tag(b, field, kLengthDelimited);
  b.push_back('\0');
  return b.size();
}
inline void close(std::string& b, std::size_t start) {
  const std::size_t len = b.size() - start;
  if (len < 0x80) {
    b[start - 1] = static_cast<char>(len);
    return;
  }
  const unsigned extra = varint_size(len) - 1;
  b.resize(b.size() + extra);
  std::memmove(&b[start + extra], &b[start], len);
  std::string lenbytes;
  varint(lenbytes, len);
  std::memcpy(&b[start - 1], lenbytes.data(), lenbytes.size());
}

}  // namespace kron::exports::pb
