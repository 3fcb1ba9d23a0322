// For fuzz targets whose reader takes a path: one memory-backed file (memfd) per process,
// rewritten with each input and opened by the reader as /proc/self/fd/N.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace gr::fuzz {

// Replaces the file's contents with `size` bytes at `data`; returns its path.
inline const std::string& memory_file(const void* data, size_t size) {
  static const int fd = [] {
    int f = memfd_create("gradring_fuzz", 0);
    if (f < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    return f;
  }();
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  return path;
}

}  // namespace gr::fuzz
