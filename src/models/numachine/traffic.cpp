// What happens on the card, as the monitor sees it: packets through the External Agent (004 4.4.2,
// 4.4.3), cache misses and the latency timer (4.3.6, Table 4.5 events 3-F), the secondary cache index
// (4.4.5 Secondary Cache Mode) and the pipeline-status pins (4.3.2). Each call runs to its end.
#include <fmt/format.h>

#include <algorithm>

#include "models/numachine/numachine.hpp"

namespace kron::numachine {
namespace {
void check_address(std::uint64_t a) {
  if (a > kAddressMask)
    throw sim::ConfigError(fmt::format("address 0x{:x} is wider than the 40 bits of AR (004 4.4.3)", a));
}
}  // namespace

// One packet (kPacketCycles): CR and AR take its command and address (004 4.4.2: "updated with every
// packet's Command as it is passed to and from the External Agent"; 4.4.3), the sending or receiving
// mask input is high, and so is event C (bus activity). Table 4.6 event 6 is a read, read-exclusive or
// upgrade packet, request or response (ERRATUM E89).
void Numachine::send_packet(bool send, std::uint16_t command, std::uint64_t addr, std::uint16_t extra_gpc) {
  check_address(addr);
  // Every traffic command is refused before it acts (ERRATUM E134).
  if (now_ >= sim::kMaxClock - kPacketCycles) sim::clock_after(now_, kPacketCycles, "packet");
  cr_ = command & cmd::kMask;
  ar_ = addr;
  compare_traffic();
  const Signals before = sig_;
  sig_.sending = send;
  sig_.receiving = !send;
  sig_.gpc = static_cast<std::uint16_t>(sig_.gpc | bit(GpcEvent::BusActivity) | extra_gpc);
  if (cmd::is_read_readex_upgrade(cr_)) sig_.sram |= bit(SramEvent::ReadReadExUpgrade);
  if (extra_gpc) {  // a one-cycle pulse in the packet's first cycle (event E)
    run(1, "packet");
    sig_.gpc &= static_cast<std::uint16_t>(~extra_gpc);
    run(kPacketCycles - 1, "packet");
  } else {
    run(kPacketCycles, "packet");
  }
  sig_ = before;
}

void Numachine::packet(bool send, std::uint16_t command, std::uint64_t addr) {
  if (command > cmd::kMask)
    throw sim::ConfigError(fmt::format("command 0x{:x} is wider than 13 bits (004 4.4.2)", command));
  send_packet(send, command, addr);
}

// 004 4.3.6: the LT "is reset as the first part of the transaction is written from the external agent into
// the outgoing FIFO"; Table 4.5 event B: "the counter is reset every time a request is issued".
void Numachine::start_request() {
  lt_running_ = true;
  lt_start_ = now_;
  for (unsigned k = 0; k < kGpcs; ++k)
    if (gpc_cfg_[k].event == static_cast<std::uint8_t>(GpcEvent::LastRequest)) gpc_[k] = 0;
}
void Numachine::stop_request(std::uint64_t latency) {
  lt_running_ = false;
  lt_held_ = static_cast<std::uint32_t>(latency & (kBusErrorCycles - 1));  // 4096 (BUS_ERROR) wraps to 0
}

namespace {
std::uint64_t checked_latency(std::uint64_t n, const char* what) {
  if (n < kPacketCycles)
    throw sim::ConfigError(
        fmt::format("{}: latency {} is less than the request's own {} cycles", what, n, kPacketCycles));
  return std::min<std::uint64_t>(n, kBusErrorCycles);  // 004 4.3.6: BUS_ERROR after 4096 cycles
}
}  // namespace

// A cache line read (or read-exclusive): the request goes out, the latency events are high until the
// response comes back `latency` cycles after the request (or a BUS_ERROR at 4096: no response packet,
// ERRATUM E85), the response brings the RSR (Table 4.9). The MTR (Table 4.8) is set with the request.
void Numachine::read_miss(const Miss& m) {
  check_address(m.addr);
  const std::uint64_t wait = checked_latency(m.latency, "read-miss");
  sim::clock_after(now_, wait + kPacketCycles, "read-miss");
  std::uint16_t level =
      bit(GpcEvent::LastRequest) | bit(GpcEvent::ReadOrReadEx) | bit(m.exclusive ? GpcEvent::ReadEx : GpcEvent::Read);
  if (inval_armed_) level |= bit(GpcEvent::InvalMiss);  // Figure 4.8b: the next read maps to the line (ERRATUM E91)
  mtr_ = m.mtr ? *m.mtr & 3 : static_cast<std::uint8_t>(inval_armed_ ? MissType::Invalidation : MissType::Other);
  inval_armed_ = false;
  start_request();
  sig_.gpc |= level;
  send_packet(true, m.exclusive ? cmd::kReadEx : cmd::kRead, m.addr);
  run(wait - kPacketCycles, "read-miss");
  sig_.gpc &= static_cast<std::uint16_t>(~level);
  stop_request(wait);
  if (wait == kBusErrorCycles) return;
  rsr_ = m.rsr ? *m.rsr & rsr::kMask : (m.exclusive ? rsr::kExclusive : 0);
  send_packet(false, static_cast<std::uint16_t>(cmd::kResponse | (m.exclusive ? cmd::kReadEx : cmd::kRead)), m.addr);
}

// An upgrade: Table 4.5 event 7 (successful) or 8 (cancelled: "a competing processor 'won' the ownership").
void Numachine::ownership_miss(std::uint64_t latency, bool cancelled, std::optional<std::uint64_t> addr) {
  const std::uint64_t a = addr ? *addr : ar_;
  check_address(a);
  const std::uint64_t wait = checked_latency(latency, "ownership-miss");
  sim::clock_after(now_, wait + kPacketCycles, "ownership-miss");
  const std::uint16_t level =
      bit(GpcEvent::LastRequest) | bit(cancelled ? GpcEvent::OwnershipCancel : GpcEvent::Ownership);
  mtr_ = static_cast<std::uint8_t>(cancelled ? MissType::OwnershipCancelled : MissType::Ownership);
  start_request();
  sig_.gpc |= level;
  send_packet(true, cmd::kUpgrade, a);
  run(wait - kPacketCycles, "ownership-miss");
  sig_.gpc &= static_cast<std::uint16_t>(~level);
  stop_request(wait);
  if (wait == kBusErrorCycles) return;  // "an unsuccessful miss is caused by a time-out"
  rsr_ = rsr::kExclusive;
  send_packet(false, cmd::kResponse | cmd::kUpgrade, a);
}

// A request NACKed `retries` times over `cycles` cycles from the first retry to the final response:
// event A high throughout, event 9 a one-cycle pulse per retry, evenly spaced (ERRATUM E91).
void Numachine::nack(std::uint64_t retries, std::uint64_t cycles) {
  if (retries == 0 || retries > 65536 || cycles < 2 * retries)
    throw sim::ConfigError(
        fmt::format("nack: needs 1-65536 retries and at least two cycles per retry (got {} in {})", retries, cycles));
  sim::clock_after(now_, cycles, "nack");
  const std::uint64_t step = cycles / retries;
  sig_.gpc |= bit(GpcEvent::NackCycles);
  for (std::uint64_t i = 0; i < retries; ++i) {
    sig_.gpc |= bit(GpcEvent::NackRetries);
    run(1, "nack");
    sig_.gpc &= static_cast<std::uint16_t>(~bit(GpcEvent::NackRetries));
    run(step - 1, "nack");
  }
  run(cycles - step * retries, "nack");
  sig_.gpc &= static_cast<std::uint16_t>(~bit(GpcEvent::NackCycles));
}

namespace {
void check_level(std::uint64_t n, const char* what) {
  if (n == 0) throw sim::ConfigError(fmt::format("{}: latency must be at least 1 cycle", what));
}
}  // namespace

void Numachine::interrupt_request(std::uint64_t latency) {  // Table 4.5 event 3
  check_level(latency, "interrupt");
  sim::clock_after(now_, latency, "interrupt");
  sig_.gpc |= bit(GpcEvent::Interrupt);
  run(latency, "interrupt");
  sig_.gpc &= static_cast<std::uint16_t>(~bit(GpcEvent::Interrupt));
}

void Numachine::bus_request(std::uint64_t latency) {  // Table 4.5 event D: "until a bus grant is given"
  check_level(latency, "bus-request");
  sim::clock_after(now_, latency, "bus-request");
  sig_.gpc |= bit(GpcEvent::BusRequest);
  run(latency, "bus-request");
  sig_.gpc &= static_cast<std::uint16_t>(~bit(GpcEvent::BusRequest));
}

// An external invalidation received that hits in the secondary cache (Figure 4.8a's shaded state):
// event E for one cycle (ERRATUM E91).
void Numachine::inval_hit(std::optional<std::uint64_t> addr) {
  send_packet(false, cmd::kInvalidate, addr ? *addr : ar_, bit(GpcEvent::InvalHit));
}

void Numachine::inval_miss() { inval_armed_ = true; }

// A secondary cache access (ERRATUM E88): the index buffer latches the index (bit 15 is the R4400's
// SCAddr17, set for instructions when the cache is split, 004 4.4.5), Table 4.6 events 2-5 for one cycle.
void Numachine::l2_access(bool write, std::uint32_t index, bool miss, bool instr) {
  if (index >= kSramWords) throw sim::ConfigError(fmt::format("l2: index {} is wider than 16 bits", index));
  sim::clock_after(now_, kL2Cycles, "l2");
  l2_index_ = static_cast<std::uint16_t>(index | (instr ? 0x8000u : 0u));
  const std::uint16_t ev = bit(SramEvent::L2Access) | bit(write ? SramEvent::L2Write : SramEvent::L2Read) |
                           (miss ? bit(SramEvent::L2Miss) : 0);
  sig_.sram |= ev;
  run(1, "l2");
  sig_.sram &= static_cast<std::uint16_t>(~ev);
  run(kL2Cycles - 1, "l2");
}

// One 75 MHz cycle's two status sets (004 4.3.2). Three 75 MHz cycles take two card cycles; a pipeline
// cycle starts at the first 75 MHz edge at or after the card clock. Each counter's PS[6..0] selects 0, 1
// or 2 of the sets; they add into its hidden 2-bit accumulator, whose overflow counts one event-2 event.
void Numachine::pipeline(unsigned set1, unsigned set2) {
  const std::uint64_t k75 = std::max(ps_next_, (now_ * 3 + 1) / 2);  // ceil(now * 3/2)
  const std::uint64_t end75 = k75 + 1;
  const std::uint64_t end = end75 * 2 / 3;
  if (end > now_) run(end - now_, "pipeline");
  ps_next_ = end75;
  for (unsigned k = 0; k < kGpcs; ++k) {
    const unsigned sum = ps_acc_[k] + ps_selects(gpc_cfg_[k].ps, set1) + ps_selects(gpc_cfg_[k].ps, set2);
    ps_acc_[k] = static_cast<std::uint8_t>(sum & 3);
    if (sum > 3) pipeline_pulse(k);
  }
}

}  // namespace kron::numachine
