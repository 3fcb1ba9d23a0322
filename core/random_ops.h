// Random ops that are not fills of a new tensor: bernoulli, multinomial and normal with
// tensor or scalar parameters, drawn from an explicit (or the default) Generator as the
// Tensor methods uniform_, normal_, ... are. See Note [Random streams] in native/random.h.
#pragma once

#include "core/generator.h"
#include "core/tensor.h"

namespace gr {

// 1 with probability p[i] (p holds the probabilities, p's dtype and shape), else 0.
Tensor bernoulli(const Tensor& p, Generator* gen = nullptr);
// 1 with probability p in the shape and dtype of `self`.
Tensor bernoulli(const Tensor& self, double p, Generator* gen = nullptr);
// num_samples category indices (int64) per row of `self` (1-D [C] or 2-D [N, C] of
// non-negative weights, not necessarily normalised); without replacement no index repeats
// in a row and num_samples <= the non-zero weights.
Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement = false, Generator* gen = nullptr);
// Normal values with elementwise means and/or standard deviations (the tensors broadcast),
// or of the given size. Not differentiable (torch's are, in mean and std).
Tensor normal(const Tensor& mean, double std = 1, Generator* gen = nullptr);
Tensor normal(double mean, const Tensor& std, Generator* gen = nullptr);
Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen = nullptr);
Tensor normal(double mean, double std, IntArrayRef size, Generator* gen = nullptr, TensorOptions options = {});

}  // namespace gr
