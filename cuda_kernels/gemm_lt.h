// GEMMs on cuBLASLt: bfloat16/float16 products on tensor cores with float32 accumulation, and
// products whose bias is added in the epilogue. Used by the gemm and gemm_bias kernels of this
// backend; the layout arithmetic is gemm_lt_plan.h's.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace gr::cuda {

// What cuBLASLt does after the product (its cublasLtEpilogue_t, see Note [Row-major GEMM on
// cuBLASLt] for where the bias goes): nothing, or + bias[N] on every row.
enum class LtEpilogue : uint8_t { kNone, kBias };

// One row-major product of the gemm_stub contract: C [M, N] = alpha op(A) op(B) + beta C,
// then the epilogue. `ab` is A's and B's dtype, `c` C's (bfloat16/float16 products may write
// either their own dtype or float32); the accumulator and alpha/beta are float32 (FP32 math:
// no TF32 for float32 operands). bias [N] has C's dtype and needs beta == 0.
struct LtGemm {
  ScalarType ab = kFloat32, c = kFloat32;
  bool ta = false, tb = false;
  int64_t M = 0, N = 0, K = 0;
  const void* A = nullptr;
  int64_t lda = 0;
  const void* B = nullptr;
  int64_t ldb = 0;
  void* C = nullptr;
  int64_t ldc = 0;
  float alpha = 1, beta = 0;
  LtEpilogue epilogue = LtEpilogue::kNone;
  const void* bias = nullptr;
};

// Runs `g` on the current stream through a cached plan (descriptors and the heuristics'
// first algorithm, per problem, dtypes, alignments and device). False when cuBLASLt offers
// no algorithm for it or is switched off (nothing was queued): the caller falls back to
// cublasGemmEx. Throws on cuBLAS errors. M, N > 0 and K > 0.
bool lt_gemm(const LtGemm& g);

// Note [cuBLASLt switches]
// Which products take cuBLASLt, settable for measurements (the defaults are what the H200
// run should confirm; each has an environment variable read at startup):
// - cuBLASLt itself (GRADRING_CUBLASLT, default on): off, lt_gemm declines every product, so
//   bfloat16/float16 run on cublasGemmEx and their bias in a separate kernel;
// - float32 linear products with a bias (GRADRING_LT_FLOAT32=1; default off) run cuBLASLt's
//   FP32 kernels with the bias in the epilogue instead of SGEMM and a bias kernel.
// bfloat16/float16 products take cuBLASLt while it is on (cublasGemmEx where it has no
// algorithm).
// The workspace a product may use: GRADRING_CUBLASLT_WORKSPACE_MB (default 32, as PyTorch's
// cuBLAS workspace on Hopper).
void set_cublaslt_enabled(bool enabled);
bool cublaslt_enabled();
void set_lt_float32(bool enabled);
bool lt_float32();
size_t lt_workspace_limit();

// Plans cached by the calling thread (tests), and the number of plans made in this process.
size_t lt_plan_cache_size();
int64_t lt_plans_made();

}  // namespace gr::cuda
