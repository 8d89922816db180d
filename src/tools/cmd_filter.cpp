// kron filter --board NAME [MASK]: read or write the Filter Register while programs run (000 "Filter
// Register": bit n set = filter level n sampled). Probes read it on every call.
#include <fmt/core.h>

#include "kron/core/error.hpp"
#include "kron/core/text.hpp"
#include "recorder/board_reader.hpp"
#include "recorder/options.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {
struct Args {
  std::string board, mask;
};
int run(const Args& a) {
  auto r = recorder::BoardReader::open(a.board);
  if (!a.mask.empty()) {
    const auto m = kron::text::parse_uint(a.mask, 0xffff);
    if (!m) throw InputError::at_offset("filter mask " + a.mask, 0, "expected a 16-bit mask such as 0x000f");
    board::write_filter(r.header(), static_cast<std::uint16_t>(*m));
  }
  fmt::print("Filter Register 0x{:04x}\n", board::filter_of(r.header()));
  return kExitOk;
}
KRON_COMMAND("filter", "read or write a board's Filter Register", 35, [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--board", a->board, "board name")->required();
  add_board_access_options(app);
  app.add_option("mask", a->mask, "new Filter Register value (bit n = group n)");
  return [a] { return run(*a); };
});
}  // namespace
}  // namespace kron::tools
