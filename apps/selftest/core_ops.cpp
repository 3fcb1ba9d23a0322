// gpu_selftest checks of the op families the reference CNN needs: element-wise, dtype
// conversion, reductions, GEMM, conv2d, pooling, batch norm, softmax, loss and random.
#include "selftest/checks.h"

namespace gr::selftest {

GR_SELFTEST_CHECKS(add_core_checks) {
  // Element-wise with broadcasting and strided (transposed) inputs.
  c.push_back({"elementwise", "add/mul/div broadcast f32 [64,1,33]x[1,17,33]",
               [] { return TensorList{randn_({64, 1, 33}, 1), randn_({1, 17, 33}, 2)}; },
               [](const TensorList& x) { return TensorList{x[0] + x[1], x[0] * x[1], x[0] / (x[1].abs() + 1)}; }, kF32});
  c.push_back({"elementwise", "exp/log/tanh/sigmoid/relu f32 transposed [300,200]",
               [] { return TensorList{randn_({200, 300}, 3).t()}; },
               [](const TensorList& x) {
                 return TensorList{x[0].exp(), (x[0].abs() + 1).log(), x[0].tanh(), x[0].sigmoid(), relu(x[0])};
               },
               kF32});
  c.push_back({"elementwise", "pow/maximum/where f64 [1000]", [] { return TensorList{randn_({1000}, 4, kFloat64), randn_({1000}, 5, kFloat64)}; },
               [](const TensorList& x) {
                 return TensorList{x[0].abs().pow(1.5), maximum(x[0], x[1]), where(x[0].gt(x[1]), x[0], x[1])};
               },
               kF64});
  c.push_back({"convert", "f32 -> f16, bf16, f64, int64 and back [4099]",
               [] { return TensorList{randn_({4099}, 6)}; },
               [](const TensorList& x) {
                 return TensorList{x[0].to(kFloat16).to(kFloat32), x[0].to(kBFloat16).to(kFloat32), x[0].to(kFloat64),
                                   (x[0] * 100).to(kInt64)};
               },
               kExact});
  c.push_back({"reduce", "sum/mean/max/argmax f32 [257,1031] dims 0,1",
               [] { return TensorList{randn_({257, 1031}, 7)}; },
               [](const TensorList& x) {
                 auto [m, i] = max(x[0], 1);
                 return TensorList{sum(x[0], {0}), mean(x[0], {1}), x[0].sum(), m, i, argmax(x[0], 0)};
               },
               kF32Reduce});
  c.push_back({"gemm", "mm f32 [511,257]x[257,383] (cuBLAS)", [] { return TensorList{randn_({511, 257}, 8), randn_({257, 383}, 9)}; },
               [](const TensorList& x) { return TensorList{mm(x[0], x[1]), mm(x[0].t().contiguous().t(), x[1])}; }, kF32Reduce});
  c.push_back({"gemm", "bmm f64 [12,65,33]x[12,33,47] (strided batched)",
               [] { return TensorList{randn_({12, 65, 33}, 10, kFloat64), randn_({12, 33, 47}, 11, kFloat64)}; },
               [](const TensorList& x) { return TensorList{bmm(x[0], x[1])}; }, kF64});
  c.push_back({"conv2d", "fwd+bwd f32 [8,16,15,15] w[32,16,3,3] pad 1 stride 2 +bias",
               [] { return TensorList{grad_input({8, 16, 15, 15}, 12), grad_input({32, 16, 3, 3}, 13), grad_input({32}, 14)}; },
               with_grads([](const TensorList& x) { return conv2d(x[0], x[1], x[2], 2, 1); }), kF32Reduce});
  c.push_back({"conv2d", "fwd+bwd f64 [2,4,9,9] w[6,2,3,3] groups 2 dilation 2",
               [] {
                 return TensorList{grad_input({2, 4, 9, 9}, 15, kFloat64), grad_input({6, 2, 3, 3}, 16, kFloat64)};
               },
               with_grads([](const TensorList& x) { return conv2d(x[0], x[1], {}, 1, 0, 2, 2); }), kF64});
  c.push_back({"pooling", "max_pool2d 3x3/2 pad 1 fwd+bwd f32 [4,8,17,17]",
               [] { return TensorList{grad_input({4, 8, 17, 17}, 17)}; },
               with_grads([](const TensorList& x) { return max_pool2d(x[0], {3, 3}, {2, 2}, {1, 1}); }), kExact});
  c.push_back({"pooling", "avg_pool2d 2x2 + adaptive_avg_pool2d 3x3 fwd+bwd f32",
               [] { return TensorList{grad_input({4, 8, 16, 16}, 18)}; },
               with_grads([](const TensorList& x) { return adaptive_avg_pool2d(avg_pool2d(x[0], {2, 2}), {3, 3}); }), kF32});
  c.push_back({"batch_norm", "training fwd+bwd f32 [16,32,9,9] + running stats",
               [] {
                 return TensorList{grad_input({16, 32, 9, 9}, 19), grad_input({32}, 20), grad_input({32}, 21),
                                   zeros({32}), ones({32})};
               },
               [](const TensorList& x) {
                 Tensor rm = x[3].clone(), rv = x[4].clone();
                 Tensor y = batch_norm(x[0], x[1], x[2], rm, rv, true);
                 y.backward(randn_(y.sizes(), 99).to(y.device()));
                 return TensorList{y.detach(), x[0].grad(), x[1].grad(), x[2].grad(), rm, rv};
               },
               kF32Reduce});
  c.push_back({"softmax", "log_softmax + softmax fwd+bwd f32 [128,1000] and [4,5,3] dim 1",
               [] { return TensorList{grad_input({128, 1000}, 22), grad_input({4, 5, 3}, 23)}; },
               with_grads([](const TensorList& x) { return log_softmax(x[0], 1).sum() + softmax(x[1], 1).sum(); }), kF32Reduce});
  c.push_back({"loss", "cross_entropy fwd+bwd f32 [256,10]",
               [] {
                 Generator g(24);
                 return TensorList{grad_input({256, 10}, 25), randint(0, 10, {256}, kInt64, &g)};
               },
               with_grads([](const TensorList& x) { return cross_entropy(x[0], x[1]); }), kF32Reduce});
  c.push_back({"random", "dropout p=0.3 mask and values f32 [10007] (same Philox stream)",
               [] { return TensorList{randn_({10007}, 26)}; },
               [](const TensorList& x) {
                 Generator g(27);
                 return TensorList{dropout(x[0], 0.3, true, &g)};
               },
               kExact});
  c.push_back({"random", "uniform fill f32 [4096] (same Philox stream)", [] { return TensorList{zeros({4096})}; },
               [](const TensorList& x) {
                 Generator g(28);
                 return TensorList{rand(x[0].sizes(), TensorOptions(kFloat32).device(x[0].device()), &g)};
               },
               kExact});
}

}  // namespace gr::selftest
