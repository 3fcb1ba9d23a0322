// OpInfo entries of the math family (gradchecked in float64 by test_op_info.cpp): inputs are
// drawn away from poles and kinks (asin/acos/erfinv in (-1, 1), logs of positive values,
// divisors away from 0, clamp bounds away from the data); in-place forms run on non-leaves.
#include <set>

#include "op_info.h"

namespace gr::testing {

namespace {
Tensor leaf(const Tensor& t) { return t.detach().requires_grad_(true); }
// Normal values squashed into (-0.9, 0.9).
Tensor unit(std::vector<int64_t> shape, uint64_t seed) { return leaf(op_input(shape, seed).tanh() * 0.9); }
// Values in [lo, lo + |normal|), positive for lo > 0.
Tensor positive(std::vector<int64_t> shape, uint64_t seed, double lo = 0.5) { return leaf(op_input(shape, seed).abs() + lo); }
// |values| >= 0.5 with random signs (away from the pole of 1/x).
Tensor away_from_zero(std::vector<int64_t> shape, uint64_t seed) {
  Tensor x = op_input(shape, seed);
  return leaf(x + x.sign() * 0.5);
}

using Fn1 = Tensor (*)(const Tensor&);
void unary(std::vector<OpInfo>& ops, const char* name, Fn1 f, std::function<Tensor()> input) {
  ops.push_back({name, [input] { return TensorList{input()}; }, [f](const TensorList& t) { return f(t[0]); }});
}
}  // namespace

GR_OP_INFOS(add_unary_math_op_infos) {
  auto normal = [] { return op_input({3, 4}, 101); };
  unary(ops, "sin", sin, normal);
  unary(ops, "cos", cos, normal);
  unary(ops, "tan", tan, [] { return unit({3, 4}, 102); });
  unary(ops, "asin", asin, [] { return unit({3, 4}, 103); });
  unary(ops, "acos", acos, [] { return unit({3, 4}, 104); });
  unary(ops, "atan", atan, normal);
  unary(ops, "sinh", sinh, normal);
  unary(ops, "cosh", cosh, normal);
  unary(ops, "erf", erf, normal);
  unary(ops, "erfc", erfc, normal);
  unary(ops, "erfinv", erfinv, [] { return unit({3, 4}, 105); });
  unary(ops, "rsqrt", rsqrt, [] { return positive({3, 4}, 106); });
  unary(ops, "reciprocal", reciprocal, [] { return away_from_zero({3, 4}, 107); });
  unary(ops, "log1p", log1p, [] { return positive({3, 4}, 108, 0.0); });
  unary(ops, "expm1", expm1, normal);
  unary(ops, "log2", log2, [] { return positive({3, 4}, 109, 0.2); });
  unary(ops, "log10", log10, [] { return positive({3, 4}, 110, 0.2); });
  unary(ops, "square", square, normal);
  // Piecewise constant: the gradient is zero (random inputs are never at a step).
  unary(ops, "sign", sign, [] { return away_from_zero({3, 4}, 111); });
  unary(ops, "floor", floor, [] { return leaf(op_input({3, 4}, 112) * 3); });
  unary(ops, "ceil", ceil, [] { return leaf(op_input({3, 4}, 113) * 3); });
  unary(ops, "round", round, [] { return leaf(op_input({3, 4}, 114) * 3); });
  unary(ops, "trunc", trunc, [] { return leaf(op_input({3, 4}, 115) * 3); });
  unary(ops, "frac", frac, [] { return leaf(op_input({3, 4}, 116) * 3); });
  ops.push_back({"round", [] { return TensorList{op_input({3, 4}, 117)}; },
                 [](const TensorList& t) { return round(t[0], 2); }});
  unary(ops, "softplus", [](const Tensor& x) { return softplus(x); }, normal);
  // beta x stays below the threshold (log1p(exp) part) or above it (the identity).
  ops.push_back({"softplus", [] { return TensorList{leaf(op_input({3, 4}, 118) * 0.1)}; },
                 [](const TensorList& t) { return softplus(t[0], 2, 1); }});
  ops.push_back({"softplus", [] { return TensorList{positive({3, 4}, 119, 1.0)}; },
                 [](const TensorList& t) { return softplus(t[0], 2, 1); }});
}

GR_OP_INFOS(add_binary_math_op_infos) {
  ops.push_back({"atan2", [] { return TensorList{op_input({3, 4}, 120), op_input({4}, 121)}; },
                 [](const TensorList& t) { return atan2(t[0], t[1]); }});
  ops.push_back({"hypot", [] { return TensorList{op_input({3, 1}, 122), op_input({3, 4}, 123)}; },
                 [](const TensorList& t) { return hypot(t[0], t[1]); }});
  ops.push_back({"fmod", [] { return TensorList{leaf(op_input({3, 4}, 124) * 4), positive({4}, 125)}; },
                 [](const TensorList& t) { return fmod(t[0], t[1]); }});
  ops.push_back({"fmod", [] { return TensorList{leaf(op_input({3, 4}, 126) * 4)}; },
                 [](const TensorList& t) { return fmod(t[0], 1.5); }});
  ops.push_back({"remainder", [] { return TensorList{leaf(op_input({3, 4}, 127) * 4), away_from_zero({3, 1}, 128)}; },
                 [](const TensorList& t) { return remainder(t[0], t[1]); }});
  ops.push_back({"remainder", [] { return TensorList{away_from_zero({3, 4}, 129)}; },
                 [](const TensorList& t) { return remainder(2.5, t[0]); }});
  ops.push_back({"lerp", [] { return TensorList{op_input({3, 4}, 130), op_input({4}, 131)}; },
                 [](const TensorList& t) { return lerp(t[0], t[1], 0.3); }});
  ops.push_back({"lerp", [] { return TensorList{op_input({3, 4}, 132), op_input({4}, 133), op_input({3, 1}, 134)}; },
                 [](const TensorList& t) { return lerp(t[0], t[1], t[2]); }});
}

GR_OP_INFOS(add_clamp_op_infos) {
  auto x = [] { return leaf(op_input({3, 4}, 140) * 2); };
  ops.push_back({"clamp", [x] { return TensorList{x()}; }, [](const TensorList& t) { return clamp(t[0], -0.7, 0.9); }});
  ops.push_back({"clamp_min", [x] { return TensorList{x()}; }, [](const TensorList& t) { return clamp_min(t[0], 0.3); }});
  ops.push_back({"clamp_max", [x] { return TensorList{x()}; }, [](const TensorList& t) { return clamp_max(t[0], 0.3); }});
  // Tensor bounds broadcast against the input; the second case has min > max in places.
  ops.push_back({"clamp",
                 [x] { return TensorList{x(), leaf(-positive({4}, 141, 0.1)), positive({3, 1}, 142, 0.1)}; },
                 [](const TensorList& t) { return clamp(t[0], t[1], t[2]); }});
  ops.push_back({"clamp", [x] { return TensorList{x(), op_input({4}, 143), op_input({3, 1}, 144)}; },
                 [](const TensorList& t) { return clamp(t[0], t[1], t[2]); }});
  ops.push_back({"clamp_min", [x] { return TensorList{x(), op_input({4}, 145)}; },
                 [](const TensorList& t) { return clamp_min(t[0], t[1]); }});
  ops.push_back({"clamp_max", [x] { return TensorList{x(), op_input({3, 1}, 146)}; },
                 [](const TensorList& t) { return clamp_max(t[0], t[1]); }});
}

// In place on a non-leaf copy of the input: the node's backward reads self's old value (a
// clone) or its new one.
GR_OP_INFOS(add_inplace_math_op_infos) {
  auto in_place = [](const char* name, std::function<void(Tensor&)> f, std::function<Tensor()> input) {
    return OpInfo{name, [input] { return TensorList{input()}; }, [f](const TensorList& t) {
                    Tensor y = t[0] * 1.0;
                    f(y);
                    return y;
                  }};
  };
  auto normal = [] { return op_input({3, 4}, 150); };
  ops.push_back(in_place("Tensor::sin_", [](Tensor& y) { y.sin_(); }, normal));
  ops.push_back(in_place("Tensor::tan_", [](Tensor& y) { y.tan_(); }, [] { return unit({3, 4}, 151); }));
  ops.push_back(in_place("Tensor::erfinv_", [](Tensor& y) { y.erfinv_(); }, [] { return unit({3, 4}, 152); }));
  ops.push_back(in_place("Tensor::rsqrt_", [](Tensor& y) { y.rsqrt_(); }, [] { return positive({3, 4}, 153); }));
  ops.push_back(in_place("Tensor::square_", [](Tensor& y) { y.square_(); }, normal));
  ops.push_back(in_place("Tensor::floor_", [](Tensor& y) { y.floor_(); }, normal));
  ops.push_back(in_place("Tensor::exp_", [](Tensor& y) { y.exp_(); }, normal));
  ops.push_back(in_place("Tensor::log_", [](Tensor& y) { y.log_(); }, [] { return positive({3, 4}, 154); }));
  ops.push_back(in_place("Tensor::sqrt_", [](Tensor& y) { y.sqrt_(); }, [] { return positive({3, 4}, 155); }));
  ops.push_back(in_place("Tensor::sigmoid_", [](Tensor& y) { y.sigmoid_(); }, normal));
  ops.push_back(in_place("Tensor::tanh_", [](Tensor& y) { y.tanh_(); }, normal));
  ops.push_back(in_place("Tensor::abs_", [](Tensor& y) { y.abs_(); }, [] { return away_from_zero({3, 4}, 156); }));
  ops.push_back(in_place("Tensor::neg_", [](Tensor& y) { y.neg_(); }, normal));
  ops.push_back(in_place("Tensor::clamp_", [](Tensor& y) { y.clamp_(-0.5, 0.5); }, normal));
  ops.push_back(in_place("Tensor::round_", [](Tensor& y) { y.round_(1); }, normal));
  // Two inputs, both differentiated; other also in place on self's own values.
  ops.push_back({"Tensor::atan2_", [] { return TensorList{op_input({3, 4}, 157), op_input({4}, 158)}; },
                 [](const TensorList& t) {
                   Tensor y = t[0] * 1.0;
                   return y.atan2_(t[1]);
                 }});
  ops.push_back({"Tensor::hypot_", [] { return TensorList{op_input({3, 4}, 159)}; },
                 [](const TensorList& t) {
                   Tensor y = t[0] * 1.0;
                   return y.hypot_(y);
                 }});
  ops.push_back({"Tensor::fmod_", [] { return TensorList{leaf(op_input({3, 4}, 160) * 4), positive({3, 1}, 161)}; },
                 [](const TensorList& t) {
                   Tensor y = t[0] * 1.0;
                   return y.fmod_(t[1]);
                 }});
  ops.push_back({"Tensor::lerp_", [] { return TensorList{op_input({3, 4}, 162), op_input({4}, 163), op_input({3, 4}, 164)}; },
                 [](const TensorList& t) {
                   Tensor y = t[0] * 1.0;
                   return y.lerp_(t[1], t[2]);
                 }});
  ops.push_back({"Tensor::clamp_",
                 [] { return TensorList{leaf(op_input({3, 4}, 165) * 2), leaf(-positive({4}, 166, 0.1)), positive({3, 1}, 167, 0.1)}; },
                 [](const TensorList& t) {
                   Tensor y = t[0] * 1.0;
                   return y.clamp_(t[1], t[2]);
                 }});
}

}  // namespace gr::testing

// Note [Double backward]: a backward written with gr:: ops records history when grad mode is
// on, so its result depends differentiably on the incoming gradient. Checked here for this
// family's entries by running each node's backward directly (the engine's create_graph and
// gradgradcheck come with the autograd family). The piecewise-constant ops return constant
// zeros, as torch's do.
TEST_CASE("the math family's backwards are differentiable in the incoming gradient") {
  using gr::Tensor;
  using gr::TensorList;
  std::vector<gr::testing::OpInfo> ops;
  gr::testing::add_unary_math_op_infos(ops);
  gr::testing::add_binary_math_op_infos(ops);
  gr::testing::add_clamp_op_infos(ops);
  gr::testing::add_inplace_math_op_infos(ops);
  const std::set<std::string> constant = {"sign", "floor", "ceil", "round", "trunc", "Tensor::floor_", "Tensor::round_"};
  for (const auto& op : ops) {
    INFO("op ", op.name);
    CHECK(op.double_backward);
    Tensor y = op.fn(op.inputs());
    REQUIRE(y.grad_fn());
    Tensor g = gr::ones_like(y).requires_grad_(true);
    TensorList grads = y.grad_fn()->apply({g});
    for (const Tensor& gi : grads)
      if (gi.defined()) CHECK(gi.requires_grad() == !constant.contains(op.name));
  }
}
