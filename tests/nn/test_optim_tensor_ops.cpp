// RMSprop, Adagrad, Adamax, NAdam and RAdam step through fused functors (the ones their CUDA
// multi-tensor steps run); on the CPU they must give, bit for bit, what the tensor ops they
// were written with gave (Note [Tensor-op rounding of the adaptive steps]). The tensor-op
// steps are kept here as the reference, in float32 and float64, with every option, on a
// parameter long enough for the vectorised loop and on a short one (the scalar tail).
#include <cmath>
#include <cstring>
#include <functional>
#include <map>

#include "test_util.h"

using namespace gr;
using namespace gr::optim;

namespace {

// One parameter's state for the reference steps.
struct RefState {
  std::map<std::string, Tensor> s;
  double step = 0, mu_product = 1;
  Tensor& operator[](const std::string& k) { return s[k]; }
};
using RefStep = std::function<void(Tensor& p, const Tensor& g, RefState& r)>;

Tensor decayed(const Tensor& p, const Tensor& g, double wd) { return wd != 0 ? g + p * wd : g; }

RefStep rmsprop_ref(RMSpropOptions o) {
  return [o](Tensor& p, const Tensor& g, RefState& r) {
    if (++r.step == 1) r["square_avg"] = zeros_like(p), r["momentum_buffer"] = zeros_like(p), r["grad_avg"] = zeros_like(p);
    Tensor grad = decayed(p, g, o.weight_decay());
    r["square_avg"].mul_(o.alpha()).add_(grad * grad, 1 - o.alpha());
    Tensor avg;
    if (o.centered()) {
      r["grad_avg"].lerp_(grad, 1 - o.alpha());
      avg = (r["square_avg"] - r["grad_avg"] * r["grad_avg"]).sqrt();
    } else {
      avg = r["square_avg"].sqrt();
    }
    avg.add_(o.eps());
    if (o.momentum() > 0) {
      r["momentum_buffer"].mul_(o.momentum()).add_(grad / avg);
      p.add_(r["momentum_buffer"], -o.lr());
    } else {
      p.add_(grad / avg, -o.lr());
    }
  };
}

RefStep adagrad_ref(AdagradOptions o) {
  return [o](Tensor& p, const Tensor& g, RefState& r) {
    if (++r.step == 1) r["sum"] = zeros_like(p).fill_(o.initial_accumulator_value());
    Tensor grad = decayed(p, g, o.weight_decay());
    const double clr = o.lr() / (1 + (r.step - 1) * o.lr_decay());
    r["sum"].add_(grad * grad);
    p.add_(grad / r["sum"].sqrt().add_(o.eps()), -clr);
  };
}

RefStep adamax_ref(AdamaxOptions o) {
  return [o](Tensor& p, const Tensor& g, RefState& r) {
    const auto [beta1, beta2] = o.betas();
    if (++r.step == 1) r["exp_avg"] = zeros_like(p), r["exp_inf"] = zeros_like(p);
    Tensor grad = decayed(p, g, o.weight_decay());
    r["exp_avg"].lerp_(grad, 1 - beta1);
    r["exp_inf"].copy_(maximum(r["exp_inf"].mul_(beta2), grad.abs().add_(o.eps())));
    p.add_(r["exp_avg"] / r["exp_inf"], -o.lr() / (1 - std::pow(beta1, r.step)));
  };
}

// NAdam's and RAdam's start: weight decay (decoupled, or added to the gradient), then Adam's
// moments. Returns the gradient they used.
template <class Options>
Tensor adam_moments_ref(Tensor& p, const Tensor& g, RefState& r, const Options& o) {
  const auto [beta1, beta2] = o.betas();
  if (++r.step == 1) r["exp_avg"] = zeros_like(p), r["exp_avg_sq"] = zeros_like(p);
  if (o.decoupled_weight_decay()) p.mul_(1 - o.lr() * o.weight_decay());
  Tensor grad = decayed(p, g, o.decoupled_weight_decay() ? 0.0 : o.weight_decay());
  r["exp_avg"].lerp_(grad, 1 - beta1);
  r["exp_avg_sq"].mul_(beta2).add_(grad * grad, 1 - beta2);
  return grad;
}

RefStep nadam_ref(NAdamOptions o) {
  return [o](Tensor& p, const Tensor& g, RefState& r) {
    const Tensor grad = adam_moments_ref(p, g, r, o);
    const auto [beta1, beta2] = o.betas();
    const double lr = o.lr(), step = r.step;
    const double mu = beta1 * (1. - 0.5 * std::pow(0.96, step * o.momentum_decay()));
    const double mu_next = beta1 * (1. - 0.5 * std::pow(0.96, (step + 1) * o.momentum_decay()));
    r.mu_product *= mu;
    Tensor denom = (r["exp_avg_sq"] / (1 - std::pow(beta2, step))).sqrt().add_(o.eps());
    p.add_(grad / denom, -lr * (1. - mu) / (1. - r.mu_product));
    p.add_(r["exp_avg"] / denom, -lr * mu_next / (1. - r.mu_product * mu_next));
  };
}

RefStep radam_ref(RAdamOptions o) {
  return [o](Tensor& p, const Tensor& g, RefState& r) {
    adam_moments_ref(p, g, r, o);
    const auto [beta1, beta2] = o.betas();
    const double lr = o.lr(), step = r.step;
    const double bias_correction2 = 1 - std::pow(beta2, step);
    Tensor corrected = r["exp_avg"] / (1 - std::pow(beta1, step));
    const double rho_inf = 2 / (1 - beta2) - 1;
    const double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bias_correction2;
    if (rho_t > 5.0) {
      const double rect = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
      Tensor adaptive = r["exp_avg_sq"].sqrt().add_(o.eps()).reciprocal_().mul_(std::sqrt(bias_correction2));
      p.add_(corrected * lr * adaptive * rect, -1.0);
    } else {
      p.add_(corrected * lr, -1.0);
    }
  };
}

struct Case {
  std::string name;
  std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>)> make;
  RefStep ref;
};

template <class Opt, class Options>
Case make_case(std::string name, Options o, RefStep (*ref)(Options)) {
  return {std::move(name), [o](std::vector<Tensor> p) { return std::make_unique<Opt>(std::move(p), o); }, ref(o)};
}

// Bit for bit in the Release GCC build; where the compiler contracts multiply-adds differently
// (the sanitizer build's -O1, clang: tests/CMakeLists.txt) the two paths round differently and
// agree to a few ulps of the tensor's largest element (12 steps), which must still hold.
bool same_bits(const Tensor& a, const Tensor& b) {
  const Tensor x = a.contiguous(), y = b.contiguous();
  if (x.scalar_type() != y.scalar_type() || x.sizes() != y.sizes()) return false;
#if GRADRING_TEST_RELEASE_GCC
  return std::memcmp(x.data_ptr(), y.data_ptr(), static_cast<size_t>(x.numel() * x.element_size())) == 0;
#else
  // Relative to the tensor's largest magnitude: a state near zero (a momentum that cancels)
  // differs by the ulps of the terms that made it.
  const double rtol = x.scalar_type() == kFloat32 ? 1e-5 : 1e-13;
  const Tensor diff = (x.to(kFloat64) - y.to(kFloat64)).abs();
  const double scale = y.to(kFloat64).abs().max().item<double>();
  return (diff <= rtol * scale).all().item<bool>();  // NaN fails
#endif
}

}  // namespace

TEST_CASE("RMSprop, Adagrad, Adamax, NAdam and RAdam equal their tensor-op steps bit for bit (float32 and float64)") {
  const std::vector<Case> cases{
      make_case<RMSprop>("rmsprop", RMSpropOptions(0.01), &rmsprop_ref),
      make_case<RMSprop>("rmsprop centered momentum",
                         RMSpropOptions(0.005).alpha(0.9).eps(1e-6).weight_decay(0.01).momentum(0.8).centered(true),
                         &rmsprop_ref),
      make_case<RMSprop>("rmsprop momentum", RMSpropOptions(0.005).alpha(0.97).momentum(0.5), &rmsprop_ref),
      make_case<RMSprop>("rmsprop centered", RMSpropOptions(0.005).centered(true).weight_decay(0.3), &rmsprop_ref),
      make_case<Adagrad>("adagrad", AdagradOptions(0.1), &adagrad_ref),
      make_case<Adagrad>("adagrad decay",
                         // lr_decay a power of two: (step - 1) * lr_decay is exact, so clr does not
                         // depend on whether a compiler fuses it into 1 + ... (adagrad.cpp does
                         // where the CPU has FMA, and this file is not built for this CPU)
                         AdagradOptions(0.2).lr_decay(0.125).weight_decay(0.05).initial_accumulator_value(0.5).eps(1e-8),
                         &adagrad_ref),
      make_case<Adamax>("adamax", AdamaxOptions(), &adamax_ref),
      make_case<Adamax>("adamax wd", AdamaxOptions(0.05).betas({0.7, 0.9}).eps(1e-6).weight_decay(0.1), &adamax_ref),
      make_case<NAdam>("nadam", NAdamOptions(0.01), &nadam_ref),
      make_case<NAdam>("nadam wd", NAdamOptions(0.02).betas({0.8, 0.95}).weight_decay(0.1).momentum_decay(0.01),
                       &nadam_ref),
      make_case<NAdam>("nadam decoupled", NAdamOptions(0.02).weight_decay(0.1).decoupled_weight_decay(true), &nadam_ref),
      make_case<RAdam>("radam", RAdamOptions(0.01), &radam_ref),
      make_case<RAdam>("radam wd", RAdamOptions(0.02).betas({0.8, 0.99}).weight_decay(0.1), &radam_ref),
      make_case<RAdam>("radam decoupled",
                       RAdamOptions(0.02).betas({0.8, 0.99}).weight_decay(0.1).decoupled_weight_decay(true), &radam_ref),
  };
  for (ScalarType dtype : {kFloat32, kFloat64})
    for (const Case& c : cases) {
      CAPTURE(dtype);
      CAPTURE(c.name);
      std::vector<Tensor> params, refs;
      std::vector<RefState> states(2);
      for (int64_t n : {int64_t(1003), int64_t(7)}) {
        Tensor init = ((arange(n, kFloat64) * (0.37 + n)).sin() * 3).to(dtype);
        params.push_back(init.clone().requires_grad_(true));
        refs.push_back(init.clone());
      }
      std::unique_ptr<Optimizer> opt = c.make(params);
      for (int step = 0; step < 12; ++step) {  // RAdam rectifies from step 6 with beta2 0.99
        for (size_t i = 0; i < params.size(); ++i) {
          const int64_t n = params[i].numel();
          Tensor g = ((arange(n, kFloat64) * (0.11 + 0.01 * step)).cos() * (1.0 + step) +
                      refs[i].to(kFloat64) * 0.3).to(dtype);
          params[i].mutable_grad() = g;
          c.ref(refs[i], g, states[i]);
        }
        opt->step();
      }
      for (size_t i = 0; i < params.size(); ++i) {
        CHECK(same_bits(params[i].detach(), refs[i]));
        for (const auto& item : opt->state(params[i]).items())
          if (states[i].s.contains(item.key()) && item.value().numel() == refs[i].numel())
            CHECK_MESSAGE(same_bits(item.value(), states[i][item.key()]), item.key());
      }
    }
}
