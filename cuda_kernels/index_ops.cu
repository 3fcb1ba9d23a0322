// CUDA kernels of the indexing ops (the contracts of core/native/index_ops.h): gather, scatter
// (plain stores, or atomic add/multiply: positions may repeat; in the CPU's order without
// atomics under deterministic algorithms, Note [Deterministic scatter]), the offsets of advanced
// indexing, masked_fill (gpu_map with the shared functor) and nonzero (thrust's copy_if, then
// one thread per nonzero unravels its flat position). An invalid index reads NaN (0 for
// integers) and writes nothing: see Note [Index errors].
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>

#include <cstring>

#include "core/deterministic.h"
#include "core/factory.h"
#include "core/index_functors.h"
#include "core/native/copy.h"
#include "core/native/index_ops.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/loops.cuh"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using native::IndexAxis;
using native::ScatterReduce;
namespace F = gr::functors;

constexpr int kThreads = 256;

// The position an index addresses, or -1 when it is outside the axis.
template <class I>
__device__ __forceinline__ int64_t position(I raw, const IndexAxis& axis) {
  int64_t i = static_cast<int64_t>(raw);
  if (axis.wrap && i < 0) i += axis.size;
  return (i < 0 || i >= axis.size) ? -1 : i;
}

// Loop {out, src (restrided), index}.
template <class T, class I>
__global__ void gather_kernel(LoopArgs<3> a, IndexAxis axis) {
  for (int64_t e = first_index(); e < a.numel; e += grid_stride()) {
    int64_t off[3];
    detail::loop_offsets(a, e, off);
    const int64_t i = position(reinterpret_cast<const I*>(a.data[2])[off[2]], axis);
    reinterpret_cast<T*>(a.data[0])[off[0]] =
        i < 0 ? F::invalid_index_value<T>() : reinterpret_cast<const T*>(a.data[1])[off[1] + i * axis.stride];
  }
}

void gather_cuda(const native::StridedLoop& L, ScalarType t, ScalarType index_t, IndexAxis axis) {
  if (L.numel == 0) return;
  dispatch_all(t, "gather", [&]<class T>() {
    dispatch_index(index_t, "gather", [&]<class I>() {
      gather_kernel<T, I><<<grid_size(L.numel, kThreads), kThreads, 0, current_stream()>>>(make_loop_args<3>(L, "gather"),
                                                                                          axis);
      GR_CUDA_CHECK_LAUNCH();
    });
  });
}

// *addr = op(*addr, v) atomically, by compare-and-swap on the word holding *addr (bytes and
// halves share a 32-bit word with their neighbours, which the swap leaves as it found them).
template <class T, class Op>
__device__ void atomic_combine(T* addr, T v, const Op& op) {
  if constexpr (sizeof(T) == 8 || sizeof(T) == 4) {
    using W = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned int>;
    W* word = reinterpret_cast<W*>(addr);
    W old = *word, assumed;
    do {
      assumed = old;
      T cur, next;
      memcpy(&cur, &assumed, sizeof(T));
      next = op(cur, v);
      W bits;
      memcpy(&bits, &next, sizeof(T));
      old = atomicCAS(word, assumed, bits);
    } while (assumed != old);
  } else {
    const uintptr_t p = reinterpret_cast<uintptr_t>(addr);
    unsigned int* word = reinterpret_cast<unsigned int*>(p & ~uintptr_t(3));
    const unsigned shift = static_cast<unsigned>(p & 3) * 8;
    const unsigned mask = ((1u << (8 * sizeof(T))) - 1u) << shift;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      const unsigned field = (assumed & mask) >> shift;
      T cur;
      memcpy(&cur, &field, sizeof(T));  // little-endian: the low bytes
      const T next = op(cur, v);
      unsigned bits = 0;
      memcpy(&bits, &next, sizeof(T));
      old = atomicCAS(word, assumed, (assumed & ~mask) | (bits << shift));
    } while (assumed != old);
  }
}

template <class T>
__device__ __forceinline__ void atomic_add(T* addr, T v, T alpha) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) atomicAdd(addr, alpha * v);
  else if constexpr (std::is_same_v<T, int64_t>)
    atomicAdd(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(alpha * v));
  else atomic_combine(addr, v, F::ScatterAdd<T>{alpha});
}

struct ScatterArgs {
  LoopArgs<3> rest;
  int64_t n;
  int64_t step[3];
};

// Element e of the pass is step j = e % n of rest position e / n (Note [Scatter loops]).
template <class T, class I>
__global__ void scatter_kernel(ScatterArgs s, IndexAxis axis, ScatterReduce reduce, T alpha) {
  const int64_t total = s.rest.numel * s.n;
  for (int64_t e = first_index(); e < total; e += grid_stride()) {
    const int64_t j = e % s.n;
    int64_t off[3];
    detail::loop_offsets(s.rest, e / s.n, off);
    const int64_t i = position(reinterpret_cast<const I*>(s.rest.data[2])[off[2] + j * s.step[2]], axis);
    if (i < 0) continue;
    T* dst = reinterpret_cast<T*>(s.rest.data[0]) + off[0] + i * axis.stride;
    const T v = reinterpret_cast<const T*>(s.rest.data[1])[off[1] + j * s.step[1]];
    if (reduce == ScatterReduce::None) *dst = v;
    else if (reduce == ScatterReduce::Add) atomic_add(dst, v, alpha);
    else atomic_combine(dst, v, F::ScatterMul<T>{});
  }
}

// The deterministic schedule (Note [Deterministic scatter]): a thread per rest position,
// taking its n steps in order with the CPU's functors and no atomics. Launched with one
// thread, it runs every position in order (a serial pass).
template <class T, class I, class Op>
__global__ void scatter_in_order_kernel(ScatterArgs s, IndexAxis axis, Op op) {
  for (int64_t r = first_index(); r < s.rest.numel; r += grid_stride()) {
    int64_t off[3];
    detail::loop_offsets(s.rest, r, off);
    for (int64_t j = 0; j < s.n; ++j) {
      const int64_t i = position(reinterpret_cast<const I*>(s.rest.data[2])[off[2] + j * s.step[2]], axis);
      if (i < 0) continue;
      T* dst = reinterpret_cast<T*>(s.rest.data[0]) + off[0] + i * axis.stride;
      *dst = op(*dst, reinterpret_cast<const T*>(s.rest.data[1])[off[1] + j * s.step[1]]);
    }
  }
}

void scatter_cuda(const native::ScatterLoop& S, ScalarType t, ScalarType index_t, IndexAxis axis, ScatterReduce reduce,
                  const Scalar& alpha) {
  const int64_t total = S.rest.numel * S.n;
  if (total == 0) return;
  ScatterArgs args{make_loop_args<3>(S.rest, "scatter"), S.n, {S.step[0], S.step[1], S.step[2]}};
  const native::ScatterSchedule schedule = native::scatter_schedule(S, t, reduce, are_deterministic_algorithms_enabled());
  dispatch_all(t, "scatter", [&]<class T>() {
    dispatch_index(index_t, "scatter", [&]<class I>() {
      cudaStream_t stream = current_stream();
      if (schedule == native::ScatterSchedule::kPerElement) {
        scatter_kernel<T, I><<<grid_size(total, kThreads), kThreads, 0, stream>>>(args, axis, reduce, alpha.to<T>());
      } else {
        const bool one = schedule == native::ScatterSchedule::kSingleThread;
        const unsigned blocks = one ? 1 : grid_size(S.rest.numel, kThreads), threads = one ? 1 : kThreads;
        auto launch = [&](auto op) {
          scatter_in_order_kernel<T, I><<<blocks, threads, 0, stream>>>(args, axis, op);
        };
        if (reduce == ScatterReduce::None) launch(F::ScatterAssign<T>{});
        else if (reduce == ScatterReduce::Add) launch(F::ScatterAdd<T>{alpha.to<T>()});
        else launch(F::ScatterMul<T>{});
      }
      GR_CUDA_CHECK_LAUNCH();
    });
  });
}

// Loop {offsets, index}: an invalid index (or an earlier one) leaves -1.
template <class I>
__global__ void offsets_kernel(LoopArgs<2> a, IndexAxis axis) {
  for (int64_t e = first_index(); e < a.numel; e += grid_stride()) {
    int64_t off[2];
    detail::loop_offsets(a, e, off);
    int64_t& o = reinterpret_cast<int64_t*>(a.data[0])[off[0]];
    const int64_t i = position(reinterpret_cast<const I*>(a.data[1])[off[1]], axis);
    o = (o < 0 || i < 0) ? -1 : o + i * axis.stride;
  }
}

void offsets_cuda(const native::StridedLoop& L, ScalarType index_t, IndexAxis axis) {
  if (L.numel == 0) return;
  dispatch_index(index_t, "index", [&]<class I>() {
    offsets_kernel<I><<<grid_size(L.numel, kThreads), kThreads, 0, current_stream()>>>(make_loop_args<2>(L, "index"),
                                                                                      axis);
    GR_CUDA_CHECK_LAUNCH();
  });
}

void masked_fill_cuda(const native::StridedLoop& L, ScalarType t, const Scalar& value) {
  dispatch_all(t, "masked_fill", [&]<class T>() {
    gpu_map<T, T, bool>(L, F::MaskedFill<T>{value.to<T>()}, current_stream(), "masked_fill");
  });
}

template <class T>
struct NonzeroAt {
  const T* data;
  __device__ bool operator()(int64_t i) const { return F::is_nonzero(data[i]); }
};

struct Sizes {
  int64_t size[kMaxLoopDims];
};

// flat [count] row-major positions -> out [count, nd] coordinates.
__global__ void unravel_kernel(const int64_t* flat, int64_t* out, int64_t count, int nd, Sizes sizes) {
  for (int64_t k = first_index(); k < count; k += grid_stride()) {
    int64_t rem = flat[k];
    for (int d = nd - 1; d >= 0; --d) {
      out[k * nd + d] = rem % sizes.size[d];
      rem /= sizes.size[d];
    }
  }
}

Tensor nonzero_cuda(const Tensor& self) {
  Tensor x = native::contiguous(self);
  const int64_t n = x.numel(), nd = x.dim();
  GR_CHECK(nd <= kMaxLoopDims, "nonzero: CUDA supports at most ", kMaxLoopDims, " dims, got ", nd);
  cudaStream_t stream = current_stream();
  return dispatch_all(x.scalar_type(), "nonzero", [&]<class T>() {
    const NonzeroAt<T> pred{static_cast<const T*>(x.data_ptr())};
    thrust::counting_iterator<int64_t> first(0), last(n);
    note_host_sync();  // the count comes back to the host
    const int64_t count = thrust::count_if(thrust::cuda::par.on(stream), first, last, pred);
    Tensor flat = empty({count}, TensorOptions(kInt64).device(self.device()));
    Tensor out = empty({count, nd}, TensorOptions(kInt64).device(self.device()));
    if (count == 0 || nd == 0) return out;
    thrust::copy_if(thrust::cuda::par.on(stream), first, last, flat.data_ptr<int64_t>(), pred);
    Sizes sizes{};
    for (int64_t d = 0; d < nd; ++d) sizes.size[d] = x.size(d);
    unravel_kernel<<<grid_size(count, kThreads), kThreads, 0, stream>>>(flat.data_ptr<int64_t>(), out.data_ptr<int64_t>(),
                                                                        count, static_cast<int>(nd), sizes);
    GR_CUDA_CHECK_LAUNCH();
    return out;
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::index_gather_stub, kCUDA, &gather_cuda);
GR_REGISTER_KERNEL(native::index_scatter_stub, kCUDA, &scatter_cuda);
GR_REGISTER_KERNEL(native::index_offsets_stub, kCUDA, &offsets_cuda);
GR_REGISTER_KERNEL(native::masked_fill_stub, kCUDA, &masked_fill_cuda);
GR_REGISTER_KERNEL(native::nonzero_stub, kCUDA, &nonzero_cuda);

}  // namespace gr::cuda
