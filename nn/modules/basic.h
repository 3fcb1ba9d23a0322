// Parameter-free layers: ReLU, Dropout, Flatten, Unflatten, Identity, LogSoftmax.
#pragma once

#include <utility>
#include <vector>

#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/options.h"

namespace gr::nn {

struct ReLUOptions {
  GR_ARG(bool, inplace) = false;
};

class ReLUImpl : public Module {
 public:
  explicit ReLUImpl(const ReLUOptions& options = {}) : Module("gr::nn::ReLU"), options(options) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;
  ReLUOptions options;
};
GR_MODULE(ReLU);

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}
  GR_ARG(double, p);
};

// Zeroes elements with probability p in training mode (scaled by 1/(1-p)); identity in eval.
class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(double p) : DropoutImpl(DropoutOptions(p)) {}
  explicit DropoutImpl(const DropoutOptions& options = {});
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;
  DropoutOptions options;
};
GR_MODULE(Dropout);

struct FlattenOptions {
  GR_ARG(int64_t, start_dim) = 1;
  GR_ARG(int64_t, end_dim) = -1;
};

class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : Module("gr::nn::Flatten"), options(options) {}
  Tensor forward(const Tensor& x) { return x.flatten(options.start_dim(), options.end_dim()); }
  void pretty_print(std::ostream& out) const override;
  FlattenOptions options;
};
GR_MODULE(Flatten);

struct UnflattenOptions {
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  GR_ARG(int64_t, dim);
  GR_ARG(std::vector<int64_t>, sizes);
};

// Splits dim into `sizes` (one of them may be -1).
class UnflattenImpl : public Module {
 public:
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes) : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
  explicit UnflattenImpl(const UnflattenOptions& options) : Module("gr::nn::Unflatten"), options(options) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;
  UnflattenOptions options;
};
GR_MODULE(Unflatten);

// Returns its input (a placeholder layer).
class IdentityImpl : public Module {
 public:
  IdentityImpl() : Module("gr::nn::Identity") {}
  Tensor forward(const Tensor& x) { return x; }
  void pretty_print(std::ostream& out) const override { out << "gr::nn::Identity()"; }
};
GR_MODULE(Identity);

class LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(int64_t dim) : Module("gr::nn::LogSoftmax"), dim(dim) {}
  Tensor forward(const Tensor& x) { return x.log_softmax(dim); }
  void pretty_print(std::ostream& out) const override { out << "gr::nn::LogSoftmax(dim=" << dim << ")"; }
  int64_t dim;
};
GR_MODULE(LogSoftmax);

}  // namespace gr::nn
