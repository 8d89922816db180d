// Writes a file whole or not at all: into PATH.tmp.PID, renamed over PATH only when the writer
// succeeded. A tool that fails half way leaves no half-written report or export behind.
#pragma once
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>

namespace kron::tools {

inline void write_file_atomically(const std::string& path, const std::function<void(std::FILE*)>& write) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
  try {
    write(f);
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  if (std::fclose(f) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": write failed: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename into place: " + std::strerror(errno));
  }
}

}  // namespace kron::tools
