// libFuzzer target: the safetensors reader (gr::load_bytes, which gr::load calls).
#include <cstddef>
#include <cstdint>
#include <string>

#include "nn/serialize.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    gr::Metadata metadata;
    gr::OrderedDict<gr::Tensor> tensors = gr::load_bytes(bytes, &metadata);
    // What loads must be usable: touch every byte of every tensor.
    uint64_t sum = 0;
    for (const auto& [name, t] : tensors) {
      const auto* p = static_cast<const uint8_t*>(t.data_ptr());
      for (size_t i = 0; i < t.nbytes(); ++i) sum += p[i];
    }
    volatile uint64_t sink = sum;
    (void)sink;
  } catch (const gr::Error&) {
    // A malformed file: the expected outcome.
  }
  return 0;
}
