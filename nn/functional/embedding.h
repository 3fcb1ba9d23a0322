// gr::nn::functional's embeddings (libtorch's torch/nn/functional/embedding.h):
//   F::embedding(indices, weight, F::EmbeddingFuncOptions().padding_idx(0))
//   F::embedding_bag(indices, weight, F::EmbeddingBagFuncOptions().offsets(o).mode(gr::kMean))
#pragma once

#include <optional>

#include "autograd/ops.h"
#include "nn/options.h"

namespace gr::nn {

// libtorch's EmbeddingBagMode (a variant of torch::kSum, kMean, kMax): gr::kSum, gr::kMean
// or EmbeddingBagMode::Max (gradring has no kMax constant).
class EmbeddingBagMode {
 public:
  enum Kind { Sum = 0, Mean = 1, Max = 2 };
  EmbeddingBagMode(Kind kind) : kind_(kind) {}  // NOLINT: implicit, as the variant's alternatives
  EmbeddingBagMode(Reduction r);                // NOLINT: gr::kSum, gr::kMean
  Kind kind() const { return kind_; }
  const char* name() const;  // "kSum", "kMean", "kMax" (libtorch's enum names)
  bool operator==(const EmbeddingBagMode& o) const { return kind_ == o.kind_; }

 private:
  Kind kind_;
};

// Renormalises, in place and without autograd, the rows of weight that `indices` use whose
// max_norm-norm exceeds max_norm (torch.embedding_renorm_).
void embedding_renorm_(const Tensor& weight, const Tensor& indices, double max_norm, double norm_type);

}  // namespace gr::nn

namespace gr::nn::functional {

struct EmbeddingFuncOptions {
  GR_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  GR_ARG(std::optional<double>, max_norm) = std::nullopt;
  GR_ARG(double, norm_type) = 2.;
  GR_ARG(bool, scale_grad_by_freq) = false;
  GR_ARG(bool, sparse) = false;
};
// A negative padding_idx counts from the end, as torch's.
Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options = {});
// int64 classes -> int64 [..., num_classes]; -1 infers max + 1 (gr::one_hot).
inline Tensor one_hot(const Tensor& tensor, int64_t num_classes = -1) { return gr::one_hot(tensor, num_classes); }

struct EmbeddingBagFuncOptions {
  GR_ARG(Tensor, offsets);
  GR_ARG(std::optional<double>, max_norm) = std::nullopt;
  GR_ARG(double, norm_type) = 2.;
  GR_ARG(bool, scale_grad_by_freq) = false;
  GR_ARG(EmbeddingBagMode, mode) = gr::kMean;
  GR_ARG(bool, sparse) = false;
  GR_ARG(Tensor, per_sample_weights);
  GR_ARG(bool, include_last_offset) = false;
  GR_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& options = {});

}  // namespace gr::nn::functional
