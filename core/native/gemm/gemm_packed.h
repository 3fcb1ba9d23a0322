// Packed CPU GEMM: BLIS-style cache blocking around an AVX-512 or AVX2 register-tile
// micro-kernel. Built only for what the compiler targets (GRADRING_NATIVE: -march=native);
// without a vector ISA packed_gemm_available() is false and callers fall back to Eigen.
#pragma once

#include <cstdint>

#include "core/half.h"

namespace gr::native {

// Whether this build has a packed micro-kernel for T (float or double).
template <class T>
bool packed_gemm_available();

// C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C (+ bias[N] on every row, when given:
// added to the finished result, as a separate add would); row-major, leading dims
// lda/ldb/ldc; op(X) = X^T when trans_x. beta == 0 ignores C's old contents. Splits C across
// up to `threads` OpenMP threads (1 inside a parallel region). Requires
// packed_gemm_available<T>().
template <class T>
void packed_gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda,
                 const T* B, int64_t ldb, T beta, T* C, int64_t ldc, int threads, const T* bias = nullptr);
// The same product of bfloat16 A and B into a float C, accumulated in float: on AVX512_BF16
// pair dot products (Note [bfloat16 pair products]), else operands widened to float as they
// are packed. Requires packed_gemm_available<float>().
void packed_gemm_bf16(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const BFloat16* A,
                      int64_t lda, const BFloat16* B, int64_t ldb, float beta, float* C, int64_t ldc, int threads);
// C = op(A) op(B) (+ bias[N] on every row, when given) with bfloat16 A, B and C: accumulated
// in float, the bias added in float, each result rounded to bfloat16 once.
void packed_gemm_bf16(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const BFloat16* A, int64_t lda,
                      const BFloat16* B, int64_t ldb, const float* bias, BFloat16* C, int64_t ldc, int threads);

// Whether they run on AVX512_BF16 pairs: gr::backends::cpu::bf16_pair_products() (core/cpu_backend.h).

// ---- panel GEMM: A already laid out the way the micro-kernel reads it, B read in place ----
// For callers that produce their operands themselves (the Winograd convolution): A as
// ceil(M / MR) panels [K][MR] (panel i holds rows i*MR ..; entries past M are ignored), B a
// row-major [K][N] matrix with leading dimension ldb, read without packing. The tile is
// the 8-row one of packed_gemm.
// kPanelNR: the columns one micro-kernel call covers (N best a multiple of it).
#if defined(__AVX512F__)
template <class T>
inline constexpr int kPanelMR = 8;
template <class T>
inline constexpr int kPanelNR = sizeof(T) == 4 ? 48 : 24;
#elif defined(__AVX2__) && defined(__FMA__)
template <class T>
inline constexpr int kPanelMR = 6;
template <class T>
inline constexpr int kPanelNR = sizeof(T) == 4 ? 16 : 8;
#else
template <class T>
inline constexpr int kPanelMR = 4;
template <class T>
inline constexpr int kPanelNR = 4;
#endif

// C[M,N] = A B, or C += A B when accumulate; C row-major. Single-threaded (callers run
// several at once).
template <class T>
void panel_gemm(int64_t M, int64_t N, int64_t K, const T* Ap, const T* B, int64_t ldb, T* C, int64_t ldc,
                bool accumulate);

// C[M,N] = A B^T (or C += A B^T) with A [M][K] and B [N][K] row-major, both contiguous
// along K, for products that contract over a long K into few rows and columns (weight
// gradients): A's rows are read in place by the micro-kernel and only B is packed, or, for
// N <= 16, blocks of vector dot products read both in place. Up to `threads` threads
// (1 inside a parallel region).
template <class T>
void gemm_nt(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc,
             bool accumulate, int threads = 1);

}  // namespace gr::native
