// bernoulli, multinomial and normal with tensor parameters: argument checks, then fills and
// element-wise ops on the tensors' device (see Note [Random streams] in native/random.h).
#include "core/random_ops.h"

#include <cmath>

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"
#include "core/native/random/multinomial.h"
#include "core/native/random/random.h"
#include "core/native/reduce/reduce.h"

namespace gr {

namespace {


}  // namespace

namespace native {
// out[i] = u[i] < p[i] with u uniform in [0, 1); p broadcasts to out. For Tensor::bernoulli_.
void bernoulli_tensor_(const Tensor& out, const Tensor& p, Generator* gen) {
  check_floating("bernoulli_", p, "probability tensor p");
  GR_CHECK(p.device() == out.device(), "bernoulli_: p is on ", p.device(), " but self is on ", out.device());
  GR_CHECK(p.dim() <= out.dim() && IntArrayRef(broadcast_shapes(out.sizes(), p.sizes(), "bernoulli_")) == out.sizes(),
           "bernoulli_: p of shape ", p.sizes(), " does not broadcast to self's shape ", out.sizes());
  if (p.numel() > 0) {
    const double lo = native::min(p).item<double>(), hi = native::max(p).item<double>();
    GR_CHECK(lo >= 0 && hi <= 1, "bernoulli: expected all probabilities in [0, 1], got values in [", lo, ", ", hi, "]");
  }
  Tensor u = empty(out.sizes(), TensorOptions(p.scalar_type() == kFloat64 ? kFloat64 : kFloat32).device(p.device()));
  native::random_(u, native::RandomKind::Uniform, 0, 1, gen);
  copy_(out, lt(u, p));
}
}  // namespace native

Tensor bernoulli(const Tensor& p, Generator* gen) {
  check_floating("bernoulli", p, "probability tensor p");
  Tensor out = empty(p.sizes(), p.options());
  native::bernoulli_tensor_(out, p, gen);
  return out;
}

Tensor bernoulli(const Tensor& self, double p, Generator* gen) {
  GR_CHECK(self.defined(), "bernoulli: self is undefined");
  GR_CHECK(p >= 0 && p <= 1, "bernoulli: expected p in [0, 1], got ", p);
  Tensor out = empty(self.sizes(), self.options());
  native::random_(out, native::RandomKind::Bernoulli, p, 0, gen);
  return out;
}

Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement, Generator* gen) {
  check_floating("multinomial", self, "probability tensor");
  GR_CHECK(self.dim() == 1 || self.dim() == 2, "multinomial: prob_dist must be 1 or 2 dim, got shape ", self.sizes());
  GR_CHECK(num_samples > 0, "multinomial: cannot sample ", num_samples, " (<= 0) samples");
  const int64_t C = self.size(-1), N = self.dim() == 2 ? self.size(0) : 1;
  GR_CHECK(C > 0, "multinomial: the distribution has no categories (shape ", self.sizes(), ")");
  GR_CHECK(replacement || num_samples <= C, "multinomial: cannot sample n_sample (", num_samples,
           ") > prob_dist.size(-1) (", C, ") samples without replacement");
  Tensor p = native::contiguous(native::to_dtype(self, kFloat64)).reshape({N, C});
  // The weights: finite, non-negative, a positive sum per row (and enough positive ones
  // without replacement). NaN fails the min check (NaN wins min), inf the sum check.
  const double lo = native::min(p).item<double>();
  GR_CHECK(lo >= 0, "multinomial: probability tensor contains either inf, nan or element < 0 (min ", lo, ")");
  Tensor row_sums = native::sum(p, {1});
  const double total = native::sum(row_sums).item<double>(), least = native::min(row_sums).item<double>();
  GR_CHECK(std::isfinite(total), "multinomial: probability tensor contains either inf, nan or element < 0");
  GR_CHECK(least > 0, "multinomial: invalid multinomial distribution (sum of probabilities <= 0 in a row)");
  Tensor out = empty({N, num_samples}, TensorOptions(kInt64).device(self.device()));
  if (replacement) {
    Tensor u = empty({N, num_samples}, TensorOptions(kFloat64).device(self.device()));
    native::random_(u, native::RandomKind::Uniform, 0, 1, gen);
    native::multinomial_with_replacement_stub(self.device(), p, u, out);
  } else {
    const int64_t positive =
        native::min(native::sum(native::gt(p, native::wrapped_scalar(p, 0.0)), {1})).item<int64_t>();
    GR_CHECK(positive >= num_samples, "multinomial: invalid multinomial distribution (with replacement=False, not "
             "enough non-negative category to sample): a row has ", positive, " positive weights for ", num_samples,
             " samples");
    // Efraimidis-Spirakis: the K largest p / E with E ~ Exp(1) are a draw without replacement;
    // zero weights get key -1 and are never among them (there are enough positive ones).
    Tensor e = empty({N, C}, TensorOptions(kFloat64).device(self.device()));
    native::random_(e, native::RandomKind::Exponential, 1, 0, gen);
    Tensor keys = native::where(native::gt(p, native::wrapped_scalar(p, 0.0)), native::div(p, e),
                                native::wrapped_scalar(p, -1.0));
    native::multinomial_top_keys_stub(self.device(), native::contiguous(keys), out);
  }
  return self.dim() == 1 ? out.reshape({num_samples}) : out;
}

Tensor normal(const Tensor& mean, double stddev, Generator* gen) {
  check_floating("normal", mean, "mean");
  GR_CHECK(stddev >= 0, "normal: expected std >= 0.0, but found std ", stddev);
  Tensor z = empty(mean.sizes(), mean.options());
  native::random_(z, native::RandomKind::Normal, 0, stddev, gen);
  return native::add(z, mean);
}

Tensor normal(double mean, const Tensor& stddev, Generator* gen) {
  check_floating("normal", stddev, "std");
  GR_CHECK(stddev.numel() == 0 || native::min(stddev).item<double>() >= 0, "normal: expected all std >= 0.0");
  Tensor z = empty(stddev.sizes(), stddev.options());
  native::random_(z, native::RandomKind::Normal, 0, 1, gen);
  return native::add(native::mul(z, stddev), native::wrapped_scalar(z, mean));
}

Tensor normal(const Tensor& mean, const Tensor& stddev, Generator* gen) {
  check_floating("normal", mean, "mean");
  check_floating("normal", stddev, "std");
  GR_CHECK(mean.device() == stddev.device(), "normal: mean is on ", mean.device(), " but std is on ", stddev.device());
  GR_CHECK(stddev.numel() == 0 || native::min(stddev).item<double>() >= 0, "normal: expected all std >= 0.0");
  const std::vector<int64_t> shape = native::broadcast_shapes(mean.sizes(), stddev.sizes(), "normal");
  Tensor z = empty(shape, TensorOptions(promote_types(mean.scalar_type(), stddev.scalar_type())).device(mean.device()));
  native::random_(z, native::RandomKind::Normal, 0, 1, gen);
  return native::add(native::mul(z, stddev), mean);
}

Tensor normal(double mean, double stddev, IntArrayRef size, Generator* gen, TensorOptions options) {
  GR_CHECK(stddev >= 0, "normal: expected std >= 0.0, but found std ", stddev);
  GR_CHECK(is_floating_point(options.dtype()), "normal: expected a floating point dtype, got ", options.dtype());
  Tensor out = empty(size, options.requires_grad(false));
  native::random_(out, native::RandomKind::Normal, mean, stddev, gen);
  if (options.requires_grad()) out.set_requires_grad(true);
  return out;
}

}  // namespace gr
