// OpInfo entries of the math family (gradchecked in float64 by test_op_info.cpp): one for
// every element-wise line of core/native/elementwise/math_ops.def, out of place and in place, with the
// inputs its domain names, and the hand-written ops'. Inputs are drawn away from poles and
// kinks (asin/acos/erfinv in (-1, 1), logs of positive values, divisors away from 0, clamp
// bounds away from the data); in-place forms run on non-leaves.
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

// Inputs by the domain a list line names (core/native/elementwise/math_ops.def). These run at
// static initialisation (the registry is filled then), outside any test: an unknown domain fails
// the test that draws the inputs.
std::function<Tensor()> unary_domain(const char* domain, uint64_t seed) {
  const std::string d = domain;
  if (d == "normal") return [seed] { return op_input({3, 4}, seed); };
  if (d == "unit") return [seed] { return unit({3, 4}, seed); };
  if (d == "positive") return [seed] { return positive({3, 4}, seed, 0.2); };
  if (d == "away_from_zero") return [seed] { return away_from_zero({3, 4}, seed); };
  if (d == "steps") return [seed] { return leaf(op_input({3, 4}, seed) * 3); };  // never at a step
  return [d] {
    FAIL("math_ops.def names an unknown input domain: ", d);
    return Tensor();
  };
}
// Two inputs that broadcast ([3, 4] with [4]).
std::function<TensorList()> binary_domain(const char* domain, uint64_t seed) {
  const std::string d = domain;
  if (d == "normal") return [seed] { return TensorList{op_input({3, 4}, seed), op_input({4}, seed + 1)}; };
  if (d == "positive_other") return [seed] { return TensorList{op_input({3, 4}, seed), positive({4}, seed + 1)}; };
  if (d == "away_from_zero")
    return [seed] { return TensorList{away_from_zero({3, 4}, seed), away_from_zero({4}, seed + 1)}; };
  return [d] {
    FAIL("math_ops.def names an unknown input domain: ", d);
    return TensorList();
  };
}
}  // namespace

// Every element-wise line of the list, out of place and in place (on a non-leaf copy, so the
// node's backward reads self's old value or its new one).
GR_OP_INFOS(add_unary_math_op_infos) {
  uint64_t seed = 101;
#define GR_UNARY_OP(name, F, dtypes, node, domain)                                                      \
  unary(ops, #name, [](const Tensor& x) { return gr::name(x); }, unary_domain(#domain, seed++));        \
  ops.push_back({"Tensor::" #name "_", [input = unary_domain(#domain, seed++)] { return TensorList{input()}; }, \
                 [](const TensorList& t) {                                                              \
                   Tensor y = t[0] * 1.0;                                                               \
                   return y.name##_();                                                                  \
                 }});
#include "core/native/elementwise/math_ops.def"
  ops.push_back({"round", [] { return TensorList{op_input({3, 4}, 117)}; },
                 [](const TensorList& t) { return round(t[0], 2); }});
  auto normal = [] { return op_input({3, 4}, 100); };
  unary(ops, "softplus", [](const Tensor& x) { return softplus(x); }, normal);
  // beta x stays below the threshold (log1p(exp) part) or above it (the identity).
  ops.push_back({"softplus", [] { return TensorList{leaf(op_input({3, 4}, 118) * 0.1)}; },
                 [](const TensorList& t) { return softplus(t[0], 2, 1); }});
  ops.push_back({"softplus", [] { return TensorList{positive({3, 4}, 119, 1.0)}; },
                 [](const TensorList& t) { return softplus(t[0], 2, 1); }});
}

GR_OP_INFOS(add_binary_math_op_infos) {
  uint64_t seed = 200;
#define GR_BINARY_OP(name, F, dtypes, node, domain) \
  ops.push_back({#name, binary_domain(#domain, seed += 2), [](const TensorList& t) { return gr::name(t[0], t[1]); }});
  // In place: other is also self's own values once, as y.hypot_(y).
#define GR_BINARY_INPLACE(name, node, variants)                                                         \
  ops.push_back({"Tensor::" #name "_", [] { return TensorList{op_input({3, 4}, 230)}; }, [](const TensorList& t) { \
                   Tensor y = t[0] * 1.0;                                                               \
                   return y.name##_(y * 0.5 + 2.0);                                                      \
                 }});
#define GR_BINARY_SCALAR(name, node)                                                                   \
  ops.push_back({#name, [] { return TensorList{op_input({3, 4}, 231)}; },                               \
                 [](const TensorList& t) { return gr::name(t[0], 1.5); }});
#define GR_BINARY_SCALAR_SELF(name, node)                                                              \
  ops.push_back({#name, [] { return TensorList{positive({3, 4}, 232)}; },                               \
                 [](const TensorList& t) { return gr::name(1.5, t[0]); }});
#include "core/native/elementwise/math_ops.def"
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
  ops.push_back(in_place("Tensor::exp_", [](Tensor& y) { y.exp_(); }, normal));
  ops.push_back(in_place("Tensor::log_", [](Tensor& y) { y.log_(); }, [] { return positive({3, 4}, 154); }));
  ops.push_back(in_place("Tensor::sqrt_", [](Tensor& y) { y.sqrt_(); }, [] { return positive({3, 4}, 155); }));
  ops.push_back(in_place("Tensor::sigmoid_", [](Tensor& y) { y.sigmoid_(); }, normal));
  ops.push_back(in_place("Tensor::tanh_", [](Tensor& y) { y.tanh_(); }, normal));
  ops.push_back(in_place("Tensor::abs_", [](Tensor& y) { y.abs_(); }, [] { return away_from_zero({3, 4}, 156); }));
  ops.push_back(in_place("Tensor::neg_", [](Tensor& y) { y.neg_(); }, normal));
  ops.push_back(in_place("Tensor::clamp_", [](Tensor& y) { y.clamp_(-0.5, 0.5); }, normal));
  ops.push_back(in_place("Tensor::round_", [](Tensor& y) { y.round_(1); }, normal));
  // other is self itself: the kernel overwrites what the backward reads (record_elementwise_ clones it).
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

// Note [Double backward]: every entry above is gradgradchecked by test_op_info.cpp; here the
// engine's create_graph pass must give the smooth ops' gradients a history and leave the
// piecewise-constant ops' (constant zeros, as torch's) without one.
TEST_CASE("the math family's gradients under create_graph are differentiable where the op is smooth") {
  using gr::Tensor;
  using gr::TensorList;
  std::vector<gr::testing::OpInfo> ops;
  gr::testing::add_unary_math_op_infos(ops);
  gr::testing::add_binary_math_op_infos(ops);
  gr::testing::add_clamp_op_infos(ops);
  gr::testing::add_inplace_math_op_infos(ops);
  const std::set<std::string> constant = {"sign",          "floor",          "ceil",          "round",
                                          "trunc",         "Tensor::sign_",  "Tensor::floor_", "Tensor::ceil_",
                                          "Tensor::round_", "Tensor::trunc_"};
  for (const auto& op : ops) {
    INFO("op ", op.name);
    CHECK(op.double_backward);
    TensorList inputs = op.inputs();
    Tensor y = op.fn(inputs);
    REQUIRE(y.grad_fn());
    Tensor v = gr::ones_like(y).requires_grad_(true);  // so that linear ops (frac, lerp) show history too
    TensorList grads = gr::autograd::grad({y}, inputs, {v}, std::nullopt, /*create_graph=*/true, /*allow_unused=*/true);
    bool any_history = false;
    for (const Tensor& gi : grads) any_history = any_history || (gi.defined() && gi.requires_grad());
    CHECK(any_history == !constant.contains(op.name));
  }
}
