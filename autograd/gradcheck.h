// gradcheck: compares analytic gradients (backward) with central finite differences, in
// float64, for every input that requires grad and every output element.
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

}  // namespace gr::autograd
