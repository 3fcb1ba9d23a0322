// gpu_selftest checks of the conv branch: conv1d, the transposed convolutions (cuDNN's or
// im2col's backward-data pass as a forward, Note [Transposed convolution]) and pixel_shuffle.
#include "selftest/checks.h"

namespace gr::selftest {

GR_SELFTEST_CHECKS(add_conv_checks) {
  // Its longest sums: the bias gradient, 16 x 14 x 14 = 3136 terms (the weight gradient's 784,
  // the input gradient's 32 x 4 x 4 = 512, the output's 64 x 2 x 2 = 256); results near zero
  // need the atol of that length (Note [Comparison tolerances]); rtol 1e-4 as kF32Reduce, for
  // cuDNN's algorithm summing in another order than the CPU's.
  c.push_back({"conv_transpose2d", "fwd+bwd f32 [16,64,7,7] w[64,32,4,4] stride 2 pad 1 +bias (DCGAN)",
               [] { return TensorList{grad_input({16, 64, 7, 7}, 1701), grad_input({64, 32, 4, 4}, 1702), grad_input({32}, 1703)}; },
               with_grads([](const TensorList& x) { return conv_transpose2d(x[0], x[1], x[2], 2, 1); }),
               apps::f32_sum_tol(16 * 14 * 14, 1e-4)});
  c.push_back({"conv_transpose2d", "fwd+bwd f64 [2,4,5,6] w[4,3,3,2] groups 2 dilation 2 output_padding 1",
               [] {
                 return TensorList{grad_input({2, 4, 5, 6}, 1704, kFloat64), grad_input({4, 3, 3, 2}, 1705, kFloat64)};
               },
               with_grads([](const TensorList& x) { return conv_transpose2d(x[0], x[1], {}, 2, 1, 1, 2, 2); }), kF64});
  c.push_back({"conv_transpose2d", "fwd+bwd f64 [2,2,4,3] w[2,3,3,3] output_padding past the stride",
               [] {
                 return TensorList{grad_input({2, 2, 4, 3}, 1706, kFloat64), grad_input({2, 3, 3, 3}, 1707, kFloat64)};
               },
               with_grads([](const TensorList& x) { return conv_transpose2d(x[0], x[1], {}, 1, 0, 1, 1, 2); }), kF64});
  c.push_back({"conv1d", "fwd+bwd f32 [8,16,50] w[32,8,5] groups 2 stride 2 pad 2 +bias",
               [] { return TensorList{grad_input({8, 16, 50}, 1708), grad_input({32, 8, 5}, 1709), grad_input({32}, 1710)}; },
               with_grads([](const TensorList& x) { return conv1d(x[0], x[1], x[2], 2, 2, 1, 2); }), kF32Reduce});
  c.push_back({"conv_transpose1d", "fwd+bwd f32 [4,8,20] w[8,6,3] stride 3 output_padding 2 +bias",
               [] { return TensorList{grad_input({4, 8, 20}, 1711), grad_input({8, 6, 3}, 1712), grad_input({6}, 1713)}; },
               with_grads([](const TensorList& x) { return conv_transpose1d(x[0], x[1], x[2], 3, 0, 2); }), kF32Reduce});
  c.push_back({"pixel_shuffle", "pixel_shuffle / pixel_unshuffle fwd+bwd f32 [4,36,9,7]",
               [] { return TensorList{grad_input({4, 36, 9, 7}, 1714)}; },
               with_grads([](const TensorList& x) { return pixel_unshuffle(pixel_shuffle(x[0], 3), 3) * x[0]; }),
               kF32});
}

}  // namespace gr::selftest
