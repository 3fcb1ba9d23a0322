// Host tests of the cuBLASLt GEMMs' bookkeeping (suite "cuda_host", no device needed):
// Note [Row-major GEMM on cuBLASLt] checked by running the column-major problem lt_problem()
// describes as cuBLASLt defines it (op(A) [m, k] op(B) [k, n], layouts rows x cols with a
// leading dim, the bias along D's rows) on random matrices, against the row-major product
// with bias[N] on every row; the layouts' consistency rules; pointer alignment; plan keys
// (the deterministic switch among their fields) and the reduction schemes that switch allows.
#include <array>
#include <cmath>
#include <random>
#include <unordered_set>
#include <vector>

#include "cuda_kernels/gemm_lt_plan.h"
#include "parity.h"

using namespace gr;
using namespace gr::cuda;

namespace {

// Element (r, c) of a column-major layout over `v`.
double at(const std::vector<double>& v, const LtLayout& l, int64_t r, int64_t c) {
  return v[static_cast<size_t>(r + c * l.ld)];
}

struct Case {
  bool ta, tb;
  int64_t M, N, K, pad_a, pad_b, pad_c;
};

void check_case(const Case& c, std::mt19937& rng) {
  INFO("ta " << c.ta << " tb " << c.tb << " M " << c.M << " N " << c.N << " K " << c.K);
  std::uniform_real_distribution<double> d(-1, 1);
  // Row-major storage: A is [M, K] (or [K, M] when ta), B [K, N] (or [N, K]), C [M, N].
  const int64_t a_rows = c.ta ? c.K : c.M, a_cols = c.ta ? c.M : c.K;
  const int64_t b_rows = c.tb ? c.N : c.K, b_cols = c.tb ? c.K : c.N;
  const int64_t lda = a_cols + c.pad_a, ldb = b_cols + c.pad_b, ldc = c.N + c.pad_c;
  std::vector<double> A(static_cast<size_t>(a_rows * lda)), B(static_cast<size_t>(b_rows * ldb)), bias(c.N);
  for (double& x : A) x = d(rng);
  for (double& x : B) x = d(rng);
  for (double& x : bias) x = d(rng);
  auto opA = [&](int64_t i, int64_t k) { return c.ta ? A[k * lda + i] : A[i * lda + k]; };
  auto opB = [&](int64_t k, int64_t j) { return c.tb ? B[j * ldb + k] : B[k * ldb + j]; };

  const LtProblem p = lt_problem(c.ta, c.tb, c.M, c.N, c.K, lda, ldb, ldc);
  // cuBLASLt's rules: op(A) is m x k, op(B) k x n, C m x n, each ld at least its rows.
  CHECK(p.a.rows == (p.trans_a ? p.k : p.m));
  CHECK(p.a.cols == (p.trans_a ? p.m : p.k));
  CHECK(p.b.rows == (p.trans_b ? p.n : p.k));
  CHECK(p.b.cols == (p.trans_b ? p.k : p.n));
  CHECK(p.c.rows == p.m);
  CHECK(p.c.cols == p.n);
  CHECK(p.a.ld >= p.a.rows);
  CHECK(p.b.ld >= p.b.rows);
  CHECK(p.c.ld >= p.c.rows);

  // cuBLASLt's first operand is our B, its second our A; D gets the bias along its rows.
  std::vector<double> D(static_cast<size_t>(p.c.ld * p.n), 0.0);
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double s = 0;
      for (int64_t k = 0; k < p.k; ++k) {
        const double a = p.trans_a ? at(B, p.a, k, i) : at(B, p.a, i, k);
        const double b = p.trans_b ? at(A, p.b, j, k) : at(A, p.b, k, j);
        s += a * b;
      }
      D[static_cast<size_t>(i + j * p.c.ld)] = s + bias[static_cast<size_t>(i)];
    }
  double worst = 0;
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < c.N; ++j) {
      double want = bias[static_cast<size_t>(j)];
      for (int64_t k = 0; k < c.K; ++k) want += opA(i, k) * opB(k, j);
      // Row-major C[i, j] is the column-major D[j, i] at j + i * ldc.
      const double got = D[static_cast<size_t>(j + i * ldc)];
      const double err = std::fabs(got - want);
      if (!(err <= worst)) worst = err;
    }
  CHECK(worst < 1e-12);
}

}  // namespace

TEST_SUITE("cuda_host") {
  TEST_CASE("cuBLASLt's column-major problem computes the row-major product with bias[N] on every row") {
    std::mt19937 rng(31);
    int cases = 0;
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const auto& [M, N, K] : {std::array<int64_t, 3>{1, 1, 1}, {3, 5, 7}, {8, 1, 4}, {1, 9, 2}, {13, 6, 1},
                                      {16, 24, 32}, {7, 17, 5}})
          for (int64_t pad : {0, 3}) {
            check_case({ta, tb, M, N, K, pad, pad == 0 ? 0 : 1, pad}, rng);
            ++cases;
          }
    CHECK(cases == 56);
  }

  TEST_CASE("cuBLASLt operand alignment: the largest power of two dividing the address, at most 16 bytes") {
    alignas(64) static unsigned char buffer[128];
    CHECK(pointer_alignment(buffer) == 16);
    CHECK(pointer_alignment(buffer + 1) == 1);
    CHECK(pointer_alignment(buffer + 2) == 2);
    CHECK(pointer_alignment(buffer + 6) == 2);
    CHECK(pointer_alignment(buffer + 8) == 8);
    CHECK(pointer_alignment(buffer + 24) == 8);
    CHECK(pointer_alignment(buffer + 48) == 16);
  }

  TEST_CASE("cuBLASLt plan keys: equal problems share a key, any differing field makes another") {
    LtPlanKey base;
    base.problem = lt_problem(false, true, 768, 2304, 768, 768, 768, 2304);
    base.type_ab = 14;  // CUDA_R_16BF
    base.type_c = 14;
    base.epilogue = 4;
    base.align_a = base.align_b = base.align_c = base.align_bias = 16;
    base.workspace = size_t(32) << 20;
    LtPlanKeyHash hash;
    LtPlanKey same = base;
    CHECK(same == base);
    CHECK(hash(same) == hash(base));
    std::vector<LtPlanKey> variants(10, base);
    variants[0].problem = lt_problem(true, true, 768, 2304, 768, 768, 768, 2304);
    variants[1].problem = lt_problem(false, true, 768, 2304, 769, 769, 769, 2304);
    variants[2].type_c = 0;
    variants[3].epilogue = 1;
    variants[4].align_a = 8;
    variants[5].align_bias = 2;
    variants[6].workspace = 0;
    variants[7].device = 1;
    variants[8].problem.c.ld = 2400;
    variants[9].deterministic = true;  // Note [Deterministic cuBLASLt plans]
    std::unordered_set<size_t> hashes{hash(base)};
    for (const LtPlanKey& v : variants) {
      CHECK_FALSE(v == base);
      hashes.insert(hash(v));
    }
    CHECK(hashes.size() == variants.size() + 1);  // no collision among these
  }

  TEST_CASE("cuBLASLt under the deterministic switch: only the unsplit and in-place reduction schemes") {
    // cublasLtReductionScheme_t: NONE 0, INPLACE 1, COMPUTE_TYPE 2, OUTPUT_TYPE 4, MASK 7.
    CHECK(lt_reduction_scheme_mask(false) == 7u);
    const uint32_t det = lt_reduction_scheme_mask(true);
    CHECK((det & 1u) == 1u);  // in place: one fixed order
    CHECK((det & 2u) == 0u);  // partial products combined in a separate pass: left out
    CHECK((det & 4u) == 0u);
  }
}
