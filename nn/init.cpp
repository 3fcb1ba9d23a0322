// Initialisers: fill parameters in place from a Generator, with PyTorch's formulas. The
// structured ones (eye_, dirac_, orthogonal_, sparse_) build their values in a float64 CPU
// buffer and copy it in, which converts to the tensor's dtype and device.
#include "nn/init.h"

#include <cmath>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/tensor_literal.h"
#include "core/native/copy/copy.h"
#include "core/native/random/random.h"

namespace gr::nn::init {

std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& t) {
  GR_CHECK(t.dim() >= 2, "fan in and fan out can not be computed for tensor with fewer than 2 dimensions (got ",
           t.dim(), ")");
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

double calculate_gain(NonlinearityType nonlinearity, double param) {
  switch (nonlinearity.value()) {
    case Nonlinearity::Linear:
    case Nonlinearity::Conv1D:
    case Nonlinearity::Conv2D:
    case Nonlinearity::Conv3D:
    case Nonlinearity::ConvTranspose1D:
    case Nonlinearity::ConvTranspose2D:
    case Nonlinearity::ConvTranspose3D:
    case Nonlinearity::Sigmoid: return 1.0;
    case Nonlinearity::Tanh: return 5.0 / 3.0;
    case Nonlinearity::ReLU: return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: return std::sqrt(2.0 / (1.0 + param * param));
    case Nonlinearity::SELU: return 3.0 / 4.0;  // PyTorch's choice, for self-normalising networks
  }
  return 1.0;
}

namespace {


// Draws into a fresh contiguous tensor and copies it in, so views and strided
// parameters are filled correctly.
Tensor fill_random(const char* op, const Tensor& t, native::RandomKind kind, double a, double b, Generator* gen) {
  check_floating(op, t, "tensor");
  NoGradGuard no_grad;
  Tensor r = empty(t.sizes(), t.options());
  native::random_(r, kind, a, b, gen);
  native::copy_(t, r);
  return t;
}

// Copies a float64 CPU buffer of t's shape into t (any dtype and device).
Tensor copy_in(const Tensor& t, const std::vector<double>& values) {
  NoGradGuard no_grad;
  native::copy_(t, tensor(values, TensorOptions(kFloat64)).reshape(t.sizes()));
  return t;
}

}  // namespace

Tensor uniform_(Tensor t, double low, double high, Generator* gen) {
  return fill_random("uniform_", t, native::RandomKind::Uniform, low, high, gen);
}
Tensor normal_(Tensor t, double mean, double std, Generator* gen) {
  return fill_random("normal_", t, native::RandomKind::Normal, mean, std, gen);
}

Tensor trunc_normal_(Tensor t, double mean, double std, double a, double b, Generator* gen) {
  check_floating("trunc_normal_", t, "tensor");
  GR_CHECK(std > 0 && a < b, "trunc_normal_: expected std > 0 and a < b, got std=", std, ", a=", a, ", b=", b);
  // Inverse-CDF sampling: U(cdf(a), cdf(b)) mapped back through the normal's quantile
  // (erfinv), computed in float64 so that tails far from the mean keep their precision.
  auto cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
  const double l = cdf((a - mean) / std), u = cdf((b - mean) / std);
  NoGradGuard no_grad;
  Tensor r = empty(t.sizes(), TensorOptions(kFloat64).device(t.device()));
  native::random_(r, native::RandomKind::Uniform, 2 * l - 1, 2 * u - 1, gen);
  r = (gr::erfinv(r) * (std * std::sqrt(2.0)) + mean).clamp(a, b);
  native::copy_(t, r);
  return t;
}

Tensor constant_(Tensor t, Scalar value) {
  GR_CHECK(t.defined(), "constant_: expected a defined tensor");
  NoGradGuard no_grad;
  native::fill_(t, value);
  return t;
}
Tensor zeros_(Tensor t) { return constant_(t, 0.0); }
Tensor ones_(Tensor t) { return constant_(t, 1.0); }

Tensor eye_(Tensor t) {
  GR_CHECK(t.defined() && t.dim() == 2, "eye_: only tensors with 2 dimensions are supported, got shape ",
           t.defined() ? t.sizes() : IntArrayRef());
  const int64_t rows = t.size(0), cols = t.size(1);
  std::vector<double> v(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < std::min(rows, cols); ++i) v[static_cast<size_t>(i * cols + i)] = 1.0;
  return copy_in(t, v);
}

Tensor dirac_(Tensor t, int64_t groups) {
  GR_CHECK(t.defined() && t.dim() >= 3 && t.dim() <= 5,
           "dirac_: only tensors with 3, 4, or 5 dimensions are supported, got shape ",
           t.defined() ? t.sizes() : IntArrayRef());
  GR_CHECK(groups > 0 && t.size(0) % groups == 0, "dirac_: dim 0 (", t.size(0), ") must be divisible by groups (",
           groups, ")");
  const int64_t out_per_group = t.size(0) / groups;
  const int64_t min_dim = std::min(out_per_group, t.size(1));
  // Row-major strides of the contiguous buffer, and the offset of the kernel's centre.
  std::vector<int64_t> strides(static_cast<size_t>(t.dim()), 1);
  for (int64_t d = t.dim() - 2; d >= 0; --d) strides[static_cast<size_t>(d)] = strides[static_cast<size_t>(d + 1)] * t.size(d + 1);
  int64_t centre = 0;
  for (int64_t d = 2; d < t.dim(); ++d) centre += (t.size(d) / 2) * strides[static_cast<size_t>(d)];
  std::vector<double> v(static_cast<size_t>(t.numel()), 0.0);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t d = 0; d < min_dim; ++d)
      v[static_cast<size_t>((g * out_per_group + d) * strides[0] + d * strides[1] + centre)] = 1.0;
  return copy_in(t, v);
}

Tensor orthogonal_(Tensor t, double gain, Generator* gen) {
  GR_CHECK(t.defined() && t.dim() >= 2, "orthogonal_: only tensors with 2 or more dimensions are supported, got shape ",
           t.defined() ? t.sizes() : IntArrayRef());
  if (t.numel() == 0) return t;  // as PyTorch: nothing to fill
  const int64_t rows = t.size(0), cols = t.numel() / rows;
  // Note [Orthogonal init by Gram-Schmidt]: PyTorch takes Q of the QR decomposition of a
  // normal [rows, cols] matrix (transposed when wide) with R's diagonal made positive. That
  // Q is unique, and is exactly what Gram-Schmidt produces; the modified form applied twice
  // keeps it orthogonal to float64 rounding for the sizes weights have.
  const int64_t m = std::max(rows, cols), n = std::min(rows, cols);
  Tensor a = randn({m, n}, TensorOptions(kFloat64), gen).contiguous();
  std::vector<double> q(a.data_ptr<double>(), a.data_ptr<double>() + m * n);  // column j at q[i * n + j]
  for (int64_t j = 0; j < n; ++j) {
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t k = 0; k < j; ++k) {
        double dot = 0;
        for (int64_t i = 0; i < m; ++i) dot += q[i * n + k] * q[i * n + j];
        for (int64_t i = 0; i < m; ++i) q[i * n + j] -= dot * q[i * n + k];
      }
    }
    double norm = 0;
    for (int64_t i = 0; i < m; ++i) norm += q[i * n + j] * q[i * n + j];
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < m; ++i) q[i * n + j] /= norm;
  }
  std::vector<double> v(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)  // a wide tensor takes the transpose
      v[static_cast<size_t>(r * cols + c)] = gain * (rows >= cols ? q[r * n + c] : q[c * n + r]);
  return copy_in(t, v);
}

Tensor sparse_(Tensor t, double sparsity, double std, Generator* gen) {
  GR_CHECK(t.defined() && t.dim() == 2, "sparse_: only tensors with 2 dimensions are supported, got shape ",
           t.defined() ? t.sizes() : IntArrayRef());
  GR_CHECK(sparsity >= 0 && sparsity <= 1, "sparse_: sparsity must be in [0, 1], got ", sparsity);
  const int64_t rows = t.size(0), cols = t.size(1);
  const auto zeros_per_column = static_cast<int64_t>(std::ceil(sparsity * static_cast<double>(rows)));
  Tensor r = randn({rows, cols}, TensorOptions(kFloat64), gen).contiguous();
  std::vector<double> v(r.data_ptr<double>(), r.data_ptr<double>() + rows * cols);
  for (double& x : v) x *= std;
  for (int64_t c = 0; c < cols; ++c) {
    Tensor perm = randperm(rows, gen).contiguous();
    const int64_t* p = perm.data_ptr<int64_t>();
    for (int64_t i = 0; i < zeros_per_column; ++i) v[static_cast<size_t>(p[i] * cols + c)] = 0.0;
  }
  return copy_in(t, v);
}

static double kaiming_std(const char* op, const Tensor& t, double a, FanModeType mode, NonlinearityType nonlinearity) {
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(t);
  int64_t fan = mode.value() == FanMode::FanIn ? fan_in : fan_out;
  GR_CHECK(fan > 0, op, ": cannot initialise a tensor with zero fan (shape ", t.sizes(), ")");
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
}

Tensor kaiming_uniform_(Tensor t, double a, FanModeType mode, NonlinearityType nonlinearity, Generator* gen) {
  if (t.defined() && t.numel() == 0) return t;  // PyTorch: a no-op on zero-element tensors
  double bound = std::sqrt(3.0) * kaiming_std("kaiming_uniform_", t, a, mode, nonlinearity);
  return uniform_(t, -bound, bound, gen);
}
Tensor kaiming_normal_(Tensor t, double a, FanModeType mode, NonlinearityType nonlinearity, Generator* gen) {
  if (t.defined() && t.numel() == 0) return t;
  return normal_(t, 0.0, kaiming_std("kaiming_normal_", t, a, mode, nonlinearity), gen);
}

Tensor xavier_uniform_(Tensor t, double gain, Generator* gen) {
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(t);
  double bound = gain * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return uniform_(t, -bound, bound, gen);
}
Tensor xavier_normal_(Tensor t, double gain, Generator* gen) {
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(t);
  return normal_(t, 0.0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)), gen);
}

}  // namespace gr::nn::init
