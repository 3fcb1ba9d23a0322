// softmax and log_softmax with backward (both read the saved output; fused kernel for
// first-order passes, gr:: ops under create_graph).
#include "autograd/autocast.h"
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/activation/softmax.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {
Tensor softmax_op(const Tensor& x, int64_t dim, bool log) {
  Tensor out = native::softmax(x, dim, log);
  if (autograd::needs_grad(x)) {
    SavedTensor so(out, /*is_output=*/true);
    record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {x}, {out},
           [so, dim, log](const TensorList& g, const std::vector<bool>&) {
             Tensor y = so.unpack();
             if (!autograd::needs_grad(g[0], y)) return TensorList{native::softmax_backward(g[0], y, dim, log)};
             // The fused kernel's formulas with gr:: ops (Note [Double backward]):
             // log_softmax: g - exp(y) * sum(g); softmax: y * (g - sum(g * y)).
             if (log) return TensorList{g[0] - gr::exp(y) * gr::sum(g[0], {dim}, true)};
             return TensorList{y * (g[0] - gr::sum(g[0] * y, {dim}, true))};
           });
  }
  return out;
}
}  // namespace

Tensor log_softmax(const Tensor& x, int64_t dim) {
  GR_AUTOCAST(log_softmax, x, dim);  // float32 under CUDA autocast (Note [Autocast policy table])
  return softmax_op(x, dim, true);
}
Tensor softmax(const Tensor& x, int64_t dim) {
  GR_AUTOCAST(softmax, x, dim);
  return softmax_op(x, dim, false);
}

}  // namespace gr
