// Writes a file whole or not at all: into a temporary file beside PATH, renamed over PATH only when the
// writer succeeded. A tool that fails half way leaves no half-written report or export behind.
//
// ERRATUM E129: the temporary file is PATH.tmp.XXXXXX with a random suffix, created with O_CREAT|O_EXCL
// (mkostemp), mode 0666 less the umask: it never opens a file or symlink that is already there, so
// nobody who can write the directory can make the tool write through a symlink planted in advance.
#pragma once
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kron::tools {

inline void write_file_atomically(const std::string& path, const std::function<void(std::FILE*)>& write) {
  std::vector<char> name(path.begin(), path.end());
  for (const char c : std::string(".tmp.XXXXXX")) name.push_back(c);
  name.push_back('\0');
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  const std::string tmp(name.data());
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);  // mkostemp makes 0600; the output gets the mode fopen would give it
  std::FILE* f = ::fdopen(fd, "wb");
  if (!f) {
    ::close(fd);
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
  }
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

// A directory made whole or not at all: PATH.tmp.XXXXXX (mkdtemp: a new directory, mode 0700 then 0777
// less the umask), filled by `write`, renamed to PATH at the end. PATH must not exist, or be an empty
// directory (rename replaces that); anything else is refused before any work.
inline void write_dir_atomically(const std::string& path, const std::function<void(const std::string&)>& write) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    throw std::runtime_error(path + ": exists and is not a directory");
  std::vector<char> name(path.begin(), path.end());
  for (const char c : std::string(".tmp.XXXXXX")) name.push_back(c);
  name.push_back('\0');
  if (!::mkdtemp(name.data()))
    throw std::runtime_error(path + ": cannot create a temporary directory beside it: " + std::strerror(errno));
  const std::string tmp(name.data());
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tmp.c_str(), 0777 & ~mask);
  auto remove_tmp = [&] { std::filesystem::remove_all(tmp); };
  try {
    write(tmp);
  } catch (...) {
    remove_tmp();
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    remove_tmp();
    throw std::runtime_error(path + ": cannot rename into place" +
                             (e == ENOTEMPTY || e == EEXIST ? std::string(": a directory that is not empty is there")
                                                            : ": " + std::string(std::strerror(e))));
  }
}

}  // namespace kron::tools
