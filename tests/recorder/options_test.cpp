// The recorder's option parsers (src/recorder/options.cpp) not covered with the board's: --compress.
#include "recorder/options.hpp"

#include <gtest/gtest.h>

#include "kron/core/error.hpp"

using namespace kron;

TEST(RecorderOptions, CompressLevelIsOneWhenOmittedAndOneToNineteen) {
  EXPECT_EQ(recorder::parse_compress_level(""), 1);
  EXPECT_EQ(recorder::parse_compress_level("1"), 1);
  EXPECT_EQ(recorder::parse_compress_level("19"), 19);
  for (const char* bad : {"0", "20", "-1", "x", "3x", "99999999999999999999"}) {
    try {
      recorder::parse_compress_level(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--compress=") + bad), std::string::npos) << e.what();
    }
  }
}
