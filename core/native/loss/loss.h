// Negative log-likelihood loss without autograd: forward (per-sample or reduced, with
// class weights and an ignored class) and backward. Inputs are [N, C] or [C].
#pragma once

#include <utility>

#include "core/dispatch.h"
#include "core/macros.h"
#include "core/reduction.h"
#include "core/tensor.h"

namespace gr::native {

// The arithmetic of the nll kernels, shared by CPU and CUDA. A sample whose target t is not
// ignored contributes nll_term(x[i, t], w[t]) to the loss and w[t] to total_weight.
template <class T>
GR_HOST_DEVICE GR_INLINE T nll_term(T x_at_target, T w) { return -w * x_at_target; }
// The reduced loss from the accumulated loss and weight (Mean with everything ignored: 0/0 =
// NaN, as torch).
template <class Acc>
GR_HOST_DEVICE GR_INLINE Acc nll_reduce(Acc total, Acc total_w, Reduction reduction) {
  return reduction == Reduction::Mean ? total / total_w : total;
}
// d loss / d x[i, t] of a sample that is not ignored.
template <class T>
GR_HOST_DEVICE GR_INLINE T nll_grad(const T* grad_out, int64_t i, T w, const T* total_weight, Reduction reduction) {
  T g = reduction == Reduction::None ? grad_out[i] : grad_out[0];
  if (reduction == Reduction::Mean) g /= *total_weight;
  return -w * g;
}

// input [N, C] contiguous (N = 1 for a [C] input), target [N] int64, weight [C] or null.
// out holds N values for None, else one; total_weight (one value) = sum of the weights of
// the targets that are not ignore_index. A target outside [0, C) is an error (on CUDA, which
// cannot raise one without waiting for the device, that sample's loss and gradient are NaN).
using NllLossFn = void (*)(const void* input, const int64_t* target, const void* weight, void* out,
                           void* total_weight, int64_t N, int64_t C, Reduction reduction, int64_t ignore_index,
                           ScalarType t);
GR_DECLARE_DISPATCH(NllLossFn, nll_loss_stub);
// grad_in [N, C] (overwritten): -weight[t_i] * grad, divided by total_weight for Mean;
// grad_out holds N values for None, else one.
using NllLossBackwardFn = void (*)(const void* grad_out, const int64_t* target, const void* weight,
                                   const void* total_weight, void* grad_in, int64_t N, int64_t C,
                                   Reduction reduction, int64_t ignore_index, ScalarType t);
GR_DECLARE_DISPATCH(NllLossBackwardFn, nll_loss_backward_stub);

// Returns (loss, total_weight); loss is [N] for None with a 2-D input, else 0-d.
std::pair<Tensor, Tensor> nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                   Reduction reduction, int64_t ignore_index);
Tensor nll_loss_backward(const Tensor& grad_out, IntArrayRef input_sizes, const Tensor& target, const Tensor& weight,
                         Reduction reduction, int64_t ignore_index, const Tensor& total_weight);

}  // namespace gr::native
