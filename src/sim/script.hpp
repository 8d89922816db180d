// The `kron sim` script language: one command a line, `#` starts a comment, numbers are decimal or 0x-hex.
// The interpreter drives any kron::sim::Device and prints what leaves it; it knows no chip.
//
//   clocks node=HZ ts=HZ     clock frequencies (default node=50000000 ts=10000000; either may be omitted)
//   reset                    hardware reset (RESETB)
//   cpu N                    the active CPU ID line, 0-7
//   testmode on|off          the TESTB pin
//   waitstates 0|1           the wait-state pin, latched at the next reset
//   netrdy 0|1               the NETRDY input
//   ext C 0|1                level of counter C's external input (0-15)
//   write ADDR DATA          a processor write (ADDR: a number, or a name the device knows: NUMAchine PR, GPC0,
//   SRAM[5]) read ADDR                a processor read: prints `read ADDR = 0xHHHHHHHHHHHHHHHH` (the device's width)
//   expect ADDR VALUE [MASK] a read compared with VALUE under MASK; a mismatch is reported, exit status 1
//   tick N                   advance N node clocks (a device's clock stops at 2^62: sim::kMaxClock)
//   drain                    advance until nothing is left to send
// Any other word is offered to Device::command (a board's or the NUMAchine monitor's own commands), which
// prints through Device::on_line (the NUMAchine monitor's `irq @CYCLE GPCn`).
//
// Output lines (docs: README "kron sim"):
//   sample @CLOCK type=trace|resource cpu=N ts=T src=0xSSSSSSSS data=0xDD..DD flags=-|fifo,shadow[ counters=C0,...,C15]
//   net @CLOCK 0xHHH data=0xDD parity=P eom=E          (--net-bits: every 10-bit element)
#pragma once
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kron/format/classic.hpp"
#include "kron/sim/device.hpp"

namespace kron::sim {

enum class Op : std::uint8_t {
  Clocks,
  Reset,
  Cpu,
  TestMode,
  WaitStates,
  NetRdy,
  Ext,
  Write,
  Read,
  Expect,
  Tick,
  Drain,
  Other
};

struct Command {
  Op op = Op::Other;
  unsigned line = 0;
  std::vector<std::uint64_t> num;          // numeric arguments in order (Clocks: node, ts; 0 = unchanged)
  std::uint64_t mask = ~std::uint64_t{0};  // Expect
  std::string word;                        // Other: the command word
  std::vector<std::string> words;          // Other: its arguments
};

// Parses one line. Returns nothing for a blank or comment line; throws kron::InputError naming
// FILE:LINE:COLUMN for anything else that is not a command.
// `names`: the device whose register names (Device::address_named) an ADDR may be, or nullptr.
std::optional<Command> parse_line(std::string_view text, const std::string& file, unsigned line,
                                  const Device* names = nullptr);
// Parses a whole script (all lines first, so that a syntax error stops it before anything runs).
std::vector<Command> parse_script(std::istream& in, const std::string& file, const Device* names = nullptr);
// A number as the script writes it (decimal or 0x-hex), or nothing; for a device's own commands.
std::optional<std::uint64_t> parse_number(std::string_view text);

// The printed forms of what leaves a device.
std::string format_sample(classic::Chip chip, const SampleOut& s);
std::string format_element(std::uint64_t clock, classic::NetElement e);

struct RunOptions {
  bool net_bits = false;        // print every 10-bit element
  std::ostream* net = nullptr;  // raw data bytes of the network stream
};

// Runs `commands` on `device`, printing to `out`. Returns the number of failed expects; throws
// kron::InputError (FILE:LINE: what) when the device refuses a command or would hang.
unsigned run_script(const std::vector<Command>& commands, const std::string& file, Device& device, std::ostream& out,
                    const RunOptions& options = {});

}  // namespace kron::sim
