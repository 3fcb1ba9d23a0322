// bfloat16 GEMM (gemm_stub with bfloat16 operands and a float32 C, widened while packing):
// against a float64 product of the same bfloat16 values for every transpose, edge sizes,
// alpha/beta and leading dims; mm/bmm/baddbmm/matmul rounding once to bfloat16; and
// PyTorch 2.15's CPU bfloat16 mm (tests/data/bf16_reference.json).
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "core/native/copy.h"
#include "core/parallel.h"
#include "core/native/gemm.h"
#include "reference_util.h"

using namespace gr;

namespace {

// Bound on a float32 accumulation of K products against the exact sum: K float roundings of
// partial sums no larger than sum |a b|.
double accumulation_bound(double sum_abs, int64_t K) { return 1.2e-7 * static_cast<double>(K + 1) * sum_abs + 1e-30; }

void check_gemm_bf16(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, float beta, int64_t pad) {
  const int64_t a_rows = ta ? K : M, a_cols = ta ? M : K, b_rows = tb ? N : K, b_cols = tb ? K : N;
  const int64_t lda = a_cols + pad, ldb = b_cols + pad, ldc = N + pad;
  std::mt19937 rng(static_cast<unsigned>(M * 31 + N * 7 + K + (ta ? 1000 : 0) + (tb ? 2000 : 0)));
  std::normal_distribution<float> u(0, 1);
  std::vector<BFloat16> A(std::max<int64_t>(a_rows * lda, 1)), B(std::max<int64_t>(b_rows * ldb, 1));
  std::vector<float> C(std::max<int64_t>(M * ldc, 1));
  for (auto& x : A) x = BFloat16(u(rng));
  for (auto& x : B) x = BFloat16(u(rng));
  for (auto& x : C) x = u(rng);
  const std::vector<float> C0 = C;
  native::gemm_stub(kCPU, kBFloat16, ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
  double worst = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      if (j >= N) {  // padding is never written
        CHECK(C[i * ldc + j] == C0[i * ldc + j]);
        continue;
      }
      double ref = 0, sum_abs = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double p = double(float(ta ? A[k * lda + i] : A[i * lda + k])) * float(tb ? B[j * ldb + k] : B[k * ldb + j]);
        ref += p, sum_abs += std::abs(p);
      }
      ref = alpha * ref + (beta == 0.f ? 0.0 : beta * double(C0[i * ldc + j]));
      const double err = test::abs_diff(C[i * ldc + j], ref);
      const double bound = accumulation_bound(std::abs(alpha) * sum_abs + std::abs(beta * C0[i * ldc + j]), K);
      worst = test::max_nan(worst, err / bound);  // keeps a NaN (Note [Comparisons that see NaN])
    }
  CAPTURE(ta);
  CAPTURE(tb);
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(K);
  CHECK(worst <= 1.0);
}

// |got - ref| within one bfloat16 rounding of the result (2^-8 relative) plus the float32
// accumulation's bound.
void check_rounded(const Tensor& got, const Tensor& ref64, const Tensor& sum_abs, int64_t K) {
  REQUIRE(got.scalar_type() == kBFloat16);
  Tensor g = native::to_dtype(got, kFloat64).contiguous(), r = ref64.contiguous(), s = sum_abs.contiguous();
  REQUIRE(g.sizes() == r.sizes());
  const double* gp = g.data_ptr<double>();
  const double* rp = r.data_ptr<double>();
  const double* sp = s.data_ptr<double>();
  double worst = 0;
  for (int64_t i = 0; i < g.numel(); ++i)
    worst = test::max_nan(worst, test::abs_diff(gp[i], rp[i]) /
                                     (std::ldexp(std::abs(rp[i]), -8) + accumulation_bound(sp[i], K)));
  CHECK(worst <= 1.0);
}

Tensor bf16_randn(std::vector<int64_t> shape) { return native::to_dtype(randn(shape), kBFloat16); }
Tensor f64(const Tensor& t) { return native::to_dtype(t, kFloat64); }

}  // namespace

TEST_CASE("bfloat16 gemm_stub (float32 C) matches a float64 product for every transpose and edge size") {
  for (auto [M, N, K] : {std::array<int64_t, 3>{1, 1, 1}, {5, 3, 0}, {6, 16, 8}, {7, 17, 9}, {13, 33, 31},
                         {25, 47, 400}, {64, 96, 50}, {100, 130, 257}, {3, 700, 19}})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) check_gemm_bf16(ta, tb, M, N, K, 1.f, 0.f, 0);
}

TEST_CASE("bfloat16 gemm_stub on 200 random shapes, transposes, leading dims, alpha and beta") {
  // Sizes around the register tiles (12 x 32, 8 x 48) and odd K, where packing pairs has its
  // edges (Note [bfloat16 pair products]); 1 or 2 threads.
  std::mt19937 rng(17);
  std::uniform_int_distribution<int64_t> size(1, 130), pad(0, 5);
  const int saved = get_num_threads();
  for (int i = 0; i < 200; ++i) {
    set_num_threads(1 + i % 2);
    const int64_t M = size(rng), N = size(rng), K = size(rng);
    const bool ta = rng() % 2, tb = rng() % 2;
    const float alpha = i % 3 == 0 ? 0.5f : 1.f, beta = i % 4 == 0 ? -1.5f : 0.f;
    check_gemm_bf16(ta, tb, M, N, K, alpha, beta, pad(rng));
  }
  set_num_threads(saved);
}

TEST_CASE("bfloat16 gemm_stub: alpha, beta and leading dims wider than the matrix; batched on 1 and 2 threads") {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      check_gemm_bf16(ta, tb, 13, 33, 9, 0.5f, 1.f, 3);
      check_gemm_bf16(ta, tb, 30, 50, 300, -2.f, 0.25f, 1);
    }
  const int saved = get_num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Tensor a = bf16_randn({6, 20, 70}), b = bf16_randn({6, 70, 30});
    Tensor c = native::bmm(a, b);
    CHECK(c.scalar_type() == kBFloat16);
    check_rounded(c, native::bmm(f64(a), f64(b)), native::bmm(f64(a).abs(), f64(b).abs()), 70);
  }
  set_num_threads(saved);
}

TEST_CASE("bfloat16 mm, matmul and baddbmm round the float32 accumulation once") {
  Tensor a = bf16_randn({37, 300}), b = bf16_randn({300, 45});
  check_rounded(native::mm(a, b), native::mm(f64(a), f64(b)), native::mm(f64(a).abs(), f64(b).abs()), 300);
  // Transposed views are read in place.
  Tensor bt = bf16_randn({45, 300}).t();
  check_rounded(native::mm(a, bt), native::mm(f64(a), f64(bt)), native::mm(f64(a).abs(), f64(bt).abs()), 300);
  Tensor x = bf16_randn({2, 3, 11, 64}), w = bf16_randn({64, 24});
  check_rounded(native::matmul(x, w), native::matmul(f64(x), f64(w)), native::matmul(f64(x).abs(), f64(w).abs()), 64);
  Tensor self = bf16_randn({1, 9, 8}), b1 = bf16_randn({4, 9, 40}), b2 = bf16_randn({4, 40, 8});
  Tensor ref = native::baddbmm(f64(self), f64(b1), f64(b2), 0.5, 2.0);
  Tensor sum_abs = native::baddbmm(f64(self).abs(), f64(b1).abs(), f64(b2).abs(), 0.5, 2.0);
  check_rounded(native::baddbmm(self, b1, b2, 0.5, 2.0), ref, sum_abs, 40);
}

TEST_CASE("bfloat16 mm (stored rounded by the GEMM) for every transpose, odd K, edge tiles and a K past one block") {
  for (auto [M, N, K] : {std::array<int64_t, 3>{1, 1, 1}, {13, 33, 31}, {25, 47, 301}, {37, 50, 1000}, {64, 96, 1537}})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        Tensor a = ta ? bf16_randn({K, M}).t() : bf16_randn({M, K});
        Tensor b = tb ? bf16_randn({N, K}).t() : bf16_randn({K, N});
        CAPTURE(M);
        CAPTURE(N);
        CAPTURE(K);
        CAPTURE(ta);
        CAPTURE(tb);
        check_rounded(native::mm(a, b), native::mm(f64(a), f64(b)), native::mm(f64(a).abs(), f64(b).abs()), K);
      }
  std::mt19937 rng(23);  // and 60 random shapes, K up to past one block
  std::uniform_int_distribution<int64_t> size(1, 100), depth(1, 900);
  for (int i = 0; i < 60; ++i) {
    const int64_t M = size(rng), N = size(rng), K = depth(rng);
    const bool ta = rng() % 2, tb = rng() % 2;
    Tensor a = ta ? bf16_randn({K, M}).t() : bf16_randn({M, K});
    Tensor b = tb ? bf16_randn({N, K}).t() : bf16_randn({K, N});
    CAPTURE(M);
    CAPTURE(N);
    CAPTURE(K);
    check_rounded(native::mm(a, b), native::mm(f64(a), f64(b)), native::mm(f64(a).abs(), f64(b).abs()), K);
  }
}

TEST_CASE("bfloat16 mm/mm_bias store NaN and subnormal results as BFloat16(float) rounds them") {
  // The epilogue's fast conversion (vcvtne2ps2bf16 where the CPU has it) would keep a NaN's
  // sign and flush a subnormal bias to zero: such lanes take the exact rounding.
  // 48 x 96: whole register tiles of either shape (partial ones are merged exactly anyway).
  Tensor a = native::to_dtype(zeros({48, 64}), kBFloat16), b = bf16_randn({64, 96});
  a.data_ptr<BFloat16>()[3 * 64 + 5] = BFloat16(-std::nanf(""));
  a.data_ptr<BFloat16>()[7 * 64 + 2] = BFloat16(-INFINITY);  // -inf * b: +-inf; with 0 * -inf: NaN
  b.data_ptr<BFloat16>()[2 * 96 + 9] = BFloat16(0.f);
  Tensor bias = native::to_dtype(full({96}, 1e-40), kBFloat16);  // a bfloat16 subnormal
  REQUIRE(float(bias.data_ptr<BFloat16>()[0]) != 0.f);
  for (bool with_bias : {false, true}) {
    Tensor c = with_bias ? native::mm_bias(a, b, bias) : native::mm(a, b);
    const BFloat16* cp = c.data_ptr<BFloat16>();
    for (int64_t i = 0; i < 48; ++i)
      for (int64_t j = 0; j < 96; ++j) {
        const uint16_t got = cp[i * 96 + j].bits;
        CAPTURE(i);
        CAPTURE(j);
        if (i == 3 || (i == 7 && j == 9)) CHECK(got == 0x7fc0);  // NaN, sign dropped as BFloat16(float)
        else if (i == 7) CHECK(std::isinf(float(cp[i * 96 + j])));
        else CHECK(got == (with_bias ? bias.data_ptr<BFloat16>()[j].bits : uint16_t(0)));
      }
  }
}

TEST_CASE("bfloat16 mm agrees with PyTorch 2.15's CPU bfloat16 mm") {
  const nlohmann::json ref = test::load_reference("bf16_reference.json");
  int n = 0;
  for (const auto& c : ref.at("cases")) {
    if (c.at("name") != "mm") continue;
    Tensor a = test::tensor_from_json(c.at("a"), kBFloat16), b = test::tensor_from_json(c.at("b"), kBFloat16);
    if (c.at("trans_b").get<bool>()) b = b.t();
    Tensor got = native::mm(a, b), torch_out = test::tensor_from_json(c.at("out"));
    const int64_t K = a.size(1);
    // Both round a float32 sum once; summation orders differ, so a result may land on the
    // neighbouring bfloat16 value: allow one bfloat16 step (2^-7 relative).
    Tensor diff = (f64(got) - torch_out).abs();
    Tensor bound = torch_out.abs() * std::ldexp(1.0, -7) + native::mm(f64(a).abs(), f64(b).abs()) * (1.2e-7 * (K + 1));
    CHECK(diff.le(bound).all().item<bool>());
    ++n;
  }
  CHECK(n == 4);
}
