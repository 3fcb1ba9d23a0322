// Embedding and EmbeddingBag layers (libtorch's torch/nn/modules/embedding.h): a table of
// num_embeddings rows of embedding_dim values, looked up by integer indices.
#pragma once

#include <optional>

#include "nn/functional/embedding.h"
#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/options.h"

namespace gr::nn {

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  GR_ARG(int64_t, num_embeddings);
  GR_ARG(int64_t, embedding_dim);
  GR_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  GR_ARG(std::optional<double>, max_norm) = std::nullopt;
  GR_ARG(double, norm_type) = 2.;
  GR_ARG(bool, scale_grad_by_freq) = false;
  GR_ARG(bool, sparse) = false;
  GR_ARG(Tensor, _weight);  // the initial weight (from_pretrained)
};

struct EmbeddingFromPretrainedOptions {
  GR_ARG(bool, freeze) = true;
  GR_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  GR_ARG(std::optional<double>, max_norm) = std::nullopt;
  GR_ARG(double, norm_type) = 2.;
  GR_ARG(bool, scale_grad_by_freq) = false;
  GR_ARG(bool, sparse) = false;
};

// weight [num_embeddings, embedding_dim] ~ N(0, 1), the padding_idx row zero.
class EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(EmbeddingOptions options);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& indices);
  void pretty_print(std::ostream& out) const override;

  EmbeddingOptions options;
  Tensor weight;
};

class Embedding : public ModuleHolder<EmbeddingImpl> {
 public:
  using ModuleHolder<EmbeddingImpl>::ModuleHolder;
  // An Embedding whose weight is (a copy of) `embeddings` [num, dim], frozen by default.
  static Embedding from_pretrained(const Tensor& embeddings, const EmbeddingFromPretrainedOptions& options = {});
};

struct EmbeddingBagOptions {
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  GR_ARG(int64_t, num_embeddings);
  GR_ARG(int64_t, embedding_dim);
  GR_ARG(std::optional<double>, max_norm) = std::nullopt;
  GR_ARG(double, norm_type) = 2.;
  GR_ARG(bool, scale_grad_by_freq) = false;
  GR_ARG(EmbeddingBagMode, mode) = gr::kMean;
  GR_ARG(bool, sparse) = false;
  GR_ARG(Tensor, _weight);
  GR_ARG(bool, include_last_offset) = false;
  GR_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

struct EmbeddingBagFromPretrainedOptions {
  GR_ARG(bool, freeze) = true;
  GR_ARG(std::optional<double>, max_norm) = std::nullopt;
  GR_ARG(double, norm_type) = 2.;
  GR_ARG(bool, scale_grad_by_freq) = false;
  GR_ARG(EmbeddingBagMode, mode) = gr::kMean;
  GR_ARG(bool, sparse) = false;
  GR_ARG(bool, include_last_offset) = false;
  GR_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

// Sums or averages the embeddings of each bag: indices 1-D with offsets (bag starts), or
// 2-D with one bag per row.
class EmbeddingBagImpl : public Module {
 public:
  EmbeddingBagImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingBagImpl(EmbeddingBagOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingBagImpl(EmbeddingBagOptions options);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& input, const Tensor& offsets = {}, const Tensor& per_sample_weights = {});
  void pretty_print(std::ostream& out) const override;

  EmbeddingBagOptions options;
  Tensor weight;
};

class EmbeddingBag : public ModuleHolder<EmbeddingBagImpl> {
 public:
  using ModuleHolder<EmbeddingBagImpl>::ModuleHolder;
  static EmbeddingBag from_pretrained(const Tensor& embeddings, const EmbeddingBagFromPretrainedOptions& options = {});
};

}  // namespace gr::nn
