// Loss modules: buffers for the class weights, forward through the functionals, and
// libtorch's pretty_print.
#include "nn/modules/loss.h"

namespace gr::nn {

namespace {
// Registers `t` as a buffer when it is given (torch registers None, which state_dict skips).
Tensor maybe_buffer(Module& m, const char* name, const Tensor& t) {
  return t.defined() ? m.register_buffer(name, t) : Tensor();
}
}  // namespace

void L1LossImpl::pretty_print(std::ostream& out) const { out << "gr::nn::L1Loss()"; }
void MSELossImpl::pretty_print(std::ostream& out) const { out << "gr::nn::MSELoss()"; }
void SmoothL1LossImpl::pretty_print(std::ostream& out) const { out << "gr::nn::SmoothL1Loss"; }
void HuberLossImpl::pretty_print(std::ostream& out) const { out << "gr::nn::HuberLoss"; }
void KLDivLossImpl::pretty_print(std::ostream& out) const { out << "gr::nn::KLDivLoss()"; }

NLLLossImpl::NLLLossImpl(const NLLLossOptions& o) : Module("gr::nn::NLLLoss"), options(o) {
  weight = maybe_buffer(*this, "weight", o.weight());
}
Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::nll_loss(input, target, NLLLossOptions(options).weight(weight));
}
void NLLLossImpl::pretty_print(std::ostream& out) const { out << "gr::nn::NLLLoss()"; }

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& o)
    : Module("gr::nn::CrossEntropyLoss"), options(o) {
  weight = maybe_buffer(*this, "weight", o.weight());
}
Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::cross_entropy(input, target, CrossEntropyLossOptions(options).weight(weight));
}
void CrossEntropyLossImpl::pretty_print(std::ostream& out) const { out << "gr::nn::CrossEntropyLoss()"; }

BCELossImpl::BCELossImpl(const BCELossOptions& o) : Module("gr::nn::BCELoss"), options(o) {
  weight = maybe_buffer(*this, "weight", o.weight());
}
Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::binary_cross_entropy(input, target, BCELossOptions(options).weight(weight));
}
void BCELossImpl::pretty_print(std::ostream& out) const { out << "gr::nn::BCELoss()"; }

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& o)
    : Module("gr::nn::BCEWithLogitsLoss"), options(o) {
  weight = maybe_buffer(*this, "weight", o.weight());
  pos_weight = maybe_buffer(*this, "pos_weight", o.pos_weight());
}
Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::binary_cross_entropy_with_logits(input, target,
                                                      BCEWithLogitsLossOptions(options).weight(weight).pos_weight(pos_weight));
}
void BCEWithLogitsLossImpl::pretty_print(std::ostream& out) const { out << "gr::nn::BCEWithLogitsLoss()"; }

void CosineEmbeddingLossImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::CosineEmbeddingLoss(margin=" << options.margin() << ")";
}
void MarginRankingLossImpl::pretty_print(std::ostream& out) const { out << "gr::nn::MarginRankingLoss()"; }
void TripletMarginLossImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::TripletMarginLoss(margin=" << options.margin() << ", p=" << options.p() << ", eps=" << options.eps()
      << std::boolalpha << ", swap=" << options.swap() << ")";
}

}  // namespace gr::nn
