// The first MultiKron's processor bus: address decode (001 Table 1, Table A-1), register reads and
// writes through the register table, resource counter reads (Table 3A) and software increments, and
// the software reset. Sources and what is not modelled: mk1.hpp.
#include <string>

#include "models/mk1/mk1.hpp"

namespace kron::mk1 {

namespace {
// 001 Table 1: the chip sees seven address bits; higher bits are decoded outside it.
constexpr unsigned kAddressMask = 0x7f;
}  // namespace

Mk1::Mk1() { hardware_reset(); }

// RDY after the fixed access time plus the wait states latched at reset (ERRATUM E60).
void Mk1::access_done() { advance(kAccessClocks + wait_states_); }

void Mk1::write(std::uint32_t address, std::uint64_t data) {
  sim::clock_after(now_, kAccessClocks + wait_states_, "write");  // ERRATUM E134: refused before it acts
  const unsigned a = address & kAddressMask;
  const RegisterInfo* r = find_register(a);
  // "-" / N/A rows, and test-only registers outside test mode: the write is ignored (001 Table A-1).
  if (r == nullptr || r->write == WriteKind::None || (r->test_only && !test_pin_)) {
    access_done();
    return;
  }
  data &= width_mask(r->width);  // "On a write from the node, any unused bit positions are ignored."
  if (a >= addr::kTraceTrigger) {
    trigger(a, data);
    access_done();
    return;
  }
  if (r->write == WriteKind::Strobe) {
    switch (r->addr) {
      case addr::kSoftwareReset: software_reset(); break;       // Table A-1 row 0
      case addr::kWaitCounter: wait_counter_ = 0; break;        // "Reset Wait Counter to zero"
      case addr::kOverrunCounter: overrun_counter_ = 0; break;  // "Reset Overrun Counter to zero"
      case addr::kResourceCounter: {
        // 001 "Processor Incrementing of a Resource Counter": only with the software input selected.
        const unsigned i = a - addr::kResourceCounter;
        if (counting(i, static_cast<unsigned>(MuxSource::Software)) && counters_[i] != 0xffffffffu) ++counters_[i];
        break;
      }
      default: break;
    }
    access_done();
    return;
  }
  // WriteKind::Load: the table's masks decide what is stored and what acts.
  const std::uint64_t act = apply_write1(*r, data);
  regs_[a] = apply_load(*r, regs_[a], data);
  switch (a) {
    case addr::kCsr: {
      // 001 Table 2: a "1" commands the action; pairs of (set, clear) bits. ERRATUM E61: when both
      // bits of a pair are 1, the clearing (reset-default) action wins (the rule of 000's E13, one function).
      regs_[addr::kCsr] = regs::w1_pairs(regs_[addr::kCsr], act, csr::kPairs);
      break;
    }
    case addr::kReset:  // 001 Reset Register: "1" clears the counter; self-clearing
      for (unsigned i = 0; i < 16; ++i)
        if (act >> i & 1) counters_[i] = 0;
      break;
    case addr::kEnable: enable_ = static_cast<std::uint16_t>(enable_ | act); break;    // 001 Enable Register
    case addr::kDisable: enable_ = static_cast<std::uint16_t>(enable_ & ~act); break;  // 001 Disable Register
    case addr::kTest: test_write(regs_[addr::kTest]); break;                           // 001 Table C-1
    default: break;
  }
  access_done();
}

// 001 Table 3A.
std::uint64_t Mk1::read_counter(unsigned i) {
  if (shadow_full_) {
    if (!(regs_[addr::kCsr] & csr::kReadWait))  // row 2: wrong data, bit 63 = 1: the stale shadow (ERRATUM E69)
      return shadow_[i] | (std::uint64_t{1} << 63);
    const std::uint64_t waited = wait_for(false, true);  // row 3: wait, then correct data
    if (!test_pin_) wait_counter_ += static_cast<std::uint32_t>(waited);
  }
  // Row 1: all counters are copied to the shadow registers, the selected one is returned; the read is
  // indivisible, so the shadow registers are free again when it ends.
  copy_to_shadow();
  return counters_[i];
}

std::uint64_t Mk1::read(std::uint32_t address) {
  sim::clock_after(now_, kAccessClocks + wait_states_, "read");  // ERRATUM E134: refused before it acts
  const unsigned a = address & kAddressMask;
  const RegisterInfo* r = find_register(a);
  std::uint64_t v = 0;  // "On a read ... any unused bit positions return a logical 0" (ERRATUM E64)
  if (r != nullptr && r->read != ReadKind::None && !(r->test_only && !test_pin_)) {
    if (r->read == ReadKind::Hook && r->addr == addr::kResourceCounter)
      v = read_counter(a - addr::kResourceCounter);
    else
      v = peek(a);
  }
  access_done();
  return v;
}

std::uint64_t Mk1::peek(std::uint32_t address) const {
  const unsigned a = address & kAddressMask;
  const RegisterInfo* r = find_register(a);
  if (r == nullptr || r->read == ReadKind::None || (r->test_only && !test_pin_)) return 0;
  if (r->read == ReadKind::Stored) return regs_[a] & width_mask(r->width);
  switch (r->addr) {
    case addr::kCsr: return csr_read();
    case addr::kTimestamp: return timestamp_;
    case addr::kWaitCounter: return wait_counter_;
    case addr::kOverrunCounter: return overrun_counter_;
    case addr::kEnable: return enable_;
    case addr::kFifoOutput: return fifo_output();
    case addr::kResourceCounter: return counters_[a - addr::kResourceCounter];
    default: return 0;
  }
}

// 001 Software Reset: "initializes most of the machine state"; unlike the hardware reset it leaves the
// Timestamp Counter alone. ERRATUM E65: "most" is taken as every register and queue of Table A-1 except
// the timestamp and the wait states latched at the last hardware reset.
void Mk1::software_reset() {
  reset_registers();
  enable_ = 0;
  wait_counter_ = overrun_counter_ = 0;
  counters_.fill(0);
  shadow_.fill(0);
  shadow_full_ = false;
  fifo_.clear();
  lost_fifo_ = lost_shadow_ = false;
  tx_len_ = tx_pos_ = 0;
  fifo_group_ = 0;
  net_disabled_ = test_source_ = false;
}

void Mk1::hardware_reset() {
  software_reset();
  timestamp_ = 0;  // 001 Timestamp: "reset to zero by a system reset"
  now_ = 0;
  ts_frac_ = slow_pre_ = 0;
  next_byte_at_ = 0;
  wait_states_ = wait_pins_;  // 001 Table 2 bits 12-13: "set by the logic levels at package pins during reset"
}

void Mk1::set_cpu(unsigned cpu) {
  if (cpu >= 8) throw sim::ConfigError("MultiKron: CPU ID line " + std::to_string(cpu) + " does not exist (0-7)");
  cpu_ = cpu;
}

void Mk1::set_wait_states(unsigned n) {
  if (n > 3) throw sim::ConfigError("MultiKron: wait states are a 2-bit pin setting (0-3), got " + std::to_string(n));
  wait_pins_ = n;
}

}  // namespace kron::mk1
