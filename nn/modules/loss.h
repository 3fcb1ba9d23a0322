// The losses as modules (gr::nn::CrossEntropyLoss, ...), libtorch's names and options
// (nn/functional/loss.h); forward calls the functional. Class weights are buffers named as
// PyTorch's ("weight", "pos_weight"), registered only when given, so .to() moves them.
#pragma once

#include "nn/functional/loss.h"
#include "nn/module.h"
#include "nn/module_holder.h"

namespace gr::nn {

// A loss of (input, target) with options of type `Options` and no buffers.
#define GR_SIMPLE_LOSS(Name, fn)                                                              \
  class Name##Impl : public Module {                                                          \
   public:                                                                                    \
    explicit Name##Impl(const Name##Options& options = {}) : Module("gr::nn::" #Name), options(options) {} \
    Tensor forward(const Tensor& input, const Tensor& target) { return functional::fn(input, target, options); } \
    void pretty_print(std::ostream& out) const override;                                      \
    Name##Options options;                                                                    \
  };                                                                                          \
  GR_MODULE(Name)

GR_SIMPLE_LOSS(L1Loss, l1_loss);
GR_SIMPLE_LOSS(MSELoss, mse_loss);
GR_SIMPLE_LOSS(SmoothL1Loss, smooth_l1_loss);
GR_SIMPLE_LOSS(HuberLoss, huber_loss);
GR_SIMPLE_LOSS(KLDivLoss, kl_div);
#undef GR_SIMPLE_LOSS

class NLLLossImpl : public Module {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& out) const override;
  NLLLossOptions options;
  Tensor weight;
};
GR_MODULE(NLLLoss);

class CrossEntropyLossImpl : public Module {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& out) const override;
  CrossEntropyLossOptions options;
  Tensor weight;
};
GR_MODULE(CrossEntropyLoss);

class BCELossImpl : public Module {
 public:
  explicit BCELossImpl(const BCELossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& out) const override;
  BCELossOptions options;
  Tensor weight;
};
GR_MODULE(BCELoss);

class BCEWithLogitsLossImpl : public Module {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& out) const override;
  BCEWithLogitsLossOptions options;
  Tensor weight, pos_weight;
};
GR_MODULE(BCEWithLogitsLoss);

class CosineEmbeddingLossImpl : public Module {
 public:
  explicit CosineEmbeddingLossImpl(const CosineEmbeddingLossOptions& options = {})
      : Module("gr::nn::CosineEmbeddingLoss"), options(options) {}
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target) {
    return functional::cosine_embedding_loss(input1, input2, target, options);
  }
  void pretty_print(std::ostream& out) const override;
  CosineEmbeddingLossOptions options;
};
GR_MODULE(CosineEmbeddingLoss);

class MarginRankingLossImpl : public Module {
 public:
  explicit MarginRankingLossImpl(const MarginRankingLossOptions& options = {})
      : Module("gr::nn::MarginRankingLoss"), options(options) {}
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target) {
    return functional::margin_ranking_loss(input1, input2, target, options);
  }
  void pretty_print(std::ostream& out) const override;
  MarginRankingLossOptions options;
};
GR_MODULE(MarginRankingLoss);

class TripletMarginLossImpl : public Module {
 public:
  explicit TripletMarginLossImpl(const TripletMarginLossOptions& options = {})
      : Module("gr::nn::TripletMarginLoss"), options(options) {}
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative) {
    return functional::triplet_margin_loss(anchor, positive, negative, options);
  }
  void pretty_print(std::ostream& out) const override;
  TripletMarginLossOptions options;
};
GR_MODULE(TripletMarginLoss);

}  // namespace gr::nn
