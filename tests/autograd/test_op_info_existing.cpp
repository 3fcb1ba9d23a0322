// OpInfo entries (op_info.h) for the ops that predate the registry: arithmetic, unary math,
// activations, reductions, views and copies, matmul, softmax, losses, selection, cat/stack,
// dropout, conv2d, pooling and batch_norm. test_op_info.cpp gradchecks each one and
// gradgradchecks those with double_backward set: all of them (Note [Double backward]).
#include "op_info.h"

using namespace gr;
using gr::testing::op_input;
using gr::testing::OpInfo;

namespace {

using Fn = std::function<Tensor(const TensorList&)>;

// Values in [0.5, 1.5): away from 0 for log, sqrt, div and negative powers.
Tensor positive(std::vector<int64_t> shape, uint64_t seed) {
  Generator g(seed);
  return (rand(shape, TensorOptions(kFloat64), &g) + 0.5).requires_grad_(true);
}
// A leaf whose memory is transposed (non-contiguous).
Tensor transposed(int64_t rows, int64_t cols, uint64_t seed) {
  return op_input({cols, rows}, seed).detach().t().requires_grad_(true);
}
Tensor labels(std::vector<int64_t> values) { return tensor(values, kInt64); }

void add(std::vector<OpInfo>& ops, std::string name, std::function<TensorList()> inputs, Fn fn,
         bool double_backward = true) {
  ops.push_back({std::move(name), std::move(inputs), std::move(fn), double_backward});
}

}  // namespace

GR_OP_INFOS(add_arithmetic_ops) {
  add(ops, "add", [] { return TensorList{op_input({2, 3}, 1), op_input({3}, 2)}; },
      [](const TensorList& t) { return gr::add(t[0], t[1], 0.7); });
  add(ops, "sub", [] { return TensorList{op_input({2, 3}, 3), op_input({2, 1}, 4)}; },
      [](const TensorList& t) { return sub(t[0], t[1], 1.5); });
  add(ops, "mul", [] { return TensorList{op_input({2, 3}, 5), op_input({2, 1}, 6)}; },
      [](const TensorList& t) { return t[0] * t[1]; });
  add(ops, "mul", [] { return TensorList{op_input({2, 3}, 7)}; }, [](const TensorList& t) { return t[0] * t[0]; });
  add(ops, "div", [] { return TensorList{op_input({2, 3}, 8), positive({3}, 9)}; },
      [](const TensorList& t) { return t[0] / t[1]; });
  add(ops, "div", [] { return TensorList{positive({2, 3}, 10), transposed(2, 3, 11)}; },
      [](const TensorList& t) { return t[1] / t[0]; });
  add(ops, "add/sub/mul/div (Scalar)", [] { return TensorList{op_input({2, 3}, 12)}; },
      [](const TensorList& t) { return 2.0 - t[0] * 3.0 + t[0] / 4.0 + 1.0; });
  add(ops, "neg", [] { return TensorList{op_input({4}, 13)}; }, [](const TensorList& t) { return -t[0]; });
  add(ops, "Tensor::add_", [] { return TensorList{op_input({2, 3}, 14), op_input({3}, 15)}; },
      [](const TensorList& t) { return (t[0] * 1.0).add_(t[1] * t[1], 0.5); });
  add(ops, "Tensor::mul_", [] { return TensorList{op_input({2, 3}, 16), op_input({3}, 17)}; },
      [](const TensorList& t) { return (t[0] * 1.0).mul_(t[1]); });
  add(ops, "Tensor::div_", [] { return TensorList{op_input({2, 3}, 18), positive({3}, 19)}; },
      [](const TensorList& t) { return (t[0] * t[0]).div_(t[1]); });
  add(ops, "Tensor::mul_ (self)", [] { return TensorList{op_input({3}, 20)}; },
      [](const TensorList& t) {
        Tensor y = t[0] * 1.0;
        return y.mul_(y);
      });
}

GR_OP_INFOS(add_unary_ops) {
  add(ops, "exp", [] { return TensorList{op_input({3, 4}, 30)}; }, [](const TensorList& t) { return exp(t[0]); });
  add(ops, "log", [] { return TensorList{positive({3, 4}, 31)}; }, [](const TensorList& t) { return log(t[0]); });
  add(ops, "sqrt", [] { return TensorList{positive({3, 4}, 32)}; }, [](const TensorList& t) { return sqrt(t[0]); });
  add(ops, "abs", [] { return TensorList{op_input({3, 4}, 33)}; }, [](const TensorList& t) { return abs(t[0]); });
  add(ops, "pow", [] { return TensorList{op_input({3, 4}, 34)}; }, [](const TensorList& t) { return t[0].pow(3.0); });
  add(ops, "pow", [] { return TensorList{positive({3, 4}, 35)}; }, [](const TensorList& t) { return t[0].pow(-1.5); });
  add(ops, "pow", [] { return TensorList{positive({3}, 36)}; }, [](const TensorList& t) { return t[0].pow(0.0); });
  add(ops, "pow", [] { return TensorList{positive({3, 4}, 37), op_input({4}, 38)}; },
      [](const TensorList& t) { return pow(t[0], t[1]); });
  add(ops, "relu", [] { return TensorList{op_input({3, 4}, 39)}; }, [](const TensorList& t) { return relu(t[0]); });
  add(ops, "sigmoid", [] { return TensorList{op_input({3, 4}, 40)}; },
      [](const TensorList& t) { return sigmoid(t[0]); });
  add(ops, "tanh", [] { return TensorList{transposed(3, 4, 41)}; }, [](const TensorList& t) { return tanh(t[0]); });
  add(ops, "Tensor::relu_", [] { return TensorList{op_input({3, 4}, 42)}; },
      [](const TensorList& t) { return (t[0] * 2.0).relu_(); });
}

GR_OP_INFOS(add_reduction_ops) {
  auto x = [] { return TensorList{op_input({2, 3, 4}, 50)}; };
  add(ops, "sum", x, [](const TensorList& t) { return t[0].sum(); });
  add(ops, "sum", x, [](const TensorList& t) { return t[0].sum({0, 2}, true); });
  add(ops, "sum", [] { return TensorList{transposed(3, 5, 51)}; }, [](const TensorList& t) { return t[0].sum({0}); });
  add(ops, "mean", x, [](const TensorList& t) { return t[0].mean(); });
  add(ops, "mean", x, [](const TensorList& t) { return t[0].mean({-1}, true); });
  add(ops, "var", x, [](const TensorList& t) { return t[0].var(); });
  add(ops, "var", x, [](const TensorList& t) { return t[0].var({0, 2}, false, true); });
  add(ops, "var", x, [](const TensorList& t) { return t[0].var({1}); });
  add(ops, "max", x, [](const TensorList& t) { return t[0].max(); });
  add(ops, "min", x, [](const TensorList& t) { return t[0].min(); });
  add(ops, "max", x, [](const TensorList& t) { return std::get<0>(gr::max(t[0], 1)); });
  add(ops, "min", x, [](const TensorList& t) { return std::get<0>(gr::min(t[0], 2, true)); });
}

GR_OP_INFOS(add_view_ops) {
  auto x = [] { return TensorList{op_input({2, 3, 4}, 60)}; };
  add(ops, "Tensor::view", x, [](const TensorList& t) { return t[0].view({6, 4}) * 1.0; });
  add(ops, "Tensor::reshape", [] { return TensorList{transposed(3, 4, 61)}; },
      [](const TensorList& t) { return t[0].reshape({12}); });
  add(ops, "Tensor::permute", x, [](const TensorList& t) { return t[0].permute({2, 0, 1}); });
  add(ops, "Tensor::transpose", x, [](const TensorList& t) { return t[0].transpose(0, 2); });
  add(ops, "Tensor::t", [] { return TensorList{op_input({2, 3}, 62)}; }, [](const TensorList& t) { return t[0].t(); });
  add(ops, "Tensor::slice", x, [](const TensorList& t) { return t[0].slice(2, 0, 4, 2); });
  add(ops, "Tensor::narrow", x, [](const TensorList& t) { return t[0].narrow(1, -2, 2); });
  add(ops, "Tensor::select", x, [](const TensorList& t) { return t[0].select(1, 1); });
  add(ops, "Tensor::expand", [] { return TensorList{op_input({3, 1}, 63)}; },
      [](const TensorList& t) { return t[0].expand({2, 3, 4}); });
  add(ops, "Tensor::squeeze", [] { return TensorList{op_input({3, 1, 2}, 64)}; },
      [](const TensorList& t) { return t[0].squeeze(1); });
  add(ops, "Tensor::unsqueeze", x, [](const TensorList& t) { return t[0].unsqueeze(-1); });
  add(ops, "Tensor::flatten", x, [](const TensorList& t) { return t[0].flatten(1); });
  add(ops, "Tensor::contiguous", [] { return TensorList{transposed(3, 4, 65)}; },
      [](const TensorList& t) { return t[0].contiguous(); });
  add(ops, "Tensor::clone", x, [](const TensorList& t) { return t[0].clone(); });
  add(ops, "Tensor::copy_", [] { return TensorList{op_input({3}, 66)}; },
      [](const TensorList& t) {
        Tensor dst = zeros({2, 3}, kFloat64);
        return dst.copy_(t[0] * t[0]);
      });
}

GR_OP_INFOS(add_matmul_ops) {
  add(ops, "matmul", [] { return TensorList{op_input({2, 3}, 70), op_input({3, 4}, 71)}; },
      [](const TensorList& t) { return matmul(t[0], t[1]); });
  add(ops, "matmul", [] { return TensorList{op_input({2, 1, 2, 3}, 72), op_input({3, 3, 2}, 73)}; },
      [](const TensorList& t) { return matmul(t[0], t[1]); });
  add(ops, "matmul", [] { return TensorList{op_input({3}, 74), op_input({3, 2}, 75)}; },
      [](const TensorList& t) { return matmul(t[0], t[1]); });
  add(ops, "mm", [] { return TensorList{transposed(2, 3, 76), op_input({3, 2}, 77)}; },
      [](const TensorList& t) { return mm(t[0], t[1]); });
  add(ops, "bmm", [] { return TensorList{op_input({2, 2, 3}, 78), op_input({2, 3, 2}, 79)}; },
      [](const TensorList& t) { return bmm(t[0], t[1]); });
  add(ops, "linear", [] { return TensorList{op_input({2, 2, 3}, 80), op_input({4, 3}, 81), op_input({4}, 82)}; },
      [](const TensorList& t) { return linear(t[0], t[1], t[2]); });
}

GR_OP_INFOS(add_nn_ops) {
  add(ops, "softmax", [] { return TensorList{op_input({2, 5}, 90)}; },
      [](const TensorList& t) { return softmax(t[0], 1); });
  add(ops, "log_softmax", [] { return TensorList{op_input({3, 2, 4}, 91)}; },
      [](const TensorList& t) { return log_softmax(t[0], 1); });
  add(ops, "mse_loss", [] { return TensorList{op_input({2, 3}, 92), op_input({2, 3}, 93)}; },
      [](const TensorList& t) { return mse_loss(t[0], t[1]); });
  add(ops, "mse_loss", [] { return TensorList{op_input({2, 3}, 94), op_input({2, 3}, 95)}; },
      [](const TensorList& t) { return mse_loss(t[0], t[1], Reduction::None); });
  add(ops, "nll_loss", [] { return TensorList{op_input({3, 4}, 96)}; },
      [](const TensorList& t) {
        return nll_loss(log_softmax(t[0], 1), labels({1, 0, 3}), tensor({0.5, 1.0, 2.0, 1.5}, kFloat64));
      });
  add(ops, "nll_loss", [] { return TensorList{op_input({3, 4}, 97)}; },
      [](const TensorList& t) { return nll_loss(t[0], labels({2, -100, 0}), {}, Reduction::None); });
  add(ops, "cross_entropy", [] { return TensorList{op_input({3, 4}, 98)}; },
      [](const TensorList& t) { return cross_entropy(t[0], labels({3, 1, 1}), {}, Reduction::Sum, 1); });
  add(ops, "where", [] { return TensorList{op_input({2, 3}, 99), op_input({3}, 100)}; },
      [](const TensorList& t) { return where(t[0].detach().gt(0.0), t[0], t[1]); });
  add(ops, "where", [] { return TensorList{op_input({2, 3}, 101)}; },
      [](const TensorList& t) { return where(t[0].detach().lt(0.0), t[0], 2.5); });
  add(ops, "maximum", [] { return TensorList{op_input({2, 3}, 102), op_input({3}, 103)}; },
      [](const TensorList& t) { return maximum(t[0], t[1]); });
  add(ops, "minimum", [] { return TensorList{op_input({2, 3}, 104), op_input({2, 1}, 105)}; },
      [](const TensorList& t) { return minimum(t[0], t[1]); });
  add(ops, "cat", [] { return TensorList{op_input({2, 3}, 106), op_input({2, 1}, 107)}; },
      [](const TensorList& t) { return cat({t[0], t[1] * t[1]}, 1); });
  add(ops, "stack", [] { return TensorList{op_input({2, 3}, 108), op_input({2, 3}, 109)}; },
      [](const TensorList& t) { return stack({t[0], t[1]}, -1); });
  add(ops, "dropout", [] { return TensorList{op_input({4, 5}, 110)}; },
      [](const TensorList& t) {
        Generator g(7);  // the same mask at every call
        return dropout(t[0], 0.4, true, &g);
      });
}

GR_OP_INFOS(add_conv_ops) {
  add(ops, "conv2d", [] { return TensorList{op_input({2, 2, 5, 5}, 120), op_input({3, 2, 3, 3}, 121), op_input({3}, 122)}; },
      [](const TensorList& t) { return conv2d(t[0], t[1], t[2], 2, 1); });
  add(ops, "conv2d", [] { return TensorList{op_input({1, 4, 5, 4}, 123), op_input({2, 2, 2, 3}, 124)}; },
      [](const TensorList& t) { return conv2d(t[0], t[1], {}, {1, 2}, {0, 1}, {2, 1}, 2); });
  add(ops, "conv2d", [] { return TensorList{op_input({2, 1, 4, 4}, 125), op_input({2, 1, 2, 2}, 126)}; },
      [](const TensorList& t) { return conv2d(t[0].tanh(), t[1]).sigmoid(); });
}

GR_OP_INFOS(add_pooling_and_norm_ops) {
  add(ops, "max_pool2d", [] { return TensorList{op_input({1, 2, 5, 5}, 130)}; },
      [](const TensorList& t) { return max_pool2d(t[0], 3, 2, 1); });
  add(ops, "max_pool2d", [] { return TensorList{op_input({2, 4, 4}, 140)}; },
      [](const TensorList& t) { return max_pool2d(t[0], {2, 3}, {2, 1}, 0, 1, true); });
  add(ops, "avg_pool2d", [] { return TensorList{op_input({1, 2, 5, 5}, 131)}; },
      [](const TensorList& t) { return avg_pool2d(t[0], 3, 2, 1, true, false); });
  add(ops, "adaptive_avg_pool2d", [] { return TensorList{op_input({1, 2, 5, 4}, 132)}; },
      [](const TensorList& t) { return adaptive_avg_pool2d(t[0], {3, 2}); });
  add(ops, "batch_norm", [] { return TensorList{op_input({3, 2, 2, 2}, 133), op_input({2}, 134), op_input({2}, 135)}; },
      [](const TensorList& t) {
        return batch_norm(t[0], t[1], t[2], zeros({2}, kFloat64), ones({2}, kFloat64), true);
      });
  add(ops, "batch_norm", [] { return TensorList{op_input({3, 2, 2, 2}, 136), op_input({2}, 137), op_input({2}, 138)}; },
      [](const TensorList& t) {
        return batch_norm(t[0], t[1], t[2], tensor({0.1, -0.2}, kFloat64), tensor({0.5, 2.0}, kFloat64), false);
      });
  add(ops, "batch_norm", [] { return TensorList{op_input({4, 3}, 139)}; },
      [](const TensorList& t) { return batch_norm(t[0], {}, {}, {}, {}, true, 0.1, 1e-3); });
}
