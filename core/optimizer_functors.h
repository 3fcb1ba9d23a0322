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

// Note [Tensor-op rounding of the adaptive steps]
// RMSprop, Adagrad, Adamax, NAdam and RAdam were chains of tensor ops, one rounding per op, and
// their functors keep those bits on the CPU: each product an op rounded is rounded here too
// (their CPU loops compile with -ffp-contract=off, core/native/optim/adaptive_steps.cpp), and
// where an op's own kernel fused a multiply-add (Add's a + alpha*b, lerp; GCC contracts them
// where the CPU has FMA) the functor spells it out as op_fma. nvcc contracts as it likes: CUDA
// agrees to rounding.
template <class T>
GR_HOST_DEVICE GR_INLINE T op_fma(T a, T b, T c) {
#if !defined(__CUDA_ARCH__) && (defined(__FP_FAST_FMA) || defined(__FP_FAST_FMAF))
  return math::fma(a, b, c);
#else
  return a * b + c;
#endif
}
// The elementwise kernels' lerp (functors_math.h's) with their contraction.
template <class T>
GR_HOST_DEVICE GR_INLINE T op_lerp(T a, T b, T w) {
  return math::fabs(w) < T(0.5) ? op_fma(w, b - a, a) : op_fma(-(b - a), T(1) - w, b);
}
// grad + p*wd, as grad_with_weight_decay (nn/optim/optimizer.h) rounds it.
template <class T>
GR_HOST_DEVICE GR_INLINE T with_weight_decay(T g, T p, T weight_decay) {
  return weight_decay != T(0) ? g + p * weight_decay : g;
}

// RMSprop: sq = alpha*sq + (1-alpha)*g^2; avg = sqrt(sq - grad_avg^2 if centered) + eps;
// buf = momentum*buf + g/avg and p -= lr*buf with momentum, else p -= lr*g/avg.
// Buffers absent when unused: momentum_buffer without momentum, grad_avg unless centered.
template <class T>
struct RmspropStep {
  T lr, alpha, one_minus_alpha, eps, weight_decay, momentum;
  bool with_momentum, centered;
  GR_HOST_DEVICE void operator()(T& p, T g, T& square_avg, T& momentum_buffer, T& grad_avg) const {
    g = with_weight_decay(g, p, weight_decay);
    square_avg = op_fma(one_minus_alpha, g * g, square_avg * alpha);
    const T ga = op_lerp(grad_avg, g, one_minus_alpha);
    grad_avg = centered ? ga : grad_avg;
    const T avg = math::sqrt(centered ? square_avg - ga * ga : square_avg) + eps;
    const T q = g / avg;
    const T buf = momentum_buffer * momentum + q;
    momentum_buffer = with_momentum ? buf : momentum_buffer;
    p = op_fma(-lr, with_momentum ? buf : q, p);
  }
  bool operator==(const RmspropStep&) const = default;
};

// Adagrad: sum += g^2; p -= clr * g / (sqrt(sum) + eps), clr = lr / (1 + (step-1)*lr_decay)
// (computed on the host from the host's step count, in `lr`).
template <class T>
struct AdagradStep {
  T lr, eps, weight_decay;
  GR_HOST_DEVICE void operator()(T& p, T g, T& sum) const {
    g = with_weight_decay(g, p, weight_decay);
    sum = sum + g * g;
    p = op_fma(-lr, g / (math::sqrt(sum) + eps), p);
  }
  bool operator==(const AdagradStep&) const = default;
};

// Adamax: exp_avg = lerp(exp_avg, g, 1-beta1); exp_inf = max(beta2*exp_inf, |g| + eps);
// p -= clr * exp_avg / exp_inf, clr = lr / (1 - beta1^step) (in `lr`).
template <class T>
struct AdamaxStep {
  T lr, one_minus_beta1, beta2, eps, weight_decay;
  GR_HOST_DEVICE void operator()(T& p, T g, T& exp_avg, T& exp_inf) const {
    g = with_weight_decay(g, p, weight_decay);
    exp_avg = op_lerp(exp_avg, g, one_minus_beta1);
    exp_inf = Maximum<T>{}(exp_inf * beta2, math::abs(g) + eps);
    p = op_fma(-lr, exp_avg / exp_inf, p);
  }
  bool operator==(const AdamaxStep&) const = default;
};

// NAdam: decoupled: p *= 1 - lr*wd (`decay`), else g += wd*p; Adam's moments; then
// p += grad_coef * g/denom + avg_coef * exp_avg/denom, denom = sqrt(exp_avg_sq/bc2) + eps.
// The momentum schedule (mu, mu_product) lives on the host: grad_coef = -lr(1-mu)/(1-mu_product),
// avg_coef = -lr*mu_next/(1-mu_product*mu_next).
template <class T>
struct NadamStep {
  T one_minus_beta1, beta2, one_minus_beta2, eps, weight_decay, decay, bias_correction2, grad_coef, avg_coef;
  bool decoupled;
  GR_HOST_DEVICE void operator()(T& p, T g, T& exp_avg, T& exp_avg_sq) const {
    p = decoupled ? p * decay : p;
    g = decoupled ? g : with_weight_decay(g, p, weight_decay);
    exp_avg = op_lerp(exp_avg, g, one_minus_beta1);
    exp_avg_sq = op_fma(one_minus_beta2, g * g, exp_avg_sq * beta2);
    const T denom = math::sqrt(exp_avg_sq / bias_correction2) + eps;
    p = op_fma(grad_coef, g / denom, p);
    p = op_fma(avg_coef, exp_avg / denom, p);
  }
  bool operator==(const NadamStep&) const = default;
};

// RAdam: NAdam's weight decay and Adam's moments; p -= lr * exp_avg/bc1, times
// rect * sqrt(bc2) / (sqrt(exp_avg_sq) + eps) once the variance is tractable (`rectified`,
// rho_t > 5: decided on the host from the step count).
template <class T>
struct RadamStep {
  T lr, one_minus_beta1, beta2, one_minus_beta2, eps, weight_decay, decay, bias_correction1, bias_correction2_sqrt,
      rect;
  bool decoupled, rectified;
  GR_HOST_DEVICE void operator()(T& p, T g, T& exp_avg, T& exp_avg_sq) const {
    p = decoupled ? p * decay : p;
    g = decoupled ? g : with_weight_decay(g, p, weight_decay);
    exp_avg = op_lerp(exp_avg, g, one_minus_beta1);
    exp_avg_sq = op_fma(one_minus_beta2, g * g, exp_avg_sq * beta2);
    const T step = exp_avg / bias_correction1 * lr;
    const T adaptive = T(1) / (math::sqrt(exp_avg_sq) + eps) * bias_correction2_sqrt;
    p = p - (rectified ? step * adaptive * rect : step);
  }
  bool operator==(const RadamStep&) const = default;
};

// clip_grad_norm_: the gradients are multiplied by max_norm / (total_norm + 1e-6) when that is
// below one (or NaN, which then spreads as in torch). The CPU reads the total; CUDA computes
// this in the kernel from the total in device memory (no host synchronisation).
GR_HOST_DEVICE GR_INLINE double clip_coefficient(double total_norm, double max_norm) {
  return max_norm / (total_norm + 1e-6);
}
GR_HOST_DEVICE GR_INLINE bool clip_applies(double coef) { return coef < 1.0 || coef != coef; }

}  // namespace gr::functors
