// Fused in-place optimizer updates over contiguous parameter tensors (one pass per
// parameter instead of a chain of element-wise ops). Hyper-parameters come in the functors.
#pragma once

#include "core/dispatch.h"
#include "core/optimizer_functors.h"
#include "core/tensor.h"

namespace gr::native {

// Every tensor must be contiguous, on one device, with the same dtype and numel as param.
using SgdStepFn = void (*)(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer,
                           const functors::SgdStep<double>& step);
using AdamStepFn = void (*)(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                            const Tensor& max_exp_avg_sq, const functors::AdamStep<double>& step);
using AdadeltaStepFn = void (*)(const Tensor& param, const Tensor& grad, const Tensor& square_avg,
                                const Tensor& acc_delta, const functors::AdadeltaStep<double>& step);
GR_DECLARE_DISPATCH(SgdStepFn, sgd_step_stub);
GR_DECLARE_DISPATCH(AdamStepFn, adam_step_stub);
GR_DECLARE_DISPATCH(AdadeltaStepFn, adadelta_step_stub);

// Checks the operands (naming `op`) and runs the update; buffers may be undefined where
// the functor does not use them (momentum 0, no amsgrad).
void sgd_step(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const functors::SgdStep<double>& s);
void adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
               const Tensor& max_exp_avg_sq, const functors::AdamStep<double>& s);
void adadelta_step(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& acc_delta,
                   const functors::AdadeltaStep<double>& s);

}  // namespace gr::native
