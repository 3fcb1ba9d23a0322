// CUDA nll_loss forward and backward (the nll_loss_stub contracts of core/native/loss/loss.h;
// cross_entropy is log_softmax + nll_loss). Forward: one block walks the batch and reduces the
// loss and weight totals in acc_t (deterministic order); backward: a thread per element of
// grad_in, so the zero fill and the target entries are one pass. A target outside [0, C) that
// is not ignored cannot throw here without a host sync: its loss (and so the reduced loss)
// and its gradient row are NaN instead.
#include <cmath>

#include "core/native/loss/loss.h"
#include "cuda_kernels/block_reduce.cuh"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using namespace gr::native;

constexpr int kReduceThreads = 1024;  // the one block of the forward pass
constexpr int kThreads = 256;

// Shapes: x [N, C] contiguous, target [N], weight [C] or null; out [N] (None) or [1].
template <class T>
__global__ void nll_loss_kernel(const T* x, const int64_t* target, const T* weight, T* out, T* total_weight, int64_t N,
                                int64_t C, Reduction reduction, int64_t ignore_index) {
  using Acc = acc_t<T>;
  const T nan = static_cast<T>(NAN);
  Pair<Acc> acc{0, 0};  // (loss, weight)
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
    const int64_t t = target[i];
    T loss = T(0), w = T(0);
    if (t != ignore_index) {
      const bool valid = t >= 0 && t < C;
      w = !valid ? nan : weight ? weight[t] : T(1);
      loss = valid ? nll_term(x[i * C + t], w) : nan;
    }
    if (reduction == Reduction::None) out[i] = loss;
    acc.a += static_cast<Acc>(loss);
    acc.b += static_cast<Acc>(w);
  }
  acc = block_all_reduce(acc, PairSum{});
  if (threadIdx.x == 0) {
    *total_weight = static_cast<T>(acc.b);
    if (reduction != Reduction::None) *out = static_cast<T>(nll_reduce(acc.a, acc.b, reduction));
  }
}

// grad_in [N, C] (every element written), grad_out [N] (None) or [1], total_weight [1].
template <class T>
__global__ void nll_loss_backward_kernel(const T* grad_out, const int64_t* target, const T* weight,
                                         const T* total_weight, T* grad_in, int64_t N, int64_t C, Reduction reduction,
                                         int64_t ignore_index) {
  const int64_t n = N * C;
  for (int64_t k = first_index(); k < n; k += grid_stride()) {
    const int64_t i = k / C, c = k % C;
    const int64_t t = target[i];
    T g = T(0);
    if (t != ignore_index) {
      if (t < 0 || t >= C) g = static_cast<T>(NAN);
      else if (c == t) g = nll_grad(grad_out, i, weight ? weight[t] : T(1), total_weight, reduction);
    }
    grad_in[k] = g;
  }
}

void nll_loss_cuda(const void* input, const int64_t* target, const void* weight, void* out, void* total_weight,
                   int64_t N, int64_t C, Reduction reduction, int64_t ignore_index, ScalarType t) {
  dispatch_floating(t, "nll_loss", [&]<class T>() {
    // N == 0 still writes total_weight (0) and the reduced loss, as the CPU does.
    nll_loss_kernel<<<1, kReduceThreads, 0, current_stream()>>>(
        static_cast<const T*>(input), target, static_cast<const T*>(weight), static_cast<T*>(out),
        static_cast<T*>(total_weight), N, C, reduction, ignore_index);
    GR_CUDA_CHECK_LAUNCH();
  });
}

void nll_loss_backward_cuda(const void* grad_out, const int64_t* target, const void* weight, const void* total_weight,
                            void* grad_in, int64_t N, int64_t C, Reduction reduction, int64_t ignore_index,
                            ScalarType t) {
  if (N * C == 0) return;
  dispatch_floating(t, "nll_loss_backward", [&]<class T>() {
    nll_loss_backward_kernel<<<grid_size(N * C, kThreads), kThreads, 0, current_stream()>>>(
        static_cast<const T*>(grad_out), target, static_cast<const T*>(weight), static_cast<const T*>(total_weight),
        static_cast<T*>(grad_in), N, C, reduction, ignore_index);
    GR_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::nll_loss_stub, kCUDA, &nll_loss_cuda);
GR_REGISTER_KERNEL(native::nll_loss_backward_stub, kCUDA, &nll_loss_backward_cuda);

}  // namespace gr::cuda
