// The NUMAchine processor-card performance monitor (004, thesis chapter 4), bit-exact and cycle-exact at
// the 50 MHz card clock, as seen from the monitor bus (processor reads and writes), the External Agent
// bus (packets to and from the FIFOs), the secondary cache index and the R4400's pipeline-status pins.
//
// Sources: 004 whole: 4.3.2 and Tables 4.2/4.3 (pipeline status), 4.3.3 (counters and interrupts),
//   4.3.4-4.3.6 (SRAM, Count & Increment, latency timer), 4.4 and Table 4.4 (MCC registers),
//   4.4.1-4.4.4 and Table 4.5 (PhaseID, command and address watches, count-enable circuits, events),
//   4.4.5 and Tables 4.6-4.9 (SRAM counter modes, MTR, RSR), 4.4.6 (master enables).
//
// Files (one concern each):
//   registers.hpp/.cpp  Table 4.4 described once; names, decode, printing
//   events.hpp/.cpp     Tables 4.2/4.3, 4.5-4.9, the compact latency format, packet commands
//   numachine.cpp       reset, time, the monitor bus (processor reads and writes)
//   counting.cpp        count-enable circuits, the general-purpose counters, Count & Increment, interrupts
//   traffic.cpp         what happens on the card: packets, misses, NACKs, the secondary cache, pipeline status
//   script.cpp          the `kron sim --chip numachine` commands beyond the common set
//
// Time: a card-clock cycle count since the last reset, advanced by events (`run`), never past
//   sim::kMaxClock (ERRATUM E134). Signals are constant between events; a counter adds a whole segment's
//   cycles at once. The processor is blocked while a miss is outstanding (the R4400 has blocking caches),
//   so the card's traffic is a sequence: each traffic command runs to its end before the next.
// Not modelled: the barrier and NUMAchine interrupt registers of Counters & Interrupts (4.3.3: "not essential
//   for monitor operation"); PR[3..0] on outgoing transactions (4.4.1, for other cards' monitors); the Local I/O bus
//   (boot ROM, UART); hard reconfiguration; the accumulate mode of Count & Increment (4.3.5: "not yet implemented in
//   the current design"); PhaseID changes encoded in addresses (4.4.1 note 2: "not yet implemented"); the cache tags
//   the invalidation state machines of Figure 4.8 cannot see (their outcome is given by the script, ERRATUM E91).
// Decisions: docs/errata.md E80-E93; grep ERRATUM.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kron/sim/device.hpp"
#include "models/numachine/events.hpp"
#include "models/numachine/registers.hpp"

namespace kron::numachine {

inline constexpr std::uint64_t kCardHz = 50'000'000;  // 004 4.2: "designed to run at 50 MHz"
inline constexpr unsigned kPacketCycles = 2;          // 004 4.3.1: one transaction every two cycles at most
inline constexpr unsigned kAccessCycles = 2;          // a monitor-bus access (ERRATUM E87)
inline constexpr unsigned kL2Cycles = 2;              // a secondary-cache access as the monitor sees it (ERRATUM E88)
inline constexpr std::uint64_t kAddressBits = 40;     // AR, AW, AF: bits 39..0 (Table 4.4)
inline constexpr std::uint64_t kAddressMask = (std::uint64_t{1} << kAddressBits) - 1;

// One count-enable circuit and its counter's configuration, decoded from GPCMx (or SCM bits 14..0) when
// the register is written, so that the hot path is a table look-up (004 4.4.4, Figure 4.7, ERRATUM E83).
struct CounterConfig {
  std::uint8_t event = 0;  // Table 4.5 (GPC) or Table 4.6 (SRAM)
  bool edge = false;       // bit 10: low-to-high transitions
  bool enabled = false;    // GPCMx bit 23 (the SRAM has no such bit: true)
  bool irq = false;        // bit 15 (SCM bit 22)
  std::uint8_t ps = 0;     // PS[6..0]
  // Bit i: the count-enable for inputs i = sending | receiving<<1 | (PW==PR)<<2 | (AR&AF==AW)<<3 | (CR&CF==CW)<<4.
  std::uint32_t ce_table = ~std::uint32_t{0};
};
CounterConfig decode_counter(std::uint32_t mode_bits, bool has_enable_bit, unsigned irq_bit);

// What the traffic drives during one segment of cycles.
struct Signals {
  bool sending = false, receiving = false;      // a packet to / from the External Agent this cycle
  std::uint16_t gpc = bit(GpcEvent::Always);    // Table 4.5 events asserted (bit e)
  std::uint16_t sram = bit(SramEvent::Always);  // Table 4.6 events asserted (bit e)
};

class Numachine final : public sim::Device {
 public:
  Numachine();

  // The monitor emits no classic samples: `kron sim` never asks (an assertion if it does).
  classic::Chip chip() const override;
  std::uint32_t address_limit() const override { return kAddressLimit; }

  // ---- pins: the MultiKron's pins do not exist here (ConfigError), except the 50 MHz clock ----
  void set_clocks(std::uint64_t node_hz, std::uint64_t ts_hz) override;
  void hardware_reset() override;
  void set_cpu(unsigned cpu) override;
  void set_test_mode(bool on) override;
  void set_wait_states(unsigned n) override;
  void set_net_ready(bool ready) override;
  void set_external(unsigned counter, bool level) override;

  // ---- the monitor bus (numachine.cpp). A write of more than 32 bits is a doubleword write (ERRATUM E81). ----
  void write(std::uint32_t addr, std::uint64_t data) override;
  void write_doubleword(std::uint32_t addr, std::uint64_t data);
  std::uint64_t read(std::uint32_t addr) override;  // one 32-bit word; a GPC reset-on-read address clears it
  std::uint64_t peek(std::uint32_t addr) const override;

  // ---- time ----
  void tick(std::uint64_t cycles) override;
  void drain() override {}  // nothing is ever queued
  std::uint64_t now() const override { return now_; }

  // ---- script vocabulary (script.cpp) ----
  bool command(std::string_view cmd, const std::vector<std::string>& args, std::string& error) override;
  std::optional<std::uint32_t> address_named(std::string_view name) const override;
  std::string address_text(std::uint32_t addr) const override { return address_name(addr); }
  unsigned data_digits() const override { return 8; }

  // ---- card traffic (traffic.cpp): each runs to its end ----
  void packet(bool send, std::uint16_t command, std::uint64_t addr);
  struct Miss {
    std::uint64_t addr = 0;
    std::uint64_t latency = 0;  // cycles from the request to the response; >= 4096: BUS_ERROR
    bool exclusive = false;
    std::optional<std::uint8_t> mtr, rsr;
  };
  void read_miss(const Miss& m);
  void ownership_miss(std::uint64_t latency, bool cancelled, std::optional<std::uint64_t> addr);
  void nack(std::uint64_t retries, std::uint64_t cycles);
  void interrupt_request(std::uint64_t latency);
  void bus_request(std::uint64_t latency);
  void inval_hit(std::optional<std::uint64_t> addr);
  void inval_miss();  // Figure 4.8b armed: the next cache line read or read-exclusive is an invalidation miss
  void l2_access(bool write, std::uint32_t index, bool miss, bool instr);
  void pipeline(unsigned set1, unsigned set2);

  // ---- observation ----
  std::uint32_t reg(Reg r) const { return regs_[static_cast<unsigned>(r)]; }
  std::uint32_t gpc(unsigned k) const { return gpc_[k]; }
  std::uint32_t sram(std::uint32_t addr) const { return sram_[addr & (kSramWords - 1)]; }
  std::uint64_t ar() const { return ar_; }
  std::uint16_t cr() const { return cr_; }
  std::uint8_t mtr() const { return mtr_; }
  std::uint8_t rsr() const { return rsr_; }
  std::uint32_t latency_timer() const;              // the 12-bit LT now
  std::uint16_t sram_address() const;               // the SRAM address the MCC forms now (Table 4.7, Figure 4.9)
  std::string sram_line(std::uint16_t addr) const;  // `sram ADDR count=N ...` under the current SCM mode
  struct Irq {
    std::uint64_t cycle;
    int gpc;             // 0-3, or -1 for the SRAM
    std::uint16_t sram;  // the SRAM word that overflowed
  };
  std::vector<Irq> irqs;  // every interrupt raised since the last reset, in order

 private:
  // ---- numachine.cpp ----
  void write_word(std::uint32_t addr, std::uint32_t data);
  void store_register(unsigned a, std::uint32_t data);
  void access();  // the cycles of one monitor-bus access
  // ---- counting.cpp ----
  void compare();                               // the three comparators of 004 4.4.1-4.4.3, after a register write
  void compare_traffic();                       // the two that follow CR and AR, after a packet
  void run(std::uint64_t n, const char* what);  // n cycles with sig_ constant
  void count_gpc(unsigned k, std::uint64_t add, std::uint64_t start);
  void count_sram(std::uint16_t addr, std::uint64_t add, std::uint64_t start);
  void raise(int gpc, std::uint16_t sram, std::uint64_t cycle);
  void pipeline_pulse(unsigned k);
  // ---- traffic.cpp ----
  void send_packet(bool send, std::uint16_t command, std::uint64_t addr, std::uint16_t extra_gpc = 0);
  void start_request();  // the LT resets; event B counters reset
  void stop_request(std::uint64_t latency);

  // ---- state ----
  std::uint64_t now_ = 0;
  std::array<std::uint32_t, kRegisterCount> regs_{};  // Table 4.4, as stored
  std::array<CounterConfig, kGpcs> gpc_cfg_{};
  CounterConfig sram_cfg_{};
  std::array<std::uint32_t, kGpcs> gpc_{};  // the four 32-bit counters (4.3.3)
  std::array<bool, kGpcs> gpc_prev_{};      // gated signal in the last cycle (transitions)
  bool sram_prev_ = false;
  std::array<bool, kGpcs> gpc_pending_{};  // interrupt raised, not yet acknowledged (ERRATUM E90)
  bool sram_pending_ = false;
  std::array<std::uint8_t, kGpcs> ps_acc_{};  // the hidden 2-bit accumulators (4.3.2)
  std::uint64_t ps_next_ = 0;                 // the next free 75 MHz cycle
  std::vector<std::uint32_t> sram_;           // 64K x 32 (4.3.4)

  // Traffic and the registers it updates.
  Signals sig_{};
  std::uint16_t cr_ = 0;                             // Command Register (4.4.2)
  std::uint64_t ar_ = 0;                             // Address Register, 40 bits (4.4.3)
  bool pw_eq_ = true, aw_eq_ = true, cw_eq_ = true;  // comparator outputs
  std::uint64_t aw_ = 0, af_ = 0;                    // AWhi:AWlo and AFhi:AFlo, 40 bits
  SramMode sram_mode_ = SramMode::SecondaryCache;    // SCM[21..20]
  std::uint8_t mtr_ = 0, rsr_ = 0;                   // Tables 4.8, 4.9
  std::uint16_t l2_index_ = 0;                       // the secondary cache index buffer (Figure 4.5)
  bool lt_running_ = false;
  std::uint64_t lt_start_ = 0;  // cycle the LT was reset
  std::uint32_t lt_held_ = 0;   // its value once stopped
  bool inval_armed_ = false;    // Figure 4.8b waiting for a read
};

}  // namespace kron::numachine
