// Fused in-place optimizer updates over contiguous parameter tensors (one pass per
// parameter instead of a chain of element-wise ops). Hyper-parameters come in the functors.
#pragma once

#include <vector>

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
// The hyper-parameters in the parameter's dtype T, for the kernels (CPU and CUDA).
template <class T>
functors::SgdStep<T> functor_as(const functors::SgdStep<double>& s) {
  return {T(s.lr), T(s.momentum), T(s.dampening), T(s.weight_decay), s.nesterov, s.first_step};
}
template <class T>
functors::AdamStep<T> functor_as(const functors::AdamStep<double>& s) {
  return {T(s.lr), T(s.beta1), T(s.beta2), T(s.eps), T(s.weight_decay), T(s.bias_correction1),
          T(s.bias_correction2_sqrt), s.amsgrad, s.decoupled};
}
template <class T>
functors::AdadeltaStep<T> functor_as(const functors::AdadeltaStep<double>& s) {
  return {T(s.lr), T(s.rho), T(s.eps), T(s.weight_decay)};
}

template <class T>
functors::RmspropStep<T> functor_as(const functors::RmspropStep<double>& s) {
  return {T(s.lr), T(s.alpha), T(s.one_minus_alpha), T(s.eps), T(s.weight_decay), T(s.momentum), s.with_momentum,
          s.centered};
}
template <class T>
functors::AdagradStep<T> functor_as(const functors::AdagradStep<double>& s) {
  return {T(s.lr), T(s.eps), T(s.weight_decay)};
}
template <class T>
functors::AdamaxStep<T> functor_as(const functors::AdamaxStep<double>& s) {
  return {T(s.lr), T(s.one_minus_beta1), T(s.beta2), T(s.eps), T(s.weight_decay)};
}
template <class T>
functors::NadamStep<T> functor_as(const functors::NadamStep<double>& s) {
  return {T(s.one_minus_beta1), T(s.beta2),      T(s.one_minus_beta2), T(s.eps),      T(s.weight_decay),
          T(s.decay),           T(s.bias_correction2), T(s.grad_coef), T(s.avg_coef), s.decoupled};
}
template <class T>
functors::RadamStep<T> functor_as(const functors::RadamStep<double>& s) {
  return {T(s.lr),    T(s.one_minus_beta1),  T(s.beta2),
          T(s.one_minus_beta2), T(s.eps), T(s.weight_decay), T(s.decay), T(s.bias_correction1),
          T(s.bias_correction2_sqrt), T(s.rect), s.decoupled, s.rectified};
}

// A null pointer for an undefined optional buffer; the kernels then pass the functor a
// local dummy instead, which it never uses.
template <class T>
T* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

GR_DECLARE_DISPATCH(SgdStepFn, sgd_step_stub);
GR_DECLARE_DISPATCH(AdamStepFn, adam_step_stub);
GR_DECLARE_DISPATCH(AdadeltaStepFn, adadelta_step_stub);

// Many parameters under one functor (PyTorch's foreach/fused steps): operands[i] = {param,
// grad, then the functor's buffers in its order (undefined where it uses none)}, all on one
// device with one dtype. The CPU runs them one by one through the loops of the single-tensor
// kernels (the same results and speed); CUDA packs many per launch (Note [Multi-tensor
// launches] in cuda_kernels/multi_tensor.cuh).
using StepOperands = std::vector<Tensor>;
using SgdStepsFn = void (*)(const std::vector<StepOperands>& operands, const functors::SgdStep<double>& step);
using AdamStepsFn = void (*)(const std::vector<StepOperands>& operands, const functors::AdamStep<double>& step);
using AdadeltaStepsFn = void (*)(const std::vector<StepOperands>& operands, const functors::AdadeltaStep<double>& step);
GR_DECLARE_DISPATCH(SgdStepsFn, sgd_steps_stub);
GR_DECLARE_DISPATCH(AdamStepsFn, adam_steps_stub);
GR_DECLARE_DISPATCH(AdadeltaStepsFn, adadelta_steps_stub);

// RMSprop, Adagrad, Adamax, NAdam and RAdam come as lists only (their optimizers step through
// StepRuns); the CPU kernels are in adaptive_steps.cpp (Note [Tensor-op rounding of the
// adaptive steps]). Operands per parameter: RMSprop {param, grad, square_avg, momentum_buffer,
// grad_avg} (the last two undefined unless momentum / centered), Adagrad {param, grad, sum},
// Adamax {param, grad, exp_avg, exp_inf}, NAdam and RAdam {param, grad, exp_avg, exp_avg_sq}.
using RmspropStepsFn = void (*)(const std::vector<StepOperands>& operands, const functors::RmspropStep<double>& step);
using AdagradStepsFn = void (*)(const std::vector<StepOperands>& operands, const functors::AdagradStep<double>& step);
using AdamaxStepsFn = void (*)(const std::vector<StepOperands>& operands, const functors::AdamaxStep<double>& step);
using NadamStepsFn = void (*)(const std::vector<StepOperands>& operands, const functors::NadamStep<double>& step);
using RadamStepsFn = void (*)(const std::vector<StepOperands>& operands, const functors::RadamStep<double>& step);
GR_DECLARE_DISPATCH(RmspropStepsFn, rmsprop_steps_stub);
GR_DECLARE_DISPATCH(AdagradStepsFn, adagrad_steps_stub);
GR_DECLARE_DISPATCH(AdamaxStepsFn, adamax_steps_stub);
GR_DECLARE_DISPATCH(NadamStepsFn, nadam_steps_stub);
GR_DECLARE_DISPATCH(RadamStepsFn, radam_steps_stub);

// Checks the operands (naming `op`) and runs the update; buffers may be undefined where
// the functor does not use them (momentum 0, no amsgrad).
void sgd_step(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const functors::SgdStep<double>& s);
void adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
               const Tensor& max_exp_avg_sq, const functors::AdamStep<double>& s);
void adadelta_step(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& acc_delta,
                   const functors::AdadeltaStep<double>& s);
// The same over many parameters, each checked as above (operands as for the stubs); a list
// spread over devices or dtypes runs one parameter at a time.
void sgd_steps(const std::vector<StepOperands>& operands, const functors::SgdStep<double>& s);
void adam_steps(const std::vector<StepOperands>& operands, const functors::AdamStep<double>& s);
void adadelta_steps(const std::vector<StepOperands>& operands, const functors::AdadeltaStep<double>& s);
void rmsprop_steps(const std::vector<StepOperands>& operands, const functors::RmspropStep<double>& s);
void adagrad_steps(const std::vector<StepOperands>& operands, const functors::AdagradStep<double>& s);
void adamax_steps(const std::vector<StepOperands>& operands, const functors::AdamaxStep<double>& s);
void nadam_steps(const std::vector<StepOperands>& operands, const functors::NadamStep<double>& s);
void radam_steps(const std::vector<StepOperands>& operands, const functors::RadamStep<double>& s);

}  // namespace gr::native
