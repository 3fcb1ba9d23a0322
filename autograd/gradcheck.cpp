// Finite-difference gradient checking, one Jacobian column (input element) at a time.
#include "autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"

namespace gr::autograd {

namespace {

// The output as a flat float64 CPU copy.
std::vector<double> flat_values(const Tensor& t) {
  Tensor c = native::contiguous(native::to_dtype(native::to_device(t, Device(kCPU)), kFloat64));
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

}  // namespace

bool gradcheck(const std::function<Tensor(const TensorList&)>& f, const TensorList& inputs,
               const GradcheckOptions& options) {
  for (size_t i = 0; i < inputs.size(); ++i)
    GR_CHECK(!inputs[i].defined() || !inputs[i].requires_grad() || inputs[i].scalar_type() == kFloat64,
             "gradcheck: input ", i, " requires grad but is ", inputs[i].scalar_type(),
             "; gradcheck needs float64 inputs to be meaningful");
  Tensor out0;
  {
    NoGradGuard no_grad;
    out0 = f(inputs);
  }
  const int64_t n_out = out0.numel();
  GR_CHECK(out0.scalar_type() == kFloat64, "gradcheck: the function's output must be float64, got ",
           out0.scalar_type());

  for (size_t in = 0; in < inputs.size(); ++in) {
    const Tensor& x = inputs[in];
    if (!x.defined() || !x.requires_grad()) continue;
    const int64_t n_in = x.numel();
    // Numeric Jacobian column by column: J[:, j] = (f(x + eps e_j) - f(x - eps e_j)) / 2 eps.
    // Element j is x's j-th element in logical (row-major) order, whatever its strides.
    std::vector<double> numeric(static_cast<size_t>(n_in * n_out));
    {
      NoGradGuard no_grad;
      double* base = x.data_ptr<double>();
      for (int64_t j = 0; j < n_in; ++j) {
        int64_t offset = 0, rem = j;
        for (int64_t d = x.dim() - 1; d >= 0; --d) {
          offset += (rem % x.size(d)) * x.stride(d);
          rem /= x.size(d);
        }
        double* p = base + offset;
        double orig = *p;
        *p = orig + options.eps;
        std::vector<double> plus = flat_values(f(inputs));
        *p = orig - options.eps;
        std::vector<double> minus = flat_values(f(inputs));
        *p = orig;
        for (int64_t k = 0; k < n_out; ++k) numeric[k * n_in + j] = (plus[k] - minus[k]) / (2 * options.eps);
      }
    }
    // Analytic Jacobian row by row: backward with a one-hot output gradient. An output
    // without history (the gradient of a piecewise-constant op, say) has a zero Jacobian,
    // which the numeric one must match, as torch's gradcheck requires.
    Tensor out = f(inputs);
    for (int64_t k = 0; k < n_out; ++k) {
      std::vector<double> analytic(static_cast<size_t>(n_in), 0.0);
      if (out.requires_grad()) {
        Tensor seed = zeros(out.sizes(), out.options());
        seed.data_ptr<double>()[k] = 1.0;
        TensorList g = grad({out}, {x}, {seed}, /*retain_graph=*/true, /*create_graph=*/false, /*allow_unused=*/true);
        if (g[0].defined()) analytic = flat_values(g[0]);
      }
      for (int64_t j = 0; j < n_in; ++j) {
        double a = analytic[j], n = numeric[k * n_in + j];
        if (std::fabs(a - n) > options.atol + options.rtol * std::fabs(n) || std::isnan(a) != std::isnan(n)) {
          if (!options.raise_exception) return false;
          std::ostringstream msg;
          msg << "gradcheck: Jacobian mismatch for output " << k << " with respect to input " << in << " element "
              << j << ": numerical " << n << ", analytical " << a << " (input shape " << x.sizes() << ", output shape "
              << out0.sizes() << ")";
          GR_ERROR(msg.str());
        }
      }
    }
  }
  return true;
}

bool gradcheck(const std::function<Tensor(const TensorList&)>& f, const TensorList& inputs, double eps, double atol,
               double rtol) {
  return gradcheck(f, inputs, GradcheckOptions{eps, atol, rtol, true});
}

bool gradgradcheck(const std::function<Tensor(const TensorList&)>& f, const TensorList& inputs,
                   const TensorList& grad_outputs, const GradcheckOptions& options) {
  GR_CHECK(grad_outputs.size() <= 1, "gradgradcheck: f has one output but ", grad_outputs.size(),
           " grad_outputs were given");
  Tensor v;
  if (!grad_outputs.empty() && grad_outputs[0].defined()) {
    v = grad_outputs[0];
  } else {
    Tensor out;
    {
      NoGradGuard no_grad;
      out = f(inputs);
    }
    Generator gen(0x5eed);
    v = (rand(out.sizes(), TensorOptions(kFloat64).device(out.device()), &gen) * 2.0 - 1.0).requires_grad_(true);
  }
  std::vector<size_t> differentiable;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].requires_grad()) differentiable.push_back(i);
  GR_CHECK(!differentiable.empty(), "gradgradcheck: no input requires grad");
  const size_t n = inputs.size();
  // The first-order gradients of all differentiable inputs, flattened into one tensor;
  // args = inputs followed by v.
  auto first_order = [&f, &differentiable, n](const TensorList& args) {
    AutoGradMode grad_mode(true);  // gradcheck evaluates f under no_grad for its numeric part
    TensorList in(args.begin(), args.begin() + static_cast<int64_t>(n));
    TensorList wrt;
    for (size_t i : differentiable) wrt.push_back(in[i]);
    Tensor out = f(in);
    GR_CHECK(out.requires_grad(), "gradgradcheck: the function's output does not require grad");
    TensorList grads = grad({out}, wrt, {args[n]}, /*retain_graph=*/true, /*create_graph=*/true,
                            /*allow_unused=*/true);
    TensorList flat;
    for (size_t k = 0; k < grads.size(); ++k)
      flat.push_back((grads[k].defined() ? grads[k] : zeros_like(wrt[k])).reshape({-1}));
    return cat(flat);
  };
  TensorList args = inputs;
  args.push_back(v);
  return gradcheck(first_order, args, options);
}

}  // namespace gr::autograd
