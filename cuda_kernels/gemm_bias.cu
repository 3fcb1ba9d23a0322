// CUDA gemm_bias_stub (core/native/gemm/gemm.h): C = op(A) op(B) through the cuBLAS gemm_stub, then
// a kernel adds bias[N] to every row of C, with the functor the CPU's separate add uses, so
// the values are those of mm followed by add_.
#include "core/functors.h"
#include "core/native/gemm/gemm.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

constexpr int kThreads = 256;

// C[M, N] (rows ldc apart) += bias[N] on every row; a thread per element.
template <class T>
__global__ void add_bias_rows_kernel(T* C, int64_t ldc, const T* bias, int64_t M, int64_t N) {
  const functors::Add<T> add{T(1)};
  for (int64_t e = first_index(); e < M * N; e += grid_stride()) {
    const int64_t i = e / N, j = e - i * N;
    C[i * ldc + j] = add(C[i * ldc + j], bias[j]);
  }
}

void gemm_bias_cuda(ScalarType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const void* A, int64_t lda,
                    const void* B, int64_t ldb, const void* bias, void* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  native::gemm_stub(kCUDA, t, ta, tb, M, N, K, 1.0, A, lda, B, ldb, 0.0, C, ldc);
  dispatch_floating(t, "gemm_bias", [&]<class T>() {
    add_bias_rows_kernel<<<grid_size(M * N, kThreads), kThreads, 0, current_stream()>>>(
        static_cast<T*>(C), ldc, static_cast<const T*>(bias), M, N);
    GR_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::gemm_bias_stub, kCUDA, &gemm_bias_cuda);

}  // namespace gr::cuda
