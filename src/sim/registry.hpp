// Which devices `kron sim` can drive: a name -> factory table. The registrations live in the `kron`
// binary (src/tools/sim_devices.cpp), one line each, because static registrars inside the static library
// would be dropped by the linker.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kron/sim/device.hpp"

namespace kron::sim {

struct DeviceEntry {
  std::string board;    // "" for a bare chip, else the board ("pci")
  std::string chip;     // "mk1", "mk2"
  std::string summary;  // one line for --help and error messages
  std::function<std::unique_ptr<Device>()> make;
};

std::vector<DeviceEntry>& device_registry();

struct DeviceRegistrar {
  DeviceRegistrar(std::string board, std::string chip, std::string summary,
                  std::function<std::unique_ptr<Device>()> make) {
    device_registry().push_back({std::move(board), std::move(chip), std::move(summary), std::move(make)});
  }
};

// The device for `--board BOARD --chip CHIP`. An empty chip means mk2 for a bare chip, and the board's
// first registered chip for a board. Throws std::invalid_argument listing what exists.
std::unique_ptr<Device> make_device(std::string_view board, std::string_view chip);

}  // namespace kron::sim

#define KRON_SIM_CAT2(a, b) a##b
#define KRON_SIM_CAT(a, b) KRON_SIM_CAT2(a, b)
// KRON_SIM_DEVICE("", "mk2", "MultiKron II chip (000)", kron::mk2::Mk2);
#define KRON_SIM_DEVICE(board, chip, summary, Type)                                       \
  static const ::kron::sim::DeviceRegistrar KRON_SIM_CAT(kron_sim_device_, __LINE__) {    \
    board, chip, summary, [] { return std::unique_ptr<::kron::sim::Device>(new Type()); } \
  }
