// gpu_selftest checks of the GEMM with a bias epilogue (gemm_bias_stub: cuBLAS GEMM, then the
// bias kernel) through linear, whose bias rides in the GEMM, and mm_bias on transposed views.
#include "core/native/gemm.h"
#include "core/native/shape.h"
#include "selftest/checks.h"

namespace gr::selftest {

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
}

}  // namespace gr::selftest
