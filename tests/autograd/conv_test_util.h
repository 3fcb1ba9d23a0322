// Shared by the convolution tests: PyTorch's conv_reference.json and a loop over the CPU
// conv2d algorithms (the transposed convolutions run conv2d's kernels too).
#pragma once

#include <nlohmann/json.hpp>

#include "core/native/conv/conv2d.h"
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
  for (auto algo : {backends::cpu::Conv2dAlgorithm::kIm2col, backends::cpu::Conv2dAlgorithm::kWinograd,
                    backends::cpu::Conv2dAlgorithm::kDirect, backends::cpu::Conv2dAlgorithm::kDense}) {
    CAPTURE(algo == backends::cpu::Conv2dAlgorithm::kWinograd ? "winograd"
            : algo == backends::cpu::Conv2dAlgorithm::kDirect ? "direct"
            : algo == backends::cpu::Conv2dAlgorithm::kDense  ? "dense"
                                                           : "im2col");
    backends::cpu::set_conv2d_algorithm(algo);
    body();
  }
  backends::cpu::set_conv2d_algorithm(backends::cpu::Conv2dAlgorithm::kAuto);
}

}  // namespace gr::test
