// libFuzzer target: the IDX reader (gr::data::read_idx), plain and gzip. read_idx reads
// through zlib's gzFile, which wants a file, so each input goes into one memory-backed file
// (memfd) that read_idx opens as /proc/self/fd/N.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "data/idx.h"

namespace {

int memory_file() {
  static int fd = [] {
    int f = memfd_create("fuzz_idx", 0);
    if (f < 0) {
      std::perror("fuzz_idx: memfd_create");
      std::abort();
    }
    return f;
  }();
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = memory_file();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    gr::Tensor t = gr::data::read_idx(path);
    if (t.numel() > 0 && t.nbytes() == 0) std::abort();
  } catch (const gr::Error&) {
    // A malformed file: the expected outcome.
  }
  return 0;
}
