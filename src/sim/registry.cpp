// The `kron sim` device table. Registrations: src/tools/sim_devices.cpp.
#include "sim/registry.hpp"

#include <stdexcept>

namespace kron::sim {

std::vector<DeviceEntry>& device_registry() {
  static std::vector<DeviceEntry> table;
  return table;
}

std::unique_ptr<Device> make_device(std::string_view board, std::string_view chip) {
  const std::string_view want_chip = chip.empty() && board.empty() ? std::string_view("mk2") : chip;
  for (const DeviceEntry& e : device_registry())
    if (e.board == board && (want_chip.empty() || e.chip == want_chip)) return e.make();
  std::string known;
  for (const DeviceEntry& e : device_registry())
    known += "\n  " + (e.board.empty() ? "" : "--board " + e.board + " ") + "--chip " + e.chip + ": " + e.summary;
  std::string want;
  if (!board.empty()) want += " --board " + std::string(board);
  if (!chip.empty()) want += " --chip " + std::string(chip);
  throw std::invalid_argument("no simulated device" + want + "; known:" + known);
}

}  // namespace kron::sim
