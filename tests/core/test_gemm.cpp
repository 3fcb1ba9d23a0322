// CPU GEMM (gemm_cpu: the packed kernel, or Eigen) against a naive triple loop: transposes,
// sizes off the micro-tile and cache-block edges, leading dims wider than the matrix,
// alpha/beta, NaN in C with beta == 0, and 1 vs 2 threads.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/gemm.h"
#include "core/native/gemm_packed.h"
#include "core/native/shape.h"
#include "core/parallel.h"
#include "compare.h"

namespace {

struct Case {
  int64_t M, N, K;
};

template <class T>
void check_gemm(bool ta, bool tb, Case c, T alpha, T beta, int64_t pad, bool nan_c) {
  const auto [M, N, K] = c;
  // Stored shapes: A is M x K (K x M when transposed), B is K x N (N x K); rows padded.
  const int64_t a_rows = ta ? K : M, a_cols = ta ? M : K, b_rows = tb ? N : K, b_cols = tb ? K : N;
  const int64_t lda = a_cols + pad, ldb = b_cols + pad, ldc = N + pad;
  std::mt19937 rng(static_cast<unsigned>(M * 131 + N * 17 + K));
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> A(static_cast<size_t>(std::max<int64_t>(a_rows * lda, 1))),
      B(static_cast<size_t>(std::max<int64_t>(b_rows * ldb, 1))), C(static_cast<size_t>(std::max<int64_t>(M * ldc, 1)));
  for (auto& x : A) x = static_cast<T>(u(rng));
  for (auto& x : B) x = static_cast<T>(u(rng));
  for (auto& x : C) x = nan_c ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(u(rng));
  std::vector<T> C0 = C;
  gr::native::gemm_cpu(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
  const double tol = std::is_same_v<T, float> ? 1e-5 * (K + 1) : 1e-12 * (K + 1);
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const T got = C[i * ldc + j];
      if (j >= N) {  // padding past N is never written
        CHECK((std::isnan(got) ? std::isnan(C0[i * ldc + j]) : got == C0[i * ldc + j]));
        continue;
      }
      double ref = 0;
      for (int64_t k = 0; k < K; ++k)
        ref += static_cast<double>(ta ? A[k * lda + i] : A[i * lda + k]) *
               static_cast<double>(tb ? B[j * ldb + k] : B[k * ldb + j]);
      ref = alpha * ref + (beta == T(0) ? 0.0 : beta * static_cast<double>(C0[i * ldc + j]));
      if (!(gr::test::abs_diff(got, ref) <= tol)) {  // NaN fails (Note [Comparisons that see NaN])
        FAIL_CHECK("gemm mismatch ta=", ta, " tb=", tb, " M=", M, " N=", N, " K=", K, " at (", i, ",", j, "): ", got,
                   " vs ", ref);
        return;
      }
    }
  }
}

template <class T>
void check_all_layouts(Case c, T alpha, T beta, int64_t pad = 0, bool nan_c = false) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) check_gemm<T>(ta, tb, c, alpha, beta, pad, nan_c);
}

// Sizes around the micro-tiles (12 x 32 and 8 x 48; 64 x 96 and 16 x 50 pick the second)
// and the cache blocks (K 256/384, N ~500-700, packed A in blocks of ~24-42 rows; the last
// case crosses all three at once).
const std::vector<Case> kCases = {{1, 1, 1},     {1, 17, 5},    {13, 1, 7},    {5, 3, 0},     {12, 32, 8},
                                  {13, 33, 9},   {25, 47, 31},  {64, 64, 64},  {64, 96, 50},  {16, 50, 9},
                                  {8, 48, 3},    {37, 70, 400}, {100, 130, 257}, {11, 700, 19}, {3, 1100, 4},
                                  {90, 700, 800}};

}  // namespace

TEST_CASE("gemm_cpu float matches a naive loop for every transpose") {
  for (const Case& c : kCases) check_all_layouts<float>(c, 1.f, 0.f);
}

TEST_CASE("gemm_cpu double matches a naive loop for every transpose") {
  for (const Case& c : kCases) check_all_layouts<double>(c, 1.0, 0.0);
}

TEST_CASE("gemm_cpu alpha, beta and leading dims wider than the matrix") {
  for (const Case& c : {Case{13, 33, 9}, Case{30, 50, 300}, Case{7, 5, 3}, Case{100, 40, 500}}) {
    check_all_layouts<float>(c, 0.5f, 1.f, 3);
    check_all_layouts<float>(c, -2.f, 0.25f, 1);
    check_all_layouts<double>(c, 1.5, -1.0, 5);
  }
}

TEST_CASE("gemm_cpu beta == 0 ignores NaN in C, and K == 0 scales C") {
  check_all_layouts<float>({13, 33, 9}, 1.f, 0.f, 2, /*nan_c=*/true);
  check_all_layouts<double>({20, 17, 300}, 2.0, 0.0, 0, /*nan_c=*/true);
  check_all_layouts<float>({4, 6, 0}, 1.f, 0.5f);
  check_all_layouts<double>({4, 6, 0}, 1.0, 0.0, 1, /*nan_c=*/true);
}

TEST_CASE("gemm_cpu gives the same answer on 1 and 2 threads, in rows and columns stripes") {
  const int saved = gr::get_num_threads();
  for (int threads : {1, 2}) {
    gr::set_num_threads(threads);
    check_all_layouts<float>({200, 90, 70}, 1.f, 0.f);   // split by rows
    check_all_layouts<float>({40, 300, 70}, 1.f, 1.f);   // split by columns
    check_all_layouts<double>({150, 61, 33}, 1.0, 0.0);
  }
  gr::set_num_threads(saved);
}

TEST_CASE("gemm_cpu agrees with the Eigen reference on a large product") {
  const int64_t M = 300, N = 700, K = 500;
  gr::Tensor a = gr::randn({M, K}), b = gr::randn({K, N});
  gr::Tensor c1 = gr::empty({M, N}), c2 = gr::empty({M, N});
  gr::native::gemm_cpu(false, false, M, N, K, 1.f, a.data_ptr<float>(), K, b.data_ptr<float>(), N, 0.f,
                       c1.data_ptr<float>(), N);
  gr::native::gemm_reference_cpu(false, false, M, N, K, 1.f, a.data_ptr<float>(), K, b.data_ptr<float>(), N, 0.f,
                                 c2.data_ptr<float>(), N);
  CHECK(c1.allclose(c2, 1e-4, 1e-4));
}

TEST_CASE("gemm_nt (rows of A in place, B packed; dot products for few columns) matches a naive loop") {
  for (auto [M, N, K] : {Case{8, 32, 72}, Case{64, 32, 300}, Case{16, 50, 7}, Case{13, 20, 9}, Case{8, 5, 500},
                         Case{7, 11, 1000}, Case{33, 16, 70}, Case{32, 9, 5000}, Case{64, 48, 3000},
                         Case{12, 30, 400}, Case{20, 72, 900}}) {
    for (bool accumulate : {false, true}) {
      const int64_t lda = K + 3, ldb = K + 1, ldc = N + 2;
      std::mt19937 rng(static_cast<unsigned>(M * 7 + N * 3 + K));
      std::uniform_real_distribution<float> u(-1, 1);
      std::vector<float> A(M * lda), B(N * ldb), C(M * ldc);
      for (auto& x : A) x = u(rng);
      for (auto& x : B) x = u(rng);
      for (auto& x : C) x = u(rng);
      std::vector<float> C0 = C;
      gr::native::gemm_nt<float>(M, N, K, A.data(), lda, B.data(), ldb, C.data(), ldc, accumulate, 2);
      double worst = 0;
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double ref = accumulate ? C0[i * ldc + j] : 0.0;
          for (int64_t k = 0; k < K; ++k) ref += double(A[i * lda + k]) * B[j * ldb + k];
          worst = gr::test::max_nan(worst, gr::test::abs_diff(C[i * ldc + j], ref));
        }
      CAPTURE(M);
      CAPTURE(N);
      CAPTURE(K);
      CAPTURE(accumulate);
      CHECK(worst < 1e-5 * (K + 1));
    }
  }
}

TEST_CASE("mm reads transposed and strided views without changing the result") {
  gr::Tensor a = gr::randn({37, 53}, gr::kFloat64), b = gr::randn({29, 53}, gr::kFloat64);
  gr::Tensor bt = gr::native::transpose(b, 0, 1);  // 53 x 29, column-major view
  gr::Tensor ref = gr::native::mm(a, gr::native::contiguous(bt));
  CHECK(gr::native::mm(a, bt).allclose(ref, 1e-12, 1e-12));
  gr::Tensor at = gr::native::contiguous(gr::native::transpose(a, 0, 1));
  CHECK(gr::native::mm(gr::native::transpose(at, 0, 1), bt).allclose(ref, 1e-12, 1e-12));
}
