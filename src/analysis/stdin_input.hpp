// `-` as an analysis input: a raw classic stream read from standard input (a pipe from a collector, e.g.
// `kron sim --board pci script | kron expand --input-format mk2 -` with the board's cable to standard
// output). Kept apart from input.cpp on purpose: the stream is read whole into memory, then read by the
// same ClassicStream decoder. A kron trace file is read by mapping a named file, so on standard input it
// is refused with a message. Messages name the input "<stdin>".
#pragma once
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "analysis/input.hpp"

namespace kron::analysis {

inline constexpr const char* kStdinName = "<stdin>";

std::unique_ptr<Input> open_stdin(std::istream& in, const InputOptions& opt);

// open_inputs() with `-` standing for standard input (std::cin).
Merged open_inputs_or_stdin(const std::vector<std::string>& paths, const InputOptions& opt);

}  // namespace kron::analysis
