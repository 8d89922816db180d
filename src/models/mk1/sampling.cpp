// The first MultiKron's sampling: triggers (001 Table 1, Table A-1 rows 96-127), the Filter Register,
// the internal FIFO and the one rank of shadow registers, overruns and waits (Table 3B), the header
// error flags (Table 5), and the byte-serial network output (NETWORK OUTPUT, Tables 6 and 7).
// Sources and what is not modelled: mk1.hpp.
#include <string>

#include "models/mk1/mk1.hpp"

namespace kron::mk1 {

void Mk1::trigger(unsigned a, std::uint64_t data) {
  const bool resource = a >= addr::kResourceTrigger;
  const unsigned level = a & 0xf;                           // Table A-1 note: filter level = address bits 0-3
  if (!(regs_[addr::kCsr] & csr::kEnableSampling)) return;  // Table 2 bit 0
  if (!(regs_[addr::kFilter] >> level & 1)) return;         // Filter Register: "the sample is discarded"

  const auto room = [&] { return fifo_.size() < kFifoDepth && (!resource || !shadow_full_); };
  if (!room()) {
    if (regs_[addr::kCsr] & csr::kWriteWait) {
      // Table 2 bit 2 / Table 3B row 3: wait for the FIFO / shadow registers, then sample.
      const std::uint64_t waited = wait_for(true, resource);
      if (!test_pin_) wait_counter_ += static_cast<std::uint32_t>(waited);
    } else {
      // Table 2 bit 3 / Table 3B row 2: no sample, no wait; the overrun flag goes out with the next
      // successful sample (Table 5) and the Overrun Counter counts the loss.
      if (fifo_.size() >= kFifoDepth) lost_fifo_ = true;
      if (resource && shadow_full_) lost_shadow_ = true;
      if (!test_pin_) ++overrun_counter_;
      return;
    }
  }

  FifoEntry e;
  if (test_pin_ && test_source_) {
    // Appendix C "Select FIFO Data Source": in test mode with source "1" the sample data comes from the
    // data portion of the TEST Register. ERRATUM E67: a Resource trigger still fills the shadow registers.
    e = test_entry(static_cast<std::uint32_t>(regs_[addr::kTest]));
  } else {
    Sample s;
    s.type = resource ? SampleType::Resource : SampleType::Trace;
    s.cpu = static_cast<std::uint16_t>(cpu_);
    // Table 5 / "Error & Class Field": each overrun flag says previous sample(s) were lost and is reset
    // by the next successful sample. The RSRC read error flag is always 0: a read is indivisible and
    // the flag is cleared at its end.
    s.flags = static_cast<std::uint8_t>((lost_fifo_ ? kFlagFifoOverrun : 0) | (lost_shadow_ ? kFlagShadowOverrun : 0));
    s.timestamp = timestamp_;                                                   // Table 6: low 40 bits
    s.source = static_cast<std::uint32_t>(regs_[addr::kSourceAddress + cpu_]);  // Table A-1 note
    s.data = data;                                                              // Table 6: low 48 bits
    std::array<std::uint8_t, 80> buf{};
    classic::encode(classic::Chip::Mk1, s, buf);
    std::copy_n(buf.begin(), 16, e.bytes.begin());
    e.resource = resource;
    lost_fifo_ = lost_shadow_ = false;
  }
  if (resource) {  // "the contents of all resource counters are copied into the corresponding shadow registers"
    copy_to_shadow();
    shadow_full_ = true;
  }
  enqueue(e);
}

void Mk1::enqueue(const FifoEntry& e) {
  fifo_.push_back(e);
  kick();
}

// Data leaves when there is a sample, the network's External FIFO Free is asserted, and the output is
// not disabled by the TEST register (Table C-1 bit 6, effective in test mode only: ERRATUM E66).
bool Mk1::output_possible() const { return !fifo_.empty() && net_ready_ && !(test_pin_ && net_disabled_); }

// The network clock is half the node clock (NETWORK OUTPUT); kron puts its rising edges on even node
// clocks. A byte goes out on the first edge after the output became possible, then one per edge.
void Mk1::kick() {
  if (output_possible() && next_byte_at_ <= now_) next_byte_at_ = (now_ | 1) + 1;
}

void Mk1::emit_byte() {
  if (tx_len_ == 0) {  // start the FIFO head: its 16 bytes, then 64 from the shadow registers if bit 128
    const FifoEntry& e = fifo_.front();
    std::copy(e.bytes.begin(), e.bytes.end(), tx_.begin());
    tx_len_ = 16;
    if (e.resource) {
      for (unsigned i = 0; i < 16; ++i)
        for (unsigned b = 0; b < 4; ++b) tx_[16 + 4 * i + b] = static_cast<std::uint8_t>(shadow_[i] >> (24 - 8 * b));
      tx_len_ = 80;  // Table 7
    }
    tx_pos_ = 0;
  }
  const std::uint64_t at = next_byte_at_;  // this byte's network clock edge (may be ahead of now_)
  const std::uint8_t byte = tx_[tx_pos_++];
  const std::size_t len = tx_len_;
  const bool last = tx_pos_ == len;
  next_byte_at_ += 2;
  if (last) {
    const bool res = fifo_.front().resource;
    fifo_.pop_front();
    if (res) shadow_full_ = false;  // "The shadow registers cannot be reused during this period."
    tx_len_ = 0;
  }
  // State first, callbacks last: an observer (the board) may change pins from inside them.
  if (on_element) on_element(at, classic::NetElement::make(byte, last));
  if (last && on_sample) on_sample(sim::SampleOut{at, std::span<const std::uint8_t>(tx_.data(), len)});
}

std::uint64_t Mk1::wait_for(bool need_fifo, bool need_shadow) {
  const std::uint64_t start = now_;
  const auto ready = [&] { return (!need_fifo || fifo_.size() < kFifoDepth) && (!need_shadow || !shadow_full_); };
  while (!ready()) {
    kick();
    if (!output_possible())
      throw sim::HangError(std::string("MultiKron: the processor would wait forever for ") +
                           (need_fifo ? "the FIFO" : "the shadow registers") +
                           ": the network output is stalled (External FIFO Free low or disabled in test mode)");
    advance(next_byte_at_ - now_);
  }
  return now_ - start;
}

}  // namespace kron::mk1
