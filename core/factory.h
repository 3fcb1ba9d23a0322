// Tensor creation, as in libtorch: empty/zeros/ones/full/arange/from_blob and *_like, plus
// random tensors from an explicit (or the default) Generator. The literals (tensor({...}),
// core/tensor_literal.h), the other *_like (factory_like.h) and the random ops (bernoulli,
// normal, multinomial: random_ops.h) have their own headers, which the kernels don't need.
#pragma once

#include <functional>
#include <initializer_list>
#include <vector>

#include "core/generator.h"
#include "core/tensor.h"

namespace gr {

Tensor empty(IntArrayRef sizes, TensorOptions options = {});
Tensor zeros(IntArrayRef sizes, TensorOptions options = {});
Tensor ones(IntArrayRef sizes, TensorOptions options = {});
Tensor full(IntArrayRef sizes, const Scalar& value, TensorOptions options = {});
Tensor empty_like(const Tensor& t);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, const Scalar& value);
Tensor empty_like(const Tensor& t, TensorOptions options);
Tensor zeros_like(const Tensor& t, TensorOptions options);

// [start, end) in steps of `step`; int64 unless a bound is fractional or options say otherwise.
Tensor arange(const Scalar& end, TensorOptions options);
Tensor arange(const Scalar& end);
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1);
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions options);
Tensor arange(const Scalar& start, const Scalar& end, TensorOptions options);
Tensor linspace(double start, double end, int64_t steps, TensorOptions options = {});
Tensor eye(int64_t n, TensorOptions options = {});

// Wraps memory the caller owns (no copy); `deleter`, if given, runs when the tensor dies.
Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {});

// gr::tensor(values, options) for literals and vectors is in core/tensor_literal.h.
// A 0-d tensor holding one value.
Tensor scalar_tensor(const Scalar& value, TensorOptions options = {});

// Random tensors: standard normal, uniform in [0, 1), integers in [low, high).
Tensor randn(IntArrayRef sizes, TensorOptions options = {}, Generator* gen = nullptr);
Tensor randn(IntArrayRef sizes, Generator* gen, TensorOptions options = {});
Tensor rand(IntArrayRef sizes, TensorOptions options = {}, Generator* gen = nullptr);
Tensor rand(IntArrayRef sizes, Generator* gen, TensorOptions options = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, TensorOptions options = kInt64, Generator* gen = nullptr);
Tensor randint(int64_t high, IntArrayRef sizes, TensorOptions options = kInt64, Generator* gen = nullptr);
Tensor randn_like(const Tensor& t, Generator* gen = nullptr);
Tensor rand_like(const Tensor& t, Generator* gen = nullptr);
// A random permutation of 0..n-1 (int64).
Tensor randperm(int64_t n, Generator* gen = nullptr);

}  // namespace gr
