// The losses composed from differentiable gr:: ops (so gradients of gradients come for free),
// with ATen's signatures (the reduction as gr::Reduction); gr::nn::functional's take libtorch's
// option structs and call these. The formulas are PyTorch's (aten/src/ATen/native/Loss*.cpp),
// including its stable forms (BCE-with-logits through log1p(exp(-|x|))) and clamps (BCE's
// log >= -100).
#include <cmath>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "core/factory.h"

namespace gr {
namespace {

// Note [Loss gradients at the edges]
// Composing the losses from gr:: ops makes their values equal torch's, and their gradients
// too except at two edges, where ours are finite and torch's are not useful:
// - binary_cross_entropy at input 0 or 1: torch's kernel divides by max(x (1 - x), 1e-12)
//   (gradients of 1e12); the clamp on the log's argument gives 0 there instead.
// - kl_div's gradient with respect to a target element equal to 0: torch's xlogy gives NaN;
//   t * log(where(t > 0, t, 1)) gives the limit, -input.

Tensor reduce(const Tensor& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return loss;
    case Reduction::Sum: return loss.sum();
    case Reduction::Mean: break;
  }
  return loss.mean();
}

void check_defined(const char* op, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) GR_CHECK(t->defined(), op, ": every input and the target must be defined");
}

// Element-wise losses: one shape, one floating dtype (torch broadcasts with a warning; a
// mismatch here is almost always a bug, e.g. [N, 1] against [N], so it is refused).
void check_pointwise(const char* op, const Tensor& input, const Tensor& target) {
  check_defined(op, {&input, &target});
  GR_CHECK(input.sizes() == target.sizes(), op, ": input of shape ", input.sizes(), " and target of shape ",
           target.sizes(), " must have the same shape");
  GR_CHECK(input.is_floating_point() && input.scalar_type() == target.scalar_type(), op,
           ": expected input and target of one floating point dtype, got ", input.scalar_type(), " and ",
           target.scalar_type());
}

// t * log(t) with 0 at t = 0 (torch's xlogy(t, t)); the where keeps the gradient finite there.
Tensor xlogx(const Tensor& t) { return t * where(t > 0, t, 1.0).log(); }

// -log(sigmoid(x)): log1p(exp(-x)) for x >= 0 and -x + log1p(exp(x)) below, so exp never
// overflows; each branch sees its own side's x only (0 elsewhere), so neither has a kink at
// 0 nor an inf times a zero gradient in the branch not taken.
Tensor neg_log_sigmoid(const Tensor& x) {
  Tensor nonneg = x >= 0;
  Tensor pos = where(nonneg, x, 0.0), neg = where(nonneg, 0.0, x);
  return where(nonneg, pos.neg().exp().log1p(), neg.exp().log1p() - neg);
}

// torch's pairwise_distance: the p-norm of x1 - x2 + eps over the last dim.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps) {
  return linalg::vector_norm(x1 - x2 + eps, p, {-1});
}

}  // namespace

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  GR_AUTOCAST(l1_loss, input, target, reduction);
  check_pointwise("l1_loss", input, target);
  return reduce((input - target).abs(), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  GR_AUTOCAST(smooth_l1_loss, input, target, reduction, beta);
  check_pointwise("smooth_l1_loss", input, target);
  GR_CHECK(beta >= 0, "smooth_l1_loss: beta must be non-negative, got ", beta);
  Tensor z = (input - target).abs();
  if (beta == 0) return reduce(z, reduction);
  return reduce(where(z < beta, z.square() * (0.5 / beta), z - 0.5 * beta), reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  GR_AUTOCAST(huber_loss, input, target, reduction, delta);
  check_pointwise("huber_loss", input, target);
  GR_CHECK(delta > 0, "huber_loss: delta must be positive, got ", delta);
  Tensor z = (input - target).abs();
  return reduce(where(z < delta, z.square() * 0.5, (z - 0.5 * delta) * delta), reduction);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction) {
  GR_AUTOCAST(binary_cross_entropy, input, target, weight, reduction);
  check_pointwise("binary_cross_entropy", input, target);
  if (input.device().is_cpu())  // torch checks on the GPU with a device assert; a sync here would cost a step
    GR_CHECK(((input >= 0) & (input <= 1)).all().item<bool>(),
             "binary_cross_entropy: all elements of input should be between 0 and 1");
  // torch clamps each log at -100 so that a confident wrong prediction gives 100, not inf;
  // clamping the argument instead gives the same values and finite gradients (0 at the
  // clamp). See Note [Loss gradients at the edges].
  const double tiny = std::exp(-100.0);
  Tensor loss = -(target * input.clamp_min(tiny).log() + (1 - target) * (1 - input).clamp_min(tiny).log());
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction reduction) {
  GR_AUTOCAST(binary_cross_entropy_with_logits, input, target, weight, pos_weight, reduction);
  check_pointwise("binary_cross_entropy_with_logits", input, target);
  Tensor softplus_neg = neg_log_sigmoid(input);
  Tensor loss;
  if (pos_weight.defined()) {
    Tensor log_weight = (pos_weight - 1) * target + 1;
    loss = (1 - target) * input + log_weight * softplus_neg;
  } else {
    loss = (1 - target) * input + softplus_neg;
  }
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}

Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction, bool log_target) {
  GR_AUTOCAST(kl_div, input, target, reduction, log_target);
  check_pointwise("kl_div", input, target);
  Tensor loss = log_target ? target.exp() * (target - input) : xlogx(target) - target * input;
  return reduce(loss, reduction);
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             Reduction reduction) {
  GR_AUTOCAST(cosine_embedding_loss, input1, input2, target, margin, reduction);
  check_defined("cosine_embedding_loss", {&input1, &input2, &target});
  GR_CHECK(input1.sizes() == input2.sizes() && (input1.dim() == 1 || input1.dim() == 2),
           "cosine_embedding_loss: expected input1 and input2 of one shape [N, D] or [D], got ", input1.sizes(),
           " and ", input2.sizes());
  GR_CHECK(target.dim() == input1.dim() - 1 && (target.dim() == 0 || target.size(0) == input1.size(0)),
           "cosine_embedding_loss: expected target of shape ", input1.dim() == 2 ? "[N]" : "[] (0-d)",
           " for inputs of shape ", input1.sizes(), ", got ", target.sizes());
  GR_CHECK(input1.is_floating_point() && input2.scalar_type() == input1.scalar_type(),
           "cosine_embedding_loss: expected inputs of one floating point dtype, got ", input1.scalar_type(), " and ",
           input2.scalar_type());
  constexpr double kEps = 1e-12;  // torch's EPSILON
  const int64_t d = input1.dim() - 1;
  Tensor prod = (input1 * input2).sum({d});
  Tensor mag1 = (input1 * input1).sum({d}) + kEps;
  Tensor mag2 = (input2 * input2).sum({d}) + kEps;
  Tensor cos = prod / (mag1 * mag2).sqrt();
  Tensor t = target.to(input1.scalar_type());
  Tensor zeros = zeros_like(cos);
  Tensor pos = where(t == 1, 1 - cos, zeros);
  Tensor neg = where(t == -1, (cos - margin).clamp_min(0), zeros);
  return reduce(pos + neg, reduction);
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           Reduction reduction) {
  GR_AUTOCAST(margin_ranking_loss, input1, input2, target, margin, reduction);
  check_defined("margin_ranking_loss", {&input1, &input2, &target});
  GR_CHECK(input1.sizes() == input2.sizes() && input1.sizes() == target.sizes(),
           "margin_ranking_loss: expected input1, input2 and target of one shape, got ", input1.sizes(), ", ",
           input2.sizes(), " and ", target.sizes());
  GR_CHECK(input1.is_floating_point() && input2.scalar_type() == input1.scalar_type(),
           "margin_ranking_loss: expected inputs of one floating point dtype, got ", input1.scalar_type(), " and ",
           input2.scalar_type());
  Tensor t = target.to(input1.scalar_type());
  return reduce((t.neg() * (input1 - input2) + margin).clamp_min(0), reduction);
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                           double p, double eps, bool swap, Reduction reduction) {
  GR_AUTOCAST(triplet_margin_loss, anchor, positive, negative, margin, p, eps, swap, reduction);
  check_defined("triplet_margin_loss", {&anchor, &positive, &negative});
  GR_CHECK(anchor.sizes() == positive.sizes() && anchor.sizes() == negative.sizes() &&
               (anchor.dim() == 1 || anchor.dim() == 2),
           "triplet_margin_loss: expected anchor, positive and negative of one shape [N, D] or [D], got ",
           anchor.sizes(), ", ", positive.sizes(), " and ", negative.sizes());
  GR_CHECK(anchor.is_floating_point() && positive.scalar_type() == anchor.scalar_type() &&
               negative.scalar_type() == anchor.scalar_type(),
           "triplet_margin_loss: expected inputs of one floating point dtype, got ", anchor.scalar_type(), ", ",
           positive.scalar_type(), " and ", negative.scalar_type());
  Tensor d_pos = pairwise_distance(anchor, positive, p, eps);
  Tensor d_neg = pairwise_distance(anchor, negative, p, eps);
  if (swap) d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps));
  return reduce((d_pos - d_neg + margin).clamp_min(0), reduction);
}

}  // namespace gr
