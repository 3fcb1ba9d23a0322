// Linear ops recorded with their adjoints, so they are differentiable to any order with the
// native kernels on every path (average pooling, padding, interpolation). See Note [Linear maps].
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "autograd/function.h"
#include "core/native/shape/resample.h"

namespace gr::autograd {

// Note [Linear maps]
// An op that is a linear map P of its input (average pooling, reflect/replicate padding,
// interpolation) has the adjoint P^T as its gradient, and the adjoint's gradient is P again.
// Recording each as the other's backward makes the op differentiable to any order while every
// pass runs the fused native kernels (never a graph of small differentiable ops).
struct LinearMap {
  const char* name;          // the node of P, e.g. "AvgPool2DBackward0"
  const char* adjoint_name;  // the node of P^T
  std::function<Tensor(const Tensor&)> apply, adjoint;
};
using LinearMapPtr = std::shared_ptr<const LinearMap>;

// P(x), or P^T(x) when `adjoint`; each records the other as its backward.
inline Tensor apply_linear_map(const LinearMapPtr& p, const Tensor& x, bool adjoint = false) {
  Tensor out = adjoint ? p->adjoint(x) : p->apply(x);
  if (needs_grad(x))
    record(adjoint ? p->adjoint_name : p->name, {x}, {out},
           [p, adjoint](const TensorList& g, const std::vector<bool>&) {
             return TensorList{apply_linear_map(p, g[0], !adjoint)};
           });
  return out;
}

// One tap table per dim (Note [Taps]), applied in order; the adjoint applies the transposes in
// the reverse order.
struct DimTaps {
  int64_t dim;
  native::TapTable table;
};
inline Tensor apply_taps(const char* name, const char* adjoint_name, const Tensor& x, std::vector<DimTaps> taps) {
  std::vector<DimTaps> adjoint;
  for (auto it = taps.rbegin(); it != taps.rend(); ++it) adjoint.push_back({it->dim, native::transpose(it->table)});
  auto run = [](const std::vector<DimTaps>& ts) {
    return [ts](const Tensor& t) {
      Tensor y = t;
      for (const DimTaps& d : ts) y = native::apply_taps(y, d.dim, d.table);
      return y;
    };
  };
  return apply_linear_map(std::make_shared<const LinearMap>(LinearMap{name, adjoint_name, run(taps), run(adjoint)}), x);
}

}  // namespace gr::autograd
