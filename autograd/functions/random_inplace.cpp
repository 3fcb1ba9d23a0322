// The in-place random fills of Tensor (uniform_, normal_, bernoulli_, random_, ...) and the
// out-of-place bernoulli/multinomial methods. A fill on a tensor with history cuts the
// gradient to that history, as fill_ does.
#include <cmath>
#include <limits>

#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/random_ops.h"
#include "core/native/random/random.h"

namespace gr {

namespace {

using native::RandomKind;

// Checks, fills with `fill`, and records that no gradient flows to the old values, in a node
// named as ATen's (normal_ is NormalBackward0, bernoulli_.float BernoulliBackward2, ...).
template <class Fill>
Tensor& fill_in_place(const Tensor& self, const char* op, const char* node, bool floating_only, const Fill& fill) {
  GR_CHECK(self.defined(), op, ": tensor is undefined");
  GR_CHECK(!floating_only || self.is_floating_point(), op, ": expected a floating point tensor, got ",
           self.toString());
  autograd::check_inplace(self, op);
  fill();
  if (self.requires_grad() && !self.is_leaf() && GradMode::is_enabled())
    autograd::record(node, {}, {self}, [](const TensorList&, const std::vector<bool>&) { return TensorList{}; });
  return const_cast<Tensor&>(self);
}

Tensor& fill_kind(const Tensor& self, const char* op, const char* node, RandomKind kind, double a, double b,
                  Generator* gen) {
  return fill_in_place(self, op, node, true, [&] { native::random_(self, kind, a, b, gen); });
}

// The values random_() draws without bounds: [0, 2^digits] for floats (each exact), the
// non-negative values for integers, {0, 1} for bool (as torch). Returns the range's size.
uint64_t default_random_range(ScalarType t) {
  switch (t) {
    case kFloat32: return (uint64_t{1} << 24) + 1;
    case kFloat64: return (uint64_t{1} << 53) + 1;
    case kBFloat16: return (uint64_t{1} << 8) + 1;
    case kFloat16: return (uint64_t{1} << 11) + 1;
    case kInt64: return uint64_t{1} << 63;
    case kInt32: return uint64_t{1} << 31;
    case kInt16: return uint64_t{1} << 15;
    case kInt8: return uint64_t{1} << 7;
    case kUInt8: return 256;
    case kBool: return 2;
  }
  return 1;
}

}  // namespace

Tensor& Tensor::uniform_(double from, double to, Generator* gen) const {
  GR_CHECK(from <= to, "uniform_: expects to return a [from, to) range, but found from=", from, " > to=", to);
  GR_CHECK(std::isfinite(to - from), "uniform_: to - from must be finite, got from=", from, " to=", to);
  return fill_kind(*this, "uniform_", "UniformBackward0", RandomKind::Uniform, from, to, gen);
}
Tensor& Tensor::normal_(double mean, double std, Generator* gen) const {
  GR_CHECK(std >= 0, "normal_: expects std >= 0.0, but found std=", std);
  return fill_kind(*this, "normal_", "NormalBackward0", RandomKind::Normal, mean, std, gen);
}
Tensor& Tensor::exponential_(double lambd, Generator* gen) const {
  GR_CHECK(lambd > 0, "exponential_: expects lambda > 0.0, but found lambda=", lambd);
  return fill_kind(*this, "exponential_", "ExponentialBackward0", RandomKind::Exponential, lambd, 0, gen);
}
Tensor& Tensor::log_normal_(double mean, double std, Generator* gen) const {
  GR_CHECK(std > 0, "log_normal_: expects std > 0.0, but found std=", std);
  return fill_kind(*this, "log_normal_", "LogNormalBackward0", RandomKind::LogNormal, mean, std, gen);
}
Tensor& Tensor::cauchy_(double median, double sigma, Generator* gen) const {
  GR_CHECK(sigma > 0, "cauchy_: expects sigma > 0.0, but found sigma=", sigma);
  return fill_kind(*this, "cauchy_", "CauchyBackward0", RandomKind::Cauchy, median, sigma, gen);
}
Tensor& Tensor::geometric_(double p, Generator* gen) const {
  GR_CHECK(p > 0 && p < 1, "geometric_: expects p to be in (0, 1), but got p=", p);
  return fill_in_place(*this, "geometric_", "GeometricBackward0", false,
                       [&] { native::random_(*this, RandomKind::Geometric, p, 0, gen); });
}

Tensor& Tensor::random_(int64_t from, std::optional<int64_t> to, Generator* gen) const {
  const ScalarType t = scalar_type();
  uint64_t range;
  if (to) {
    GR_CHECK(from < *to, "random_: expects 'from' to be less than 'to', but got from=", from, " >= to=", *to);
    GR_CHECK(!Scalar(from).overflows(t) && !Scalar(*to - 1).overflows(t), "random_: the range [", from, ", ", *to,
             ") does not fit dtype ", t);
    if (gr::is_floating_point(t)) {  // integers a float holds exactly: |v| <= 2^digits (as torch checks)
      const auto limit = static_cast<int64_t>(default_random_range(t) - 1);
      GR_CHECK(from >= -limit && *to - 1 <= limit, "random_: the range [", from, ", ", *to, ") of dtype ", t,
               " must lie within [-", limit, ", ", limit, "], the integers it holds exactly");
    }
    range = static_cast<uint64_t>(*to) - static_cast<uint64_t>(from);
  } else {  // [from, the largest value random_() draws]
    const uint64_t full = default_random_range(t);
    GR_CHECK(from >= 0 && static_cast<uint64_t>(from) < full, "random_: 'from' (", from,
             ") is out of the range of values dtype ", t, " draws without bounds");
    range = full - static_cast<uint64_t>(from);
  }
  return fill_in_place(*this, "random_", "RandomBackward0", false,
                       [&] { native::random_integers_(*this, from, range, gen); });
}
Tensor& Tensor::random_(int64_t to, Generator* gen) const { return random_(0, to, gen); }
Tensor& Tensor::random_(Generator* gen) const {
  return fill_in_place(*this, "random_", "RandomBackward2", false,
                       [&] { native::random_integers_(*this, 0, default_random_range(scalar_type()), gen); });
}

Tensor& Tensor::bernoulli_(double p, Generator* gen) const {
  GR_CHECK(p >= 0 && p <= 1, "bernoulli_: expects p to be in [0, 1], but got p=", p);
  return fill_in_place(*this, "bernoulli_", "BernoulliBackward2", false,
                       [&] { native::random_(*this, RandomKind::Bernoulli, p, 0, gen); });
}
Tensor& Tensor::bernoulli_(const Tensor& p, Generator* gen) const {
  return fill_in_place(*this, "bernoulli_", "BernoulliBackward1", false, [&] { native::bernoulli_tensor_(*this, p, gen); });
}
Tensor Tensor::bernoulli(Generator* gen) const { return gr::bernoulli(*this, gen); }
Tensor Tensor::bernoulli(double p, Generator* gen) const { return gr::bernoulli(*this, p, gen); }
Tensor Tensor::multinomial(int64_t num_samples, bool replacement, Generator* gen) const {
  return gr::multinomial(*this, num_samples, replacement, gen);
}

}  // namespace gr
