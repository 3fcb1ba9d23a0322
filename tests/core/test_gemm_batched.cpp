// gemm_batched_stub on the CPU (gemm per product, threads across products when they are many
// and small) against one gemm_cpu call per product: every transpose, batch strides of 0
// (one matrix shared by all products), padded leading dims, beta != 0; and bmm / matmul
// (now one batched call) against a loop of mm over the batch, bit for bit.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "core/factory.h"
#include "core/native/gemm/gemm.h"
#include "core/native/shape/shape.h"

using namespace gr;
namespace N = gr::native;

namespace {

template <class T>
void check_batched(bool ta, bool tb, int64_t M, int64_t Nc, int64_t K, int64_t batch, bool share_a, bool share_b,
                   T beta) {
  CAPTURE(ta);
  CAPTURE(tb);
  CAPTURE(M);
  CAPTURE(Nc);
  CAPTURE(K);
  CAPTURE(batch);
  CAPTURE(share_a);
  CAPTURE(share_b);
  const int64_t pad = 3;
  const int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : Nc) + pad, ldc = Nc + pad;
  const int64_t sa = share_a ? 0 : (ta ? K : M) * lda, sb = share_b ? 0 : (tb ? Nc : K) * ldb, sc = M * ldc + 5;
  std::mt19937 rng(static_cast<unsigned>(M * 7 + Nc * 11 + K * 13 + batch));
  std::uniform_real_distribution<double> u(-1, 1);
  auto fill = [&](std::vector<T>& v, size_t n) {
    v.resize(std::max<size_t>(n, 1));
    for (T& x : v) x = static_cast<T>(u(rng));
  };
  std::vector<T> A, B, C;
  fill(A, static_cast<size_t>((share_a ? 1 : batch) * (ta ? K : M) * lda));
  fill(B, static_cast<size_t>((share_b ? 1 : batch) * (tb ? Nc : K) * ldb));
  fill(C, static_cast<size_t>(batch * sc));
  std::vector<T> want = C;
  for (int64_t i = 0; i < batch; ++i)
    N::gemm_cpu(ta, tb, M, Nc, K, T(1.5), A.data() + i * sa, lda, B.data() + i * sb, ldb, beta, want.data() + i * sc,
                ldc);
  N::gemm_batched_stub(kCPU, std::is_same_v<T, float> ? kFloat32 : kFloat64, ta, tb, M, Nc, K, 1.5, A.data(), lda, sa,
                       B.data(), ldb, sb, static_cast<double>(beta), C.data(), ldc, sc, batch);
  CHECK(C == want);  // same kernel per product: identical, padding between products untouched
}

}  // namespace

TEST_CASE("gemm_batched_stub on the CPU equals one gemm_cpu per product") {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      check_batched<float>(ta, tb, 5, 7, 9, 4, false, false, 0.0f);
      check_batched<double>(ta, tb, 17, 3, 33, 6, false, false, 0.5);
      check_batched<float>(ta, tb, 6, 8, 4, 64, true, false, 0.0f);  // many small products: threads across them
      check_batched<float>(ta, tb, 6, 8, 4, 64, false, true, 1.0f);
      check_batched<double>(ta, tb, 130, 90, 70, 2, true, false, 0.0);  // few large products: threads inside
      check_batched<float>(ta, tb, 4, 5, 0, 3, false, false, 0.0f);     // K = 0: C = beta * C
    }
  // Outputs that would overlap are refused.
  std::vector<float> a(16, 1.0f), c(64, 0.0f);
  CHECK_THROWS_AS(N::gemm_batched_stub(kCPU, kFloat32, false, false, 4, 4, 4, 1.0, a.data(), 4, 0, a.data(), 4, 0, 0.0,
                                       c.data(), 4, 8, 2),
                  Error);
}

TEST_CASE("bmm and batched matmul equal a loop of mm over the batch") {
  for (ScalarType t : {kFloat32, kFloat64}) {
    Tensor a = randn({5, 12, 20}, TensorOptions(t)), b = randn({5, 20, 9}, TensorOptions(t));
    Tensor out = N::bmm(a, b);
    for (int64_t i = 0; i < 5; ++i) CHECK(N::select(out, 0, i).equal(N::mm(N::select(a, 0, i), N::select(b, 0, i))));
    // Transposed batch operands (the transpose reaches the GEMM as a flag).
    Tensor at = N::transpose(randn({5, 20, 12}, TensorOptions(t)), 1, 2);
    Tensor bt = N::transpose(randn({5, 9, 20}, TensorOptions(t)), 1, 2);
    Tensor out_t = N::bmm(at, bt);
    for (int64_t i = 0; i < 5; ++i)
      CHECK(N::select(out_t, 0, i).equal(N::mm(N::select(at, 0, i), N::select(bt, 0, i))));
    // matmul broadcasting one matrix over a batch: a batch stride of 0.
    Tensor m = randn({20, 9}, TensorOptions(t)), lhs = N::transpose(randn({4, 20, 12}, TensorOptions(t)), 1, 2);
    Tensor out_b = N::matmul(lhs, m);
    for (int64_t i = 0; i < 4; ++i) CHECK(N::select(out_b, 0, i).equal(N::mm(N::select(lhs, 0, i), m)));
    Tensor x = randn({3, 1, 6, 20}, TensorOptions(t)), y = randn({2, 20, 7}, TensorOptions(t));
    Tensor out_xy = N::matmul(x, y);
    REQUIRE(out_xy.sizes() == IntArrayRef({3, 2, 6, 7}));
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 2; ++j)
        CHECK(N::select(N::select(out_xy, 0, i), 0, j)
                  .equal(N::mm(N::select(N::select(x, 0, i), 0, 0), N::select(y, 0, j))));
  }
}
