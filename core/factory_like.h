// The *_like factories with options (libtorch's: the options name what differs from the
// model tensor's dtype and device), logspace, and the Tensor::new_* methods' helpers.
#pragma once

#include "core/generator.h"
#include "core/tensor.h"

namespace gr {

// A tensor of t's shape; dtype and device are t's unless options name others.
Tensor ones_like(const Tensor& t, TensorOptions options);
Tensor full_like(const Tensor& t, const Scalar& value, TensorOptions options);
Tensor rand_like(const Tensor& t, TensorOptions options, Generator* gen = nullptr);
Tensor randn_like(const Tensor& t, TensorOptions options, Generator* gen = nullptr);
// Integers in [0, high) or [low, high), as randint.
Tensor randint_like(const Tensor& t, int64_t high, TensorOptions options = {}, Generator* gen = nullptr);
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, TensorOptions options = {}, Generator* gen = nullptr);

// base^x for `steps` values x from start to end (float32 unless options say otherwise).
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base = 10.0, TensorOptions options = {});

}  // namespace gr
