// The losses as functions (gr::nn::functional::cross_entropy, ...) with libtorch's option
// structs, which the loss modules (nn/modules/loss.h) share. All are composed from
// differentiable gr:: ops, so their gradients are differentiable too (double backward).
#pragma once

#include "autograd/ops.h"
#include "nn/enum.h"
#include "nn/options.h"

namespace gr::nn {

// KLDivLoss's reduction: gr::kNone, gr::kBatchMean, gr::kSum or gr::kMean (libtorch's variant).
class KLDivReduction {
 public:
  KLDivReduction(Reduction r) : reduction_(r) {}
  KLDivReduction(enumtype::kBatchMean) : batchmean_(true) {}
  bool is_batchmean() const { return batchmean_; }
  Reduction reduction() const { return reduction_; }  // meaningless when is_batchmean()
  bool operator==(const KLDivReduction&) const = default;

 private:
  Reduction reduction_ = Reduction::Mean;
  bool batchmean_ = false;
};

// libtorch's loss options: each takes its reduction as the constructor argument, e.g.
// L1LossOptions(gr::kSum), and chained setters for the rest.
#define GR_LOSS_OPTIONS_CTOR(Name) \
  Name(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}

struct L1LossOptions {
  GR_LOSS_OPTIONS_CTOR(L1LossOptions)
  GR_ARG(Reduction, reduction);
};
struct MSELossOptions {
  GR_LOSS_OPTIONS_CTOR(MSELossOptions)
  GR_ARG(Reduction, reduction);
};
struct SmoothL1LossOptions {
  GR_LOSS_OPTIONS_CTOR(SmoothL1LossOptions)
  GR_ARG(Reduction, reduction);
  GR_ARG(double, beta) = 1.0;
};
struct HuberLossOptions {
  GR_LOSS_OPTIONS_CTOR(HuberLossOptions)
  GR_ARG(Reduction, reduction);
  GR_ARG(double, delta) = 1.0;
};
struct NLLLossOptions {
  GR_LOSS_OPTIONS_CTOR(NLLLossOptions)
  GR_ARG(Reduction, reduction);
  GR_ARG(Tensor, weight);  // [C] class weights
  GR_ARG(int64_t, ignore_index) = -100;
};
struct CrossEntropyLossOptions {
  GR_LOSS_OPTIONS_CTOR(CrossEntropyLossOptions)
  GR_ARG(Reduction, reduction);
  GR_ARG(Tensor, weight);  // [C] class weights
  GR_ARG(int64_t, ignore_index) = -100;
  GR_ARG(double, label_smoothing) = 0.0;
};
struct BCELossOptions {
  GR_LOSS_OPTIONS_CTOR(BCELossOptions)
  GR_ARG(Reduction, reduction);
  GR_ARG(Tensor, weight);  // broadcast to the input
};
struct BCEWithLogitsLossOptions {
  GR_LOSS_OPTIONS_CTOR(BCEWithLogitsLossOptions)
  GR_ARG(Reduction, reduction);
  GR_ARG(Tensor, weight);      // broadcast to the input
  GR_ARG(Tensor, pos_weight);  // broadcast to the input along the last (class) dim
};
struct KLDivLossOptions {
  KLDivLossOptions(KLDivReduction reduction = Reduction::Mean) : reduction_(reduction) {}
  GR_ARG(KLDivReduction, reduction);
  GR_ARG(bool, log_target) = false;
};
struct CosineEmbeddingLossOptions {
  GR_LOSS_OPTIONS_CTOR(CosineEmbeddingLossOptions)
  GR_ARG(Reduction, reduction);
  GR_ARG(double, margin) = 0.0;
};
struct MarginRankingLossOptions {
  GR_LOSS_OPTIONS_CTOR(MarginRankingLossOptions)
  GR_ARG(Reduction, reduction);
  GR_ARG(double, margin) = 0.0;
};
struct TripletMarginLossOptions {
  GR_LOSS_OPTIONS_CTOR(TripletMarginLossOptions)
  GR_ARG(Reduction, reduction);
  GR_ARG(double, margin) = 1.0;
  GR_ARG(double, p) = 2.0;
  GR_ARG(double, eps) = 1e-6;
  GR_ARG(bool, swap) = false;
};
#undef GR_LOSS_OPTIONS_CTOR

namespace functional {

using L1LossFuncOptions = L1LossOptions;
using MSELossFuncOptions = MSELossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using KLDivFuncOptions = KLDivLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
using TripletMarginLossFuncOptions = TripletMarginLossOptions;

// Element-wise regression losses: input and target of one shape and floating dtype.
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options = {});
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options = {});
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options = {});
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options = {});
// input [N, C, d1, ...] (or [C]) of log-probabilities, target [N, d1, ...] int64 classes.
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options = {});
// input [N, C, d1, ...] (or [C]) of logits; target int64 class indices [N, d1, ...], or
// class probabilities of the input's shape and dtype.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options = {});
// input: probabilities in [0, 1]; target of the input's shape.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options = {});
// input: logits (log1p(exp(-|x|)) form, stable for any magnitude).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options = {});
// input: log-probabilities; target: probabilities (log-probabilities with log_target).
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options = {});
// input1, input2 [N, D] (or [D]); target [N] (or 0-d) of 1 and -1.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options = {});
// input1, input2, target of one shape (target 1 or -1).
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options = {});
// anchor, positive, negative [N, D] (or [D]).
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options = {});

}  // namespace functional
}  // namespace gr::nn
