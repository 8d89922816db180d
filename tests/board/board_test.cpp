// The board's registers and header: 000 Table B1 (CSR), Tables B5-B7 (counter control), the header
// validation every reader applies, and the option parsers of the recorder's commands.
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "kron/core/error.hpp"
#include "kron/core/text.hpp"
#include "recorder/options.hpp"
#include "recorder_test_util.hpp"

namespace kron {
namespace {
using namespace board;

// 000 Table B1 (CSR) and Tables B5-B7 (counter control): the write and decode vectors run against both
// the board and the MultiKron II model in tests/core/control_regs_test.cpp.

TEST(BoardSourceTest, SourceIdentificationIsNodeDotProcess) {  // 000 "Source Address Registers"; ERRATUM E21
  const std::uint32_t s = source_id(5, 123456);
  EXPECT_EQ(source_node(s), 5u);
  EXPECT_EQ(source_pid(s), 123456u);
}

// ---- header validation: every field a reader relies on is checked, and the offset named ------------------
class BoardValidateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CreateOptions o;
    o.size = 64 << 10;
    o.lanes = 2;
    board_ = std::make_unique<testing::ScratchBoard>(o, "val");
    image_.assign(board_->map.bytes(), board_->map.bytes() + board_->map.size());
  }
  BoardHeader* h() { return reinterpret_cast<BoardHeader*>(image_.data()); }
  Problem check() { return validate(image_.data(), image_.size()); }
  std::unique_ptr<testing::ScratchBoard> board_;
  std::vector<std::uint8_t, std::allocator<std::uint8_t>> image_;
};

TEST_F(BoardValidateTest, GoodBoardPasses) { EXPECT_TRUE(check().ok) << check().what; }

TEST_F(BoardValidateTest, HostileHeadersAreRefusedWithTheirOffset) {
  struct Corruption {
    const char* what;
    std::size_t offset;
    std::function<void(BoardHeader*)> apply;
  };
  const std::vector<Corruption> cases = {
      {"magic", 0, [](BoardHeader* b) { b->magic[0] = 'X'; }},
      {"byte order", offsetof(BoardHeader, byte_order), [](BoardHeader* b) { b->byte_order = 0x04030201; }},
      {"major", offsetof(BoardHeader, major), [](BoardHeader* b) { b->major = 1; }},
      {"header size", offsetof(BoardHeader, header_size), [](BoardHeader* b) { b->header_size = 1u << 30; }},
      {"segment size", offsetof(BoardHeader, segment_size), [](BoardHeader* b) { b->segment_size *= 2; }},
      {"lane count", offsetof(BoardHeader, lane_count), [](BoardHeader* b) { b->lane_count = 0; }},
      {"lanes offset", offsetof(BoardHeader, lanes_offset), [](BoardHeader* b) { b->lanes_offset = ~0ull - 10; }},
      {"block size", offsetof(BoardHeader, block_bytes), [](BoardHeader* b) { b->block_bytes = 5000; }},
      {"block size small", offsetof(BoardHeader, block_bytes), [](BoardHeader* b) { b->block_bytes = 2048; }},
      {"blocks beyond", offsetof(BoardHeader, data_offset), [](BoardHeader* b) { b->block_bytes <<= 4; }},
      {"data overflow", offsetof(BoardHeader, data_offset), [](BoardHeader* b) { b->data_offset = ~0ull & ~63ull; }},
      {"block count", offsetof(BoardHeader, block_count), [](BoardHeader* b) { b->block_count = 0; }},
      {"block count none", offsetof(BoardHeader, block_count), [](BoardHeader* b) { b->block_count = kNoBlock; }},
      {"block count beyond", offsetof(BoardHeader, blocks_offset), [](BoardHeader* b) { b->block_count = 1u << 30; }},
      {"block header size", offsetof(BoardHeader, block_header_size), [](BoardHeader* b) { b->block_header_size = 32; }},
      {"block table overflow", offsetof(BoardHeader, blocks_offset), [](BoardHeader* b) { b->blocks_offset = ~0ull & ~63ull; }},
      {"block table in lanes", offsetof(BoardHeader, blocks_offset), [](BoardHeader* b) { b->blocks_offset -= 64; }},
      {"sealed queue", offsetof(BoardHeader, sealed_offset), [](BoardHeader* b) { b->sealed_offset = b->segment_size - 8; }},
      {"lane count overflow", offsetof(BoardHeader, lanes_offset), [](BoardHeader* b) { b->lane_count = kMaxLanes; }},
      {"clock", offsetof(BoardHeader, clock_hz), [](BoardHeader* b) { b->clock_hz = 0; }},
      {"config", offsetof(BoardHeader, config), [](BoardHeader* b) { b->config = 0xffffffff; }},
  };
  const std::vector<std::uint8_t> good = image_;
  for (const auto& c : cases) {
    image_ = good;
    c.apply(h());
    const Problem p = check();
    EXPECT_FALSE(p.ok) << c.what;
    EXPECT_EQ(p.offset, c.offset) << c.what << ": " << p.what;
  }
  EXPECT_FALSE(validate(image_.data(), 100).ok);  // shorter than a header
}

// A board of format 1.0 (the static split into rings) is refused with both versions named.
TEST_F(BoardValidateTest, OlderFormatIsRefusedNamingBothVersions) {
  h()->major = 1;
  h()->minor = 0;
  const Problem p = check();
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.offset, offsetof(BoardHeader, major));
  EXPECT_NE(p.what.find("board format 1.0"), std::string::npos) << p.what;
  EXPECT_NE(p.what.find("board format " + std::to_string(kMajor) + "." + std::to_string(kMinor)), std::string::npos)
      << p.what;
}

TEST_F(BoardValidateTest, ReaderRefusesCorruptLaneMemoryWithoutDecodingIt) {
  // A lane whose head claims records that are not records: the reader names the offset and stops.
  auto* L = reinterpret_cast<LaneHeader*>(image_.data() + h()->lanes_offset);
  auto* B = reinterpret_cast<BlockHeader*>(image_.data() + h()->blocks_offset);
  h()->lane_hwm.store(1);
  L->state.store(LaneState::Retired);
  L->head.store(3);
  L->passed.store(3);
  L->first.store(0);
  L->cur.store(0);
  B[0].lane.store(0);
  B[0].start.store(0);
  B[0].state.store(BlockState::Writing);
  std::memset(image_.data() + h()->data_offset, 0xab, 3 * kSlot);
  auto r = recorder::BoardReader::view(image_.data(), image_.size(), "image");
  std::uint64_t got = 0;
  r.snapshot([&](const recorder::LaneView&, std::span<const std::uint8_t>, std::uint64_t n) { got += n; });
  EXPECT_EQ(got, 0u);
  ASSERT_EQ(r.problems().size(), 1u);
  EXPECT_NE(r.problems()[0].find("offset " + std::to_string(h()->data_offset)), std::string::npos) << r.problems()[0];
  // A chain that leaves the pool, or loops: refused with the offset of the bad index, never followed.
  L->first.store(12345);
  auto r2 = recorder::BoardReader::view(image_.data(), image_.size(), "image");
  r2.snapshot(nullptr);
  ASSERT_EQ(r2.problems().size(), 1u);
  EXPECT_NE(r2.problems()[0].find("offset " + std::to_string(h()->lanes_offset + offsetof(LaneHeader, first))),
            std::string::npos)
      << r2.problems()[0];
  L->first.store(0);
  B[0].state.store(BlockState::Sealed);
  B[0].end.store(0);
  B[0].next.store(0);  // itself
  L->head.store(1ull << 40);
  auto r3 = recorder::BoardReader::view(image_.data(), image_.size(), "image");
  r3.snapshot(nullptr);
  EXPECT_EQ(r3.problems().size(), 1u);
}

TEST(BoardReaderTest, MissingBoardIsBadInput) {
  EXPECT_THROW(recorder::BoardReader::open("no-such-board-kron-test"), InputError);
}

// ---- option parsing ---------------------------------------------------------------------------------------------
TEST(RecorderOptionsTest, Sizes) {
  EXPECT_EQ(recorder::parse_size("4096"), 4096u);
  EXPECT_EQ(recorder::parse_size("16M"), 16u << 20);
  EXPECT_EQ(recorder::parse_size("2GiB"), 2ull << 30);
  EXPECT_EQ(recorder::parse_size("64k"), 64u << 10);
  EXPECT_FALSE(recorder::parse_size("").has_value());
  EXPECT_FALSE(recorder::parse_size("12Q").has_value());
  EXPECT_FALSE(recorder::parse_size("99999999999999T").has_value());
}

TEST(RecorderOptionsTest, Masks) {
  EXPECT_EQ(kron::text::parse_uint("0xffff", 0xffff), 0xffffu);
  EXPECT_EQ(kron::text::parse_uint("0b101", 0xffff), 5u);
  EXPECT_EQ(kron::text::parse_uint("12", 0xffff), 12u);
  EXPECT_FALSE(kron::text::parse_uint("0x10000", 0xffff).has_value());
  EXPECT_FALSE(kron::text::parse_uint("0xg", 0xffff).has_value());
}

TEST(RecorderOptionsTest, CounterSpecs) {
  CreateOptions o;
  recorder::apply_counters({"0=clock/10", "3=software", "5=page-faults"}, o);
  EXPECT_EQ(mode_of(field(o.mode_reg, 0)), Mode::Clock);
  EXPECT_EQ(clock_of(field(o.clock_reg, 0)), ClockSel::NodeClk10);
  EXPECT_EQ(mode_of(field(o.mode_reg, 3)), Mode::Software);
  EXPECT_EQ(mode_of(field(o.mode_reg, 5)), Mode::ExternalSignal);
  EXPECT_EQ(o.sources[5].signal, Signal::Perf);
  EXPECT_EQ(enable_of(field(o.enable, 5)), Enable::ResetEnable);
  EXPECT_THROW(recorder::apply_counters({"16=clock"}, o), InputError);
  EXPECT_THROW(recorder::apply_counters({"1=bogus"}, o), InputError);
  EXPECT_THROW(recorder::apply_counters({"clock"}, o), InputError);
}

// Each clock source selects its Clock Select field value (NISTIR 5571 Table B6: NodeClk, NodeClk/10,
// NodeClk/100, TSClk), and every counter it names is a clock (Mode Register, Table B5).
TEST(RecorderOptionsTest, ClockSourcesSelectTheirDivider) {
  CreateOptions o;
  recorder::apply_counters({"0=clock", "1=clock/10", "2=clock/100", "3=tsclk"}, o);
  EXPECT_EQ(clock_of(field(o.clock_reg, 0)), ClockSel::NodeClk);
  EXPECT_EQ(clock_of(field(o.clock_reg, 1)), ClockSel::NodeClk10);
  EXPECT_EQ(clock_of(field(o.clock_reg, 2)), ClockSel::NodeClk100);
  EXPECT_EQ(clock_of(field(o.clock_reg, 3)), ClockSel::TsClk);
  for (unsigned n = 0; n < 4; ++n) EXPECT_EQ(mode_of(field(o.mode_reg, n)), Mode::Clock) << "counter " << n;
}

// --lanes takes 1 to the board's lane limit and --block-size a power of two from 4K to 1M: each bound
// itself is accepted, one past it refused (docs/tools.md "The board's memory").
TEST(RecorderOptionsTest, LaneAndBlockBoundsAreInclusive) {
  CreateOptions o;
  recorder::apply_board_options("16M", board::kMaxLanes, "auto", "simple", "0xffff", o);
  EXPECT_EQ(o.lanes, board::kMaxLanes);
  EXPECT_THROW(recorder::apply_board_options("16M", board::kMaxLanes + 1, "auto", "simple", "0xffff", o), InputError);
  EXPECT_THROW(recorder::apply_board_options("16M", 0, "auto", "simple", "0xffff", o), InputError);
  for (const char* good : {"4K", "8K", "64K", "1M"}) {
    recorder::apply_board_options("16M", 4, good, "circular", "0x000f", o);
    EXPECT_EQ(o.block_bytes, *recorder::parse_size(good)) << good;
  }
  for (const char* bad : {"2K", "12K", "48K", "768K", "2M"})
    EXPECT_THROW(recorder::apply_board_options("16M", 4, bad, "simple", "0xffff", o), InputError) << bad;
}

}  // namespace
}  // namespace kron
