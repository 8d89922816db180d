// The devices `kron sim` can drive, one line each (src/sim/registry.hpp). They register here, in the
// binary, because registrars inside the static library would be dropped by the linker.
#include "models/mk2/mk2.hpp"
#include "sim/registry.hpp"

KRON_SIM_DEVICE("", "mk2", "MultiKron II chip (000, NISTIR 5571)", kron::mk2::Mk2);
