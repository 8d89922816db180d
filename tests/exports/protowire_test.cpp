// The Perfetto export's protobuf encoder (src/analysis/protowire.hpp) against the wire format's own
// examples ("Encoding", protobuf.dev/programming-guides/encoding: 1 is 01, 150 is 96 01, field 1 = 150 is
// 08 96 01, a string field 2 "testing" is 12 07 74 65 73 74 69 6e 67) and the limits of a varint.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "exports/protowire.hpp"

namespace pb = kron::exports::pb;

namespace {
std::vector<unsigned> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::vector<unsigned> u8(std::initializer_list<unsigned> l) { return l; }
// Bytes as unsigned values (std::string holds char).
std::vector<unsigned> ub(const std::string& s) {
  std::vector<unsigned> v;
  for (unsigned char c : s) v.push_back(c);
  return v;
}
std::string varint(std::uint64_t v) {
  std::string b;
  pb::varint(b, v);
  return b;
}
}  // namespace

TEST(ProtoWire, VarintsAsTheEncodingGuideWritesThem) {
  EXPECT_EQ(ub(varint(0)), u8({0x00}));
  EXPECT_EQ(ub(varint(1)), u8({0x01}));
  EXPECT_EQ(ub(varint(127)), u8({0x7f}));
  EXPECT_EQ(ub(varint(128)), u8({0x80, 0x01}));
  EXPECT_EQ(ub(varint(150)), u8({0x96, 0x01}));
  EXPECT_EQ(ub(varint(300)), u8({0xac, 0x02}));
  EXPECT_EQ(ub(varint(~std::uint64_t{0})), u8({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
  for (std::uint64_t v : {0ull, 127ull, 128ull, 16383ull, 16384ull, 1ull << 35, ~0ull})
    EXPECT_EQ(varint(v).size(), pb::varint_size(v)) << v;
}

TEST(ProtoWire, FieldsAsTheEncodingGuideWritesThem) {
  std::string b;
  pb::uint_field(b, 1, 150);
  EXPECT_EQ(ub(b), u8({0x08, 0x96, 0x01}));
  b.clear();
  pb::bytes_field(b, 2, "testing");
  EXPECT_EQ(ub(b), u8({0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'}));
  b.clear();
  pb::int_field(b, 3, -2);  // int64: two's complement, ten bytes
  EXPECT_EQ(ub(b), u8({0x18, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
  b.clear();
  pb::fixed64_field(b, 47, 0x0102030405060708ull);  // field 47, wire type 1: tag 0x179 -> f9 02
  EXPECT_EQ(ub(b), u8({0xf9, 0x02, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01}));
  b.clear();
  pb::uint_field(b, 58, 64);  // TracePacket.timestamp_clock_id: a two-byte tag (58 << 3 = 0x1d0)
  EXPECT_EQ(ub(b), u8({0xd0, 0x03, 0x40}));
}

// A nested message's length is patched in place: one byte up to 127, the message moved up beyond.
TEST(ProtoWire, NestedMessagesOfEveryLengthClass) {
  for (std::size_t len : {0u, 1u, 127u, 128u, 300u, 16383u, 16384u, 70000u}) {
    std::string b = "x";
    const std::size_t at = pb::open(b, 11);
    const std::string payload(len, 'p');
    b += payload;
    pb::close(b, at);
    std::string want = "x";
    pb::tag(want, 11, pb::kLengthDelimited);
    pb::varint(want, len);
    want += payload;
    EXPECT_EQ(b, want) << len;
    EXPECT_EQ(bytes(b).size(), 1 + 1 + pb::varint_size(len) + len) << len;
  }
  // Nested twice, the inner one longer than 127: both lengths right.
  std::string b;
  const std::size_t outer = pb::open(b, 1);
  const std::size_t inner = pb::open(b, 2);
  b += std::string(200, 'q');
  pb::close(b, inner);
  pb::close(b, outer);
  EXPECT_EQ(ub(b.substr(0, 6)), u8({0x0a, 0xcb, 0x01, 0x12, 0xc8, 0x01}));
  EXPECT_EQ(b.size(), 6u + 200u);
}
