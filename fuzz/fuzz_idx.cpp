// libFuzzer target: the IDX reader (gr::data::read_idx), plain and gzip. read_idx reads
// through zlib's gzFile, which wants a file, so each input goes into a memory-backed file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "data/idx.h"
#include "fuzz/memory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    gr::Tensor t = gr::data::read_idx(gr::fuzz::memory_file(data, size));
    if (t.numel() > 0 && t.nbytes() == 0) std::abort();
  } catch (const gr::Error&) {
    // A malformed file: the expected outcome.
  }
  return 0;
}
