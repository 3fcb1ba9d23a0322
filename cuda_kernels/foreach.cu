// CUDA kernels of the foreach ops (core/native/foreach.h) as multi-tensor launches (Note
// [Multi-tensor launches]): the total norm of clip_grad_norm_ (partial sums per chunk, each
// tensor's norm, their norm: the ops of core/reduce_functors.h, as the CPU's), the clipping
// that reads that norm on the device, and the zeroing of zero_grad. No host synchronisation.
#include "core/factory.h"
#include "core/native/foreach.h"
#include "core/optimizer_functors.h"
#include "cuda_kernels/multi_tensor.cuh"
#include "cuda_kernels/reduce.cuh"

namespace gr::cuda {
namespace {

namespace ops = gr::reduce_ops;

// Each chunk's accumulator: partials[first_block + block].
template <class T, class Op>
__global__ void norm_partials_kernel(TensorListArgs<1> a, Op op, double* partials) {
  const ChunkOf<1> c(a);
  const T* x = static_cast<const T*>(a.ptr[0][c.slot]);
  auto acc = op.identity();
  for (int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) acc = op.reduce(acc, x[i]);
  acc = block_all_reduce(acc, Combine<Op>{op});
  if (threadIdx.x == 0) partials[a.first_block + blockIdx.x] = static_cast<double>(acc);
}

// Block b folds the partials of tensor first_tensor + b, in order, and stores that tensor's
// norm as the CPU's vector_norm does (in T), widened to double.
struct NormFinishArgs {
  int64_t first[kMaxBlocks];
  int32_t count[kMaxBlocks];
  int64_t first_tensor;
};
template <class T, class Op>
__global__ void norm_finish_kernel(NormFinishArgs a, Op op, const double* partials, double* norms) {
  if (threadIdx.x != 0) return;
  using Acc = decltype(op.identity());
  Acc acc = op.identity();
  for (int32_t k = 0; k < a.count[blockIdx.x]; ++k)
    acc = op.combine(acc, static_cast<Acc>(partials[a.first[blockIdx.x] + k]));
  norms[a.first_tensor + blockIdx.x] = static_cast<double>(static_cast<T>(op.project(acc)));
}

// The norm of the tensors' norms, in float64 (one thread: a few hundred values).
template <class Op>
__global__ void norm_total_kernel(const double* norms, int64_t n, Op op, double* out) {
  double acc = op.identity();
  for (int64_t i = 0; i < n; ++i) acc = op.reduce(acc, norms[i]);
  *out = op.project(acc);
}

// The list's data pointers and sizes, as multi_tensor_apply takes them.
struct List {
  std::vector<std::array<void*, 1>> ptrs;
  std::vector<int64_t> numels;
  explicit List(const std::vector<Tensor>& tensors) {
    for (const Tensor& t : tensors) {
      ptrs.push_back({t.data_ptr()});
      numels.push_back(t.numel());
    }
  }
};

void foreach_norm_cuda(const std::vector<Tensor>& tensors, double p, const Tensor& out) {
  const List l(tensors);
  int64_t total_chunks = 0;
  for (int64_t n : l.numels) total_chunks += chunks_of(n);
  const TensorOptions f64 = TensorOptions(kFloat64).device(out.device());
  Tensor partials = empty({std::max<int64_t>(total_chunks, 1)}, f64);
  Tensor norms = empty({static_cast<int64_t>(tensors.size())}, f64);
  cudaStream_t stream = current_stream();
  dispatch_floating(tensors.front().scalar_type(), "foreach_norm", [&]<class T>() {
    ops::with_norm_op<ops::acc_t<T>>(p, [&](const auto& op) {
      multi_tensor_apply<1>(l.ptrs, l.numels, [&](const TensorListArgs<1>& a, int blocks) {
        norm_partials_kernel<T><<<blocks, kMultiTensorThreads, 0, stream>>>(a, op, partials.data_ptr<double>());
        GR_CUDA_CHECK_LAUNCH();
      });
      // Tensor t's partials follow those of the tensors before it (empty tensors have none).
      NormFinishArgs f{};
      int64_t first = 0;
      int blocks = 0;
      auto flush = [&] {
        if (blocks == 0) return;
        norm_finish_kernel<T><<<blocks, 32, 0, stream>>>(f, op, partials.data_ptr<double>(), norms.data_ptr<double>());
        GR_CUDA_CHECK_LAUNCH();
        f.first_tensor += blocks;
        blocks = 0;
      };
      for (int64_t n : l.numels) {
        f.first[blocks] = first;
        f.count[blocks] = static_cast<int32_t>(chunks_of(n));
        first += chunks_of(n);
        if (++blocks == kMaxBlocks) flush();
      }
      flush();
      ops::with_norm_op<double>(p, [&](const auto& outer) {
        norm_total_kernel<<<1, 1, 0, stream>>>(norms.data_ptr<double>(), norms.numel(), outer, out.data_ptr<double>());
        GR_CUDA_CHECK_LAUNCH();
      });
    });
  });
}

// x *= clip_coefficient(*total, max_norm) where clip_applies: the CPU's condition and factor,
// the factor rounded to T as the CPU's mul_ by a number does.
template <class T>
__global__ void clip_kernel(TensorListArgs<1> a, const double* total, double max_norm) {
  const double coef = functors::clip_coefficient(*total, max_norm);
  if (!functors::clip_applies(coef)) return;
  const ChunkOf<1> c(a);
  T* x = static_cast<T*>(a.ptr[0][c.slot]);
  const T f = static_cast<T>(coef);
  for (int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) x[i] = functors::Mul<T>{}(x[i], f);
}

template <class T>
__global__ void zero_kernel(TensorListArgs<1> a) {
  const ChunkOf<1> c(a);
  T* x = static_cast<T*>(a.ptr[0][c.slot]);
  for (int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) x[i] = T(0);
}

void foreach_clip_cuda(const std::vector<Tensor>& tensors, const Tensor& total_norm, double max_norm) {
  const List l(tensors);
  cudaStream_t stream = current_stream();
  dispatch_floating(tensors.front().scalar_type(), "foreach_clip_", [&]<class T>() {
    multi_tensor_apply<1>(l.ptrs, l.numels, [&](const TensorListArgs<1>& a, int blocks) {
      clip_kernel<T><<<blocks, kMultiTensorThreads, 0, stream>>>(a, total_norm.data_ptr<double>(), max_norm);
      GR_CUDA_CHECK_LAUNCH();
    });
  });
}

void foreach_zero_cuda(const std::vector<Tensor>& tensors) {
  const List l(tensors);
  cudaStream_t stream = current_stream();
  dispatch_floating(tensors.front().scalar_type(), "foreach_zero_", [&]<class T>() {
    multi_tensor_apply<1>(l.ptrs, l.numels, [&](const TensorListArgs<1>& a, int blocks) {
      zero_kernel<T><<<blocks, kMultiTensorThreads, 0, stream>>>(a);
      GR_CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::foreach_norm_stub, kCUDA, &foreach_norm_cuda);
GR_REGISTER_KERNEL(native::foreach_clip_stub, kCUDA, &foreach_clip_cuda);
GR_REGISTER_KERNEL(native::foreach_zero_stub, kCUDA, &foreach_zero_cuda);

}  // namespace gr::cuda
