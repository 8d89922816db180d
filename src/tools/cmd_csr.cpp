// kron csr --board NAME [VALUE] [--enable|--disable] [--wait|--discard]: write the CSR as the chip takes
// it (000 Table B1: a 1 in a control bit acts, a 0 leaves the setting alone) and show what a read returns.
#include <fmt/core.h>

#include "kron/core/control_regs.hpp"
#include "kron/core/text.hpp"
#include "kron/core/error.hpp"
#include "recorder/board_reader.hpp"
#include "recorder/options.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {
struct Args {
  std::string board, value;
  bool enable = false, disable = false, wait = false, discard = false;
};
int run(const Args& a) {
  auto r = recorder::BoardReader::open(a.board);
  std::uint16_t w = 0;
  if (!a.value.empty()) {
    const auto v = kron::text::parse_uint(a.value, 0xffff);
    if (!v) throw InputError::at_offset("CSR value " + a.value, 0, "expected a 16-bit value such as 0x0001");
    w = static_cast<std::uint16_t>(*v);
  }
  namespace csr = regs::csr;  // 000 Table B1, control column
  if (a.enable) w |= csr::bit(csr::kSamplingEnable);
  if (a.disable) w |= csr::bit(csr::kSamplingDisable);
  if (a.wait) w |= csr::bit(csr::kWaitOnOverrun);
  if (a.discard) w |= csr::bit(csr::kNoWaitOnOverrun);
  if (w) board::write_csr(r.header(), w);
  const std::uint16_t c = r.csr_read();
  fmt::print("CSR 0x{:04x}: sampling {}, {} on overrun{}{}{}\n", c,
             (c & board::kCsrSamplingEnabled) ? "enabled" : "disabled", (c & board::kCsrWriteWait) ? "wait" : "discard",
             (c & board::kCsrFifoFull) ? ", FIFO full" : "", (c & board::kCsrFifoOverrun) ? ", FIFO overrun" : "",
             (c & board::kCsrShadowOverrun) ? ", shadow overrun" : "");
  return kExitOk;
}
KRON_COMMAND("csr", "write or read a board's CSR (000 Table B1)", 36, [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--board", a->board, "board name")->required();
  add_board_access_options(app);
  app.add_option("value", a->value, "value written (write 1 to act, Table B1)");
  app.add_flag("--enable", a->enable, "Enable Sampling (bit 0)");
  app.add_flag("--disable", a->disable, "Disable Sampling (bit 1)");
  app.add_flag("--wait", a->wait, "Wait on overrun (bit 2)");
  app.add_flag("--discard", a->discard, "Discard on overrun (bit 3)");
  return [a] { return run(*a); };
});
}  // namespace
}  // namespace kron::tools
