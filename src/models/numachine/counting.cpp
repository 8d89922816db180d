// The count-enable circuits (004 4.4.4, Figure 4.7), the four general-purpose counters (4.3.3, Table 4.5),
// Count & Increment on the SRAM (4.3.5, Tables 4.6 and 4.7) and the overflow interrupts. The hot path is
// run(): one segment of cycles whose signals are constant, each counter a look-up and an add.
#include <fmt/format.h>

#include <algorithm>

#include "models/numachine/numachine.hpp"

namespace kron::numachine {

// ERRATUM E83 (Figure 4.7 is missing): every enabled term is AND-ed; a term's invert bit flips its
// comparator; the mask term is (SM and sending) or (RM and receiving). A term whose enable is 0 is true.
CounterConfig decode_counter(std::uint32_t m, bool has_enable_bit, unsigned irq_bit) {
  CounterConfig c;
  c.event = static_cast<std::uint8_t>(gpcm::kEvent.get(m));  // GPCMx[14..11] and SCM[14..11] alike
  c.edge = gpcm::kEdge.get(m);
  c.enabled = has_enable_bit ? gpcm::kEnable.get(m) != 0 : true;
  c.irq = (m >> irq_bit) & 1;
  c.ps = has_enable_bit ? static_cast<std::uint8_t>(gpcm::kPs.get(m)) : 0;
  c.ce_table = 0;
  for (unsigned i = 0; i < 32; ++i) {
    const bool sending = i & 1, receiving = i >> 1 & 1, pw = i >> 2 & 1, aw = i >> 3 & 1, cw = i >> 4 & 1;
    const auto term = [&](const Field& en, const Field& inv, bool value) {
      return !en.get(m) || (value != static_cast<bool>(inv.get(m)));
    };
    const bool masks = (gpcm::kSm.get(m) && sending) || (gpcm::kRm.get(m) && receiving);
    const bool ce = term(gpcm::kMaskEn, gpcm::kMaskInv, masks) && term(gpcm::kPwEn, gpcm::kPwInv, pw) &&
                    term(gpcm::kAwEn, gpcm::kAwInv, aw) && term(gpcm::kCwEn, gpcm::kCwInv, cw);
    if (ce) c.ce_table |= 1u << i;
  }
  return c;
}

// 004 4.4.1: PW == PR; 4.4.3: (AR & AF) == AW over 40 bits; 4.4.2: (CR & CF) == CW over 13 bits.
void Numachine::compare() {
  const auto r = [this](Reg x) { return regs_[static_cast<unsigned>(x)]; };
  aw_ = std::uint64_t{r(Reg::AWhi)} << 32 | r(Reg::AWlo);
  af_ = std::uint64_t{r(Reg::AFhi)} << 32 | r(Reg::AFlo);
  pw_eq_ = r(Reg::PW) == r(Reg::PR);
  compare_traffic();
}

// The comparators that change with every packet (CR, AR), against the cached watches.
void Numachine::compare_traffic() {
  aw_eq_ = (ar_ & af_) == aw_;
  cw_eq_ = (cr_ & regs_[static_cast<unsigned>(Reg::CF)]) == regs_[static_cast<unsigned>(Reg::CW)];
}

std::uint32_t Numachine::latency_timer() const {
  if (!lt_running_) return lt_held_;
  return static_cast<std::uint32_t>((now_ - lt_start_) & (kBusErrorCycles - 1));
}

namespace {
// Figure 4.9 is missing: ERRATUM E92 places the fields. The MCC's three groups of address bits.
constexpr std::uint16_t kHi = 0xf800, kMid = 0x07f0, kLo = 0x000f;
}  // namespace

// The SRAM address of 004 Table 4.7 (ERRATUM E92 for the placement of each source).
std::uint16_t Numachine::sram_address() const {
  const std::uint32_t m = regs_[static_cast<unsigned>(Reg::SCM)];
  const std::uint32_t pr = regs_[static_cast<unsigned>(Reg::PR)];
  const auto mode = static_cast<SramMode>(scm::kMode.get(m));
  // The lo group (4 bits): PR[3..0] under muxPRlo, its upper two bits the MTR under muxMISS.
  const auto lo_group = [&](std::uint32_t dflt) {
    std::uint32_t v = scm::kMuxPrLo.get(m) ? (pr & 0xf) : dflt;
    if (scm::kMuxMiss.get(m)) v = (v & 0x3) | std::uint32_t{mtr_} << 2;
    return v;
  };
  // The hi group (5 bits): the RSR under muxRSR, else PR[15..11] under muxPRhi.
  const auto hi_group = [&](std::uint32_t dflt) -> std::uint32_t {
    if (scm::kMuxRsr.get(m)) return rsr_;
    return scm::kMuxPrHi.get(m) ? pr >> 11 & 0x1f : dflt;
  };
  switch (mode) {
    case SramMode::SecondaryCache: return l2_index_;
    case SramMode::LatencyTimer:  // [15..12] lo group, [11..0] the 12-bit LT
      return static_cast<std::uint16_t>(lo_group(0) << 12 | latency_timer());
    case SramMode::LatencyCompact:  // [15..11] hi group, [10..7] lo group, [6..0] the compact LT
      return static_cast<std::uint16_t>(hi_group(0) << 11 | lo_group(0) << 7 | compact(latency_timer()));
    case SramMode::Mcc: {
      // All mux controls 0: the 'Address Mode', AR[39..32] in [15..8] and AR[26..19] in [7..0] (004 4.4.5;
      // ERRATUM E93: the bits as printed, 512 KB blocks).
      const std::uint32_t a = static_cast<std::uint32_t>((ar_ >> 32 & 0xff) << 8 | (ar_ >> 19 & 0xff));
      const std::uint32_t hi = hi_group((a & kHi) >> 11) << 11;
      const std::uint32_t mid = scm::kMuxPrMid.get(m) ? (pr & kMid) : (a & kMid);
      return static_cast<std::uint16_t>(hi | mid | lo_group(a & kLo));
    }
  }
  return 0;
}

void Numachine::raise(int gpc, std::uint16_t sram, std::uint64_t cycle) {
  irqs.push_back({cycle, gpc, sram});
  if (on_line)
    on_line(gpc >= 0 ? fmt::format("irq @{} GPC{}", cycle, gpc) : fmt::format("irq @{} SRAM[0x{:04x}]", cycle, sram));
}

// `add` increments of counter k, the first in cycle `start`, one a cycle. A 32-bit counter wraps; the
// increment that wraps it raises the interrupt if GPCMx bit 15 is set (004 4.3.3) and none is pending
// (ERRATUM E90).
void Numachine::count_gpc(unsigned k, std::uint64_t add, std::uint64_t start) {
  const std::uint64_t to_wrap = (std::uint64_t{1} << 32) - gpc_[k];
  gpc_[k] = static_cast<std::uint32_t>(gpc_[k] + add);
  if (add >= to_wrap && gpc_cfg_[k].irq && !gpc_pending_[k]) {
    gpc_pending_[k] = true;
    raise(static_cast<int>(k), 0, start + to_wrap - 1);
  }
}

// Count & Increment (004 4.3.5): fetch, add one, write back; held for `add` cycles it adds one a cycle.
void Numachine::count_sram(std::uint16_t addr, std::uint64_t add, std::uint64_t start) {
  std::uint32_t& w = sram_[addr];
  const std::uint64_t to_wrap = (std::uint64_t{1} << 32) - w;
  w = static_cast<std::uint32_t>(w + add);
  if (add >= to_wrap && sram_cfg_.irq && !sram_pending_) {  // SCM bit 22
    sram_pending_ = true;
    raise(-1, addr, start + to_wrap - 1);
  }
}

// n cycles from now_ with sig_ constant. A counter counts a cycle when its event is asserted, its
// count-enable is true and its enables are set (GPCE and bit 23; SRAMCE): every such cycle, or (bit 10)
// only the first cycle of each run of them, a low-to-high transition (ERRATUM E83).
void Numachine::run(std::uint64_t n, const char* what) {
  if (n == 0) return;
  if (n > sim::kMaxClock - std::min(now_, sim::kMaxClock)) sim::clock_after(now_, n, what);  // throws (E134)
  const std::uint64_t end = now_ + n;
  const unsigned in = unsigned{sig_.sending} | unsigned{sig_.receiving} << 1 | unsigned{pw_eq_} << 2 |
                      unsigned{aw_eq_} << 3 | unsigned{cw_eq_} << 4;
  const bool gpce = regs_[static_cast<unsigned>(Reg::GPCE)] & 1;
  for (unsigned k = 0; k < kGpcs; ++k) {
    const CounterConfig& c = gpc_cfg_[k];
    const bool gated = gpce && c.enabled && (sig_.gpc >> c.event & 1) && (c.ce_table >> in & 1);
    if (gated) {
      const std::uint64_t add = c.edge ? !gpc_prev_[k] : n;
      if (add) count_gpc(k, add, now_);
    }
    gpc_prev_[k] = gated;
  }
  const CounterConfig& s = sram_cfg_;
  const bool gated =
      (regs_[static_cast<unsigned>(Reg::SRAMCE)] & 1) && (sig_.sram >> s.event & 1) && (s.ce_table >> in & 1);
  if (gated) {
    const bool follows_lt =
        lt_running_ && (sram_mode_ == SramMode::LatencyTimer || sram_mode_ == SramMode::LatencyCompact);
    if (s.edge) {
      if (!sram_prev_) count_sram(sram_address(), 1, now_);
    } else if (!follows_lt) {
      count_sram(sram_address(), n, now_);
    } else {
      // The address follows the running latency timer: one word a cycle (at most 4096 before a BUS_ERROR).
      const std::uint64_t start = now_;
      for (std::uint64_t i = 0; i < n; ++i, ++now_) count_sram(sram_address(), 1, now_);
      now_ = start;
    }
  }
  sram_prev_ = gated;
  now_ = end;
}

// One accumulator overflow of counter k, synchronised to the 50 MHz clock (004 4.3.2): an event-2 count
// in the current cycle if the counter is enabled and its count-enable is true (ERRATUM E86).
void Numachine::pipeline_pulse(unsigned k) {
  const CounterConfig& c = gpc_cfg_[k];
  const unsigned in = unsigned{sig_.sending} | unsigned{sig_.receiving} << 1 | unsigned{pw_eq_} << 2 |
                      unsigned{aw_eq_} << 3 | unsigned{cw_eq_} << 4;
  const bool gpce = regs_[static_cast<unsigned>(Reg::GPCE)] & 1;
  if (gpce && c.enabled && c.event == static_cast<std::uint8_t>(GpcEvent::Pipeline) && (c.ce_table >> in & 1))
    count_gpc(k, 1, now_);
}

}  // namespace kron::numachine
