// gr::nn::functional's activations (libtorch's torch/nn/functional/activation.h):
//   F::gelu(x, F::GELUFuncOptions().approximate("tanh")); F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2))
// `inplace` options write the result into x (x.copy_(result)) and return x.
#pragma once

#include <optional>
#include <string>

#include "autograd/ops.h"
#include "nn/options.h"

namespace gr::nn::functional {

namespace detail {
inline Tensor maybe_inplace(const Tensor& x, const Tensor& result, bool inplace) {
  if (!inplace) return result;
  x.copy_(result);
  return x;
}
}  // namespace detail

struct GELUFuncOptions {
  GR_ARG(std::string, approximate) = "none";
};
inline Tensor gelu(const Tensor& x, const GELUFuncOptions& o = {}) { return gr::gelu(x, o.approximate()); }

inline Tensor silu(const Tensor& x) { return gr::silu(x); }
inline Tensor mish(const Tensor& x) { return gr::mish(x); }

struct LeakyReLUFuncOptions {
  GR_ARG(double, negative_slope) = 1e-2;
  GR_ARG(bool, inplace) = false;
};
inline Tensor leaky_relu(const Tensor& x, const LeakyReLUFuncOptions& o = {}) {
  return detail::maybe_inplace(x, gr::leaky_relu(x, o.negative_slope()), o.inplace());
}

struct ELUFuncOptions {
  GR_ARG(double, alpha) = 1.0;
  GR_ARG(bool, inplace) = false;
};
inline Tensor elu(const Tensor& x, const ELUFuncOptions& o = {}) {
  return detail::maybe_inplace(x, gr::elu(x, o.alpha()), o.inplace());
}

struct SELUFuncOptions {
  SELUFuncOptions(bool inplace = false) : inplace_(inplace) {}
  GR_ARG(bool, inplace);
};
inline Tensor selu(const Tensor& x, const SELUFuncOptions& o = {}) {
  return detail::maybe_inplace(x, gr::selu(x), o.inplace());
}

inline Tensor prelu(const Tensor& x, const Tensor& weight) { return gr::prelu(x, weight); }

struct SoftplusFuncOptions {
  GR_ARG(double, beta) = 1.0;
  GR_ARG(double, threshold) = 20.0;
};
inline Tensor softplus(const Tensor& x, const SoftplusFuncOptions& o = {}) {
  return gr::softplus(x, o.beta(), o.threshold());
}

struct HardtanhFuncOptions {
  GR_ARG(double, min_val) = -1.0;
  GR_ARG(double, max_val) = 1.0;
  GR_ARG(bool, inplace) = false;
};
inline Tensor hardtanh(const Tensor& x, const HardtanhFuncOptions& o = {}) {
  return detail::maybe_inplace(x, gr::hardtanh(x, o.min_val(), o.max_val()), o.inplace());
}

struct ReLU6FuncOptions {
  ReLU6FuncOptions(bool inplace = false) : inplace_(inplace) {}
  GR_ARG(bool, inplace);
};
inline Tensor relu6(const Tensor& x, const ReLU6FuncOptions& o = {}) {
  return detail::maybe_inplace(x, gr::relu6(x), o.inplace());
}

// softmax / log_softmax along dim, computed in `dtype` when given (the input is cast first).
struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}
  GR_ARG(int64_t, dim);
  GR_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};
inline Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& o) {
  return gr::softmax(o.dtype() ? x.to(*o.dtype()) : x, o.dim());
}
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;
inline Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& o) {
  return gr::log_softmax(o.dtype() ? x.to(*o.dtype()) : x, o.dim());
}

}  // namespace gr::nn::functional
