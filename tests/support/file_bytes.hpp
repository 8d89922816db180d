// Test helper: a file's bytes in and out, for tests that damage or cut a file and read it back.
#pragma once
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace kron::testing {

inline std::vector<char> slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}
inline void spit(const std::filesystem::path& p, const std::vector<char>& b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(b.data(), static_cast<std::streamsize>(b.size()));
}

}  // namespace kron::testing
