// Embedding and EmbeddingBag layers, and their functional forms (F::embedding,
// F::embedding_bag), which the layers call.
#include "nn/modules/embedding.h"

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/index/index_ops.h"
#include "nn/init.h"

namespace gr::nn {

EmbeddingBagMode::EmbeddingBagMode(Reduction r) : kind_(r == Reduction::Mean ? Mean : Sum) {
  GR_CHECK(r != Reduction::None, "EmbeddingBagMode: expected gr::kSum, gr::kMean or EmbeddingBagMode::Max, got gr::kNone");
}

const char* EmbeddingBagMode::name() const { return kind_ == Sum ? "kSum" : kind_ == Mean ? "kMean" : "kMax"; }

void embedding_renorm_(const Tensor& weight, const Tensor& indices, double max_norm, double norm_type) {
  NoGradGuard no_grad;
  Tensor idx = indices.reshape({-1}).to(kInt64);
  Tensor rows = weight.index_select(0, idx);
  Tensor norms = gr::norm(rows, norm_type, {1}, true);
  Tensor scale = gr::where(norms > max_norm, (norms + 1e-7).reciprocal() * max_norm, 1.0);
  native::index_copy_(weight, 0, idx, rows * scale);
}

namespace {

// libtorch's padding_idx rules: within [-num, num), negative counting from the end; -1 = none.
int64_t wrap_padding_idx(std::optional<int64_t> padding_idx, int64_t num, const char* op) {
  if (!padding_idx) return -1;
  GR_CHECK(*padding_idx < num && *padding_idx >= -num, op, ": padding_idx must be within num_embeddings (", num,
           "), got ", *padding_idx);
  return *padding_idx < 0 ? num + *padding_idx : *padding_idx;
}

// The weight of an Embedding or EmbeddingBag: options._weight, or N(0, 1) with the padding row zero.
Tensor& register_weight(Module& m, Tensor& weight, const Tensor& given, int64_t num, int64_t dim, const char* op) {
  if (given.defined()) {
    GR_CHECK(given.dim() == 2 && given.size(0) == num && given.size(1) == dim, op, ": shape of _weight ",
             given.sizes(), " does not match num_embeddings and embedding_dim [", num, ", ", dim, "]");
    weight = m.register_parameter("weight", given);
  } else {
    weight = m.register_parameter("weight", empty({num, dim}));
  }
  return weight;
}

void init_weight(Tensor& weight, std::optional<int64_t> padding_idx) {
  init::normal_(weight);
  if (padding_idx) {
    NoGradGuard no_grad;
    weight.select(0, *padding_idx).fill_(0);
  }
}

const char* bool_str(bool b) { return b ? "true" : "false"; }

void print_common(std::ostream& out, std::optional<double> max_norm, double norm_type, bool scale_grad_by_freq,
                  bool sparse) {
  if (max_norm) out << ", max_norm=" << *max_norm;
  if (norm_type != 2) out << ", norm_type=" << norm_type;
  if (scale_grad_by_freq) out << ", scale_grad_by_freq=" << bool_str(scale_grad_by_freq);
  if (sparse) out << ", sparse=" << bool_str(sparse);
}

}  // namespace

EmbeddingImpl::EmbeddingImpl(EmbeddingOptions o) : Module("gr::nn::Embedding"), options(std::move(o)) { reset(); }

void EmbeddingImpl::reset() {
  if (options.padding_idx())
    options.padding_idx(wrap_padding_idx(options.padding_idx(), options.num_embeddings(), "Embedding"));
  register_weight(*this, weight, options._weight(), options.num_embeddings(), options.embedding_dim(), "Embedding");
  if (!options._weight().defined()) reset_parameters();
}

void EmbeddingImpl::reset_parameters() { init_weight(weight, options.padding_idx()); }

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  return functional::embedding(indices, weight,
                               functional::EmbeddingFuncOptions()
                                   .padding_idx(options.padding_idx())
                                   .max_norm(options.max_norm())
                                   .norm_type(options.norm_type())
                                   .scale_grad_by_freq(options.scale_grad_by_freq())
                                   .sparse(options.sparse()));
}

void EmbeddingImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::Embedding(num_embeddings=" << options.num_embeddings()
      << ", embedding_dim=" << options.embedding_dim();
  if (options.padding_idx()) out << ", padding_idx=" << *options.padding_idx();
  print_common(out, options.max_norm(), options.norm_type(), options.scale_grad_by_freq(), options.sparse());
  out << ")";
}

Embedding Embedding::from_pretrained(const Tensor& embeddings, const EmbeddingFromPretrainedOptions& o) {
  GR_CHECK(embeddings.dim() == 2, "Embedding::from_pretrained: embeddings are expected to be 2-dimensional, got shape ",
           embeddings.sizes());
  Embedding e(EmbeddingOptions(embeddings.size(0), embeddings.size(1))
                  ._weight(embeddings)
                  .padding_idx(o.padding_idx())
                  .max_norm(o.max_norm())
                  .norm_type(o.norm_type())
                  .scale_grad_by_freq(o.scale_grad_by_freq())
                  .sparse(o.sparse()));
  e->weight.requires_grad_(!o.freeze());
  return e;
}

EmbeddingBagImpl::EmbeddingBagImpl(EmbeddingBagOptions o) : Module("gr::nn::EmbeddingBag"), options(std::move(o)) {
  reset();
}

void EmbeddingBagImpl::reset() {
  if (options.padding_idx())
    options.padding_idx(wrap_padding_idx(options.padding_idx(), options.num_embeddings(), "EmbeddingBag"));
  register_weight(*this, weight, options._weight(), options.num_embeddings(), options.embedding_dim(),
                  "EmbeddingBag");
  if (!options._weight().defined()) reset_parameters();
}

void EmbeddingBagImpl::reset_parameters() { init_weight(weight, options.padding_idx()); }

Tensor EmbeddingBagImpl::forward(const Tensor& input, const Tensor& offsets, const Tensor& per_sample_weights) {
  return functional::embedding_bag(input, weight,
                                   functional::EmbeddingBagFuncOptions()
                                       .offsets(offsets)
                                       .max_norm(options.max_norm())
                                       .norm_type(options.norm_type())
                                       .scale_grad_by_freq(options.scale_grad_by_freq())
                                       .mode(options.mode())
                                       .sparse(options.sparse())
                                       .per_sample_weights(per_sample_weights)
                                       .include_last_offset(options.include_last_offset())
                                       .padding_idx(options.padding_idx()));
}

void EmbeddingBagImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::EmbeddingBag(num_embeddings=" << options.num_embeddings()
      << ", embedding_dim=" << options.embedding_dim();
  print_common(out, options.max_norm(), options.norm_type(), options.scale_grad_by_freq(), options.sparse());
  if (options.mode().kind() != EmbeddingBagMode::Mean) out << ", mode=" << options.mode().name();
  if (options.include_last_offset()) out << ", include_last_offset=" << bool_str(options.include_last_offset());
  if (options.padding_idx()) out << ", padding_idx=" << *options.padding_idx();
  out << ")";
}

EmbeddingBag EmbeddingBag::from_pretrained(const Tensor& embeddings, const EmbeddingBagFromPretrainedOptions& o) {
  GR_CHECK(embeddings.dim() == 2,
           "EmbeddingBag::from_pretrained: embeddings are expected to be 2-dimensional, got shape ", embeddings.sizes());
  EmbeddingBag e(EmbeddingBagOptions(embeddings.size(0), embeddings.size(1))
                     ._weight(embeddings)
                     .max_norm(o.max_norm())
                     .norm_type(o.norm_type())
                     .scale_grad_by_freq(o.scale_grad_by_freq())
                     .mode(o.mode())
                     .sparse(o.sparse())
                     .include_last_offset(o.include_last_offset())
                     .padding_idx(o.padding_idx()));
  e->weight.requires_grad_(!o.freeze());
  return e;
}

namespace functional {

Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& o) {
  GR_CHECK(weight.defined() && weight.dim() == 2, "embedding: expected weight to be 2-D [num_embeddings, "
           "embedding_dim], got weight of shape ", weight.defined() ? weight.sizes() : IntArrayRef{});
  const int64_t pad = wrap_padding_idx(o.padding_idx(), weight.size(0), "embedding");
  if (o.max_norm()) embedding_renorm_(weight, input, *o.max_norm(), o.norm_type());
  return gr::embedding(weight, input, pad, o.scale_grad_by_freq(), o.sparse());
}

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& o) {
  GR_CHECK(weight.defined() && weight.dim() == 2, "embedding_bag: expected weight to be 2-D [num_embeddings, "
           "embedding_dim], got weight of shape ", weight.defined() ? weight.sizes() : IntArrayRef{});
  std::optional<int64_t> pad;
  if (o.padding_idx()) pad = wrap_padding_idx(o.padding_idx(), weight.size(0), "embedding_bag");
  if (o.max_norm()) embedding_renorm_(weight, input, *o.max_norm(), o.norm_type());
  return std::get<0>(gr::embedding_bag(weight, input, o.offsets(), o.scale_grad_by_freq(), o.mode().kind(), o.sparse(),
                                       o.per_sample_weights(), o.include_last_offset(), pad));
}

}  // namespace functional

}  // namespace gr::nn
