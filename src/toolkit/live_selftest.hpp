// The Experimenter's Toolkit test programs (003 section 3.4) against a live board: the live recorder's
// shared-memory board (include/kron/board.hpp), named as `kron selftest basic|sample --board NAME`.
//   basic   test_mk: Filter Register, CSR (000 Table B1) and Mode / Clock Select (Tables B5, B6) round
//           trips; a trace and a resource sample taken by the probe program (kron-selftest-probe, a child process
//           with KRON_BOARD=NAME: the kron command never attaches) and read back from the board;
//           the timestamp counting at the rate the board was calibrated to (clock_hz)
//   sample  mk_sample_test: trace and resource samples from CPU 0 then CPU 1 (the probe program pinned to each),
//           printed as their board records and as 20 and 84 MultiKron II bytes, with the lane's head (the
//           board's memory address pointer: one per lane, ERRATUM E20)
// Not against a live board: mem (the board's memory is the lanes' rings, written only by their owning
// threads through the probe; a pattern would destroy recorded samples and the lanes' invariants, and the
// memory is ordinary RAM) and nite (its memory half is mem; its register half would rewrite the Filter
// Register under the measured programs for minutes; the recorder's own stress tests soak the lanes).
// The tests restore every register they change; their samples stay on the board (as test_mk's did), at
// filter level 15. A board being drained by a recorder is refused: the samples would go to its file.
// Each returns the number of errors (0 = pass); throws std::runtime_error / InputError when it cannot run.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>

namespace kron::toolkit {

std::uint64_t live_basic_test(const std::string& board, std::ostream& out);
std::uint64_t live_sample_test(const std::string& board, std::ostream& out);

}  // namespace kron::toolkit
