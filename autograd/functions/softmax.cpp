// softmax and log_softmax with backward (both read the saved output).
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/softmax.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {
Tensor softmax_op(const Tensor& x, int64_t dim, bool log) {
  Tensor out = native::softmax(x, dim, log);
  if (autograd::needs_grad(x)) {
    SavedTensor so(out);
    record(log ? "LogSoftmaxBackward" : "SoftmaxBackward", {x}, {out},
           [so, dim, log](const TensorList& g, const std::vector<bool>&) {
             return TensorList{native::softmax_backward(g[0], so.unpack(), dim, log)};
           });
  }
  return out;
}
}  // namespace

Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_op(x, dim, true); }
Tensor softmax(const Tensor& x, int64_t dim) { return softmax_op(x, dim, false); }

}  // namespace gr
