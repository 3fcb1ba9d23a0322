// Per-element optimizer updates as GR_HOST_DEVICE functors (CPU loops and CUDA kernels
// share them). Each follows the exact op order of PyTorch's single-tensor implementation,
// so float64 results match torch to rounding.
#pragma once

#include "core/functors.h"

namespace gr::functors {

// SGD: d = g + wd*p; buf = first ? d : momentum*buf + (1-dampening)*d;
// d = nesterov ? d + momentum*buf : buf (when momentum != 0); p -= lr*d.
template <class T>
struct SgdStep {
  T lr, momentum, dampening, weight_decay;
  bool nesterov, first_step;
  // Selects rather than branches, and every operand stored unconditionally: a loop of this
  // vectorises (see Note [Optimizer loops with absent buffers]).
  GR_HOST_DEVICE void operator()(T& p, T g, T& buf) const {
    T d = weight_decay != T(0) ? g + p * weight_decay : g;
    const T b = first_step ? d : buf * momentum + d * (T(1) - dampening);
    buf = momentum != T(0) ? b : buf;
    d = momentum == T(0) ? d : nesterov ? d + b * momentum : b;
    p = p + d * (-lr);
  }
  bool operator==(const SgdStep&) const = default;  // one multi-tensor step per run of equal ones
};

// Adam/AdamW. decoupled: p *= 1 - lr*wd first (AdamW); otherwise g += wd*p (Adam).
template <class T>
struct AdamStep {
  T lr, beta1, beta2, eps, weight_decay;
  T bias_correction1, bias_correction2_sqrt;
  bool amsgrad, decoupled;
  GR_HOST_DEVICE void operator()(T& p, T g, T& exp_avg, T& exp_avg_sq, T& max_exp_avg_sq) const {
    if (decoupled) p = p * (T(1) - lr * weight_decay);
    else if (weight_decay != T(0)) g = g + p * weight_decay;
    exp_avg = exp_avg * beta1 + g * (T(1) - beta1);
    exp_avg_sq = exp_avg_sq * beta2 + (T(1) - beta2) * g * g;  // addcmul order
    const T larger = max_exp_avg_sq > exp_avg_sq ? max_exp_avg_sq : exp_avg_sq;
    max_exp_avg_sq = amsgrad ? larger : max_exp_avg_sq;  // stored either way: the loop vectorises
    const T second = amsgrad ? larger : exp_avg_sq;
    T denom = math::sqrt(second) / bias_correction2_sqrt + eps;
    T step_size = lr / bias_correction1;
    p = p + (exp_avg / denom) * (-step_size);
  }
  bool operator==(const AdamStep&) const = default;
};

// Adadelta: sq = rho*sq + (1-rho)*g^2; delta = sqrt(acc+eps)/sqrt(sq+eps)*g;
// acc = rho*acc + (1-rho)*delta^2; p -= lr*delta.
template <class T>
struct AdadeltaStep {
  T lr, rho, eps, weight_decay;
  GR_HOST_DEVICE void operator()(T& p, T g, T& square_avg, T& acc_delta) const {
    if (weight_decay != T(0)) g = g + p * weight_decay;
    square_avg = square_avg * rho + (T(1) - rho) * g * g;
    T std = math::sqrt(square_avg + eps);
    T delta = math::sqrt(acc_delta + eps) / std * g;
    acc_delta = acc_delta * rho + (T(1) - rho) * delta * delta;
    p = p + delta * (-lr);
  }
  bool operator==(const AdadeltaStep&) const = default;
};

// clip_grad_norm_: the gradients are multiplied by max_norm / (total_norm + 1e-6) when that is
// below one (or NaN, which then spreads as in torch). The CPU reads the total; CUDA computes
// this in the kernel from the total in device memory (no host synchronisation).
GR_HOST_DEVICE GR_INLINE double clip_coefficient(double total_norm, double max_norm) {
  return max_norm / (total_norm + 1e-6);
}
GR_HOST_DEVICE GR_INLINE bool clip_applies(double coef) { return coef < 1.0 || coef != coef; }

}  // namespace gr::functors
