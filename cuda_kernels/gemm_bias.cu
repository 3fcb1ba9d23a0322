// CUDA gemm_bias_stub (core/native/gemm/gemm.h): C = op(A) op(B) + bias[N] on every row.
// bfloat16/float16: cuBLASLt with the bias in its epilogue (float sums plus the bias, rounded
// once); where cuBLASLt has no algorithm, cublasGemmEx into float32 and a kernel that adds the
// bias and rounds. float32/float64: the cuBLAS gemm_stub, then a kernel adding the bias with
// the functor the CPU's separate add uses, so the values are those of mm followed by add_;
// float32 takes cuBLASLt's epilogue instead under GRADRING_LT_FLOAT32 (Note [cuBLASLt switches]).
#include <algorithm>

#include "core/factory.h"
#include "core/functors.h"
#include "core/native/gemm/gemm.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/gemm_lt.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

constexpr int kThreads = 256;

// C[M, N] (rows ldc apart) += bias[N] on every row. blockIdx.y walks rows, x-threads a row's
// columns: no division per element.
template <class T>
__global__ void add_bias_rows_kernel(T* C, int64_t ldc, const T* bias, int64_t M, int64_t N) {
  const functors::Add<T> add{T(1)};
  for (int64_t i = blockIdx.y; i < M; i += gridDim.y)
    for (int64_t j = first_index(); j < N; j += grid_stride()) C[i * ldc + j] = add(C[i * ldc + j], bias[j]);
}

// C[M, N] = round(acc[M, N] + bias[N]) for reduced floats (acc dense float32, or zeros when
// null: K == 0; bias may be null).
template <class T>
__global__ void round_bias_rows_kernel(const float* acc, const T* bias, T* C, int64_t ldc, int64_t M, int64_t N) {
  for (int64_t i = blockIdx.y; i < M; i += gridDim.y)
    for (int64_t j = first_index(); j < N; j += grid_stride()) {
      const float s = acc ? acc[i * N + j] : 0.f;
      C[i * ldc + j] = T(bias ? s + static_cast<float>(bias[j]) : s);
    }
}

dim3 rows_grid(int64_t M, int64_t N) {
  const unsigned x = grid_size(N, kThreads);
  const unsigned cap = std::max(1u, grid_size(M * N, kThreads) / x);
  return dim3(x, static_cast<unsigned>(std::min<int64_t>({M, cap, 65535})));
}

void gemm_bias_reduced(ScalarType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const void* A, int64_t lda,
                       const void* B, int64_t ldb, const void* bias, void* C, int64_t ldc) {
  if (K > 0) {
    LtGemm g;
    g.ab = g.c = t;
    g.ta = ta, g.tb = tb, g.M = M, g.N = N, g.K = K;
    g.A = A, g.lda = lda, g.B = B, g.ldb = ldb, g.C = C, g.ldc = ldc;
    g.epilogue = bias ? LtEpilogue::kBias : LtEpilogue::kNone;
    g.bias = bias;
    if (lt_gemm(g)) return;
  }
  Tensor acc;
  if (K > 0) {
    acc = empty({M, N}, TensorOptions(kFloat32).device(Device(kCUDA, current_device())));
    native::gemm_stub(kCUDA, t, ta, tb, M, N, K, 1.0, A, lda, B, ldb, 0.0, acc.data_ptr(), N);  // float32 C
  }
  const float* a = acc.defined() ? acc.data_ptr<float>() : nullptr;
  auto launch = [&]<class T>() {
    round_bias_rows_kernel<<<rows_grid(M, N), kThreads, 0, current_stream()>>>(
        a, static_cast<const T*>(bias), static_cast<T*>(C), ldc, M, N);
  };
  if (t == kBFloat16) launch.template operator()<BFloat16>();
  else launch.template operator()<Half>();
  GR_CUDA_CHECK_LAUNCH();
}

void gemm_bias_cuda(ScalarType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const void* A, int64_t lda,
                    const void* B, int64_t ldb, const void* bias, void* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (is_reduced_float(t)) return gemm_bias_reduced(t, ta, tb, M, N, K, A, lda, B, ldb, bias, C, ldc);
  GR_CHECK(bias != nullptr, "gemm_bias: internal: a ", t, " product needs its bias");
  if (t == kFloat32 && K > 0 && lt_float32()) {
    LtGemm g;
    g.ta = ta, g.tb = tb, g.M = M, g.N = N, g.K = K;
    g.A = A, g.lda = lda, g.B = B, g.ldb = ldb, g.C = C, g.ldc = ldc;
    g.epilogue = LtEpilogue::kBias;
    g.bias = bias;
    if (lt_gemm(g)) return;
  }
  native::gemm_stub(kCUDA, t, ta, tb, M, N, K, 1.0, A, lda, B, ldb, 0.0, C, ldc);
  dispatch_floating(t, "gemm_bias", [&]<class T>() {
    add_bias_rows_kernel<<<rows_grid(M, N), kThreads, 0, current_stream()>>>(static_cast<T*>(C), ldc,
                                                                               static_cast<const T*>(bias), M, N);
    GR_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::gemm_bias_stub, kCUDA, &gemm_bias_cuda);

}  // namespace gr::cuda
