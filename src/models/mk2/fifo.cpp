// MultiKron II sampling: filter, sample assembly, the Trace FIFO and Table B3a.
// Sources: 000 SAMPLING, Filter Register, Source Address Registers, "Overruns and Waits on Resource
//   Counter Use", Tables B2, B3a; TEST MODE for the FIFO's processor access.
// Decisions: ERRATUM E5 (depth), E6 (161st bit, test writes), E7 (when data is taken).
#include "models/mk2/mk2.hpp"

#include <algorithm>

namespace kron::mk2 {

// $60-$7F: a Trace (96-111) or Resource (112-127) trigger with filter level `level`, acting at node clock
// t (moved later while the processor is held).
void Mk2::trigger(bool resource, unsigned level, std::uint64_t data, std::uint64_t& t) {
  // 000 Filter Register / SAMPLING: a disabled level is discarded, "although the processor write is
  // acknowledged normally"; Table B1 bit 0: no samples while sampling is disabled.
  if (!csr_control(csr::kSamplingEnable) || !(reg(Reg::Filter) >> level & 1)) return;

  // 000 Table B3a. A Trace sample needs a FIFO level; a Resource sample a FIFO level and the shadow
  // registers (rows 2 and 8: a Trace sample is taken even while the shadow registers are full).
  const bool fifo_full = !fifo_ready();
  const bool shadow_full = resource && !shadow_ready();
  if (fifo_full || shadow_full) {
    if (csr_control(csr::kWaitOnOverrun)) {
      // Rows 3-6: "Wait until FIFO / Shadow Regs / both are available, then take data"; the Wait
      // Counter counts the node clocks (CNT).
      hold_until(
          t, resource ? &Mk2::resource_ready : &Mk2::fifo_ready,
          resource ? "Resource sample waits for the FIFO and shadow registers" : "Trace sample waits for the FIFO");
    } else {
      // Rows 9-12: "Data Discarded"; the header error flag of each full resource is set in the next
      // successful sample, and the Overrun Counter is incremented (Incr), once per lost sample.
      pending_fifo_overrun_ |= fifo_full;
      pending_shadow_overrun_ |= shadow_full;
      ++overrun_counter_;
      return;
    }
  }

  // Rows 1, 2, 7, 8 and the end of every wait: "Data taken". 000 Table B2 and SAMPLING: header (CPU ID
  // encoded, type, error flags "reset by next successful sample"), Timestamp, the Source Address Register
  // of the active CPU ID line, 64 bits of user data.
  Sample s;
  s.type = resource ? SampleType::Resource : SampleType::Trace;
  s.cpu = static_cast<std::uint16_t>(cpu_);
  s.flags = static_cast<std::uint8_t>((pending_fifo_overrun_ ? kFlagFifoOverrun : 0) |
                                      (pending_shadow_overrun_ ? kFlagShadowOverrun : 0));
  s.timestamp = timestamp(t);
  s.source = static_cast<std::uint32_t>(stored_[address_of(Reg::SourceAddress) + cpu_]);
  s.data = data;
  pending_fifo_overrun_ = pending_shadow_overrun_ = false;
  if (resource) {
    // "When a Resource sample is triggered ... the contents of all Resource Counters are copied into the
    // corresponding shadow registers"; they stay busy until the sample's last byte has gone out.
    copy_to_shadow(t);
    shadow_busy_ = true;
  }
  std::array<std::uint8_t, kResourceBytes> bytes{};
  classic::encode(classic::Chip::Mk2, s, bytes);
  FifoEntry e;
  for (unsigned g = 0; g < kFifoGroups; ++g)
    e.group[g] = std::uint32_t{bytes[4 * g]} << 24 | std::uint32_t{bytes[4 * g + 1]} << 16 |
                 std::uint32_t{bytes[4 * g + 2]} << 8 | bytes[4 * g + 3];
  e.resource = resource;
  push_fifo(e, t);
}

// A level entered at node clock t reaches the output at the start of the next network clock cycle.
void Mk2::push_fifo(const FifoEntry& e, std::uint64_t t) {
  if (fifo_count_ == kFifoDepth) return;  // only a test-mode write gets here (ERRATUM E6)
  if (!output_pending()) next_cycle_ = std::max(next_cycle_, (t + 2) & ~std::uint64_t{1});
  fifo_[(fifo_head_ + fifo_count_) % kFifoDepth] = e;
  ++fifo_count_;
}

// The output level leaves; an empty FIFO reads 0 (ERRATUM E6).
void Mk2::pop_fifo() {
  if (fifo_count_ == 0) return;
  fifo_[fifo_head_] = FifoEntry{};
  fifo_head_ = (fifo_head_ + 1) % kFifoDepth;
  --fifo_count_;
}

}  // namespace kron::mk2
