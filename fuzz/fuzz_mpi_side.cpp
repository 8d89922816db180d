// Fuzz target: the MPI side area's reader (src/recorder/mpi_side.hpp, ERRATUM E440), which kron record --mpi
// runs over memory another process wrote. Any bytes must give records and/or a problem naming an offset,
// never a crash; every record returned is of its kind and size.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "recorder/mpi_side.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto c = kron::recorder::mpiside::parse(std::span(data, size), "fuzz");
  for (const auto& m : c.calls)
    if (m.h.kind != kron::record::RecordKind::Mpi || m.h.size != sizeof m) std::abort();
  for (const auto& o : c.offsets)
    if (o.h.kind != kron::record::RecordKind::ClockOffset || o.h.size != sizeof o) std::abort();
  if (c.calls.size() + c.offsets.size() > size / kron::recorder::mpiside::kSlotBytes) std::abort();
  return 0;
}
