// The CTF export's pieces (ctf.cpp, ctf_metadata.cpp).
#pragma once
#include <cstdint>
#include <string>

namespace kron::exports::ctf {

// The metadata: trace, clock, one stream class, the event classes (TSDL). `description` is escaped.
std::string metadata(std::uint64_t clock_hz, std::int64_t offset_s, std::uint64_t offset_cycles,
                     const std::string& description);

}  // namespace kron::exports::ctf
