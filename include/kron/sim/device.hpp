// What `kron sim` drives: a device model seen from its pins. The MultiKron II (models/mk2), the first
// MultiKron (models/mk1), the PCI toolkit board (models/pcib) and the NUMAchine monitor (models/numachine)
// each implement it; the script interpreter (src/sim) knows only this interface.
//
// Time: a device owns its clock. Every call that takes time (write, read, tick, drain) advances the
// node-clock count that now() returns, by events rather than by stepping idle clocks.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kron/format/classic.hpp"

namespace kron::sim {

// The clocks a device starts with: 000 "targetted a Node clock frequency of 50 MHz and a Timestamp
// frequency of 10 MHz" (`kron sim`'s `clocks` defaults).
inline constexpr std::uint64_t kDefaultNodeHz = 50'000'000;
inline constexpr std::uint64_t kDefaultTsHz = 10'000'000;

// One sample leaving the device on its collection-network output (or, for the board, reaching its
// memory or cable), reported when its last byte goes out.
struct SampleOut {
  std::uint64_t clock;                  // node clocks since the last hardware reset
  std::span<const std::uint8_t> bytes;  // the classic sample exactly as sent (20/84 or 16/80 bytes)
};

// A processor access refused by the model's configuration (not by the chip: a chip never refuses).
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device would hold the processor (or a `drain`) forever: e.g. waiting for a FIFO level while
// NETRDY is low. On silicon the machine hangs; a model says why instead.
class HangError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The furthest node clock a model goes to: 2^62, about 2,900 years at 50 MHz. A call that would take a
// device's clock past it (a `tick`, an access, a `drain`) throws ConfigError (a tick or an access before
// it acts; a held access or a drain when its wait would end past the limit), so a clock plus what a model looks ahead
// (a sample's bytes on the network, a held access) never wraps 64 bits: no model wraps time silently or spins on a
// wrapped comparison. ERRATUM E134.
inline constexpr std::uint64_t kMaxClock = std::uint64_t{1} << 62;

// `now + n` node clocks, or ConfigError ("WHAT: ...") when that passes kMaxClock. Every model advances
// its clock through this.
inline std::uint64_t clock_after(std::uint64_t now, std::uint64_t n, const char* what) {
  if (now > kMaxClock || n > kMaxClock - now)
    throw ConfigError(std::string(what) + ": " + std::to_string(n) + " node clocks from clock " + std::to_string(now) +
                      " would pass the model's limit of 2^62 node clocks (ERRATUM E134)");
  return now + n;
}

class Device {
 public:
  virtual ~Device() = default;

  virtual classic::Chip chip() const = 0;  // the sample format it emits
  // Word addresses the device decodes are 0 .. address_limit()-1 (MultiKron II: 128, 000 Table B4).
  virtual std::uint32_t address_limit() const = 0;

  // ---- pins and configuration ----
  virtual void set_clocks(std::uint64_t node_hz, std::uint64_t ts_hz) = 0;  // throws ConfigError
  virtual void hardware_reset() = 0;                                        // RESETB
  virtual void set_cpu(unsigned cpu) = 0;                                   // active CPU ID line
  virtual void set_test_mode(bool on) = 0;                                  // TESTB asserted
  virtual void set_wait_states(unsigned n) = 0;                             // latched at reset
  virtual void set_net_ready(bool ready) = 0;                               // NETRDY
  virtual void set_external(unsigned counter, bool level) = 0;              // X0-X15

  // ---- processor bus: both return when the device acknowledges (HangError if it never would) ----
  virtual void write(std::uint32_t addr, std::uint64_t data) = 0;
  virtual std::uint64_t read(std::uint32_t addr) = 0;
  // A read without side effects (status displays, debugging): never clears or copies anything.
  virtual std::uint64_t peek(std::uint32_t addr) const = 0;

  // ---- time ----
  virtual void tick(std::uint64_t node_clocks) = 0;
  virtual void drain() = 0;  // until nothing is queued in the FIFO, shadow registers or output; throws HangError
  virtual std::uint64_t now() const = 0;

  // ---- observation ----
  std::function<void(const SampleOut&)> on_sample;                     // each sample that leaves
  std::function<void(std::uint64_t, classic::NetElement)> on_element;  // each 10-bit element and its clock

  std::function<void(std::string_view)> on_line;  // each line a device prints itself (interrupts, dumps)

  // ---- a device's script vocabulary (the NUMAchine monitor: register names, 32-bit words) ----
  // Script commands beyond the common set (the board's `memdump`); returns false if `cmd` is unknown.
  // A command prints through on_line and reports a bad argument in `error` (the interpreter adds FILE:LINE).
  virtual bool command(std::string_view cmd, const std::vector<std::string>& args, std::string& error) {
    (void)cmd, (void)args, (void)error;
    return false;
  }
  // The address a name denotes in `write`/`read`/`expect` (the MultiKrons: none, addresses are numbers).
  virtual std::optional<std::uint32_t> address_named(std::string_view name) const {
    (void)name;
    return std::nullopt;
  }
  // How `read` and a failed `expect` print an address and its data: `read ADDRESS_TEXT = 0x<data_digits>`.
  virtual std::string address_text(std::uint32_t addr) const { return std::to_string(addr); }
  virtual unsigned data_digits() const { return 16; }
};

}  // namespace kron::sim
