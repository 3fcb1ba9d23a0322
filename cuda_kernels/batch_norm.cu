// CUDA batch-norm pieces (the five stubs of core/native/norm/batch_norm.h, also SyncBatchNorm's
// local statistics and gradient sums). Per-channel reductions: a block per channel, double
// accumulators of (x - k) and (x - k)^2 around a shift k from the data, as on the CPU, with a
// fixed combination order. Element-wise passes: a block row per (n, c) plane when planes are
// long, else a flat grid-stride loop. All per-channel arithmetic is batch_norm.h's.
#include <algorithm>

#include "core/native/norm/batch_norm.h"
#include "cuda_kernels/block_reduce.cuh"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using namespace gr::native;

constexpr int kReduceThreads = 512;  // a multiple of 32 (block_all_reduce)
constexpr int kThreads = 256;
constexpr unsigned kMaxGridY = 65535;

// Shapes: in, grad_out [N, C, S] contiguous; per-channel tensors [C]. Element i of channel c
// (i in [0, N * S)) is at (n * C + c) * S + s with n = i / S, s = i % S.
__device__ __forceinline__ int64_t channel_offset(int64_t i, int64_t c, BatchNormShape s) {
  return ((i / s.S) * s.C + c) * s.S + i % s.S;
}

template <class T>
__global__ void stats_kernel(const T* in, T* mean, T* invstd, BatchNormShape s, double eps) {
  const int64_t count = s.N * s.S;
  for (int64_t c = blockIdx.x; c < s.C; c += gridDim.x) {  // uniform per block: no divergent barrier
    const double k = count > 0 ? static_cast<double>(in[c * s.S]) : 0.0;  // the CPU's shift
    Pair<double> acc{0, 0};
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
      const double d = static_cast<double>(in[channel_offset(i, c, s)]) - k;
      acc.a += d;
      acc.b += d * d;
    }
    acc = block_all_reduce(acc, PairSum{});
    if (threadIdx.x == 0) {
      const BatchNormStats st = batch_norm_finish_stats(acc.a, acc.b, k, count, eps);
      mean[c] = static_cast<T>(st.mean);
      invstd[c] = static_cast<T>(st.invstd);
    }
  }
}

template <class T>
__global__ void backward_reduce_kernel(const T* grad_out, const T* in, const T* mean, const T* invstd, T* sum_dy,
                                       T* sum_dy_xmu, T* grad_weight, T* grad_bias, BatchNormShape s) {
  const int64_t count = s.N * s.S;
  for (int64_t c = blockIdx.x; c < s.C; c += gridDim.x) {
    const double m = static_cast<double>(mean[c]);
    Pair<double> acc{0, 0};
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
      const int64_t at = channel_offset(i, c, s);
      const double dy = static_cast<double>(grad_out[at]);
      acc.a += dy;
      acc.b += dy * (static_cast<double>(in[at]) - m);
    }
    acc = block_all_reduce(acc, PairSum{});
    if (threadIdx.x == 0) {
      sum_dy[c] = static_cast<T>(acc.a);
      sum_dy_xmu[c] = static_cast<T>(acc.b);
      if (grad_weight) grad_weight[c] = static_cast<T>(acc.b * static_cast<double>(invstd[c]));
      if (grad_bias) grad_bias[c] = static_cast<T>(acc.a);
    }
  }
}

// The two element-wise passes as (per-channel coefficients, per-element formula) pairs.
template <class T>
struct Elemt {
  const T *in, *weight, *bias, *mean, *invstd;
  T* out;
  __device__ BatchNormAffine<T> coeffs(int64_t c) const { return batch_norm_affine(weight, bias, mean, invstd, c); }
  __device__ void apply(int64_t i, const BatchNormAffine<T>& k) const { out[i] = in[i] * k.alpha + k.beta; }
};
template <class T>
struct BackwardElemt {
  const T *grad_out, *in, *mean, *invstd, *weight, *sum_dy, *sum_dy_xmu;
  T* grad_in;
  double count;
  __device__ BatchNormBackwardCoeffs<T> coeffs(int64_t c) const {
    return batch_norm_backward_coeffs(mean, invstd, weight, sum_dy, sum_dy_xmu, count, c);
  }
  __device__ void apply(int64_t i, const BatchNormBackwardCoeffs<T>& k) const {
    grad_in[i] = grad_out[i] * k.a + in[i] * k.b + k.d;
  }
};

// Long planes: blockIdx.y walks the N * C planes (coefficients once per plane and thread),
// x-blocks cover a plane's S elements.
template <class Op>
__global__ void planes_kernel(Op op, BatchNormShape s) {
  const int64_t planes = s.N * s.C;
  for (int64_t p = blockIdx.y; p < planes; p += gridDim.y) {
    const auto k = op.coeffs(p % s.C);
    for (int64_t j = first_index(); j < s.S; j += grid_stride())
      op.apply(p * s.S + j, k);
  }
}

// Short planes (S = 1 after a Linear layer): a flat loop, coefficients per element.
template <class Op>
__global__ void flat_kernel(Op op, BatchNormShape s) {
  const int64_t n = s.N * s.C * s.S;
  for (int64_t i = first_index(); i < n; i += grid_stride())
    op.apply(i, op.coeffs((i / s.S) % s.C));
}

template <class Op>
void launch_elementwise(const Op& op, BatchNormShape s) {
  const int64_t n = s.N * s.C * s.S;
  if (n == 0) return;
  cudaStream_t stream = current_stream();
  if (s.S >= kThreads) {
    const unsigned x = grid_size(s.S, kThreads);
    const unsigned cap = std::max(1u, grid_size(n, kThreads) / x);  // keep x * y near what fills the device
    const auto y = static_cast<unsigned>(std::min<int64_t>({s.N * s.C, cap, kMaxGridY}));
    planes_kernel<<<dim3(x, y), kThreads, 0, stream>>>(op, s);
  } else {
    flat_kernel<<<grid_size(n, kThreads), kThreads, 0, stream>>>(op, s);
  }
  GR_CUDA_CHECK_LAUNCH();
}

template <class T>
__global__ void update_stats_kernel(T* running_mean, T* running_var, const T* mean, const T* invstd, int64_t C,
                                    double momentum, double eps, double unbias) {
  for (int64_t c = first_index(); c < C; c += grid_stride())
    batch_norm_running_update(running_mean, running_var, mean, invstd, c, momentum, eps, unbias);
}

// One block per channel, capped at what fills the device.
unsigned channel_blocks(int64_t C) {
  return static_cast<unsigned>(std::min<int64_t>(C, grid_size(C * kReduceThreads, kReduceThreads)));
}

template <class T>
const T* opt(const void* p) {
  return static_cast<const T*>(p);
}

void stats_cuda(const void* in, void* mean, void* invstd, BatchNormShape s, double eps, ScalarType t) {
  if (s.C == 0) return;
  dispatch_floating(t, "batch_norm_stats", [&]<class T>() {
    stats_kernel<<<channel_blocks(s.C), kReduceThreads, 0, current_stream()>>>(opt<T>(in), static_cast<T*>(mean),
                                                                                static_cast<T*>(invstd), s, eps);
    GR_CUDA_CHECK_LAUNCH();
  });
}

void elemt_cuda(const void* in, void* out, const void* weight, const void* bias, const void* mean, const void* invstd,
                BatchNormShape s, ScalarType t) {
  dispatch_floating(t, "batch_norm_elemt", [&]<class T>() {
    launch_elementwise(Elemt<T>{opt<T>(in), opt<T>(weight), opt<T>(bias), opt<T>(mean), opt<T>(invstd),
                                static_cast<T*>(out)},
                       s);
  });
}

void backward_reduce_cuda(const void* grad_out, const void* in, const void* mean, const void* invstd, void* sum_dy,
                          void* sum_dy_xmu, void* grad_weight, void* grad_bias, BatchNormShape s, ScalarType t) {
  if (s.C == 0) return;
  dispatch_floating(t, "batch_norm_backward_reduce", [&]<class T>() {
    backward_reduce_kernel<<<channel_blocks(s.C), kReduceThreads, 0, current_stream()>>>(
        opt<T>(grad_out), opt<T>(in), opt<T>(mean), opt<T>(invstd), static_cast<T*>(sum_dy),
        static_cast<T*>(sum_dy_xmu), static_cast<T*>(grad_weight), static_cast<T*>(grad_bias), s);
    GR_CUDA_CHECK_LAUNCH();
  });
}

void backward_elemt_cuda(const void* grad_out, const void* in, const void* mean, const void* invstd,
                         const void* weight, const void* sum_dy, const void* sum_dy_xmu, void* grad_in, double count,
                         BatchNormShape s, ScalarType t) {
  dispatch_floating(t, "batch_norm_backward_elemt", [&]<class T>() {
    launch_elementwise(BackwardElemt<T>{opt<T>(grad_out), opt<T>(in), opt<T>(mean), opt<T>(invstd), opt<T>(weight),
                                        opt<T>(sum_dy), opt<T>(sum_dy_xmu), static_cast<T*>(grad_in), count},
                       s);
  });
}

void update_stats_cuda(void* running_mean, void* running_var, const void* mean, const void* invstd, int64_t C,
                       double momentum, double eps, double count, ScalarType t) {
  if (C == 0) return;
  dispatch_floating(t, "batch_norm_update_stats", [&]<class T>() {
    update_stats_kernel<<<grid_size(C, kThreads), kThreads, 0, current_stream()>>>(
        static_cast<T*>(running_mean), static_cast<T*>(running_var), opt<T>(mean), opt<T>(invstd), C, momentum, eps,
        batch_norm_unbias(count));
    GR_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::batch_norm_stats_stub, kCUDA, &stats_cuda);
GR_REGISTER_KERNEL(native::batch_norm_elemt_stub, kCUDA, &elemt_cuda);
GR_REGISTER_KERNEL(native::batch_norm_backward_reduce_stub, kCUDA, &backward_reduce_cuda);
GR_REGISTER_KERNEL(native::batch_norm_backward_elemt_stub, kCUDA, &backward_elemt_cuda);
GR_REGISTER_KERNEL(native::batch_norm_update_stats_stub, kCUDA, &update_stats_cuda);

}  // namespace gr::cuda
