// The host-side arithmetic of the cuBLASLt GEMMs (gemm_lt.cpp), in plain C++ so the CPU
// suite checks it: how a row-major problem of the gemm_stub contract becomes cuBLASLt's
// column-major one, the key its plan (descriptors and algorithm) is cached under, and the
// pointer alignments the heuristics are told about.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace gr::cuda {

// Note [Row-major GEMM on cuBLASLt]
// A row-major matrix read column-major is its transpose, so C [M, N] = op(A) op(B) (row-major)
// is computed as C^T [N, M] = op(B)^T op(A)^T: cuBLASLt's first operand is our B, its second
// our A, m = N, n = M, and each transpose flag stays with its matrix. A row-major X stored
// [r, c] with leading dim ld is, column-major, [c, r] with the same ld. The epilogue's bias
// runs along D's rows (m = N), so a bias [N] is added to every row of our C, which is
// linear's bias. BGRADB-style epilogues would reduce along n (our M).
struct LtLayout {
  int64_t rows = 0, cols = 0, ld = 0;  // column-major, as cublasLtMatrixLayoutCreate takes them
  bool operator==(const LtLayout&) const = default;
};
struct LtProblem {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;  // cuBLASLt's A (our B) and B (our A)
  LtLayout a, b, c;
  bool operator==(const LtProblem&) const = default;
};

inline LtProblem lt_problem(bool ta, bool tb, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb,
                            int64_t ldc) {
  LtProblem p;
  p.m = N;
  p.n = M;
  p.k = K;
  p.trans_a = tb;
  p.trans_b = ta;
  // Our B is stored [K, N] (or [N, K] when tb): column-major [N, K] (or [K, N]).
  p.a = tb ? LtLayout{K, N, ldb} : LtLayout{N, K, ldb};
  // Our A is stored [M, K] (or [K, M] when ta): column-major [K, M] (or [M, K]).
  p.b = ta ? LtLayout{M, K, lda} : LtLayout{K, M, lda};
  p.c = LtLayout{N, M, ldc};
  return p;
}

// The largest power of two dividing a device address, up to 16 bytes (the widest vector
// load): cuBLASLt's heuristics only offer kernels whose loads the operands' alignment allows.
inline uint32_t pointer_alignment(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 1;
  while (a < 16 && v % (2 * a) == 0) a *= 2;
  return a;
}

// Note [Deterministic cuBLASLt plans]
// cuBLASLt may split K over blocks and combine their partial products (CUBLASLT_REDUCTION_SCHEME_*).
// Under gr::use_deterministic_algorithms(true) the heuristics are offered only algorithms
// that do not split (NONE) or reduce "in place", whose partial sums are added in one fixed
// order through counters in the workspace (cublasLt.h's words); the schemes that combine the
// partial products in a separate pass through the workspace (COMPUTE_TYPE, OUTPUT_TYPE) are left
// out. The switch is part of the plan key, so flipping it makes new plans rather than reusing
// ones chosen without the restriction. The values are cublasLtReductionScheme_t's (gemm_lt.cpp
// checks them against cublasLt.h).
constexpr uint32_t kLtReductionInplace = 1, kLtReductionAll = 7;
inline uint32_t lt_reduction_scheme_mask(bool deterministic) {
  return deterministic ? kLtReductionInplace : kLtReductionAll;
}

// What fixes a plan: the problem, the element types (as small integers: cudaDataType_t), the
// epilogue (cublasLtEpilogue_t), the batch (count and strides, 0 when not batched), the
// operands' alignments, the workspace the heuristics may use, the device and the deterministic
// switch (Note [Deterministic cuBLASLt plans]).
struct LtPlanKey {
  LtProblem problem;
  int32_t type_ab = 0, type_c = 0, epilogue = 0;
  int64_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
  uint32_t align_a = 0, align_b = 0, align_c = 0, align_bias = 0;
  size_t workspace = 0;
  int device = 0;
  bool deterministic = false;
  bool operator==(const LtPlanKey&) const = default;
};

struct LtPlanKeyHash {
  size_t operator()(const LtPlanKey& k) const {
    size_t h = std::hash<int>()(k.device);
    auto mix = [&h](uint64_t v) { h ^= std::hash<uint64_t>()(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    const LtProblem& p = k.problem;
    for (int64_t v : {p.m, p.n, p.k, p.a.ld, p.b.ld, p.c.ld, k.batch, k.stride_a, k.stride_b, k.stride_c})
      mix(static_cast<uint64_t>(v));
    mix((uint64_t(p.trans_a) << 1) | uint64_t(p.trans_b));
    mix((uint64_t(uint32_t(k.type_ab)) << 32) | uint32_t(k.type_c));
    mix(static_cast<uint64_t>(uint32_t(k.epilogue)));
    mix((uint64_t(k.align_a) << 48) | (uint64_t(k.align_b) << 32) | (uint64_t(k.align_c) << 16) | k.align_bias);
    mix(static_cast<uint64_t>(k.workspace));
    mix(static_cast<uint64_t>(k.deterministic));
    return h;
  }
};

}  // namespace gr::cuda
