// gradcheck: compares analytic gradients (backward) with central finite differences, in
// float64, for every input that requires grad and every output element; gradgradcheck
// does the same for the gradient itself (second derivatives).
#pragma once

#include <functional>

#include "core/tensor.h"

namespace gr::autograd {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  bool raise_exception = true;  // throw gr::Error describing the first mismatch
};

// f maps the inputs to one output tensor. Inputs must be float64; only those that require
// grad are checked. Returns true when every Jacobian entry matches within atol + rtol*|numeric|.
bool gradcheck(const std::function<Tensor(const TensorList&)>& f, const TensorList& inputs,
               const GradcheckOptions& options = {});
bool gradcheck(const std::function<Tensor(const TensorList&)>& f, const TensorList& inputs, double eps, double atol,
               double rtol);

// As torch.autograd.gradgradcheck: a gradcheck of (inputs, v) -> grad(f(inputs), inputs, v,
// create_graph=true), i.e. finite differences of the analytic gradient against its own
// analytic gradient, with respect to the inputs that require grad and to the grad_output
// v. v is grad_outputs[0] when given, else uniform in [-1, 1) from a fixed seed (float64).
// Checks that the backward of f is itself correctly differentiable (Note [Double backward]).
bool gradgradcheck(const std::function<Tensor(const TensorList&)>& f, const TensorList& inputs,
                   const TensorList& grad_outputs = {}, const GradcheckOptions& options = {});

}  // namespace gr::autograd
