// Parsing what the recorder's commands take: sizes ("16M", "1GiB"), masks ("0xffff"), counter wiring
// ("3=page-faults"). Used by kron record / board create; kept here so tests can reach it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kron/board_ops.hpp"

namespace kron::recorder {

// --node: the node number of a "node.process" source identification, 10 bits (board::source_id).
inline constexpr std::uint32_t kMaxNode = board::source_node(~std::uint32_t{0});
inline constexpr const char* kNodeField = "the node is 10 bits of the source identification";

// "4096", "64K", "16M", "16MiB", "2G", "1GB": bytes (K/M/G/T powers of 1024). nullopt when malformed.
std::optional<std::uint64_t> parse_size(const std::string& text);

// Applies "N=SOURCE" specs to the board options: wires External Signal pins, writes the Mode and Clock
// Select fields and enables (reset & enable, 000 Table B7 xx11) each counter. Throws InputError naming
// the argument when a spec is malformed or a perf event cannot be opened here.
void apply_counters(const std::vector<std::string>& specs, board::CreateOptions& o);
// `kron record --compress[=LEVEL]`: the zstd level, 1-19; "" (the option without a value) is 1.
// Throws InputError naming the option when the level is malformed or out of range.
int parse_compress_level(const std::string& text);
// "simple" / "circular".
board::BufferMode parse_mode(const std::string& text);
// The options `kron board create` and `kron record` share: --buffer SIZE, --lanes N, --block-size SIZE|auto,
// --mode, --filter MASK. Fills those fields of `o`; throws InputError naming the argument when one is malformed.
void apply_board_options(const std::string& buffer, std::uint32_t lanes, const std::string& block,
                         const std::string& mode, const std::string& filter, board::CreateOptions& o);

}  // namespace kron::recorder
