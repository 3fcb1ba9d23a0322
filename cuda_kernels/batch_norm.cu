// CUDA batch-norm pieces (the five stubs of core/native/norm/batch_norm.h, also SyncBatchNorm's
// local statistics and gradient sums). Per-channel reductions: each channel split across
// blocks (Note [Split channel reductions]), double accumulators of (x - k) and (x - k)^2
// around a shift k from the data, as on the CPU, partials combined in a fixed order.
// Element-wise passes: a flat loop, four elements per thread in flight. Index splits use
// IntDividers (Note [Fast index division]). All per-channel arithmetic is batch_norm.h's.
#include <algorithm>

#include "core/factory.h"
#include "core/native/norm/batch_norm.h"
#include "cuda_kernels/block_reduce.cuh"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/int_divider.h"
#include "cuda_kernels/launch_plan.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using namespace gr::native;

constexpr int kReduceThreads = 256;  // a multiple of 32 (block_all_reduce)
constexpr int kThreads = 256;
constexpr int kUnroll = 4;           // loads in flight per thread
constexpr int64_t kMinChunk = 4 * kReduceThreads * kUnroll;

// Shapes: in, grad_out [N, C, S] contiguous; per-channel tensors [C]. Value j of channel c
// (j in [0, N * S)) is at (n * C + c) * S + s with n = j / S, s = j % S; value i of the
// tensor is in channel (i / S) % C. `narrow`: N * C * S < 2^31, the dividers apply.
struct Index {
  BatchNormShape s;
  bool narrow;
  IntDivider by_S, by_C;
  __device__ __forceinline__ int64_t in_channel(int64_t j, int64_t c) const {
    if (narrow) {
      const DivMod ns = by_S.divmod(static_cast<uint32_t>(j));
      return (static_cast<int64_t>(ns.div) * s.C + c) * s.S + ns.mod;
    }
    return ((j / s.S) * s.C + c) * s.S + j % s.S;
  }
  __device__ __forceinline__ int64_t channel_of(int64_t i) const {
    if (narrow) return by_C.divmod(by_S.div(static_cast<uint32_t>(i))).mod;
    return (i / s.S) % s.C;
  }
};

Index make_index(BatchNormShape s) {
  Index ix{s, fits_31_bits(s.N * s.C * s.S), IntDivider(), IntDivider()};
  if (ix.narrow && s.S > 0 && s.C > 0) {
    ix.by_S = IntDivider(static_cast<uint32_t>(s.S));
    ix.by_C = IntDivider(static_cast<uint32_t>(s.C));
  }
  return ix;
}

// Partial sums over chunk `part` of channel c: (x - k, (x - k)^2) for the statistics,
// (dy, dy * (x - mean)) for the backward. Every thread of the block calls; the result is
// block-wide.
template <class Term>
__device__ Pair<double> chunk_sums(const Index& ix, int64_t c, int64_t part, int64_t chunk, const Term& term) {
  const int64_t count = ix.s.N * ix.s.S;
  const int64_t j0 = part * chunk, j1 = j0 + chunk < count ? j0 + chunk : count;
  Pair<double> acc{0, 0};
  for (int64_t j = j0 + threadIdx.x; j < j1; j += kUnroll * blockDim.x) {
    Pair<double> t[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {  // all loads first
      const int64_t ju = j + u * static_cast<int64_t>(blockDim.x);
      t[u] = ju < j1 ? term(ix.in_channel(ju, c)) : Pair<double>{0, 0};
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc.a += t[u].a, acc.b += t[u].b;
  }
  return block_all_reduce(acc, PairSum{});
}

template <class T>
struct StatsTerm {
  const T* in;
  double k;
  __device__ Pair<double> operator()(int64_t at) const {
    const double d = static_cast<double>(in[at]) - k;
    return {d, d * d};
  }
};

// Blocks walk (channel, chunk) pairs. With one chunk per channel the block finishes the
// channel itself; otherwise it leaves its partial for stats_finish_kernel.
template <class T>
__global__ void stats_kernel(const T* in, T* mean, T* invstd, Pair<double>* partial, Index ix, int64_t splits,
                             int64_t chunk, double eps) {
  const BatchNormShape s = ix.s;
  for (int64_t b = blockIdx.x; b < s.C * splits; b += gridDim.x) {  // uniform per block: no divergent barrier
    const int64_t c = b / splits, part = b % splits;
    const double k = static_cast<double>(in[c * s.S]);  // the CPU's shift: the channel's first value
    const Pair<double> acc = chunk_sums(ix, c, part, chunk, StatsTerm<T>{in, k});
    if (threadIdx.x != 0) continue;
    if (splits > 1) {
      partial[b] = acc;
    } else {
      const BatchNormStats st = batch_norm_finish_stats(acc.a, acc.b, k, s.N * s.S, eps);
      mean[c] = static_cast<T>(st.mean);
      invstd[c] = static_cast<T>(st.invstd);
    }
  }
}

// A channel's partials added in chunk order (splits == 0: an empty channel).
template <class T>
__global__ void stats_finish_kernel(const T* in, T* mean, T* invstd, const Pair<double>* partial, BatchNormShape s,
                                    int64_t splits, double eps) {
  for (int64_t c = first_index(); c < s.C; c += grid_stride()) {
    const int64_t count = s.N * s.S;
    const double k = count > 0 ? static_cast<double>(in[c * s.S]) : 0.0;
    Pair<double> acc{0, 0};
    for (int64_t p = 0; p < splits; ++p) acc.a += partial[c * splits + p].a, acc.b += partial[c * splits + p].b;
    const BatchNormStats st = batch_norm_finish_stats(acc.a, acc.b, k, count, eps);
    mean[c] = static_cast<T>(st.mean);
    invstd[c] = static_cast<T>(st.invstd);
  }
}

template <class T>
struct BackwardTerm {
  const T *grad_out, *in;
  double m;
  __device__ Pair<double> operator()(int64_t at) const {
    const double dy = static_cast<double>(grad_out[at]);
    return {dy, dy * (static_cast<double>(in[at]) - m)};
  }
};

template <class T>
struct BackwardSums {
  T *sum_dy, *sum_dy_xmu, *grad_weight, *grad_bias;
  const T* invstd;
  __device__ void write(int64_t c, Pair<double> acc) const {
    sum_dy[c] = static_cast<T>(acc.a);
    sum_dy_xmu[c] = static_cast<T>(acc.b);
    if (grad_weight) grad_weight[c] = static_cast<T>(acc.b * static_cast<double>(invstd[c]));
    if (grad_bias) grad_bias[c] = static_cast<T>(acc.a);
  }
};

template <class T>
__global__ void backward_reduce_kernel(const T* grad_out, const T* in, const T* mean, BackwardSums<T> out,
                                       Pair<double>* partial, Index ix, int64_t splits, int64_t chunk) {
  const BatchNormShape s = ix.s;
  for (int64_t b = blockIdx.x; b < s.C * splits; b += gridDim.x) {
    const int64_t c = b / splits, part = b % splits;
    const Pair<double> acc =
        chunk_sums(ix, c, part, chunk, BackwardTerm<T>{grad_out, in, static_cast<double>(mean[c])});
    if (threadIdx.x != 0) continue;
    if (splits > 1) partial[b] = acc;
    else out.write(c, acc);
  }
}

template <class T>
__global__ void backward_finish_kernel(BackwardSums<T> out, const Pair<double>* partial, int64_t C, int64_t splits) {
  for (int64_t c = first_index(); c < C; c += grid_stride()) {
    Pair<double> acc{0, 0};
    for (int64_t p = 0; p < splits; ++p) acc.a += partial[c * splits + p].a, acc.b += partial[c * splits + p].b;
    out.write(c, acc);
  }
}

// The two element-wise passes as (per-channel coefficients, per-element formula) pairs, the
// loads of an element apart from the formula so a thread issues four elements' loads at once.
template <class T>
struct Elemt {
  const T *in, *weight, *bias, *mean, *invstd;
  T* out;
  using Loaded = T;
  __device__ Loaded load(int64_t i) const { return in[i]; }
  __device__ void store(int64_t i, Loaded x, int64_t c) const {
    const BatchNormAffine<T> k = batch_norm_affine(weight, bias, mean, invstd, c);
    out[i] = x * k.alpha + k.beta;
  }
};
template <class T>
struct BackwardElemt {
  const T *grad_out, *in, *mean, *invstd, *weight, *sum_dy, *sum_dy_xmu;
  T* grad_in;
  double count;
  using Loaded = Pair<T>;
  __device__ Loaded load(int64_t i) const { return {grad_out[i], in[i]}; }
  __device__ void store(int64_t i, Loaded v, int64_t c) const {
    const BatchNormBackwardCoeffs<T> k = batch_norm_backward_coeffs(mean, invstd, weight, sum_dy, sum_dy_xmu, count, c);
    grad_in[i] = v.a * k.a + v.b * k.b + k.d;
  }
};

template <class Op>
__global__ void elementwise_kernel(Op op, Index ix) {
  const int64_t n = ix.s.N * ix.s.C * ix.s.S;
  const int64_t step = static_cast<int64_t>(kUnroll) * blockDim.x * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kUnroll * blockDim.x + threadIdx.x; i < n; i += step) {
    typename Op::Loaded v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t iu = i + u * static_cast<int64_t>(blockDim.x);
      if (iu < n) v[u] = op.load(iu);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t iu = i + u * static_cast<int64_t>(blockDim.x);
      if (iu < n) op.store(iu, v[u], ix.channel_of(iu));
    }
  }
}

template <class Op>
void launch_elementwise(const Op& op, BatchNormShape s) {
  const int64_t n = s.N * s.C * s.S;
  if (n == 0) return;
  elementwise_kernel<<<grid_size((n + kUnroll - 1) / kUnroll, kThreads), kThreads, 0, current_stream()>>>(
      op, make_index(s));
  GR_CUDA_CHECK_LAUNCH();
}

template <class T>
__global__ void update_stats_kernel(T* running_mean, T* running_var, const T* mean, const T* invstd, int64_t C,
                                    double momentum, double eps, double unbias) {
  for (int64_t c = first_index(); c < C; c += grid_stride())
    batch_norm_running_update(running_mean, running_var, mean, invstd, c, momentum, eps, unbias);
}

// The split of this problem's channels, and room for the partials when there are several.
struct Reduction {
  ChannelSplit split;
  Tensor partial;  // [C, splits] pairs of doubles, when splits > 1
  unsigned blocks = 0;
};
Reduction plan_reduction(BatchNormShape s) {
  Reduction r;
  // About eight blocks of kReduceThreads per SM (grid_size's cap is 32 per SM): 2048 threads,
  // each with kUnroll loads in flight.
  const int64_t target = static_cast<int64_t>(grid_size(int64_t(1) << 40, kReduceThreads)) / 4;
  r.split = split_channels(s.C, s.N * s.S, target, kMinChunk);
  if (r.split.splits > 1)
    r.partial = empty({s.C * r.split.splits * 2}, TensorOptions(kFloat64).device(Device(kCUDA, current_device())));
  r.blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(s.C * r.split.splits, 65535)));
  return r;
}
Pair<double>* partials(const Reduction& r) {
  return r.partial.defined() ? reinterpret_cast<Pair<double>*>(r.partial.data_ptr()) : nullptr;
}

template <class T>
const T* opt(const void* p) {
  return static_cast<const T*>(p);
}

void stats_cuda(const void* in, void* mean, void* invstd, BatchNormShape s, double eps, ScalarType t) {
  if (s.C == 0) return;
  const Reduction r = plan_reduction(s);
  dispatch_floating(t, "batch_norm_stats", [&]<class T>() {
    cudaStream_t stream = current_stream();
    if (r.split.splits > 0) {
      stats_kernel<<<r.blocks, kReduceThreads, 0, stream>>>(opt<T>(in), static_cast<T*>(mean), static_cast<T*>(invstd),
                                                            partials(r), make_index(s), r.split.splits, r.split.chunk,
                                                            eps);
      GR_CUDA_CHECK_LAUNCH();
    }
    if (r.split.splits != 1) {  // several chunks, or empty channels
      stats_finish_kernel<<<grid_size(s.C, kThreads), kThreads, 0, stream>>>(
          opt<T>(in), static_cast<T*>(mean), static_cast<T*>(invstd), partials(r), s, r.split.splits, eps);
      GR_CUDA_CHECK_LAUNCH();
    }
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
  const Reduction r = plan_reduction(s);
  dispatch_floating(t, "batch_norm_backward_reduce", [&]<class T>() {
    cudaStream_t stream = current_stream();
    const BackwardSums<T> out{static_cast<T*>(sum_dy), static_cast<T*>(sum_dy_xmu), static_cast<T*>(grad_weight),
                              static_cast<T*>(grad_bias), opt<T>(invstd)};
    if (r.split.splits > 0) {
      backward_reduce_kernel<<<r.blocks, kReduceThreads, 0, stream>>>(opt<T>(grad_out), opt<T>(in), opt<T>(mean), out,
                                                                      partials(r), make_index(s), r.split.splits,
                                                                      r.split.chunk);
      GR_CUDA_CHECK_LAUNCH();
    }
    if (r.split.splits != 1) {
      backward_finish_kernel<<<grid_size(s.C, kThreads), kThreads, 0, stream>>>(out, partials(r), s.C,
                                                                                r.split.splits);
      GR_CUDA_CHECK_LAUNCH();
    }
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
