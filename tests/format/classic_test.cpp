// Classic sample formats against hand-worked byte vectors.
// Sources: 000 Table B2 (MultiKron II), 001 Tables 5-7 (MultiKron), 000/001 NETWORK OUTPUT.
#include "kron/format/classic.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace kron;
using namespace kron::classic;
using Bytes = std::vector<std::uint8_t>;

// 000 Table B2: Trace sample, 20 bytes: header, 56-bit timestamp, 32-bit source, 64-bit data, MSB first.
// Header worked by hand: CPU 5 = 101, type Trace = 10, shadow overflow 0, FIFO overflow 1, N/A 0
//   -> 1011 0010 = 0xB2.
TEST(ClassicMk2, TraceSampleTableB2Vector) {
  Sample s;
  s.type = SampleType::Trace;
  s.cpu = 5;
  s.flags = kFlagFifoOverrun;
  s.timestamp = 0x00123456789abcULL;
  s.source = 0x0003002a;
  s.data = 0x0123456789abcdefULL;
  const Bytes want = {0xb2, 0x00, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x00, 0x03,
                      0x00, 0x2a, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
  EXPECT_EQ(encode(Chip::Mk2, s), want);
  Sample back;
  const auto r = decode(Chip::Mk2, want, back);
  ASSERT_EQ(r.status, DecodeStatus::Ok);
  EXPECT_EQ(r.size, 20u);
  back.group = s.group;
  EXPECT_EQ(back, s);
}

// 000 Table B2: Resource sample, 84 bytes = trace part + sixteen 32-bit counters.
// Header: CPU 0 = 000, type Resource = 11, shadow overflow 1, FIFO 0, N/A 0 -> 0001 1100 = 0x1C.
TEST(ClassicMk2, ResourceSampleTableB2Vector) {
  Sample s;
  s.type = SampleType::Resource;
  s.flags = kFlagShadowOverrun;
  s.timestamp = 1;
  s.source = 0xffffffff;
  s.data = 2;
  for (unsigned i = 0; i < 16; ++i) s.counters[i] = i * 0x01010101u;
  const Bytes b = encode(Chip::Mk2, s);
  ASSERT_EQ(b.size(), 84u);
  EXPECT_EQ(b[0], 0x1c);
  EXPECT_EQ(Bytes(b.begin() + 1, b.begin() + 8), (Bytes{0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(Bytes(b.begin() + 8, b.begin() + 12), (Bytes{0xff, 0xff, 0xff, 0xff}));
  EXPECT_EQ(Bytes(b.begin() + 12, b.begin() + 20), (Bytes{0, 0, 0, 0, 0, 0, 0, 2}));
  // Counter 0 first (Table B2 "Resource Cntr 0 ... Resource Cntr 15"), counter 3 = 0x03030303.
  EXPECT_EQ(Bytes(b.begin() + 20, b.begin() + 24), (Bytes{0, 0, 0, 0}));
  EXPECT_EQ(Bytes(b.begin() + 32, b.begin() + 36), (Bytes{3, 3, 3, 3}));
  EXPECT_EQ(Bytes(b.begin() + 80, b.begin() + 84), (Bytes{15, 15, 15, 15}));
  Sample back;
  ASSERT_EQ(decode(Chip::Mk2, b, back).status, DecodeStatus::Ok);
  EXPECT_EQ(back, s);
}

// 000 "Resource Counters and their Shadow Registers": counters stick at their maximum; the classic
// 32-bit field of a counter beyond 2^32 shows 0xFFFFFFFF.
TEST(ClassicMk2, CounterFieldSaturatesAt32Bits) {
  Sample s;
  s.type = SampleType::Resource;
  s.counters[7] = 0x1'0000'0005ULL;
  const Bytes b = encode(Chip::Mk2, s);
  EXPECT_EQ(Bytes(b.begin() + 20 + 28, b.begin() + 20 + 32), (Bytes{0xff, 0xff, 0xff, 0xff}));
}

// 000 Table B2: the 56-bit timestamp field keeps the low 56 bits.
TEST(ClassicMk2, TimestampTruncatedTo56Bits) {
  Sample s;
  s.timestamp = 0xab12345678abcdefULL;
  const Bytes b = encode(Chip::Mk2, s);
  EXPECT_EQ(Bytes(b.begin() + 1, b.begin() + 8), (Bytes{0x12, 0x34, 0x56, 0x78, 0xab, 0xcd, 0xef}));
}

// 000 Table B2 header bit positions, one flag at a time.
TEST(ClassicMk2, HeaderBitPositions) {
  Sample s;
  s.type = SampleType::Trace;
  EXPECT_EQ(encode_header(Chip::Mk2, s), 0b000'10'0'0'0);
  s.type = SampleType::Resource;
  EXPECT_EQ(encode_header(Chip::Mk2, s), 0b000'11'0'0'0);
  s.flags = kFlagShadowOverrun;
  EXPECT_EQ(encode_header(Chip::Mk2, s), 0b000'11'1'0'0);
  s.flags = kFlagFifoOverrun;
  EXPECT_EQ(encode_header(Chip::Mk2, s), 0b000'11'0'1'0);
  s.flags = kFlagReadError;  // no such bit on MultiKron II: N/A stays 0
  EXPECT_EQ(encode_header(Chip::Mk2, s), 0b000'11'0'0'0);
  s.flags = 0;
  s.cpu = 7;
  EXPECT_EQ(encode_header(Chip::Mk2, s), 0b111'11'0'0'0);
}

// 000 Table B2 / 001 Table 5: types 00 and 01 are not samples.
TEST(ClassicMk2, InvalidTypeBitsRejected) {
  Sample s;
  EXPECT_FALSE(decode_header(Chip::Mk2, 0b000'00'000, s));
  EXPECT_FALSE(decode_header(Chip::Mk2, 0b111'01'111, s));
  EXPECT_EQ(size_from_header(Chip::Mk2, 0x00), 0u);
  EXPECT_EQ(size_from_header(Chip::Mk2, 0b000'10'000), 20u);
  EXPECT_EQ(size_from_header(Chip::Mk2, 0b000'11'000), 84u);
  const Bytes junk(20, 0x00);
  EXPECT_EQ(decode(Chip::Mk2, junk, s).status, DecodeStatus::BadHeader);
}

TEST(ClassicMk2, TruncatedSampleReportsNeededSize) {
  Sample s;
  s.type = SampleType::Resource;
  const Bytes b = encode(Chip::Mk2, s);
  Sample out;
  const auto r = decode(Chip::Mk2, std::span(b).first(50), out);
  EXPECT_EQ(r.status, DecodeStatus::Truncated);
  EXPECT_EQ(r.size, 84u);
}

// 001 Table 6: Trace sample, 16 bytes: header, 40-bit timestamp, 32-bit source, 48-bit data.
// 001 Table 5 header: CPU 7 = 111, type Trace = 10, FIFO overrun 1, RSRC overrun 0, RSRC read error 1
//   -> 1111 0101 = 0xF5.
TEST(ClassicMk1, TraceSampleTable6Vector) {
  Sample s;
  s.cpu = 7;
  s.flags = kFlagFifoOverrun | kFlagReadError;
  s.timestamp = 0x123456789aULL;
  s.source = 0xdeadbeef;
  s.data = 0xa1b2c3d4e5f6ULL;
  const Bytes want = {0xf5, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xde, 0xad,
                      0xbe, 0xef, 0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6};
  EXPECT_EQ(encode(Chip::Mk1, s), want);
  Sample back;
  ASSERT_EQ(decode(Chip::Mk1, want, back).status, DecodeStatus::Ok);
  EXPECT_EQ(back, s);
}

// 001 Table 7: Resource sample, 80 bytes (16 counters; ERRATUM E4: the drawing's 20 counters are not
// real, the text's 16 counters and 640 bits are).
TEST(ClassicMk1, ResourceSampleTable7Is80Bytes) {
  Sample s;
  s.type = SampleType::Resource;
  s.flags = kFlagShadowOverrun;
  s.counters[15] = 0x11223344;
  s.data = 0xffff'0000'0000'0001ULL;  // only 48 bits are sent
  const Bytes b = encode(Chip::Mk1, s);
  ASSERT_EQ(b.size(), 80u);
  EXPECT_EQ(b[0], 0b000'11'0'1'0);  // RSRC overrun is bit 1 on the first chip
  EXPECT_EQ(Bytes(b.begin() + 10, b.begin() + 16), (Bytes{0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(Bytes(b.begin() + 76, b.begin() + 80), (Bytes{0x11, 0x22, 0x33, 0x44}));
  Sample back;
  ASSERT_EQ(decode(Chip::Mk1, b, back).status, DecodeStatus::Ok);
  EXPECT_EQ(back.data, 1u);
  EXPECT_EQ(back.flags, kFlagShadowOverrun);
}

// 000 NETWORK OUTPUT: ten-bit elements, eight data bits, odd parity, sample-end flag.
TEST(NetElement, OddParityAndEndOfMessage) {
  // 0x00 has no ones: parity bit 1 makes the count odd. 0x01 has one: parity 0. 0xFF has eight: parity 1.
  EXPECT_EQ(NetElement::make(0x00, false).bits, 0x100);
  EXPECT_EQ(NetElement::make(0x01, false).bits, 0x001);
  EXPECT_EQ(NetElement::make(0xff, true).bits, 0x3ff);
  EXPECT_EQ(NetElement::make(0x03, true).bits, 0x303);
  for (unsigned b = 0; b < 256; ++b) {
    const auto e = NetElement::make(static_cast<std::uint8_t>(b), b & 1);
    EXPECT_TRUE(e.parity_ok()) << b;
    EXPECT_EQ(e.data(), b);
    EXPECT_EQ(e.eom(), static_cast<bool>(b & 1));
    NetElement flipped{static_cast<std::uint16_t>(e.bits ^ 0x100)};
    EXPECT_FALSE(flipped.parity_ok()) << b;
  }
}

TEST(NetElement, EndOfMessageOnlyOnLastByteOfSample) {
  Sample s;
  const Bytes b = encode(Chip::Mk2, s);
  std::vector<NetElement> els;
  to_net_elements(b, els);
  ASSERT_EQ(els.size(), 20u);
  for (std::size_t i = 0; i + 1 < els.size(); ++i) EXPECT_FALSE(els[i].eom()) << i;
  EXPECT_TRUE(els.back().eom());
}
