// A PCI toolkit board's local memory as a file: what `kron rdsample --pci-memory` reads (003 3.5,
// mk_rdsample). Two forms, told apart by the magic:
//
// 1. A memory image (what the board model's `memimage FILE` writes): a versioned header that carries the
//    two registers mk_rdsample read from the board, then memory words. Version 1.0, little-endian header:
//      offset  0  char[8] magic "KRONPCIM"
//              8  u32 byte-order mark 0x01020304 (bytes 04 03 02 01)
//             12  u16 major (1; another major is refused), u16 minor (0; any minor is accepted)
//             16  u32 header size (40; a later minor may append fields, the words start here)
//             20  u32 Configuration Register (003 Table 2; WRAPB, bit 14, says simple or circular)
//             24  u32 Memory Address Pointer (003 Table 1 0x1208; 24 bits, wrap count in bits 22-23)
//             28  u32 first word: memory word number of the first word in the file
//             32  u32 word count
//             36  u32 reserved (0)
//    then `word count` memory words, each most significant byte first (ERRATUM E70: the stream order).
// 2. A raw dump (what `memdump 0 COUNT FILE` writes): memory words from word 0, most significant byte
//    first, nothing else; the pointer and the Configuration Register are given on the command line.
//
// Bad input is refused with an InputError naming the file and the byte offset.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kron::pcib {

inline constexpr char kImageMagic[8] = {'K', 'R', 'O', 'N', 'P', 'C', 'I', 'M'};
inline constexpr std::uint32_t kImageByteOrder = 0x01020304;
inline constexpr std::uint16_t kImageMajor = 1, kImageMinor = 0;
inline constexpr std::uint32_t kImageHeaderSize = 40;

// The board memory as read from a file: the registers and a window of memory words.
struct MemoryDump {
  std::string name;                     // file name, for messages
  bool image = false;                   // the file had an image header
  std::uint32_t config = 0;             // Configuration Register
  std::uint32_t pointer = 0;            // Memory Address Pointer (24 bits)
  std::uint32_t first_word = 0;         // memory word number of words[0]
  std::span<const std::uint8_t> words;  // 4 bytes per word, most significant first
  std::uint64_t data_offset = 0;        // file offset of words[0]

  std::uint32_t word_count() const { return static_cast<std::uint32_t>(words.size() / 4); }
  bool holds(std::uint32_t word) const { return word >= first_word && word - first_word < word_count(); }
  // File offset of byte `byte` (0-3) of memory word `word` (which holds() must accept).
  std::uint64_t file_offset(std::uint32_t word, unsigned byte = 0) const {
    return data_offset + 4ull * (word - first_word) + byte;
  }
};

// Reads `bytes` (the whole file, kept alive by the caller). An image supplies config and pointer; a
// `pointer` or `config` given here overrides the image's. A raw dump needs `pointer`; its config
// defaults to 003's recommended 0x003201 (a circular buffer). Throws InputError (file, offset).
MemoryDump parse_memory_dump(const std::string& name, std::span<const std::uint8_t> bytes,
                             std::optional<std::uint32_t> pointer, std::optional<std::uint32_t> config);

// The image of words [first, first + words.size()) of a board whose registers are config and pointer.
std::vector<std::uint8_t> encode_memory_image(std::uint32_t config, std::uint32_t pointer, std::uint32_t first,
                                              std::span<const std::uint32_t> words);

}  // namespace kron::pcib
