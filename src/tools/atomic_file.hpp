// Where a tool's output goes, and how it is written: one helper for every command that writes a file
// (kron export, rpt --html, rdsample -f and --pci-memory, merge -o).
//
// ERRATUM E129: a new or regular output is written into a temporary file beside it, renamed over it only
// when the writer succeeded: a tool that fails half way leaves the old file as it was, never a half-written
// one. The temporary file is PATH.tmp.XXXXXX with a random suffix (DIR/.kron.XXXXXX where that name would
// pass NAME_MAX), created with O_CREAT|O_EXCL (mkostemp), mode 0666 less the umask: it never opens a file
// or symlink that is already there.
// ERRATUM E342: an output that exists and is not a regular file (a FIFO, a terminal, /dev/null, the pipe
// behind /dev/stdout) is written in place, never replaced by a regular file, and its write errors (ENOSPC
// of /dev/full) are errors. A symlink is followed when it belongs to the caller or root (/dev/stdout,
// /dev/fd/N): to a regular file, that file is replaced (the link stays); a symlink of another user, or one
// to nothing, is refused by name.
#pragma once
#include <fcntl.h>
#include <limits.h>
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

// Where an output named `path` is written: `target` (the path, or a symlink's regular target) through a
// temporary file, or `path` itself in place.
struct OutputTarget {
  std::string target;
  bool in_place = false;  // an existing FIFO, device or socket (through a symlink or not)
};

inline OutputTarget resolve_output(const std::string& path) {
  if (path.empty()) throw std::runtime_error("an empty output file name (give a path, or /dev/stdout)");
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {path, false};
    throw std::runtime_error(path + ": cannot use as output: " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) throw std::runtime_error(path + ": is a directory (give a file name)");
  if (S_ISREG(st.st_mode)) return {path, false};
  if (!S_ISLNK(st.st_mode)) return {path, true};
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    throw std::runtime_error(path + ": a symlink of another user (uid " + std::to_string(st.st_uid) +
                             "): not followed; give the file it points to");
  struct stat to {};
  if (::stat(path.c_str(), &to) != 0)
    throw std::runtime_error(path + ": a symlink to nothing (" + std::strerror(errno) + "); give the file to write");
  if (S_ISDIR(to.st_mode)) throw std::runtime_error(path + ": a symlink to a directory (give a file name)");
  if (!S_ISREG(to.st_mode)) return {path, true};
  char* real = ::realpath(path.c_str(), nullptr);
  if (!real) throw std::runtime_error(path + ": cannot resolve the symlink: " + std::strerror(errno));
  std::string r(real);
  std::free(real);
  return {r, false};
}

// A new file beside `path` (mkostemp), mode 0666 less the umask; returns its fd and name.
inline int create_temp_beside(const std::string& path, std::string* tmp) {
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  // ERRATUM E349: a name of 245-255 bytes has no room for the suffix; such a file's temporary is DIR/.kron.XXXXXX.
  const std::string pattern = base.size() + 11 > NAME_MAX ? dir + ".kron.XXXXXX" : path + ".tmp.XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  *tmp = name.data();
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);  // mkostemp makes 0600; the output gets the mode fopen would give it
  return fd;
}

inline void rename_into_place(const std::string& tmp, const std::string& path) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename into place: " + std::strerror(e));
  }
}

// Flushes and closes `f`, throwing "PATH: write failed: WHY" when any write to it failed (ENOSPC, EIO).
inline void close_output(std::FILE* f, const std::string& path) {
  const bool bad = std::fflush(f) != 0 || std::ferror(f);
  const int e = errno;
  if (std::fclose(f) != 0 || bad) throw std::runtime_error(path + ": write failed: " + std::strerror(bad ? e : errno));
}

// The output stream of a tool: `write` fills it; see the top of this file for where it goes.
inline void write_file_atomically(const std::string& path, const std::function<void(std::FILE*)>& write) {
  const OutputTarget out = resolve_output(path);
  if (out.in_place) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::runtime_error(path + ": cannot open for writing: " + std::strerror(errno));
    try {
      write(f);
    } catch (const std::exception& e) {
      const bool bad = std::ferror(f);
      std::fclose(f);
      if (bad) throw std::runtime_error(path + ": " + e.what());  // a write error: name the file
      throw;
    }
    return close_output(f, path);
  }
  std::string tmp;
  const int fd = create_temp_beside(out.target, &tmp);
  std::FILE* f = ::fdopen(fd, "wb");
  if (!f) {
    ::close(fd);
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
  }
  try {
    write(f);
  } catch (const std::exception& e) {
    const bool bad = std::ferror(f);
    std::fclose(f);
    std::remove(tmp.c_str());
    if (bad) throw std::runtime_error(path + ": " + e.what());  // a write error (ENOSPC): name the file
    throw;
  }
  try {
    close_output(f, path);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  rename_into_place(tmp, out.target);
}

// An output a writer opens by name itself (a trace file: written with seeks, so a regular file only): `write`
// is given the temporary file's name; renamed over PATH when it returned. A failure leaves PATH as it was.
inline void write_named_file_atomically(const std::string& path, const std::function<void(const std::string&)>& write) {
  const OutputTarget out = resolve_output(path);
  if (out.in_place)
    throw std::runtime_error(path + ": not a regular file (a trace file is written with seeks: give a file name)");
  std::string tmp;
  ::close(create_temp_beside(out.target, &tmp));
  try {
    write(tmp);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  rename_into_place(tmp, out.target);
}

// A directory made whole or not at all: PATH.tmp.XXXXXX (mkdtemp: a new directory, mode 0700 then 0777
// less the umask), filled by `write`, renamed to PATH at the end. PATH must not exist, or be an empty
// directory (rename replaces that); anything else is refused before any work.
inline void write_dir_atomically(const std::string& path, const std::function<void(const std::string&)>& write) {
  if (path.empty()) throw std::runtime_error("an empty output directory name");
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
