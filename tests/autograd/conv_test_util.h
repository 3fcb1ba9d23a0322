// Shared by the convolution tests: PyTorch's conv_reference.json and a loop over the CPU
// conv2d algorithms (the transposed convolutions run conv2d's kernels too).
#pragma once

#include <nlohmann/json.hpp>

#include "core/native/conv2d.h"
#include "reference_util.h"

namespace gr::test {

inline std::vector<int64_t> ints(const nlohmann::json& j) { return j.get<std::vector<int64_t>>(); }

inline const nlohmann::json& conv_reference() {
  static const nlohmann::json ref = load_reference("conv_reference.json");
  return ref;
}

// Runs `body` once per CPU algorithm (im2col + GEMM and the dense product everywhere, Winograd /
// direct where they apply).
template <class F>
void for_each_conv_algorithm(F body) {
  for (auto algo : {native::Conv2dCpuAlgorithm::kIm2col, native::Conv2dCpuAlgorithm::kWinograd,
                    native::Conv2dCpuAlgorithm::kDirect, native::Conv2dCpuAlgorithm::kDense}) {
    CAPTURE(algo == native::Conv2dCpuAlgorithm::kWinograd ? "winograd"
            : algo == native::Conv2dCpuAlgorithm::kDirect ? "direct"
            : algo == native::Conv2dCpuAlgorithm::kDense  ? "dense"
                                                           : "im2col");
    native::set_conv2d_cpu_algorithm(algo);
    body();
  }
  native::set_conv2d_cpu_algorithm(native::Conv2dCpuAlgorithm::kAuto);
}

}  // namespace gr::test
