// Operations over lists of tensors (PyTorch's _foreach_* ops): the total norm, the scaling and
// the zeroing that clip_grad_norm_ and zero_grad apply to a model's gradients, in a few passes
// (Note [Multi-tensor launches] in cuda_kernels/multi_tensor.cuh) instead of one per tensor.
#pragma once

#include <vector>

#include "core/dispatch.h"
#include "core/tensor.h"

namespace gr::native {

// Note [Foreach lists]
// A list whose tensors are contiguous, on one device and of one dtype (float32 or float64) goes to the
// device's kernel in one call: on CUDA a handful of multi-tensor launches and no host
// synchronisation (the total norm stays on the device and the scaling reads it there); on the
// CPU each tensor in turn through the single-tensor kernels, so the CPU's results and speed are
// what they were. Any other list is handled tensor by tensor with those kernels.

// The p-norm of the tensors' norms: each tensor's vector_norm in its dtype, then the p-norm
// of those in float64 (clip_grad_norm_'s arithmetic). Written to `out`, a 0-d float64 tensor
// on their device.
using ForeachNormFn = void (*)(const std::vector<Tensor>& tensors, double p, const Tensor& out);
GR_DECLARE_DISPATCH(ForeachNormFn, foreach_norm_stub);
// Scales every tensor by clip_coefficient(total_norm, max_norm) where clip_applies
// (core/optimizer_functors.h); total_norm: 0-d float64 on their device.
using ForeachClipFn = void (*)(const std::vector<Tensor>& tensors, const Tensor& total_norm, double max_norm);
GR_DECLARE_DISPATCH(ForeachClipFn, foreach_clip_stub);
// Sets every tensor to zero.
using ForeachZeroFn = void (*)(const std::vector<Tensor>& tensors);
GR_DECLARE_DISPATCH(ForeachZeroFn, foreach_zero_stub);

// Whether a list goes to the device's kernel in one call (Note [Foreach lists]).
bool foreach_uniform(const std::vector<Tensor>& tensors);

// The front ends: check, then one call for a uniform list, else tensor by tensor. A list may
// be empty (foreach_norm then gives 0 on the CPU).
Tensor foreach_norm(const std::vector<Tensor>& tensors, double p);
void foreach_clip_(const std::vector<Tensor>& tensors, const Tensor& total_norm, double max_norm);
void foreach_zero_(const std::vector<Tensor>& tensors);

}  // namespace gr::native
