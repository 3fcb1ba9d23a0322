// Parameter initialisation in place (under no-grad), with PyTorch's formulas and defaults.
#pragma once

#include <utility>

#include "core/generator.h"
#include "core/tensor.h"

namespace gr::nn::init {

enum class FanMode { FanIn, FanOut };
enum class Nonlinearity { Linear, ReLU, LeakyReLU, Tanh, Sigmoid };

// (fan_in, fan_out) of a weight of at least 2 dims: [out, in, k...] -> (in*k, out*k).
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t);
// The recommended gain for a nonlinearity (LeakyReLU uses `param` as its slope).
double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);

Tensor& uniform_(Tensor& t, double low = 0.0, double high = 1.0, Generator* gen = nullptr);
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);
Tensor& constant_(Tensor& t, double value);
Tensor& zeros_(Tensor& t);
Tensor& ones_(Tensor& t);
// U(-b, b) with b = gain * sqrt(3 / fan), gain from `nonlinearity` with slope `a`.
Tensor& kaiming_uniform_(Tensor& t, double a = 0.0, FanMode mode = FanMode::FanIn,
                         Nonlinearity nonlinearity = Nonlinearity::LeakyReLU, Generator* gen = nullptr);
Tensor& kaiming_normal_(Tensor& t, double a = 0.0, FanMode mode = FanMode::FanIn,
                        Nonlinearity nonlinearity = Nonlinearity::LeakyReLU, Generator* gen = nullptr);
// U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)).
Tensor& xavier_uniform_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);
Tensor& xavier_normal_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);

}  // namespace gr::nn::init
