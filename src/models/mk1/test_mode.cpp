// The first MultiKron's test mode (001 Appendix C): the TEST Register's instruction fields (Table C-1)
// and the FIFO Output register. Sources and what is not modelled: mk1.hpp.
#include "models/mk1/mk1.hpp"

namespace kron::mk1 {

namespace {
// Table C-1 "Set Counter": each data bit sets a group of four counter bits (data-bit[0]=1 sets
// counter-bits[0-3]=1111).
std::uint64_t expand_nibbles(std::uint32_t data, unsigned groups) {
  std::uint64_t v = 0;
  for (unsigned g = 0; g < groups; ++g)
    if (data >> g & 1) v |= std::uint64_t{0xf} << (4 * g);
  return v;
}
}  // namespace

// Table C-1 bit 7 "1": the 32 data bits replicated in each of the four 32-bit groups (bits 0-127), and the
// least significant data bit loaded into bit 128.
Mk1::FifoEntry Mk1::test_entry(std::uint32_t data) {
  FifoEntry e;
  for (unsigned g = 0; g < 4; ++g)
    for (unsigned b = 0; b < 4; ++b) e.bytes[4 * g + b] = static_cast<std::uint8_t>(data >> (24 - 8 * b));
  e.resource = data & 1;
  return e;
}

// One write of the TEST Register executes its instruction (bits 32-47) on its data (bits 0-31).
// ERRATUM E68: the fields act in the order of Table C-1 (set, increment, read group, network, data
// source, shiftout), so one write can load the FIFO and shift it.
void Mk1::test_write(std::uint64_t value) {
  const auto instr = static_cast<unsigned>(value >> 32);
  const auto data = static_cast<std::uint32_t>(value);
  switch (instr & 3) {  // bits 1-0 (33-32): Set Counter from associated test data
    case 1: wait_counter_ = overrun_counter_ = static_cast<std::uint32_t>(expand_nibbles(data, 8)); break;
    case 2: timestamp_ = expand_nibbles(data, 14); break;
    case 3: counters_.fill(data); break;
    default: break;  // NOP
  }
  switch (instr >> 2 & 3) {                              // bits 3-2 (35-34): Increment Counter
    case 1: ++wait_counter_, ++overrun_counter_; break;  // both wrap (Wait/Overrun Counter sections)
    case 2: timestamp_ = (timestamp_ + 1) & kTimestampMask; break;
    case 3:
      for (auto& c : counters_)
        if (c != 0xffffffffu) ++c;  // resource counters stick at their maximum
      break;
    default: break;  // NOP
  }
  fifo_group_ = instr >> 4 & 3;           // bits 5-4 (37-36): FIFO read group, stays until changed
  net_disabled_ = (instr >> 6 & 1) != 0;  // bit 6 (38): Disable Network Output
  test_source_ = (instr >> 7 & 1) != 0;   // bit 7 (39): FIFO data source
  if (test_source_) {
    // "immediately written to the FIFO": the 32 data bits replicated in each 32-bit group, bit 128 = data
    // bit 0. ERRATUM E67: into a full FIFO the entry is lost and the FIFO Overrun status is set.
    if (fifo_.size() < kFifoDepth) {
      fifo_.push_back(test_entry(data));
    } else {
      lost_fifo_ = true;
    }
  }
  if (instr >> 8 & 1) {  // bit 8 (40): Shiftout FIFO & free shadow registers (one pulse per write)
    if (!fifo_.empty()) {
      fifo_.pop_front();
      tx_len_ = tx_pos_ = 0;  // a sample being sent is cut short
    }
    shadow_full_ = false;
  }
  kick();
}

// Appendix C "FIFO Output": the 32-bit group of the FIFO's output rank selected by Table C-1 bits 5-4.
// ERRATUM E63: FIFO bits 127-120 are the first byte sent, so group 3 is bytes 0-3 and group 0 is
// bytes 12-15 (the low 32 bits of the user data). An empty FIFO reads 0.
std::uint32_t Mk1::fifo_output() const {
  if (fifo_.empty()) return 0;
  const auto& b = fifo_.front().bytes;
  const unsigned at = 4 * (3 - fifo_group_);
  return std::uint32_t{b[at]} << 24 | std::uint32_t{b[at + 1]} << 16 | std::uint32_t{b[at + 2]} << 8 | b[at + 3];
}

}  // namespace kron::mk1
