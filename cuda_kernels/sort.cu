// CUDA sort and topk (the sort_stub/topk_stub contracts of core/native/sort.h). All rows
// sort at once: thrust's stable merge sort orders the flat positions by (row, value), NaN
// largest as on the CPU; one pass then gathers values and in-row indices. Ties keep their
// order (stable) whatever `stable` says: on CUDA an unstable sort would give no particular
// order anyway. topk sorts the rows and keeps the first k columns.
#include <thrust/execution_policy.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>

#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/shape.h"
#include "core/native/sort.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

constexpr int kThreads = 256;

template <class T>
using compare_t = std::conditional_t<std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>, float, T>;

template <class V>
__device__ __forceinline__ bool is_nan(V v) {
  if constexpr (std::is_floating_point_v<V>) return v != v;
  else return false;
}

// Orders flat positions a, b of values [rows, n] by row, then value (NaN largest).
template <class T>
struct RowOrder {
  const T* values;
  int64_t n;
  bool descending;
  __device__ bool operator()(int64_t a, int64_t b) const {
    const int64_t ra = a / n, rb = b / n;
    if (ra != rb) return ra < rb;
    using V = compare_t<T>;
    const V va = static_cast<V>(values[a]), vb = static_cast<V>(values[b]);
    if (descending) return (is_nan(va) && !is_nan(vb)) || va > vb;
    return (!is_nan(va) && is_nan(vb)) || va < vb;
  }
};

template <class T>
__global__ void gather_sorted(const T* in, const int64_t* order, T* values, int64_t* indices, int64_t total, int64_t n) {
  for (int64_t e = first_index(); e < total; e += grid_stride()) {
    const int64_t from = order[e];
    values[e] = in[from];
    indices[e] = from % n;
  }
}

void sort_cuda(const Tensor& values, const Tensor& indices, bool descending, bool /*stable*/) {
  const int64_t total = values.numel(), n = values.size(1);
  if (total == 0) return;
  cudaStream_t stream = current_stream();
  Tensor order = empty({total}, TensorOptions(kInt64).device(values.device()));
  Tensor in = native::clone(values);
  int64_t* o = order.data_ptr<int64_t>();
  note_host_sync();  // thrust::cuda::par waits for the stream at the end of each call
  thrust::sequence(thrust::cuda::par.on(stream), o, o + total);
  dispatch_all(values.scalar_type(), "sort", [&]<class T>() {
    const T* v = static_cast<const T*>(in.data_ptr());
    thrust::stable_sort(thrust::cuda::par.on(stream), o, o + total, RowOrder<T>{v, n, descending});
    gather_sorted<<<grid_size(total, kThreads), kThreads, 0, stream>>>(v, o, static_cast<T*>(values.data_ptr()),
                                                                        indices.data_ptr<int64_t>(), total, n);
    GR_CUDA_CHECK_LAUNCH();
  });
}

void topk_cuda(const Tensor& src, const Tensor& values, const Tensor& indices, int64_t k, bool largest, bool /*sorted*/) {
  Tensor v = native::clone(src);
  Tensor i = empty(src.sizes(), TensorOptions(kInt64).device(src.device()));
  sort_cuda(v, i, largest, true);
  native::copy_(values, native::narrow(v, 1, 0, k));
  native::copy_(indices, native::narrow(i, 1, 0, k));
}

}  // namespace

GR_REGISTER_KERNEL(native::sort_stub, kCUDA, &sort_cuda);
GR_REGISTER_KERNEL(native::topk_stub, kCUDA, &topk_cuda);

}  // namespace gr::cuda
