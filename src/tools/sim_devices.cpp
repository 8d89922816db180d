// The devices `kron sim` can drive, one line each (src/sim/registry.hpp). They register here, in the
// binary, because registrars inside the static library would be dropped by the linker.
#include "models/mk1/mk1.hpp"
#include "models/mk2/mk2.hpp"
#include "models/numachine/numachine.hpp"
#include "models/pcib/pcib.hpp"
#include "sim/registry.hpp"

KRON_SIM_DEVICE("", "mk2", "MultiKron II chip (000, NISTIR 5571)", kron::mk2::Mk2);
KRON_SIM_DEVICE("", "mk1", "first MultiKron chip (001, NISTIR 4737)", kron::mk1::Mk1);
KRON_SIM_DEVICE("pci", "mk2", "PCI toolkit board with a MultiKron II (003, NISTIR 5993)", kron::pcib::PciBoard);
KRON_SIM_DEVICE("", "numachine", "NUMAchine processor-card monitor (004, thesis chapter 4)",
                kron::numachine::Numachine);
