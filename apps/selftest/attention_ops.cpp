// gpu_selftest checks of scaled_dot_product_attention (nn breadth: attention): the CUDA
// kernels of cuda_kernels/attention.cu against the fused CPU kernel, forward and backward,
// plain, causal, with bool and float masks, and with dropout (the same Philox stream).
#include "selftest/checks.h"

namespace gr::selftest {

namespace {
Tensor bool_mask(IntArrayRef shape, uint64_t seed) {
  Tensor m = randn_(shape, seed).gt(-0.5);
  return m.index_fill(-1, tensor({int64_t(0)}, TensorOptions(kInt64)), true);  // key 0 always visible
}
}  // namespace

GR_SELFTEST_CHECKS(add_attention_checks) {
  c.push_back({"attention", "sdpa fwd+bwd f32 [2,4,77,32]x[2,4,130,32], Ev 24",
               [] { return TensorList{grad_input({2, 4, 77, 32}, 1), grad_input({2, 4, 130, 32}, 2), grad_input({2, 4, 130, 24}, 3)}; },
               with_grads([](const TensorList& x) { return scaled_dot_product_attention(x[0], x[1], x[2]); }), kF32Reduce});
  c.push_back({"attention", "sdpa causal fwd+bwd f64 [3,150,16] (L > S: [3,100,16])",
               [] {
                 return TensorList{grad_input({3, 150, 16}, 4, kFloat64), grad_input({3, 100, 16}, 5, kFloat64),
                                   grad_input({3, 100, 16}, 6, kFloat64)};
               },
               with_grads([](const TensorList& x) { return scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true); }),
               kF64});
  c.push_back({"attention", "sdpa bool mask [1,50,70] broadcast, float mask [2,1,50,70], f32",
               [] {
                 return TensorList{grad_input({2, 3, 50, 16}, 7), grad_input({2, 3, 70, 16}, 8), grad_input({2, 3, 70, 16}, 9),
                                   bool_mask({1, 50, 70}, 10), randn_({2, 1, 50, 70}, 11)};
               },
               with_grads([](const TensorList& x) {
                 return scaled_dot_product_attention(x[0], x[1], x[2], x[3]) +
                        scaled_dot_product_attention(x[0], x[1], x[2], x[4], 0.0, false, 0.5);
               }),
               kF32Reduce});
  c.push_back({"attention", "sdpa dropout p=0.3 fwd+bwd f64 (same Philox stream) [2,2,40,8]x[2,2,90,8]",
               [] {
                 return TensorList{grad_input({2, 2, 40, 8}, 12, kFloat64), grad_input({2, 2, 90, 8}, 13, kFloat64),
                                   grad_input({2, 2, 90, 8}, 14, kFloat64)};
               },
               with_grads([](const TensorList& x) {
                 manual_seed(15);
                 return scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.3);
               }),
               kF64});
}

}  // namespace gr::selftest
