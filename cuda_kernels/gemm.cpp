// CUDA GEMM through cuBLAS (the gemm_stub contract of core/native/gemm/gemm.h: row-major
// C = alpha * op(A) op(B) + beta * C). cuBLAS is column-major and a row-major matrix read
// column-major is its transpose, so C^T = op(B)^T op(A)^T is computed: operands swapped,
// M and N swapped, the transpose flags kept (Note [Row-major GEMM on cuBLASLt]). Full FP32
// math (no TF32), as on the CPU. bfloat16/float16 operands (float32 C) run on tensor cores
// with float32 accumulation, through cuBLASLt (gemm_lt.h) or cublasGemmEx. Also the batched
// contract (gemm_batched_stub) through cuBLAS's strided-batched GEMM.
#include <algorithm>
#include <climits>
#include <type_traits>
#include <unordered_map>

#include "core/native/gemm/gemm.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/gemm_lt.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

// One handle per (thread, device), created on first use. Handles are never destroyed:
// cublasDestroy during exit can run after the driver has shut down.
cublasHandle_t cublas_handle() {
  thread_local std::unordered_map<int, cublasHandle_t> handles;
  const int device = current_device();
  auto it = handles.find(device);
  if (it == handles.end()) {
    cublasHandle_t h = nullptr;
    GR_CUBLAS_CHECK(cublasCreate(&h));
    GR_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));  // no TF32: float32 GEMMs stay FP32
    it = handles.emplace(device, h).first;
  }
  GR_CUBLAS_CHECK(cublasSetStream(it->second, current_stream()));
  return it->second;
}

cudaDataType_t reduced_data_type(ScalarType t) {
  GR_CHECK(is_reduced_float(t), "gemm: internal: ", t, " is not a reduced float type");
  return t == kBFloat16 ? CUDA_R_16BF : CUDA_R_16F;
}

int checked_int(int64_t v, const char* what) {
  GR_CHECK(v >= 0 && v <= INT_MAX, "gemm: ", what, " = ", v, " exceeds cuBLAS's 32-bit int range");
  return static_cast<int>(v);
}

// C = beta * C when K == 0 (A and B may then be null): cuBLAS geam, in place, or a memset
// for beta == 0 so that NaN in the old C is ignored as the contract says.
template <class T>
void scale_c(cublasHandle_t h, int m, int n, T beta, T* C, int ldc) {
  if (beta == T(0)) {
    GR_CUDA_CHECK(cudaMemset2DAsync(C, static_cast<size_t>(ldc) * sizeof(T), 0, static_cast<size_t>(m) * sizeof(T),
                                    static_cast<size_t>(n), current_stream()));
    return;
  }
  const T zero = 0;
  if constexpr (std::is_same_v<T, float>)
    GR_CUBLAS_CHECK(cublasSgeam(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, &beta, C, ldc, &zero, C, ldc, C, ldc));
  else
    GR_CUBLAS_CHECK(cublasDgeam(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, &beta, C, ldc, &zero, C, ldc, C, ldc));
}

template <class T>
void gemm_typed(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                int64_t ldb, T beta, T* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  // Column-major view: C^T [N x M] = op(B)^T [N x K] * op(A)^T [K x M].
  const int m = checked_int(N, "N"), n = checked_int(M, "M"), k = checked_int(K, "K");
  const int la = checked_int(lda, "lda"), lb = checked_int(ldb, "ldb"), lc = checked_int(ldc, "ldc");
  cublasHandle_t h = cublas_handle();
  if (k == 0) return scale_c(h, m, n, beta, C, lc);
  const cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  if constexpr (std::is_same_v<T, float>)
    GR_CUBLAS_CHECK(cublasSgemm(h, op_b, op_a, m, n, k, &alpha, B, lb, A, la, &beta, C, lc));
  else
    GR_CUBLAS_CHECK(cublasDgemm(h, op_b, op_a, m, n, k, &alpha, B, lb, A, la, &beta, C, lc));
}

// bfloat16/float16 A and B, float32 C (the gemm_stub contract for reduced floats): cuBLASLt,
// or cublasGemmEx where cuBLASLt has no algorithm for the problem.
void gemm_reduced(ScalarType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const void* A,
                  int64_t lda, const void* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  const int m = checked_int(N, "N"), n = checked_int(M, "M"), k = checked_int(K, "K");
  const int la = checked_int(lda, "lda"), lb = checked_int(ldb, "ldb"), lc = checked_int(ldc, "ldc");
  if (k == 0) return scale_c(cublas_handle(), m, n, beta, C, lc);
  LtGemm g;
  g.ab = t;
  g.c = kFloat32;
  g.ta = ta, g.tb = tb, g.M = M, g.N = N, g.K = K;
  g.A = A, g.lda = lda, g.B = B, g.ldb = ldb, g.C = C, g.ldc = ldc;
  g.alpha = alpha, g.beta = beta;
  if (lt_gemm(g)) return;
  const cudaDataType_t type = reduced_data_type(t);
  GR_CUBLAS_CHECK(cublasGemmEx(cublas_handle(), tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k,
                               &alpha, B, type, lb, A, type, la, &beta, C, CUDA_R_32F, lc, CUBLAS_COMPUTE_32F,
                               CUBLAS_GEMM_DEFAULT));
}

// The batched contract for bfloat16/float16 A and B (float32 C): cublasGemmStridedBatchedEx.
void gemm_batched_reduced(ScalarType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const void* A,
                          int64_t lda, int64_t stride_a, const void* B, int64_t ldb, int64_t stride_b, float beta,
                          float* C, int64_t ldc, int64_t stride_c, int64_t batch) {
  const int m = checked_int(N, "N"), n = checked_int(M, "M"), k = checked_int(K, "K");
  const int la = checked_int(lda, "lda"), lb = checked_int(ldb, "ldb"), lc = checked_int(ldc, "ldc");
  cublasHandle_t h = cublas_handle();
  if (k == 0) {
    for (int64_t i = 0; i < batch; ++i) scale_c(h, m, n, beta, C + i * stride_c, lc);
    return;
  }
  const cudaDataType_t type = reduced_data_type(t);
  const size_t bytes = element_size(t);
  for (int64_t i0 = 0; i0 < batch; i0 += INT_MAX) {
    const int count = static_cast<int>(std::min<int64_t>(batch - i0, INT_MAX));
    const auto* a = static_cast<const char*>(A) + i0 * stride_a * static_cast<int64_t>(bytes);
    const auto* b = static_cast<const char*>(B) + i0 * stride_b * static_cast<int64_t>(bytes);
    GR_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, m, n,
                                               k, &alpha, b, type, lb, stride_b, a, type, la, stride_a, &beta,
                                               C + i0 * stride_c, CUDA_R_32F, lc, stride_c, count, CUBLAS_COMPUTE_32F,
                                               CUBLAS_GEMM_DEFAULT));
  }
}

// The batched contract: one cublas<t>gemmStridedBatched per at most INT_MAX products. Stride 0
// for A or B is allowed (cuBLAS reads the same matrix for every product).
template <class T>
void gemm_batched_typed(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda,
                        int64_t stride_a, const T* B, int64_t ldb, int64_t stride_b, T beta, T* C, int64_t ldc,
                        int64_t stride_c, int64_t batch) {
  if (M == 0 || N == 0 || batch == 0) return;
  GR_CHECK(batch == 1 || stride_c >= (M - 1) * ldc + N, "gemm_batched: the outputs of the products overlap (M = ", M,
           ", N = ", N, ", ldc = ", ldc, ", stride_c = ", stride_c, ")");
  const int m = checked_int(N, "N"), n = checked_int(M, "M"), k = checked_int(K, "K");
  const int la = checked_int(lda, "lda"), lb = checked_int(ldb, "ldb"), lc = checked_int(ldc, "ldc");
  cublasHandle_t h = cublas_handle();
  if (k == 0) {  // rare: scale each C_i, as gemm does
    for (int64_t i = 0; i < batch; ++i) scale_c(h, m, n, beta, C + i * stride_c, lc);
    return;
  }
  const cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  for (int64_t i0 = 0; i0 < batch; i0 += INT_MAX) {
    const int count = static_cast<int>(std::min<int64_t>(batch - i0, INT_MAX));
    const T* a = A + i0 * stride_a;
    const T* b = B + i0 * stride_b;
    T* c = C + i0 * stride_c;
    // Column-major, as in gemm_typed: C_i^T = op(B_i)^T op(A_i)^T.
    if constexpr (std::is_same_v<T, float>)
      GR_CUBLAS_CHECK(cublasSgemmStridedBatched(h, op_b, op_a, m, n, k, &alpha, b, lb, stride_b, a, la, stride_a,
                                                &beta, c, lc, stride_c, count));
    else
      GR_CUBLAS_CHECK(cublasDgemmStridedBatched(h, op_b, op_a, m, n, k, &alpha, b, lb, stride_b, a, la, stride_a,
                                                &beta, c, lc, stride_c, count));
  }
}

void gemm_cuda(ScalarType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
               int64_t lda, const void* B, int64_t ldb, double beta, void* C, int64_t ldc) {
  if (is_reduced_float(t))
    return gemm_reduced(t, ta, tb, M, N, K, static_cast<float>(alpha), A, lda, B, ldb, static_cast<float>(beta),
                        static_cast<float*>(C), ldc);
  dispatch_floating(t, "gemm", [&]<class T>() {
    gemm_typed<T>(ta, tb, M, N, K, static_cast<T>(alpha), static_cast<const T*>(A), lda, static_cast<const T*>(B),
                  ldb, static_cast<T>(beta), static_cast<T*>(C), ldc);
  });
}

void gemm_batched_cuda(ScalarType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
                       int64_t lda, int64_t stride_a, const void* B, int64_t ldb, int64_t stride_b, double beta,
                       void* C, int64_t ldc, int64_t stride_c, int64_t batch) {
  if (is_reduced_float(t)) {
    if (M == 0 || N == 0 || batch == 0) return;
    GR_CHECK(batch == 1 || stride_c >= (M - 1) * ldc + N, "gemm_batched: the outputs of the products overlap (M = ", M,
             ", N = ", N, ", ldc = ", ldc, ", stride_c = ", stride_c, ")");
    return gemm_batched_reduced(t, ta, tb, M, N, K, static_cast<float>(alpha), A, lda, stride_a, B, ldb, stride_b,
                                static_cast<float>(beta), static_cast<float*>(C), ldc, stride_c, batch);
  }
  dispatch_floating(t, "gemm_batched", [&]<class T>() {
    gemm_batched_typed<T>(ta, tb, M, N, K, static_cast<T>(alpha), static_cast<const T*>(A), lda, stride_a,
                          static_cast<const T*>(B), ldb, stride_b, static_cast<T>(beta), static_cast<T*>(C), ldc,
                          stride_c, batch);
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::gemm_stub, kCUDA, &gemm_cuda);
GR_REGISTER_KERNEL(native::gemm_batched_stub, kCUDA, &gemm_batched_cuda);

}  // namespace gr::cuda
