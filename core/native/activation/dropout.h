// Dropout without autograd: a Bernoulli keep-mask drawn from a Generator's Philox stream
// (so it depends only on seed and offset, not on threads or device) and the scaled product.
#pragma once

#include <cstdint>
#include <utility>

#include "core/dispatch.h"
#include "core/generator.h"
#include "core/macros.h"
#include "core/philox.h"
#include "core/tensor.h"

namespace gr::native {

// Element i keeps its value when the top 24 bits of number i % 4 of Philox block
// offset + i / 4 are below `threshold` = round((1 - p) * 2^24): probability 1 - p to 2^-25,
// the same on CPU and CUDA, in integers so the test vectorises.
GR_HOST_DEVICE GR_INLINE bool dropout_keep(uint32_t random, uint32_t threshold) { return (random >> 8) < threshold; }
uint32_t dropout_threshold(double p);
// An element's output (or gradient) from its keep flag: one multiply, so CPU and CUDA agree.
template <class T>
GR_HOST_DEVICE GR_INLINE T dropout_value(T x, bool keep, T scale) { return x * (keep ? scale : T(0)); }

struct DropoutParams {
  uint32_t threshold;  // see dropout_keep
  double scale;        // 1 / (1 - p), or 0 when p == 1
  uint64_t seed;
  uint64_t offset;  // first Philox block
};

// in/out hold n contiguous elements of dtype t; mask (n bools) receives the keep flags.
// out = in * (keep ? scale : 0).
using DropoutFn = void (*)(const void* in, void* out, bool* mask, int64_t n, const DropoutParams& p, ScalarType t);
GR_DECLARE_DISPATCH(DropoutFn, dropout_stub);
// grad_in = grad * (mask ? scale : 0), n contiguous elements.
using DropoutBackwardFn = void (*)(const void* grad, const bool* mask, void* grad_in, int64_t n, double scale,
                                   ScalarType t);
GR_DECLARE_DISPATCH(DropoutBackwardFn, dropout_backward_stub);

// The scale a kept element gets for drop probability p.
inline double dropout_scale(double p) { return p >= 1.0 ? 0.0 : 1.0 / (1.0 - p); }
// Returns (output, bool mask) for a float input; draws ceil(numel / 4) Philox blocks from gen
// (null = the default generator).
std::pair<Tensor, Tensor> dropout(const Tensor& input, double p, Generator* gen);
Tensor dropout_backward(const Tensor& grad, const Tensor& mask, double scale);

}  // namespace gr::native
