// gemm_bias_stub and mm_bias (linear's product with the bias added in the GEMM's epilogue):
// the same values as mm followed by a separate add, in float32 and float64, for shapes off
// the micro-tile and cache-block edges, transposed and padded operands, K == 0, and 1 and 2
// threads; a naive double loop bounds both.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/elementwise.h"
#include "core/native/gemm.h"
#include "core/native/shape.h"
#include "compare.h"
#include "core/parallel.h"

namespace {

struct Shape {
  int64_t M, N, K;
};

// Tails of the 6/8/12-row tiles and 16/24/32/48-column panels, several K blocks (K > 384),
// a single row or column, K == 0, and linear shapes of train_gpt tiny.
const Shape kShapes[] = {{1, 1, 1},    {7, 5, 3},     {13, 33, 17}, {12, 48, 64}, {37, 50, 400},
                         {70, 17, 900}, {1, 130, 20}, {130, 1, 20}, {9, 21, 0},   {768, 384, 128}};

// mm_bias(a, b, bias) against mm(a, b) + bias (exactly) and a double loop (within rounding).
template <class T>
void check_mm_bias(Shape s, bool ta, bool tb) {
  const gr::ScalarType dt = std::is_same_v<T, float> ? gr::kFloat32 : gr::kFloat64;
  gr::Generator g(static_cast<uint64_t>(s.M * 131 + s.N * 17 + s.K));
  // Transposed operands are transposes of contiguous tensors (what linear hands over).
  gr::Tensor a = ta ? gr::native::transpose(gr::randn({s.K, s.M}, gr::TensorOptions(dt), &g), 0, 1)
                    : gr::randn({s.M, s.K}, gr::TensorOptions(dt), &g);
  gr::Tensor b = tb ? gr::native::transpose(gr::randn({s.N, s.K}, gr::TensorOptions(dt), &g), 0, 1)
                    : gr::randn({s.K, s.N}, gr::TensorOptions(dt), &g);
  gr::Tensor bias = gr::randn({s.N}, gr::TensorOptions(dt), &g);
  gr::Tensor got = gr::native::mm_bias(a, b, bias);
  gr::Tensor sep = gr::native::mm(a, b);
  gr::native::add_(sep, bias);
  CAPTURE(s.M);
  CAPTURE(s.N);
  CAPTURE(s.K);
  CAPTURE(ta);
  CAPTURE(tb);
  REQUIRE(got.sizes() == sep.sizes());
  CHECK(got.equal(sep));
  gr::Tensor ac = gr::native::contiguous(a), bc = gr::native::contiguous(b);
  const T *pa = ac.data_ptr<T>(), *pb = bc.data_ptr<T>(), *pbias = bias.data_ptr<T>(), *pg = got.data_ptr<T>();
  double worst = 0;
  for (int64_t i = 0; i < s.M; ++i)
    for (int64_t j = 0; j < s.N; ++j) {
      double ref = pbias[j];
      for (int64_t k = 0; k < s.K; ++k) ref += double(pa[i * s.K + k]) * pb[k * s.N + j];
      worst = gr::test::max_nan(worst, gr::test::abs_diff(pg[i * s.N + j], ref));
    }
  CHECK(worst < (std::is_same_v<T, float> ? 1e-5 : 1e-12) * (s.K + 2));
}

}  // namespace

TEST_CASE("mm_bias equals mm + bias in float32 and float64, for every transpose and tail") {
  for (const Shape& s : kShapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        check_mm_bias<float>(s, ta, tb);
        check_mm_bias<double>(s, ta, tb);
      }
}

TEST_CASE("mm_bias equals mm + bias on 1 and 2 threads, in row and column stripes") {
  const int saved = gr::get_num_threads();
  for (int threads : {1, 2}) {
    gr::set_num_threads(threads);
    check_mm_bias<float>({300, 90, 70}, false, true);  // split by rows
    check_mm_bias<float>({40, 500, 70}, true, false);  // split by columns: each stripe its part of the bias
    check_mm_bias<double>({150, 61, 33}, false, false);
  }
  gr::set_num_threads(saved);
}

TEST_CASE("gemm_bias_stub writes only the product's columns of a padded C") {
  const int64_t M = 19, N = 35, K = 23, lda = K + 3, ldb = N + 5, ldc = N + 4;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> A(M * lda), B(K * ldb), bias(N), C(M * ldc, 42.f);
  for (auto& x : A) x = u(rng);
  for (auto& x : B) x = u(rng);
  for (auto& x : bias) x = u(rng);
  gr::native::gemm_bias_stub(gr::kCPU, gr::kFloat32, false, false, M, N, K, A.data(), lda, B.data(), ldb, bias.data(),
                             C.data(), ldc);
  std::vector<float> ref(M * ldc, 42.f);
  gr::native::gemm_cpu(false, false, M, N, K, 1.f, A.data(), lda, B.data(), ldb, 0.f, ref.data(), ldc);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) ref[i * ldc + j] += bias[j];
  CHECK(C == ref);
}

TEST_CASE("mm_bias: a bias of the wrong length is an error; float16 takes mm + add, bfloat16 rounds once") {
  using gr::native::to_dtype;
  gr::Tensor a = gr::randn({4, 3}), b = gr::randn({3, 5});
  CHECK_THROWS_WITH_AS(gr::native::mm_bias(a, b, gr::randn({4})), doctest::Contains("bias must be [5]"), gr::Error);
  CHECK_THROWS_WITH_AS(gr::native::mm_bias(a, gr::randn({4, 5}), gr::randn({5})), doctest::Contains("cannot be multiplied"),
                       gr::Error);
  gr::Tensor ah = to_dtype(a, gr::kFloat16), bh = to_dtype(b, gr::kFloat16), biash = to_dtype(gr::randn({5}), gr::kFloat16);
  gr::Tensor sep = gr::native::mm(ah, bh);
  gr::native::add_(sep, biash);
  CHECK(gr::native::mm_bias(ah, bh, biash).equal(sep));
  // bfloat16 (the autocast linear): the float sum plus the bias, rounded to bfloat16 once, so
  // within half a bfloat16 step (at most 2^-8 relative) of the exact value, plus float's sum error.
  gr::Tensor ab = to_dtype(gr::randn({40, 70}), gr::kBFloat16), bb = to_dtype(gr::randn({70, 50}), gr::kBFloat16),
             biasb = to_dtype(gr::randn({50}), gr::kBFloat16);
  gr::Tensor got = gr::native::mm_bias(ab, bb, biasb);
  REQUIRE(got.scalar_type() == gr::kBFloat16);
  gr::Tensor g = to_dtype(got, gr::kFloat64), x = to_dtype(ab, gr::kFloat64), w = to_dtype(bb, gr::kFloat64),
             c = to_dtype(biasb, gr::kFloat64);
  double worst = 0;
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 50; ++j) {
      double exact = c.data_ptr<double>()[j], sum_abs = std::abs(exact);
      for (int64_t k = 0; k < 70; ++k) {
        const double p = x.data_ptr<double>()[i * 70 + k] * w.data_ptr<double>()[k * 50 + j];
        exact += p, sum_abs += std::abs(p);
      }
      const double err = gr::test::abs_diff(g.data_ptr<double>()[i * 50 + j], exact);
      worst = gr::test::max_nan(worst, err / (std::ldexp(std::abs(exact), -8) + 1.2e-7 * 72 * sum_abs));
    }
  CHECK(worst <= 1.0);
}
