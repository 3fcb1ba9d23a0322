// The loss functionals: libtorch's option structs unpacked into the gr:: losses
// (autograd/functions/loss.cpp, composite_losses.cpp); nll_loss's [N, C, d1, ...] inputs and
// cross_entropy's class probabilities and label smoothing are composed here.
#include "nn/functional/loss.h"

#include "autograd/autocast.h"
#include "core/factory.h"

namespace gr::nn::functional {
namespace {

void check_defined(const char* op, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) GR_CHECK(t->defined(), op, ": every input and the target must be defined");
}

// A [C] class weight shaped to broadcast along dim `class_dim` of a `dim`-d input.
Tensor class_weight_view(const char* op, const Tensor& weight, int64_t C, int64_t class_dim, int64_t dim) {
  GR_CHECK(weight.dim() == 1 && weight.size(0) == C, op, ": expected weight of shape [", C, "], got ",
           weight.sizes());
  std::vector<int64_t> shape(static_cast<size_t>(dim), 1);
  shape[static_cast<size_t>(class_dim)] = C;
  return weight.reshape(shape);
}

}  // namespace

Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options) {
  return gr::l1_loss(input, target, options.reduction());
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options) {
  return gr::mse_loss(input, target, options.reduction());
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options) {
  return gr::smooth_l1_loss(input, target, options.reduction(), options.beta());
}

Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options) {
  return gr::huber_loss(input, target, options.reduction(), options.delta());
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
  return gr::binary_cross_entropy(input, target, options.weight(), options.reduction());
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options) {
  return gr::binary_cross_entropy_with_logits(input, target, options.weight(), options.pos_weight(), options.reduction());
}

// batchmean (not an ATen reduction): the sum over the batch size.
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options) {
  const KLDivReduction& r = options.reduction();
  if (!r.is_batchmean()) return gr::kl_div(input, target, r.reduction(), options.log_target());
  Tensor sum = gr::kl_div(input, target, Reduction::Sum, options.log_target());
  return input.dim() == 0 ? sum : sum / static_cast<double>(input.size(0));
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options) {
  return gr::cosine_embedding_loss(input1, input2, target, options.margin(), options.reduction());
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options) {
  return gr::margin_ranking_loss(input1, input2, target, options.margin(), options.reduction());
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options) {
  return gr::triplet_margin_loss(anchor, positive, negative, options.margin(), options.p(), options.eps(),
                                 options.swap(), options.reduction());
}

}  // namespace gr::nn::functional
