// gemm_nt: C = A B^T for operands that are both contiguous along K (see gemm_packed.h).
// Few columns (N <= 16): blocks of vector dot products, reading both operands in place;
// otherwise rows of A in place against packed panels of B (rows_kernel).
#include <omp.h>

#include "core/native/gemm/gemm_kernels.h"
#include "core/native/gemm/gemm_packed.h"

namespace gr::native {

#if GR_PACKED_GEMM
namespace {
using namespace gemm_detail;

// gemm_nt for few columns (N <= 16): 4 x 3 blocks of dot products, K cut into pieces whose
// rows fit in L2. Rows of C are split across threads.
template <class T>
void gemm_nt_dots(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T* C,
                  int64_t ldc, bool accumulate, int threads) {
  using S = typename VecOf<T>::S;
  const int64_t kb = std::clamp<int64_t>((int64_t(256) << 10) / (static_cast<int64_t>(sizeof(T)) * (M + N)) / 64 * 64,
                                         256, int64_t(1) << 16);
  const int64_t row_blocks = (M + 3) / 4;
  auto rows = [&](int64_t b0, int64_t b1) {
    for (int64_t k0 = 0; k0 < K; k0 += kb) {
      const int64_t kc = std::min(kb, K - k0);
      const bool acc = accumulate || k0 > 0;
      for (int64_t rb = b0; rb < b1; ++rb) {
        const int64_t i = rb * 4, mr = std::min<int64_t>(4, M - i);
        const T* a = A + i * lda + k0;
        for (int64_t j = 0; j < N; j += 3) {
          const T* b = B + j * ldb + k0;
          T* c = C + i * ldc + j;
          const int64_t nr = std::min<int64_t>(3, N - j);
          if (mr == 4 && nr == 3) {
            dot_block<S, 4, 3>(kc, a, lda, b, ldb, c, ldc, acc);
          } else {
            for (int64_t ii = 0; ii < mr; ++ii)
              for (int64_t jj = 0; jj < nr; ++jj)
                dot_block<S, 1, 1>(kc, a + ii * lda, lda, b + jj * ldb, ldb, c + ii * ldc + jj, ldc, acc);
          }
        }
      }
    }
  };
  const int nt = omp_in_parallel() ? 1 : static_cast<int>(std::min<int64_t>({threads, row_blocks, M * N * K / 65536 + 1}));
  if (nt <= 1) {
    rows(0, row_blocks);
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    rows(row_blocks * t / n, row_blocks * (t + 1) / n);
  }
}

}  // namespace

template <class T>
void gemm_nt(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc,
             bool accumulate, int threads) {
  using Tl = Tile<T, kRowsMR, kRowsNV>;
  constexpr int MR = Tl::MR, NR = Tl::NR;
  if (M <= 0 || N <= 0) return;
  if (K > 0 && N <= 16) return gemm_nt_dots(M, N, K, A, lda, B, ldb, C, ldc, accumulate, threads);
  if (K <= 0 || M % MR != 0) {  // (the row kernel takes rows in blocks of MR)
    packed_gemm<T>(false, true, M, N, K, T(1), A, lda, B, ldb, accumulate ? T(1) : T(0), C, ldc, threads);
    return;
  }
  const int nt = omp_in_parallel() ? 1 : static_cast<int>(std::min<int64_t>({threads, M / MR, M * N * K / (int64_t(1) << 21) + 1}));
  T* Bp = scratch<T>(1, static_cast<size_t>((N + NR - 1) / NR * NR * std::min<int64_t>(K, Tl::KC)));
  for (int64_t p0 = 0; p0 < K; p0 += Tl::KC) {
    const int64_t kc = std::min<int64_t>(Tl::KC, K - p0);
    const bool acc = accumulate || p0 > 0;
    pack_block<T, NR>(Bp, B + p0, ldb, 1, N, kc);  // B^T(k, j) = B[j][k]: columns j are B's rows
    auto rows = [&](int64_t i0, int64_t i1) {
      alignas(64) T tmp[MR * NR];
      for (int64_t j = 0; j < N; j += NR) {
        const T* b = Bp + j * kc;
        const int64_t nr = std::min<int64_t>(NR, N - j);
        for (int64_t i = i0; i < i1; i += MR) {
          if (nr == NR) {
            rows_kernel<Tl>(kc, A + i * lda + p0, lda, b, C + i * ldc + j, ldc, acc);
          } else {
            rows_kernel<Tl>(kc, A + i * lda + p0, lda, b, tmp, NR, false);
            for (int r = 0; r < MR; ++r)
              for (int64_t jj = 0; jj < nr; ++jj)
                C[(i + r) * ldc + j + jj] = acc ? C[(i + r) * ldc + j + jj] + tmp[r * NR + jj] : tmp[r * NR + jj];
          }
        }
      }
    };
    if (nt <= 1) {
      rows(0, M);
      continue;
    }
#pragma omp parallel num_threads(nt)
    {
      const int64_t t = omp_get_thread_num(), n = omp_get_num_threads(), blocks = M / MR;
      rows(blocks * t / n * MR, blocks * (t + 1) / n * MR);
    }
  }
}

#else  // no vector ISA

template <class T>
void gemm_nt(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc,
             bool accumulate, int) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      T acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += A[i * lda + k] * B[j * ldb + k];
      C[i * ldc + j] = accumulate ? C[i * ldc + j] + acc : acc;
    }
}

#endif

template void gemm_nt<float>(int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t,
                             bool, int);
template void gemm_nt<double>(int64_t, int64_t, int64_t, const double*, int64_t, const double*, int64_t, double*,
                              int64_t, bool, int);

}  // namespace gr::native
