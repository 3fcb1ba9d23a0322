// nn::init: parameter initialisation in place (under no-grad) with PyTorch's formulas and
// defaults and libtorch's signatures (tensors by value, sharing storage; nonlinearities and
// fan modes as gr::kReLU, gr::kFanOut, ...). Each also takes an optional Generator last.
#pragma once

#include <tuple>
#include <utility>

#include "core/generator.h"
#include "core/scalar.h"
#include "core/tensor.h"
#include "nn/enum.h"

namespace gr::nn::init {

enum class FanMode { FanIn, FanOut };
enum class Nonlinearity {
  Linear, Conv1D, Conv2D, Conv3D, ConvTranspose1D, ConvTranspose2D, ConvTranspose3D,
  Sigmoid, Tanh, ReLU, LeakyReLU, SELU
};

// libtorch's NonlinearityType: gr::kLinear, gr::kConv1D ... gr::kReLU, gr::kLeakyReLU, gr::kSELU.
class NonlinearityType {
 public:
  NonlinearityType(Nonlinearity n) : value_(n) {}
  NonlinearityType(enumtype::kLinear) : value_(Nonlinearity::Linear) {}
  NonlinearityType(enumtype::kConv1D) : value_(Nonlinearity::Conv1D) {}
  NonlinearityType(enumtype::kConv2D) : value_(Nonlinearity::Conv2D) {}
  NonlinearityType(enumtype::kConv3D) : value_(Nonlinearity::Conv3D) {}
  NonlinearityType(enumtype::kConvTranspose1D) : value_(Nonlinearity::ConvTranspose1D) {}
  NonlinearityType(enumtype::kConvTranspose2D) : value_(Nonlinearity::ConvTranspose2D) {}
  NonlinearityType(enumtype::kConvTranspose3D) : value_(Nonlinearity::ConvTranspose3D) {}
  NonlinearityType(enumtype::kSigmoid) : value_(Nonlinearity::Sigmoid) {}
  NonlinearityType(enumtype::kTanh) : value_(Nonlinearity::Tanh) {}
  NonlinearityType(enumtype::kReLU) : value_(Nonlinearity::ReLU) {}
  NonlinearityType(enumtype::kLeakyReLU) : value_(Nonlinearity::LeakyReLU) {}
  NonlinearityType(enumtype::kSELU) : value_(Nonlinearity::SELU) {}
  Nonlinearity value() const { return value_; }

 private:
  Nonlinearity value_;
};

// libtorch's FanModeType: gr::kFanIn or gr::kFanOut.
class FanModeType {
 public:
  FanModeType(FanMode m) : value_(m) {}
  FanModeType(enumtype::kFanIn) : value_(FanMode::FanIn) {}
  FanModeType(enumtype::kFanOut) : value_(FanMode::FanOut) {}
  FanMode value() const { return value_; }

 private:
  FanMode value_;
};

// (fan_in, fan_out) of a weight of at least 2 dims: [out, in, k...] -> (in*k, out*k).
std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor);
inline std::tuple<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  return _calculate_fan_in_and_fan_out(tensor);
}
// The recommended gain for a nonlinearity (leaky_relu's negative slope is `param`); SELU's
// is 3/4, as PyTorch's.
double calculate_gain(NonlinearityType nonlinearity, double param = 0.01);

Tensor uniform_(Tensor tensor, double low = 0, double high = 1, Generator* gen = nullptr);
Tensor normal_(Tensor tensor, double mean = 0, double std = 1, Generator* gen = nullptr);
// N(mean, std) restricted to [a, b] (inverse-CDF sampling, as PyTorch's).
Tensor trunc_normal_(Tensor tensor, double mean = 0, double std = 1, double a = -2, double b = 2,
                     Generator* gen = nullptr);
Tensor constant_(Tensor tensor, Scalar value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);
// The identity matrix of a 2-d tensor's shape.
Tensor eye_(Tensor matrix);
// Dirac delta kernels of a [out, in, k...] (3- to 5-d) convolution weight: each of the
// `groups` groups passes channel i to channel i unchanged.
Tensor dirac_(Tensor tensor, int64_t groups = 1);
// A (semi-)orthogonal matrix from the QR decomposition of a normal one, times gain; more
// than 2 dims are flattened to [size(0), the rest].
Tensor orthogonal_(Tensor tensor, double gain = 1.0, Generator* gen = nullptr);
// Each column gets round-up(sparsity * rows) zeros, the rest N(0, std) (2-d tensors).
Tensor sparse_(Tensor tensor, double sparsity, double std = 0.01, Generator* gen = nullptr);
// U(-b, b) with b = gain * sqrt(3 / fan), gain from `nonlinearity` with slope `a`.
Tensor kaiming_uniform_(Tensor tensor, double a = 0, FanModeType mode = gr::kFanIn,
                        NonlinearityType nonlinearity = gr::kLeakyReLU, Generator* gen = nullptr);
Tensor kaiming_normal_(Tensor tensor, double a = 0, FanModeType mode = gr::kFanIn,
                       NonlinearityType nonlinearity = gr::kLeakyReLU, Generator* gen = nullptr);
// U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)).
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0, Generator* gen = nullptr);
Tensor xavier_normal_(Tensor tensor, double gain = 1.0, Generator* gen = nullptr);

}  // namespace gr::nn::init
