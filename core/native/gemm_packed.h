// Packed CPU GEMM: BLIS-style cache blocking around an AVX-512 or AVX2 register-tile
// micro-kernel. Built only for what the compiler targets (GRADRING_NATIVE: -march=native);
// without a vector ISA packed_gemm_available() is false and callers fall back to Eigen.
#pragma once

#include <cstdint>

namespace gr::native {

// Whether this build has a packed micro-kernel for T (float or double).
template <class T>
bool packed_gemm_available();

// C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C; row-major, leading dims lda/ldb/ldc;
// op(X) = X^T when trans_x. beta == 0 ignores C's old contents. Splits C across up to
// `threads` OpenMP threads (1 inside a parallel region). Requires packed_gemm_available<T>().
template <class T>
void packed_gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda,
                 const T* B, int64_t ldb, T beta, T* C, int64_t ldc, int threads);

}  // namespace gr::native
