// ReLU, Dropout and Flatten layers.
#include "nn/modules/basic.h"

#include "autograd/ops.h"

namespace gr::nn {

Tensor ReLUImpl::forward(const Tensor& x) {
  if (!options.inplace()) return gr::relu(x);
  Tensor y = x;
  return y.relu_();
}

void ReLUImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::ReLU(" << (options.inplace() ? "inplace=true" : "") << ")";
}

DropoutImpl::DropoutImpl(const DropoutOptions& options) : Module("gr::nn::Dropout"), options(options) {
  GR_CHECK(options.p() >= 0.0 && options.p() <= 1.0, "Dropout: probability has to be between 0 and 1, but got ",
           options.p());
}

Tensor DropoutImpl::forward(const Tensor& x) { return gr::dropout(x, options.p(), is_training()); }

void DropoutImpl::pretty_print(std::ostream& out) const { out << "gr::nn::Dropout(p=" << options.p() << ")"; }

void FlattenImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::Flatten(start_dim=" << options.start_dim() << ", end_dim=" << options.end_dim() << ")";
}

Tensor UnflattenImpl::forward(const Tensor& x) { return gr::unflatten(x, options.dim(), options.sizes()); }

void UnflattenImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::Unflatten(dim=" << options.dim() << ", unflattened_size={";
  for (size_t i = 0; i < options.sizes().size(); ++i) out << (i ? ", " : "") << options.sizes()[i];
  out << "})";
}

}  // namespace gr::nn
