// libFuzzer target: the CIFAR-10 batch reader (gr::data::read_cifar10_batch). What it
// accepts must be whole records with labels 0-9, split into images and labels exactly.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "data/cifar10.h"
#include "fuzz/memory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    gr::data::Example<> e = gr::data::read_cifar10_batch(gr::fuzz::memory_file(data, size));
    const int64_t n = e.target.numel();
    if (static_cast<size_t>(n) * 3073 != size || e.data.numel() != n * 3072) std::abort();
    const auto* pixels = e.data.data_ptr<uint8_t>();
    const auto* labels = e.target.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      if (labels[i] != data[i * 3073] || labels[i] > 9) std::abort();
      if (std::memcmp(pixels + i * 3072, data + i * 3073 + 1, 3072) != 0) std::abort();
    }
  } catch (const gr::Error&) {
    // A malformed file: the expected outcome.
  }
  return 0;
}
