// The PCI toolkit board's Configuration Register bits that drive the MultiKron_II's pins (003 1.2,
// 2.2): CPU ID lines, TESTB, WAIT_CPU, the clocks (EN_EXT, DIV2, TS_RATIO); the connector pins; and the
// board's script commands. Sources and what is not modelled: pcib.hpp.
#include <cerrno>
#include <cstdlib>
#include <string>

#include "models/pcib/image.hpp"
#include "kron/core/text.hpp"
#include "models/pcib/pcib.hpp"

namespace kron::pcib {

// 003 1.2 Bits 15, 19, 18: NODECLK is the 40 MHz oscillator, or half of it with DIV2, or the external
// clock with EN_EXT ("DIV2 has no effect on it"); the Timestamp clock is NODECLK / 4, or / 3 with TS_RATIO.
std::uint64_t PciBoard::node_hz() const {
  if (config_ & cfg::kEnExt) return ext_hz_;
  return (config_ & cfg::kDiv2) ? kOscillatorHz / 2 : kOscillatorHz;
}
std::uint64_t PciBoard::ts_hz() const { return node_hz() / ((config_ & cfg::kTsRatio) ? 3 : 4); }

void PciBoard::apply_clocks() {
  // The chip counts node clocks; only the ratio matters to it. ERRATUM E79: to keep 1/3 exact when
  // NODECLK is not a multiple of 3 (40 MHz), the chip is given (node - node % 3, that / 3).
  const std::uint64_t ratio = (config_ & cfg::kTsRatio) ? 3 : 4;
  const std::uint64_t node = node_hz() - node_hz() % ratio;
  chip_->set_clocks(node, node / ratio);
}

// 003 2.2: CPU ID is eight unencoded lines, "only one line may be asserted at any time", from the
// Configuration Register (EXT_CPU = 0) or the connector's XCPU lines (EXT_CPU = 1). ERRATUM E73: with
// several lines asserted the lowest wins; with none, CPU 0.
void PciBoard::apply_pins() {
  const unsigned lines = (config_ & cfg::kExtCpu) ? xcpu_ : (config_ & cfg::kCpuIdMask);
  unsigned cpu = 0;
  while (lines && !(lines >> cpu & 1)) ++cpu;
  chip_->set_cpu(lines ? cpu : 0);
  chip_->set_test_mode(!(config_ & cfg::kTestB));             // Bit 12: 0 places the MultiKron into TEST mode
  chip_->set_wait_states((config_ & cfg::kWaitCpu) ? 1 : 0);  // Bit 11: latched by the chip at reset
  apply_clocks();
  chip_->set_net_ready(!full_flag_);
}

void PciBoard::set_clocks(std::uint64_t node, std::uint64_t ts) {
  (void)ts;
  if (node == 0) throw sim::ConfigError("PCI board: the external clock must be non-zero");
  ext_hz_ = node;
  apply_clocks();
}

void PciBoard::set_cpu(unsigned cpu) {
  if (cpu >= 8) throw sim::ConfigError("PCI board: XCPU line " + std::to_string(cpu) + " does not exist (0-7)");
  xcpu_ = 1u << cpu;
  apply_pins();
}

void PciBoard::set_test_mode(bool) {
  throw sim::ConfigError("PCI board: the MultiKron's TESTB pin is Configuration Register bit 12 (write 0x1204)");
}
void PciBoard::set_wait_states(unsigned) {
  throw sim::ConfigError("PCI board: the MultiKron's wait-state pin is Configuration Register bit 11 (WAIT_CPU)");
}

void PciBoard::set_net_ready(bool ready) {
  cable_ready_ = ready;
  run_state_machine();
}

void PciBoard::set_external(unsigned counter, bool level) {
  if (counter == 2)
    throw sim::ConfigError(
        "PCI board: X2 is hardwired to the board's own DEVSEL# (003 2.3); drive X0 for other "
        "PCI traffic");
  if (counter == 0) {
    devsel_other_ = level;
    chip_->set_external(0, level || in_access_);
    return;
  }
  chip_->set_external(counter, level);
}

namespace {
bool parse_u32(const std::string& s, std::uint64_t& out) {
  const auto v = text::parse_uint(s);
  if (v) out = *v;
  return v.has_value();
}
}  // namespace

// memdump START COUNT FILE: COUNT memory words from word START, each written most significant byte first
// (ERRATUM E70), i.e. the raw MultiKron II stream mk_rdsample would save.
bool PciBoard::memdump(const std::vector<std::string>& args, std::string& error) {
  std::uint64_t start = 0, count = 0;
  if (args.size() != 3 || !parse_u32(args[0], start) || !parse_u32(args[1], count)) {
    error = "usage: memdump START COUNT FILE (memory word numbers, 0-0x3fffff)";
    return true;
  }
  if (start > kMemoryWords || count > kMemoryWords - start) {
    error = "memdump: words " + args[0] + " + " + args[1] + " exceed the 4M-word local memory";
    return true;
  }
  std::FILE* f = std::fopen(args[2].c_str(), "wb");
  if (!f) {
    error = "memdump: cannot open " + args[2] + " for writing";
    return true;
  }
  std::vector<std::uint8_t> buf;
  buf.reserve(count * 4);
  for (std::uint64_t i = start; i < start + count; ++i) {
    const std::uint32_t w = memory_[i];
    for (int b = 3; b >= 0; --b) buf.push_back(static_cast<std::uint8_t>(w >> (8 * b)));
  }
  const bool ok = std::fwrite(buf.data(), 1, buf.size(), f) == buf.size();
  if (std::fclose(f) != 0 || !ok) error = "memdump: cannot write " + args[2];
  return true;
}

// memimage FILE: the board memory image of image.hpp, carrying the Memory Address Pointer and the
// Configuration Register, for `kron rdsample --pci-memory`. Words 0 up to the pointer; the whole memory
// when the circular buffer has wrapped (wrap count non-zero: every word holds samples).
bool PciBoard::memimage(const std::vector<std::string>& args, std::string& error) {
  if (args.size() != 1) {
    error = "usage: memimage FILE";
    return true;
  }
  const bool wrapped = !(config_ & cfg::kWrapB) && (map_ >> 22) != 0;
  const std::uint32_t words = wrapped ? kMemoryWords : (map_ & kMemoryWordMask);
  const auto image = encode_memory_image(config_, map_, 0, std::span(memory_).first(words));
  std::FILE* f = std::fopen(args[0].c_str(), "wb");
  if (!f) {
    error = "memimage: cannot open " + args[0] + " for writing";
    return true;
  }
  const bool ok = std::fwrite(image.data(), 1, image.size(), f) == image.size();
  if (std::fclose(f) != 0 || !ok) error = "memimage: cannot write " + args[0];
  return true;
}

bool PciBoard::command(std::string_view cmd, const std::vector<std::string>& args, std::string& error) {
  if (cmd == "memdump") return memdump(args, error);
  if (cmd == "memimage") return memimage(args, error);
  if (cmd == "memfault") {
    std::uint64_t word = 0, mask = 0;
    if (args.size() != 2 || !parse_u32(args[0], word) || !parse_u32(args[1], mask) || word >= kMemoryWords ||
        mask > 0xffffffffu)
      error = "usage: memfault WORD MASK (a memory word 0-0x3fffff and the bits stuck at 0)";
    else
      fault_word_ = static_cast<std::uint32_t>(word), fault_mask_ = static_cast<std::uint32_t>(mask);
    return true;
  }
  if (cmd == "extreset") {  // 003 1.2 Bit 15: with EN_EXT an external reset also resets the MultiKron
    if (!(config_ & cfg::kEnExt))
      error = "extreset: EN_EXT (Configuration Register bit 15) is 0, the external reset is ignored";
    else
      chip_->hardware_reset();
    return true;
  }
  if (cmd == "cable") {  // cable FILE | cable - (standard output, for a reader) | cable off
    if (args.size() != 1) {
      error = "usage: cable FILE, cable - (standard output) or cable off (disconnected)";
      return true;
    }
    if (cable_ == stdout)
      std::fflush(cable_);
    else if (cable_)
      std::fclose(cable_);
    cable_ = nullptr;
    cable_path_.clear();
    if (args[0] == "-") {
      cable_ = stdout;
      cable_path_ = "-";
    } else if (args[0] != "off") {
      cable_ = std::fopen(args[0].c_str(), "wb");
      if (!cable_)
        error = "cable: cannot open " + args[0] + " for writing";
      else
        cable_path_ = args[0];
    }
    return true;
  }
  return false;
}

}  // namespace kron::pcib
