// The CTF export's pieces (ctf.cpp, ctf_metadata.cpp).
#pragma once
#include <cstdint>
#include <string>

namespace kron::exports::ctf {

// The metadata: trace, clock, one stream class, the event classes (TSDL). `description` is escaped. `ranks`:
// an MPI recording, whose packet context ends with the stream's rank (ERRATUM E395).
std::string metadata(std::uint64_t clock_hz, std::int64_t offset_s, std::uint64_t offset_cycles,
                     const std::string& description, bool ranks = false);

}  // namespace kron::exports::ctf
