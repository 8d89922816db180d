// include/kron/core/record.hpp: a named probe's data word, the site id in bits 48-63 (ERRATUM E150) and a
// signed 48-bit value in bits 0-47 read by the one decoder named_value_of (DECISION D30); values outside the
// range keep their low 48 bits (DECISION D31).
#include <gtest/gtest.h>

#include <cstdint>

#include "kron/core/record.hpp"

namespace kron::record {
namespace {

constexpr std::uint64_t bits(std::int64_t v) { return static_cast<std::uint64_t>(v); }

TEST(NamedValueTest, RangeIsSignedFortyEightBits) {  // DECISION D30
  EXPECT_EQ(kNamedValueMax, 140737488355327);        // 2^47 - 1
  EXPECT_EQ(kNamedValueMin, -140737488355328);       // -2^47
}

TEST(NamedValueTest, EveryValueInTheRangeReadsBackAsItself) {  // DECISION D30
  for (const std::int64_t v : {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{-5}, std::int64_t{42},
                               kNamedValueMax, kNamedValueMax - 1, kNamedValueMin, kNamedValueMin + 1}) {
    for (const std::uint32_t id : {1u, 7u, 0xfffeu, 0xffffu}) {
      const std::uint64_t d = named_data(id, bits(v));
      EXPECT_EQ(named_value_of(d), v) << "id " << id;
      EXPECT_EQ(name_id_of(d), id) << "value " << v;  // a negative value's sign never reaches the id
    }
  }
}

TEST(NamedValueTest, BitFortySevenIsTheSign) {  // DECISION D30
  EXPECT_EQ(named_value_of(0x0000'7fff'ffff'ffffull), kNamedValueMax);
  EXPECT_EQ(named_value_of(0x0000'8000'0000'0000ull), kNamedValueMin);
  EXPECT_EQ(named_value_of(0x0000'ffff'ffff'fffbull), -5);
  // The id's bits are not the value's: an id with its top bit set leaves a positive value positive.
  EXPECT_EQ(named_value_of(0xffff'0000'0000'0005ull), 5);
  EXPECT_EQ(named_value_of(0x8000'7fff'ffff'ffffull), kNamedValueMax);
}

TEST(NamedValueTest, UnsignedBitsOfANegativeValueReadAsIt) {  // DECISION D30: C's (uint64_t)-5, Python's mask
  EXPECT_EQ(named_value_of(named_data(3, ~std::uint64_t{0} - 4)), -5);
  EXPECT_EQ(named_value_of(named_data(3, ~std::uint64_t{0})), -1);
}

TEST(NamedValueTest, OutsideTheRangeKeepsTheLowFortyEightBits) {  // DECISION D31
  EXPECT_EQ(named_value_of(named_data(3, bits(kNamedValueMax + 1))), kNamedValueMin);
  EXPECT_EQ(named_value_of(named_data(3, bits(kNamedValueMin - 1))), kNamedValueMax);
  EXPECT_EQ(named_value_of(named_data(3, (std::uint64_t{1} << 48) + 3)), 3);
  EXPECT_EQ(named_value_of(named_data(3, 0xabcd'1234'5678'9abcull)), 0x1234'5678'9abc);
  EXPECT_EQ(name_id_of(named_data(7, ~0ull)), 7);
}

TEST(NamedValueTest, OldUnsignedValuesReadModuloTwoToTheFortyEight) {  // DECISION D33
  const std::uint64_t old = 0x0000'9000'0000'0000ull;                  // an unsigned value >= 2^47 recorded before D30
  EXPECT_EQ(named_value_of(named_data(2, old)), static_cast<std::int64_t>(old) - (std::int64_t{1} << 48));
  EXPECT_EQ(bits(named_value_of(named_data(2, old))) & kNamedValueMask, old);
}

}  // namespace
}  // namespace kron::record
