// where, maximum and minimum with backward; comparisons (not differentiable).
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/elementwise/elementwise.h"
#include "core/native/reduce/reduce.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  Tensor out = native::where(condition, a, b);
  if (autograd::needs_grad(a, b)) {
    record("WhereBackward0", {a, b}, {out},
           [c = condition.detach(), sa = a.sizes().vec(), sb = b.sizes().vec()](const TensorList& g,
                                                                             const std::vector<bool>& needs) {
             Tensor zero = native::wrapped_scalar(g[0], 0);
             return TensorList{needs[0] ? autograd::sum_to(gr::where(c, g[0], zero), sa) : Tensor(),
                               needs[1] ? autograd::sum_to(gr::where(c, zero, g[0]), sb) : Tensor()};
           });
  }
  return out;
}

Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b) {
  return where(condition, a, native::wrapped_scalar(a, b));
}

namespace {
// maximum/minimum: the gradient goes to the chosen input; ties split it in half (as torch).
Tensor extremum(const Tensor& a, const Tensor& b, bool is_max) {
  Tensor out = is_max ? native::maximum(a, b) : native::minimum(a, b);
  if (autograd::needs_grad(a, b)) {
    SavedTensor sa(a), sb(b);
    record(is_max ? "MaximumBackward0" : "MinimumBackward0", {a, b}, {out},
           [sa, sb, is_max, shape_a = a.sizes().vec(), shape_b = b.sizes().vec()](const TensorList& g,
                                                                                  const std::vector<bool>& needs) {
             // The masks are piecewise constant: only g carries history.
             Tensor x = sa.unpack(), y = sb.unpack();
             Tensor half = g[0] * 0.5;
             Tensor zero = native::wrapped_scalar(g[0], 0);
             Tensor tie = native::eq(x, y);
             Tensor a_wins = is_max ? native::gt(x, y) : native::lt(x, y);
             Tensor ga = gr::where(tie, half, gr::where(a_wins, g[0], zero));
             Tensor gb = gr::where(tie, half, gr::where(a_wins, zero, g[0]));
             return TensorList{needs[0] ? autograd::sum_to(ga, shape_a) : Tensor(),
                               needs[1] ? autograd::sum_to(gb, shape_b) : Tensor()};
           });
  }
  return out;
}
}  // namespace

Tensor maximum(const Tensor& a, const Tensor& b) { return extremum(a, b, true); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extremum(a, b, false); }

Tensor eq(const Tensor& a, const Tensor& b) { return native::eq(a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return native::ne(a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return native::gt(a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return native::lt(a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return native::ge(a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return native::le(a, b); }

}  // namespace gr
