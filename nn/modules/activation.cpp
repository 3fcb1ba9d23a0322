// Activation layers: forwards through the functionals, pretty_print as libtorch's.
#include "nn/modules/activation.h"

#include "autograd/grad_mode.h"
#include "core/factory.h"

namespace gr::nn {

namespace F = functional;

namespace {
const char* bool_str(bool b) { return b ? "true" : "false"; }
}  // namespace

Tensor GELUImpl::forward(const Tensor& x) { return F::gelu(x, options); }
void GELUImpl::pretty_print(std::ostream& out) const { out << "gr::nn::GELU()"; }

Tensor SiLUImpl::forward(const Tensor& x) { return F::silu(x); }
void SiLUImpl::pretty_print(std::ostream& out) const { out << "gr::nn::SiLU()"; }

Tensor MishImpl::forward(const Tensor& x) { return F::mish(x); }
void MishImpl::pretty_print(std::ostream& out) const { out << "gr::nn::Mish()"; }

Tensor TanhImpl::forward(const Tensor& x) { return gr::tanh(x); }
void TanhImpl::pretty_print(std::ostream& out) const { out << "gr::nn::Tanh()"; }

Tensor SigmoidImpl::forward(const Tensor& x) { return gr::sigmoid(x); }
void SigmoidImpl::pretty_print(std::ostream& out) const { out << "gr::nn::Sigmoid()"; }

Tensor LeakyReLUImpl::forward(const Tensor& x) { return F::leaky_relu(x, options); }
void LeakyReLUImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::LeakyReLU(negative_slope=" << options.negative_slope();
  if (options.inplace()) out << ", inplace=" << bool_str(true);
  out << ")";
}

Tensor ELUImpl::forward(const Tensor& x) { return F::elu(x, options); }
void ELUImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::ELU(alpha=" << options.alpha();
  if (options.inplace()) out << ", inplace=" << bool_str(true);
  out << ")";
}

Tensor SELUImpl::forward(const Tensor& x) { return F::selu(x, options); }
void SELUImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::SELU(";
  if (options.inplace()) out << "inplace=" << bool_str(true);
  out << ")";
}

Tensor SoftplusImpl::forward(const Tensor& x) { return F::softplus(x, options); }
void SoftplusImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::Softplus(beta=" << options.beta() << ", threshold=" << options.threshold() << ")";
}

Tensor HardtanhImpl::forward(const Tensor& x) { return F::hardtanh(x, options); }
void HardtanhImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::Hardtanh(min_val=" << options.min_val() << ", max_val=" << options.max_val();
  if (options.inplace()) out << ", inplace=" << bool_str(true);
  out << ")";
}

Tensor ReLU6Impl::forward(const Tensor& x) { return F::relu6(x, options); }
void ReLU6Impl::pretty_print(std::ostream& out) const {
  out << "gr::nn::ReLU6(";
  if (options.inplace()) out << "inplace=" << bool_str(true);
  out << ")";
}

Tensor SoftmaxImpl::forward(const Tensor& x) { return gr::softmax(x, options.dim()); }
void SoftmaxImpl::pretty_print(std::ostream& out) const { out << "gr::nn::Softmax(dim=" << options.dim() << ")"; }

PReLUImpl::PReLUImpl(const PReLUOptions& o) : Module("gr::nn::PReLU"), options(o) { reset(); }

void PReLUImpl::reset() {
  GR_CHECK(options.num_parameters() > 0, "PReLU: num_parameters must be positive, got ", options.num_parameters());
  weight = register_parameter("weight", empty({options.num_parameters()}));
  reset_parameters();
}

void PReLUImpl::reset_parameters() {
  NoGradGuard no_grad;
  weight.fill_(options.init());
}

Tensor PReLUImpl::forward(const Tensor& x) { return gr::prelu(x, weight); }
void PReLUImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::PReLU(num_parameters=" << options.num_parameters() << ")";
}

}  // namespace gr::nn
