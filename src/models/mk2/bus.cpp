// MultiKron II processor interface: reads and writes, wait states, holding the processor, 32-bit mode,
// the read-with-copy / read-without-copy rules of Table B3b and the test-mode operations.
// Sources: 000 PROCESSOR INTERFACE, CSR Register, High Order 32 Bit Register, Wait / Overrun Error
//   Counter, "Processor Reading and Writing of a Resource Counter", TEST MODE, Tables B1, B3b, B4.
// Decisions: ERRATUM E3 (unused bits), E7 (access timing), E14 (High Order register on its own read),
//   E15 (test mode), E16 (read-without-copy delay), E17 (endless waits).
#include <string>

#include "models/mk2/mk2.hpp"

namespace kron::mk2 {
namespace {
constexpr std::uint64_t kLow32 = 0xffff'ffff;
}  // namespace

// ERRATUM E7: an access that is not held takes 2 + W node clocks: the strobe clock, W latched wait
// states (CSR bit 12), and the ACKB clock at which the chip acts (takes data, drives read data).
std::uint64_t Mk2::begin_access() {
  // ERRATUM E134: an access that would end past the clock limit is refused before it acts.
  const std::uint64_t t = sim::clock_after(now_, access_clocks(), "access") - 1;
  run_network(t);
  return t;
}

void Mk2::end_access(std::uint64_t t_act) { advance(t_act + 1); }

// Holds the processor (delays ACKB) until `ready`: "tallies the number of Node clock cycles in which the
// MultiKron II has delayed the acknowledgement (ACKB) signal ... beyond the normal preset number" (000
// Wait Error Counter; CNT in Tables B3a/B3b). The counter wraps at 2^32.
void Mk2::hold_until(std::uint64_t& t, bool (Mk2::*ready)() const, const char* what) {
  const std::uint64_t from = t;
  while (!(this->*ready)()) {
    const std::uint64_t r = next_release();
    // ERRATUM E17: silicon would hold the processor forever.
    if (r == kNever)
      throw sim::HangError(std::string(what) +
                           (net_enabled_
                                ? " while NETRDY is low: the processor would be held forever"
                                : " while the output network is disabled: the processor would be held forever"));
    run_network(r);
    t = r;
  }
  wait_counter_ = static_cast<std::uint32_t>(wait_counter_ + (t - from));
}

void Mk2::write(std::uint32_t addr, std::uint64_t data) {
  addr %= kAddresses;  // only the seven MultiKron address bits reach the chip (000 PROCESSOR INTERFACE)
  const RegisterInfo& r = decode(addr);
  std::uint64_t t = begin_access();
  // 000 High Order 32 Bit Register: in 32 bit mode "input data bits 32-63 will be taken from this High
  // Order 32 bit register on processor writes rather than the input pins".
  if (csr_control(csr::kMode32)) data = reg(Reg::HighOrder) << 32 | (data & kLow32);
  // Table B4 "*": "do nothing when written to in non-Test mode" (Appendix A Testing).
  if (!r.test_only_write || test_mode_) {
    switch (r.write) {
      case WriteKind::Store:
      case WriteKind::W1Pairs: stored_[addr] = apply_write(r, stored_[addr], data); break;
      case WriteKind::Fields: write_control(r, data, t); break;
      case WriteKind::Hook: write_hook(r, addr, data, t); break;
      case WriteKind::Ignored: break;
    }
  }
  end_access(t);
}

void Mk2::write_hook(const RegisterInfo& r, std::uint32_t addr, std::uint64_t data, std::uint64_t& t) {
  const unsigned low4 = addr & 0xf;
  switch (r.reg) {
    case Reg::SoftwareReset: reset_state(t); break;
    case Reg::Timestamp:
      set_timestamp(t, data);
      break;  // test mode only (Table B4 "*")
    // Table B4 "** Reset to zero ONLY when NOT in TEST mode"; in test mode they are writable (000 TEST MODE).
    case Reg::WaitCounter: wait_counter_ = test_mode_ ? static_cast<std::uint32_t>(data) : 0; break;
    case Reg::OverrunCounter: overrun_counter_ = test_mode_ ? static_cast<std::uint32_t>(data) : 0; break;
    case Reg::IncrTimestamp: set_timestamp(t, timestamp(t) + 1); break;
    case Reg::IncrWait: ++wait_counter_; break;
    case Reg::IncrOverrun: ++overrun_counter_; break;
    case Reg::DisableNetwork: net_enabled_ = false; break;
    case Reg::EnableNetwork:
      if (!net_enabled_) next_cycle_ = std::max(next_cycle_, (t + 2) & ~std::uint64_t{1});
      net_enabled_ = true;
      break;
    case Reg::AdvanceFifo:
      // 001 Table C-1 bit 8: "shifts out the FIFO ... and frees the Resource shadow registers". ERRATUM
      // E16: a sample the network was sending is abandoned.
      pop_fifo();
      shadow_busy_ = false;
      out_active_ = false;
      break;
    case Reg::FifoGroup: {
      // 000 TEST MODE: "The 32 bits of data are duplicated in each 32 bit FIFO group"; ERRATUM E6: its
      // least significant bit goes to the 161st bit, as on the first chip (001 Table C-1).
      FifoEntry e;
      e.group.fill(static_cast<std::uint32_t>(data));
      e.resource = data & 1;
      push_fifo(e, t);
      break;
    }
    case Reg::CounterCopy: write_counter(low4, static_cast<std::uint32_t>(data), t); break;
    case Reg::CounterNoCopy: increment_counter(low4, t); break;
    case Reg::TraceTrigger: trigger(false, low4, data, t); break;
    case Reg::ResourceTrigger: trigger(true, low4, data, t); break;
    default: break;
  }
}

// Table B1: control bits as stored; status bits from the chip's state.
std::uint64_t Mk2::csr_value() const {
  using csr::bit;
  std::uint64_t v =
      reg(Reg::Csr) & (bit(csr::kSamplingEnable) | bit(csr::kWaitOnOverrun) | bit(csr::kReadWait) | bit(csr::kMode32));
  if (fifo_count_ == kFifoDepth) v |= bit(csr::kFifoFull);
  if (shadow_busy_) v |= bit(csr::kShadowFull);
  // ERRATUM E11: the overrun status bits are the error flags the next successful sample will carry.
  if (pending_fifo_overrun_) v |= bit(csr::kFifoOverrun);
  if (pending_shadow_overrun_) v |= bit(csr::kShadowOverrun);
  if (fifo_head().resource) v |= bit(csr::kFifoBit161);
  if (wait_states_latched_) v |= bit(csr::kWaitStates);
  // Table B1 bit 15 status: "32 bit mode disabled (64 bit mode)".
  if (!(v & bit(csr::kMode32))) v |= bit(csr::kMode64);
  return v;
}

// What a read returns at node clock t, without side effects (read-with-copy: the counters' current values).
std::uint64_t Mk2::read_hook(const RegisterInfo& r, std::uint32_t addr, std::uint64_t t) const {
  switch (r.read) {
    case ReadKind::AllOnes: return 0;  // bus_value() turns every bit of a 0-width register into 1
    case ReadKind::Stored: return stored_[addr];
    case ReadKind::Hook: break;
  }
  switch (r.reg) {
    case Reg::Csr: return csr_value();
    case Reg::Timestamp: return timestamp(t);
    case Reg::WaitCounter: return wait_counter_;
    case Reg::OverrunCounter: return overrun_counter_;
    case Reg::FifoGroup: return fifo_head().group[addr - r.first];  // "groups (A-E), from the most significant bit"
    case Reg::CounterCopy: return counters_at(t)[addr & 0xf];
    case Reg::CounterNoCopy: return shadow_[addr & 0xf];
    default: return 0;
  }
}

std::uint64_t Mk2::read(std::uint32_t addr) {
  addr %= kAddresses;
  const RegisterInfo& r = decode(addr);
  std::uint64_t t = begin_access();
  if (r.reg == Reg::CounterCopy) {
    // Table B3b. "Shadow registers are never marked busy from a read-with-copy, only from a Resource sample."
    if (shadow_busy_ && csr_control(csr::kReadWait))
      hold_until(t, &Mk2::shadow_ready, "read-with-copy waits for the shadow registers");  // row 2 (CNT)
    if (!shadow_busy_) copy_to_shadow(t);  // rows 1, 2, 5: "Data copied and then read"
    // Row 6: "Don't Wait, but return erroneous data": no copy; the shadow registers being sent are read
    // (ERRATUM E16).
  } else if (r.reg == Reg::CounterNoCopy && shadow_busy_) {
    // Rows 4 and 8: "Delay Network output, if necessary, while current contents of Shadow Regs are read";
    // 000: "a read-without-copy will delay the Collection Network for two node clock times, when the
    // shadow registers are busy".
    next_cycle_ += kNodeClocksPerNetClock;
  }
  const std::uint64_t v = bus_value(r, r.reg == Reg::CounterCopy ? shadow_[addr & 0xf] : read_hook(r, addr, t));
  // 000 High Order 32 Bit Register: "Output data bits 32-63 are always ... placed in that register" on
  // processor reads (ERRATUM E14: except a read of that register itself).
  if (r.reg != Reg::HighOrder) reg(Reg::HighOrder) = v >> 32;
  end_access(t);
  return v;
}

std::uint64_t Mk2::peek(std::uint32_t addr) const {
  addr %= kAddresses;
  const RegisterInfo& r = decode(addr);
  return bus_value(r, read_hook(r, addr, now_));
}

}  // namespace kron::mk2
