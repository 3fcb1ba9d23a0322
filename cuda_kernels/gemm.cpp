// CUDA GEMM through cuBLAS (the gemm_stub contract of core/native/gemm.h: row-major
// C = alpha * op(A) op(B) + beta * C). cuBLAS is column-major and a row-major matrix read
// column-major is its transpose, so C^T = op(B)^T op(A)^T is computed: operands swapped,
// M and N swapped, the transpose flags kept. Full FP32 math (no TF32), as on the CPU.
#include <climits>
#include <unordered_map>

#include "core/native/gemm.h"
#include "cuda_kernels/cuda_check.h"
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
    it = handles.emplace(device, h).first;
  }
  GR_CUBLAS_CHECK(cublasSetStream(it->second, current_stream()));
  return it->second;
}

int checked_int(int64_t v, const char* what) {
  GR_CHECK(v >= 0 && v <= INT_MAX, "gemm: ", what, " = ", v, " exceeds cuBLAS's 32-bit int range");
  return static_cast<int>(v);
}

void gemm_cuda(ScalarType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
               int64_t lda, const void* B, int64_t ldb, double beta, void* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  const int m = checked_int(N, "N"), n = checked_int(M, "M"), k = checked_int(K, "K");
  const int la = checked_int(lda, "lda"), lb = checked_int(ldb, "ldb"), lc = checked_int(ldc, "ldc");
  const cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasHandle_t h = cublas_handle();
  switch (t) {
    case kFloat32: {
      const float al = static_cast<float>(alpha), be = static_cast<float>(beta);
      GR_CUBLAS_CHECK(cublasSgemm(h, op_b, op_a, m, n, k, &al, static_cast<const float*>(B), lb,
                                  static_cast<const float*>(A), la, &be, static_cast<float*>(C), lc));
      return;
    }
    case kFloat64: {
      GR_CUBLAS_CHECK(cublasDgemm(h, op_b, op_a, m, n, k, &alpha, static_cast<const double*>(B), lb,
                                  static_cast<const double*>(A), la, &beta, static_cast<double*>(C), lc));
      return;
    }
    default:
      GR_ERROR("gemm: expected a float32 or float64 tensor on CUDA, got ", dtype_name(t));
  }
}

}  // namespace

GR_REGISTER_KERNEL(native::gemm_stub, kCUDA, &gemm_cuda);

}  // namespace gr::cuda
