// gpu_selftest checks of the norm branch's CUDA kernels: layer_norm forward and backward
// (rows shorter and longer than a block, with and without affine) and the activations.
#include "selftest/checks.h"

namespace gr::selftest {

GR_SELFTEST_CHECKS(add_norm_checks) {
  c.push_back({"layer_norm", "fwd+bwd f32 [64,37,768] affine (GPT rows)",
               [] { return TensorList{grad_input({64, 37, 768}, 1601), grad_input({768}, 1602), grad_input({768}, 1603)}; },
               with_grads([](const TensorList& x) { return layer_norm(x[0], {768}, x[1], x[2]); }), kF32Reduce});
  c.push_back({"layer_norm", "fwd+bwd f64 [5,3,7] normalized [3,7] no affine, offset rows",
               [] { return TensorList{(randn_({5, 3, 7}, 1604, kFloat64) + 1e3).requires_grad_(true)}; },
               with_grads([](const TensorList& x) { return layer_norm(x[0], {3, 7}); }), kF64});
  c.push_back({"layer_norm", "fwd+bwd f32 [3,5000] weight only (rows longer than a block)",
               [] { return TensorList{grad_input({3, 5000}, 1605), grad_input({5000}, 1606)}; },
               with_grads([](const TensorList& x) { return layer_norm(x[0], {5000}, x[1]); }), kF32Reduce});
  c.push_back({"activation", "gelu none/tanh, silu, mish, leaky_relu, elu fwd+bwd f32 [257,129]",
               [] { return TensorList{grad_input({257, 129}, 1607)}; },
               with_grads([](const TensorList& x) {
                 return gelu(x[0]) + gelu(x[0], "tanh") + silu(x[0]) + mish(x[0]) + leaky_relu(x[0], 0.2) +
                        elu(x[0], 0.7);
               }),
               kF32});
  c.push_back({"activation", "gelu fwd+bwd f64 [1000]", [] { return TensorList{grad_input({1000}, 1608, kFloat64)}; },
               with_grads([](const TensorList& x) { return gelu(x[0]); }), kF64});
}

}  // namespace gr::selftest
