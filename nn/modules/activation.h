// Activation layers (libtorch's torch/nn/modules/activation.h): GELU, SiLU, Mish, Tanh,
// Sigmoid, LeakyReLU, ELU, SELU, PReLU (learnable slopes), Softplus, Hardtanh, ReLU6, Softmax.
// ReLU and LogSoftmax live in basic.h.
#pragma once

#include <string>

#include "nn/functional/activation.h"
#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/options.h"

namespace gr::nn {

// A parameter-free activation: forward(x) = Fn(x, options), printed by Print.
#define GR_ACTIVATION_MODULE(Name, Options)                                                    \
  class Name##Impl : public Module {                                                          \
   public:                                                                                    \
    explicit Name##Impl(const Options& options = {}) : Module("gr::nn::" #Name), options(options) {} \
    Tensor forward(const Tensor& x);                                                          \
    void pretty_print(std::ostream& out) const override;                                      \
    Options options;                                                                          \
  };                                                                                          \
  GR_MODULE(Name)

struct NoOptions {};

using GELUOptions = functional::GELUFuncOptions;
GR_ACTIVATION_MODULE(GELU, GELUOptions);
GR_ACTIVATION_MODULE(SiLU, NoOptions);
GR_ACTIVATION_MODULE(Mish, NoOptions);
GR_ACTIVATION_MODULE(Tanh, NoOptions);
GR_ACTIVATION_MODULE(Sigmoid, NoOptions);
using LeakyReLUOptions = functional::LeakyReLUFuncOptions;
GR_ACTIVATION_MODULE(LeakyReLU, LeakyReLUOptions);
using ELUOptions = functional::ELUFuncOptions;
GR_ACTIVATION_MODULE(ELU, ELUOptions);
using SELUOptions = functional::SELUFuncOptions;
GR_ACTIVATION_MODULE(SELU, SELUOptions);
using SoftplusOptions = functional::SoftplusFuncOptions;
GR_ACTIVATION_MODULE(Softplus, SoftplusOptions);
using HardtanhOptions = functional::HardtanhFuncOptions;
GR_ACTIVATION_MODULE(Hardtanh, HardtanhOptions);
using ReLU6Options = functional::ReLU6FuncOptions;
GR_ACTIVATION_MODULE(ReLU6, ReLU6Options);
#undef GR_ACTIVATION_MODULE

struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}
  GR_ARG(int64_t, dim);
};
class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(int64_t dim) : SoftmaxImpl(SoftmaxOptions(dim)) {}
  explicit SoftmaxImpl(const SoftmaxOptions& options) : Module("gr::nn::Softmax"), options(options) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;
  SoftmaxOptions options;
};
GR_MODULE(Softmax);

struct PReLUOptions {
  GR_ARG(int64_t, num_parameters) = 1;
  GR_ARG(double, init) = 0.25;
};
// max(0, x) + weight * min(0, x), weight [num_parameters] (one slope, or one per channel).
class PReLUImpl : public Module {
 public:
  explicit PReLUImpl(const PReLUOptions& options = {});
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;
  PReLUOptions options;
  Tensor weight;
};
GR_MODULE(PReLU);

}  // namespace gr::nn
