// Initialisers: fill parameters in place from a Generator.
#include "nn/init.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/random.h"

namespace gr::nn::init {

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  GR_CHECK(t.dim() >= 2, "fan in and fan out can not be computed for tensor with fewer than 2 dimensions (got ",
           t.dim(), ")");
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

double calculate_gain(Nonlinearity nonlinearity, double param) {
  switch (nonlinearity) {
    case Nonlinearity::Linear:
    case Nonlinearity::Sigmoid: return 1.0;
    case Nonlinearity::Tanh: return 5.0 / 3.0;
    case Nonlinearity::ReLU: return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: return std::sqrt(2.0 / (1.0 + param * param));
  }
  return 1.0;
}

namespace {
// Draws into a fresh contiguous tensor and copies it in, so views and strided
// parameters are filled correctly.
Tensor& fill_random(Tensor& t, native::RandomKind kind, double a, double b, Generator* gen) {
  GR_CHECK(t.defined() && t.is_floating_point(), "init: expected a defined floating point tensor");
  NoGradGuard no_grad;
  Tensor r = empty(t.sizes(), t.options());
  native::random_(r, kind, a, b, gen);
  native::copy_(t, r);
  return t;
}
}  // namespace

Tensor& uniform_(Tensor& t, double low, double high, Generator* gen) {
  return fill_random(t, native::RandomKind::Uniform, low, high, gen);
}
Tensor& normal_(Tensor& t, double mean, double std, Generator* gen) {
  return fill_random(t, native::RandomKind::Normal, mean, std, gen);
}
Tensor& constant_(Tensor& t, double value) {
  NoGradGuard no_grad;
  native::fill_(t, value);
  return t;
}
Tensor& zeros_(Tensor& t) { return constant_(t, 0.0); }
Tensor& ones_(Tensor& t) { return constant_(t, 1.0); }

static double kaiming_std(const Tensor& t, double a, FanMode mode, Nonlinearity nonlinearity) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  int64_t fan = mode == FanMode::FanIn ? fan_in : fan_out;
  GR_CHECK(fan > 0, "kaiming init: cannot initialise a tensor with zero fan (shape ", t.sizes(), ")");
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
}

Tensor& kaiming_uniform_(Tensor& t, double a, FanMode mode, Nonlinearity nonlinearity, Generator* gen) {
  double bound = std::sqrt(3.0) * kaiming_std(t, a, mode, nonlinearity);
  return uniform_(t, -bound, bound, gen);
}
Tensor& kaiming_normal_(Tensor& t, double a, FanMode mode, Nonlinearity nonlinearity, Generator* gen) {
  return normal_(t, 0.0, kaiming_std(t, a, mode, nonlinearity), gen);
}

Tensor& xavier_uniform_(Tensor& t, double gain, Generator* gen) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  double bound = gain * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return uniform_(t, -bound, bound, gen);
}
Tensor& xavier_normal_(Tensor& t, double gain, Generator* gen) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return normal_(t, 0.0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)), gen);
}

}  // namespace gr::nn::init
