// Matrix products without autograd: gemm (row-major BLAS-style), mm, bmm and matmul with
// torch's broadcasting rules. CPU GEMM runs on the packed AVX-512/AVX2 kernel of
// gemm_packed.h with OpenMP threads, or on Eigen when the build targets neither ISA.
#pragma once

#include "core/dispatch.h"
#include "core/tensor.h"

namespace gr::native {

// C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, all row-major with leading dims;
// op(X) is X or X^T. beta == 0 ignores C's old contents (even NaN). t is A's and B's dtype
// and C's, except t = bfloat16 (CPU and CUDA) or float16 (CUDA): then C is float32, the
// products' accumulator.
using GemmFn = void (*)(ScalarType t, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha,
                        const void* A, int64_t lda, const void* B, int64_t ldb, double beta, void* C, int64_t ldc);
GR_DECLARE_DISPATCH(GemmFn, gemm_stub);

// `batch` products of the gemm_stub contract at once: C_i = alpha * op(A_i) op(B_i) + beta * C_i
// with X_i = X + i * stride_x (in elements). A stride of 0 makes every product read the
// same A (or B); the C_i must not overlap. CPU: gemm per product (threads across products
// when they are many and small); CUDA: cuBLAS strided-batched GEMM, one launch.
using GemmBatchedFn = void (*)(ScalarType t, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
                               double alpha, const void* A, int64_t lda, int64_t stride_a, const void* B, int64_t ldb,
                               int64_t stride_b, double beta, void* C, int64_t ldc, int64_t stride_c, int64_t batch);
GR_DECLARE_DISPATCH(GemmBatchedFn, gemm_batched_stub);

// C[M,N] = op(A)[M,K] op(B)[K,N] + bias[N] on every row: linear's product with its bias, the
// gemm_stub contract with alpha = 1, beta = 0 and the row vector added to the finished
// product (the same values as gemm, then a separate add). t: float32 or float64, for A, B,
// bias and C; also bfloat16 (CPU and CUDA) and float16 (CUDA), where bias may be null and
// each float sum (with the bias) is rounded to the reduced type once. CPU: the packed GEMM
// adds the bias as it stores each tile (See Note [Bias in the GEMM epilogue]); CUDA: cuBLAS
// GEMM then a bias kernel, or cuBLASLt with the bias in its epilogue (bfloat16/float16).
using GemmBiasFn = void (*)(ScalarType t, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const void* A,
                            int64_t lda, const void* B, int64_t ldb, const void* bias, void* C, int64_t ldc);
GR_DECLARE_DISPATCH(GemmBiasFn, gemm_bias_stub);

// Typed CPU entry points (used directly by CPU kernels such as conv2d).
void gemm_cpu(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
              const float* B, int64_t ldb, float beta, float* C, int64_t ldc);
void gemm_cpu(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double* A,
              int64_t lda, const double* B, int64_t ldb, double beta, double* C, int64_t ldc);
// The same product on Eigen's kernels: the reference the packed GEMM is tested against.
void gemm_reference_cpu(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                        int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);
void gemm_reference_cpu(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double* A,
                        int64_t lda, const double* B, int64_t ldb, double beta, double* C, int64_t ldc);

// C = op(A) * op(B) for 2-D tensors (any strides; transposed views need no copy).
Tensor mm(const Tensor& a, const Tensor& b);
// a @ b + bias for 2-D a [M,K], b [K,N] and a 1-D bias [N] (linear's product): one
// gemm_bias_stub call for float32/float64 (the values of mm then add_) and for the reduced
// floats the device's GEMM takes (rounded once, after the bias), else mm then add_.
Tensor mm_bias(const Tensor& a, const Tensor& b, const Tensor& bias);
// out[i] = a[i] @ b[i] for 3-D tensors of equal batch size.
Tensor bmm(const Tensor& a, const Tensor& b);
// beta * self + alpha * bmm(a, b): self broadcasts to [batch, M, N] and is read only when
// beta != 0 (so NaN in it is ignored with beta = 0, as torch). `op` names the caller in errors.
Tensor baddbmm(const Tensor& self, const Tensor& a, const Tensor& b, double beta, double alpha,
               const char* op = "baddbmm");
// torch.matmul: dot, mat-vec, vec-mat, mm, and batched products with broadcast batch dims.
Tensor matmul(const Tensor& a, const Tensor& b);

}  // namespace gr::native
