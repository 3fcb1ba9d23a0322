// gpu_selftest checks of the GEMM with a bias epilogue (gemm_bias_stub: cuBLAS GEMM, then the
// bias kernel; cuBLASLt's bias epilogue for bfloat16/float16) through linear, whose bias rides
// in the GEMM, and mm_bias on transposed views; bfloat16/float16 products on tensor cores;
// linear under CUDA autocast.
#include "core/native/gemm/gemm.h"
#include "core/native/shape/shape.h"
#include "selftest/checks.h"

namespace gr::selftest {

namespace {
// One bfloat16 step (2^-8 relative) on each side of a rounding, plus sums that cancel.
constexpr Tol kBF16Gemm{1e-2, 5e-2}, kF16Gemm{2e-3, 1e-2};
}  // namespace

GR_SELFTEST_CHECKS(add_gemm_bias_checks) {
  // Its longest sums: the weight and bias gradients over 12 x 64 = 768 rows (the input
  // gradient's 384, the output's 128); results near zero need the atol of that length (Note
  // [Comparison tolerances]); rtol 1e-4 as kF32Reduce, for cuBLAS's blocked order.
  c.push_back({"gemm_bias", "linear +bias fwd+bwd f32 [12,64,128] w[384,128] (train_gpt's qkv)",
               [] { return TensorList{grad_input({12, 64, 128}, 40), grad_input({384, 128}, 41), grad_input({384}, 42)}; },
               with_grads([](const TensorList& x) { return linear(x[0], x[1], x[2]); }), apps::f32_sum_tol(12 * 64, 1e-4)});
  c.push_back({"gemm_bias", "mm_bias f64 [37,53]^T-views x [53,29] + [29] (tails)",
               [] { return TensorList{randn_({53, 37}, 43, kFloat64), randn_({29, 53}, 44, kFloat64), randn_({29}, 45, kFloat64)}; },
               [](const TensorList& x) {
                 return TensorList{native::mm_bias(native::transpose(x[0], 0, 1), native::transpose(x[1], 0, 1), x[2])};
               },
               kF64});
  c.push_back({"gemm_bias", "linear +bias fwd+bwd bf16 [12,64,128] w[384,128] (cuBLASLt bias epilogue)",
               [] {
                 return TensorList{grad_input({12, 64, 128}, 46, kBFloat16), grad_input({384, 128}, 47, kBFloat16),
                                   grad_input({384}, 48, kBFloat16)};
               },
               with_grads([](const TensorList& x) { return linear(x[0], x[1], x[2]); }), kBF16Gemm});
  c.push_back({"gemm", "mm bf16 [1024,1024] x [1024,1024] (tensor cores)",
               [] { return TensorList{randn_({1024, 1024}, 49, kBFloat16), randn_({1024, 1024}, 50, kBFloat16)}; },
               [](const TensorList& x) { return TensorList{native::mm(x[0], x[1])}; }, kBF16Gemm});
  c.push_back({"gemm", "mm f16 [384,256]^T-view x [384,512], bmm f16 [4,33,65] x [4,65,17]",
               [] {
                 return TensorList{randn_({384, 256}, 51, kFloat16), randn_({384, 512}, 52, kFloat16),
                                   randn_({4, 33, 65}, 53, kFloat16), randn_({4, 65, 17}, 54, kFloat16)};
               },
               [](const TensorList& x) {
                 return TensorList{native::mm(native::transpose(x[0], 0, 1), x[1]), native::bmm(x[2], x[3])};
               },
               kF16Gemm});
  c.push_back({"gemm", "linear under autocast bf16 fwd+bwd [8,64,256] w[768,256] (float32 weights)",
               [] { return TensorList{grad_input({8, 64, 256}, 55), grad_input({768, 256}, 56), grad_input({768}, 57)}; },
               with_grads([](const TensorList& x) {
                 autocast::AutocastGuard guard(x[0].device().type(), kBFloat16);
                 return linear(x[0], x[1], x[2]).to(kFloat32);
               }),
               kBF16Gemm});
}

}  // namespace gr::selftest
