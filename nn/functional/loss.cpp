// The loss functionals, composed from differentiable gr:: ops (so gradients of gradients
// come for free); the formulas are PyTorch's (aten/src/ATen/native/Loss*.cpp), including its
// stable forms (BCE-with-logits through log1p(exp(-|x|))) and clamps (BCE's log >= -100).
#include "nn/functional/loss.h"

#include <cmath>

#include "autograd/autocast.h"
#include "core/factory.h"

namespace gr::nn::functional {
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

// A [C] class weight shaped to broadcast along dim `class_dim` of a `dim`-d input.
Tensor class_weight_view(const char* op, const Tensor& weight, int64_t C, int64_t class_dim, int64_t dim) {
  GR_CHECK(weight.dim() == 1 && weight.size(0) == C, op, ": expected weight of shape [", C, "], got ",
           weight.sizes());
  std::vector<int64_t> shape(static_cast<size_t>(dim), 1);
  shape[static_cast<size_t>(class_dim)] = C;
  return weight.reshape(shape);
}

// t * log(t) with 0 at t = 0 (torch's xlogy(t, t)); the where keeps the gradient finite there.
Tensor xlogx(const Tensor& t) { return t * gr::where(t > 0, t, 1.0).log(); }

// -log(sigmoid(x)): log1p(exp(-x)) for x >= 0 and -x + log1p(exp(x)) below, so exp never
// overflows; each branch sees its own side's x only (0 elsewhere), so neither has a kink at
// 0 nor an inf times a zero gradient in the branch not taken.
Tensor neg_log_sigmoid(const Tensor& x) {
  Tensor nonneg = x >= 0;
  Tensor pos = gr::where(nonneg, x, 0.0), neg = gr::where(nonneg, 0.0, x);
  return gr::where(nonneg, pos.neg().exp().log1p(), neg.exp().log1p() - neg);
}

}  // namespace

Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options) {
  GR_AUTOCAST(l1_loss, input, target, options);
  check_pointwise("l1_loss", input, target);
  return reduce((input - target).abs(), options.reduction());
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options) {
  return gr::mse_loss(input, target, options.reduction());
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options) {
  GR_AUTOCAST(smooth_l1_loss, input, target, options);
  check_pointwise("smooth_l1_loss", input, target);
  const double beta = options.beta();
  GR_CHECK(beta >= 0, "smooth_l1_loss: beta must be non-negative, got ", beta);
  Tensor z = (input - target).abs();
  if (beta == 0) return reduce(z, options.reduction());
  return reduce(gr::where(z < beta, z.square() * (0.5 / beta), z - 0.5 * beta), options.reduction());
}

Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options) {
  GR_AUTOCAST(huber_loss, input, target, options);
  check_pointwise("huber_loss", input, target);
  const double delta = options.delta();
  GR_CHECK(delta > 0, "huber_loss: delta must be positive, got ", delta);
  Tensor z = (input - target).abs();
  return reduce(gr::where(z < delta, z.square() * 0.5, (z - 0.5 * delta) * delta), options.reduction());
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options) {
  GR_AUTOCAST(nll_loss, input, target, options);
  check_defined("nll_loss", {&input, &target});
  if (input.dim() <= 2)
    return gr::nll_loss(input, target, options.weight(), options.reduction(), options.ignore_index());
  // [N, C, d1, ...]: one row of C per element, then the kernel's [N, C] case.
  const int64_t C = input.size(1);
  std::vector<int64_t> expected{input.size(0)};
  for (int64_t d = 2; d < input.dim(); ++d) expected.push_back(input.size(d));
  GR_CHECK(target.sizes() == IntArrayRef(expected), "nll_loss: expected target of shape ", IntArrayRef(expected),
           " for input of shape ", input.sizes(), ", got ", target.sizes());
  Tensor out = gr::nll_loss(input.movedim(1, -1).reshape({-1, C}), target.reshape({-1}), options.weight(),
                            options.reduction(), options.ignore_index());
  return options.reduction() == Reduction::None ? out.reshape(expected) : out;
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options) {
  GR_AUTOCAST(cross_entropy, input, target, options);
  check_defined("cross_entropy", {&input, &target});
  GR_CHECK(input.dim() >= 1 && input.is_floating_point(),
           "cross_entropy: expected a floating point input of shape [N, C, ...] or [C], got ", input.sizes(), " ",
           input.scalar_type());
  const double ls = options.label_smoothing();
  GR_CHECK(ls >= 0 && ls <= 1, "cross_entropy: label_smoothing must be between 0.0 and 1.0, got ", ls);
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t C = input.size(class_dim);
  const Tensor& weight = options.weight();
  Tensor w = weight.defined() ? class_weight_view("cross_entropy", weight, C, class_dim, input.dim()) : Tensor();
  Tensor logp = gr::log_softmax(input, class_dim);

  if (target.is_floating_point()) {  // class probabilities
    GR_CHECK(target.sizes() == input.sizes() && target.scalar_type() == input.scalar_type(),
             "cross_entropy: a target of class probabilities must have the input's shape and dtype: input ",
             input.sizes(), " ", input.scalar_type(), ", target ", target.sizes(), " ", target.scalar_type());
    Tensor p = ls > 0 ? target * (1 - ls) + ls / static_cast<double>(C) : target;
    Tensor terms = w.defined() ? logp * p * w : logp * p;
    switch (options.reduction()) {
      case Reduction::None: return -terms.sum({class_dim});
      case Reduction::Sum: return -terms.sum();
      case Reduction::Mean: break;
    }
    return -terms.sum() / static_cast<double>(input.numel() / C);
  }

  GR_CHECK(target.scalar_type() == kInt64,
           "cross_entropy: expected a target of int64 class indices or of floating point class probabilities, got ",
           target.scalar_type());
  Tensor nll = nll_loss(logp, target, NLLLossOptions(options.reduction()).weight(weight).ignore_index(options.ignore_index()));
  if (ls == 0) return nll;
  // Label smoothing: (1 - ls) * nll + ls / C * (the loss against the uniform distribution),
  // whose mean is over the elements not ignored (weighted by their class weight, as nll's).
  Tensor ignored = target == options.ignore_index();
  Tensor smooth = -(w.defined() ? logp * w : logp).sum({class_dim});
  smooth = smooth.masked_fill(ignored, 0.0);
  Tensor ret;
  switch (options.reduction()) {
    case Reduction::None: ret = smooth; break;
    case Reduction::Sum: ret = smooth.sum(); break;
    case Reduction::Mean:
      ret = weight.defined() ? smooth.sum() / weight.index_select(0, target.masked_select(ignored.logical_not())).sum()
                             : smooth.sum() / ignored.logical_not().sum().to(input.scalar_type());
      break;
  }
  return nll * (1 - ls) + ret * (ls / static_cast<double>(C));
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const BinaryCrossEntropyFuncOptions& options) {
  GR_AUTOCAST(binary_cross_entropy, input, target, options);
  check_pointwise("binary_cross_entropy", input, target);
  if (input.device().is_cpu())  // torch checks on the GPU with a device assert; a sync here would cost a step
    GR_CHECK(((input >= 0) & (input <= 1)).all().item<bool>(),
             "binary_cross_entropy: all elements of input should be between 0 and 1");
  // torch clamps each log at -100 so that a confident wrong prediction gives 100, not inf;
  // clamping the argument instead gives the same values and finite gradients (0 at the
  // clamp). See Note [Loss gradients at the edges].
  const double tiny = std::exp(-100.0);
  Tensor loss = -(target * input.clamp_min(tiny).log() + (1 - target) * (1 - input).clamp_min(tiny).log());
  if (options.weight().defined()) loss = loss * options.weight();
  return reduce(loss, options.reduction());
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options) {
  GR_AUTOCAST(binary_cross_entropy_with_logits, input, target, options);
  check_pointwise("binary_cross_entropy_with_logits", input, target);
  Tensor softplus_neg = neg_log_sigmoid(input);
  Tensor loss;
  if (options.pos_weight().defined()) {
    Tensor log_weight = (options.pos_weight() - 1) * target + 1;
    loss = (1 - target) * input + log_weight * softplus_neg;
  } else {
    loss = (1 - target) * input + softplus_neg;
  }
  if (options.weight().defined()) loss = loss * options.weight();
  return reduce(loss, options.reduction());
}

Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options) {
  GR_AUTOCAST(kl_div, input, target, options);
  check_pointwise("kl_div", input, target);
  Tensor loss = options.log_target() ? target.exp() * (target - input) : xlogx(target) - target * input;
  const KLDivReduction& r = options.reduction();
  if (r.is_batchmean()) return input.dim() == 0 ? loss.sum() : loss.sum() / static_cast<double>(input.size(0));
  return reduce(loss, r.reduction());
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options) {
  GR_AUTOCAST(cosine_embedding_loss, input1, input2, target, options);
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
  Tensor zeros = gr::zeros_like(cos);
  Tensor pos = gr::where(t == 1, 1 - cos, zeros);
  Tensor neg = gr::where(t == -1, (cos - options.margin()).clamp_min(0), zeros);
  return reduce(pos + neg, options.reduction());
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options) {
  GR_AUTOCAST(margin_ranking_loss, input1, input2, target, options);
  check_defined("margin_ranking_loss", {&input1, &input2, &target});
  GR_CHECK(input1.sizes() == input2.sizes() && input1.sizes() == target.sizes(),
           "margin_ranking_loss: expected input1, input2 and target of one shape, got ", input1.sizes(), ", ",
           input2.sizes(), " and ", target.sizes());
  GR_CHECK(input1.is_floating_point() && input2.scalar_type() == input1.scalar_type(),
           "margin_ranking_loss: expected inputs of one floating point dtype, got ", input1.scalar_type(), " and ",
           input2.scalar_type());
  Tensor t = target.to(input1.scalar_type());
  return reduce((t.neg() * (input1 - input2) + options.margin()).clamp_min(0), options.reduction());
}

namespace {
// torch's pairwise_distance: the p-norm of x1 - x2 + eps over the last dim.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps) {
  return gr::linalg::vector_norm(x1 - x2 + eps, p, {-1});
}
}  // namespace

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options) {
  GR_AUTOCAST(triplet_margin_loss, anchor, positive, negative, options);
  check_defined("triplet_margin_loss", {&anchor, &positive, &negative});
  GR_CHECK(anchor.sizes() == positive.sizes() && anchor.sizes() == negative.sizes() &&
               (anchor.dim() == 1 || anchor.dim() == 2),
           "triplet_margin_loss: expected anchor, positive and negative of one shape [N, D] or [D], got ",
           anchor.sizes(), ", ", positive.sizes(), " and ", negative.sizes());
  GR_CHECK(anchor.is_floating_point() && positive.scalar_type() == anchor.scalar_type() &&
               negative.scalar_type() == anchor.scalar_type(),
           "triplet_margin_loss: expected inputs of one floating point dtype, got ", anchor.scalar_type(), ", ",
           positive.scalar_type(), " and ", negative.scalar_type());
  Tensor d_pos = pairwise_distance(anchor, positive, options.p(), options.eps());
  Tensor d_neg = pairwise_distance(anchor, negative, options.p(), options.eps());
  if (options.swap()) d_neg = gr::minimum(d_neg, pairwise_distance(positive, negative, options.p(), options.eps()));
  return reduce((d_pos - d_neg + options.margin()).clamp_min(0), options.reduction());
}

}  // namespace gr::nn::functional
