// Reset, time and the monitor bus: processor reads and writes of Table 4.4, the counters and the SRAM.
#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>

#include "models/numachine/numachine.hpp"

namespace kron::numachine {

Numachine::Numachine() : sram_(kSramWords, 0) { hardware_reset(); }

classic::Chip Numachine::chip() const {
  throw std::logic_error("the NUMAchine monitor emits no classic samples");  // nothing calls on_sample
}

// ---- pins ----
void Numachine::set_clocks(std::uint64_t node_hz, std::uint64_t ts_hz) {
  (void)ts_hz;  // the monitor has no timestamp clock; `clocks` fills it in with its default
  if (node_hz != kCardHz)
    throw sim::ConfigError(fmt::format("the NUMAchine card clock is {} Hz (004 4.2), not {}", kCardHz, node_hz));
}
namespace {
[[noreturn]] void no_pin(const char* pin) {
  throw sim::ConfigError(fmt::format("'{}' is a MultiKron pin: the NUMAchine monitor has none", pin));
}
}  // namespace
void Numachine::set_cpu(unsigned) { no_pin("cpu"); }
void Numachine::set_test_mode(bool) { no_pin("testmode"); }
void Numachine::set_wait_states(unsigned) { no_pin("waitstates"); }
void Numachine::set_net_ready(bool) { no_pin("netrdy"); }
void Numachine::set_external(unsigned, bool) { no_pin("ext"); }

// Power-on: every register, counter and SRAM word 0 (ERRATUM E82), the clock back to 0.
void Numachine::hardware_reset() {
  now_ = 0;
  for (const RegisterInfo& r : kRegisters) store_register(r.address, r.reset);  // Table 4.4's reset column
  gpc_.fill(0);
  gpc_prev_.fill(false);
  sram_prev_ = false;
  gpc_pending_.fill(false);
  sram_pending_ = false;
  ps_acc_.fill(0);
  ps_next_ = 0;
  std::fill(sram_.begin(), sram_.end(), 0);
  sig_ = Signals{};
  cr_ = 0;
  ar_ = 0;
  mtr_ = rsr_ = 0;
  l2_index_ = 0;
  lt_running_ = false;
  lt_start_ = 0;
  lt_held_ = 0;
  inval_armed_ = false;
  irqs.clear();
  compare();
}

void Numachine::tick(std::uint64_t cycles) { run(cycles, "tick"); }

// ---- the monitor bus ----
// One access holds the External Agent busy (004 4.3.1) for kAccessCycles; it acts in its first cycle
// (ERRATUM E87), so the counters see the new configuration from that cycle on.
void Numachine::access() { run(kAccessCycles, "monitor access"); }

void Numachine::store_register(unsigned a, std::uint32_t data) {
  const RegisterInfo& r = kRegisters[a];
  regs_[a] = data & width_mask(r.width);  // bits beyond the register are not stored (reserved D: none)
  switch (r.reg) {
    case Reg::GPCM0:
    case Reg::GPCM1:
    case Reg::GPCM2:
    case Reg::GPCM3: {
      const unsigned k = a - info(Reg::GPCM0).address;
      gpc_cfg_[k] = decode_counter(regs_[a], true, gpcm::kIrq.lo);
      gpc_pending_[k] = false;  // ERRATUM E90: rewriting the mode acknowledges the interrupt
      break;
    }
    case Reg::SCM:
      sram_cfg_ = decode_counter(regs_[a], false, scm::kIrq.lo);
      sram_mode_ = static_cast<SramMode>(scm::kMode.get(regs_[a]));
      sram_pending_ = false;
      break;
    default: break;
  }
  compare();
}

void Numachine::write_word(std::uint32_t addr, std::uint32_t data) {
  if (addr < kRegisterCount) {
    store_register(addr, data);
  } else if (addr >= kGpcBase && addr < kGpcBase + kGpcs) {
    gpc_[addr - kGpcBase] = data;  // a preload (004 4.3.3: "preloading a negative number")
    gpc_pending_[addr - kGpcBase] = false;
  } else if (addr >= kGpcResetBase && addr < kGpcResetBase + kGpcs) {
    gpc_[addr - kGpcResetBase] = data;  // ERRATUM E80: the reset-on-read address writes like the counter's
    gpc_pending_[addr - kGpcResetBase] = false;
  } else if (addr >= kSramBase && addr < kSramBase + kSramWords) {
    sram_[addr - kSramBase] = data;  // muxAR (004 4.4.5): the processor addresses the SRAM itself
    sram_pending_ = false;
  }
  // Any other address decodes to nothing: the write is ignored (ERRATUM E80).
}

void Numachine::write(std::uint32_t addr, std::uint64_t data) {
  if (data >> 32) return write_doubleword(addr, data);
  sim::clock_after(now_, kAccessCycles, "monitor access");  // refused before it acts (ERRATUM E134)
  write_word(addr, static_cast<std::uint32_t>(data));
  access();
}

// ERRATUM E81: a doubleword write goes to the even address and the one after it, the upper data word
// to the even one ("big-endian data-word order", 004 4.4.3): AWhi:AWlo, AFhi:AFlo, GPCE:SRAMCE.
void Numachine::write_doubleword(std::uint32_t addr, std::uint64_t data) {
  const std::uint32_t even = addr & ~1u;
  sim::clock_after(now_, kAccessCycles, "monitor access");
  write_word(even, static_cast<std::uint32_t>(data >> 32));
  write_word(even + 1, static_cast<std::uint32_t>(data));
  access();
}

std::uint64_t Numachine::peek(std::uint32_t addr) const {
  if (addr < kRegisterCount) return regs_[addr];  // ERRATUM E82: the registers read back as stored
  if (addr >= kGpcBase && addr < kGpcBase + kGpcs) return gpc_[addr - kGpcBase];
  if (addr >= kGpcResetBase && addr < kGpcResetBase + kGpcs) return gpc_[addr - kGpcResetBase];
  if (addr >= kSramBase && addr < kSramBase + kSramWords) return sram_[addr - kSramBase];
  return 0;
}

std::uint64_t Numachine::read(std::uint32_t addr) {
  sim::clock_after(now_, kAccessCycles, "monitor access");
  const std::uint64_t v = peek(addr);
  if (addr >= kGpcResetBase && addr < kGpcResetBase + kGpcs) {
    gpc_[addr - kGpcResetBase] = 0;  // 004 4.3.3: "automatically reset if read from a specific address"
    gpc_pending_[addr - kGpcResetBase] = false;
  } else if (addr >= kGpcBase && addr < kGpcBase + kGpcs) {
    gpc_pending_[addr - kGpcBase] = false;  // ERRATUM E90: reading the counter acknowledges its interrupt
  } else if (addr >= kSramBase && addr < kSramBase + kSramWords) {
    sram_pending_ = false;
  }
  access();
  return v;
}

}  // namespace kron::numachine
