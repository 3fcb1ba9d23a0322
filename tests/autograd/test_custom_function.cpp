// Custom autograd functions (gr::autograd::Function<T>): libtorch's documented examples,
// saved tensors and data, mark_dirty / mark_non_differentiable, needs_input_grad,
// materialized gradients, double backward through a custom backward, and the errors.
#include "op_info.h"

using namespace gr;
using namespace gr::autograd;
using gr::test::check_close;
using gr::test::check_values;
using gr::test::f64_grad;
using gr::testing::op_input;

namespace {

// libtorch's documented example (docs/cpp "The C++ frontend: autograd"), verbatim but for gr::.
class LinearFunction : public Function<LinearFunction> {
 public:
  static Tensor forward(AutogradContext* ctx, Tensor input, Tensor weight, Tensor bias = Tensor()) {
    ctx->save_for_backward({input, weight, bias});
    auto output = input.mm(weight.t());
    if (bias.defined()) {
      output += bias.unsqueeze(0).expand_as(output);
    }
    return output;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto input = saved[0];
    auto weight = saved[1];
    auto bias = saved[2];

    auto grad_output = grad_outputs[0];
    auto grad_input = grad_output.mm(weight);
    auto grad_weight = grad_output.t().mm(input);
    auto grad_bias = Tensor();
    if (bias.defined()) {
      grad_bias = grad_output.sum(0);
    }

    return {grad_input, grad_weight, grad_bias};
  }
};

class MulConstant : public Function<MulConstant> {
 public:
  static Tensor forward(AutogradContext* ctx, Tensor tensor, double constant) {
    ctx->saved_data["constant"] = constant;
    return tensor * constant;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    // As many gradients as there were arguments; non-tensor arguments get Tensor().
    return {grad_outputs[0] * ctx->saved_data["constant"].toDouble(), Tensor()};
  }
};

// exp(x) saving its own output: the rebuilt output makes the backward differentiable.
struct Exp : Function<Exp> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    Tensor y = x.exp();
    ctx->save_for_backward({y});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * ctx->get_saved_variables()[0]};
  }
};

// scale * sum of the list, with a flag: a variable_list argument and several non-tensor ones.
struct ScaledSum : Function<ScaledSum> {
  static Tensor forward(AutogradContext* ctx, const variable_list& xs, double scale, int64_t repeat, bool negate,
                        const std::string& tag) {
    ctx->saved_data["factor"] = scale * static_cast<double>(repeat) * (negate ? -1.0 : 1.0);
    ctx->saved_data["tag"] = tag;
    ctx->saved_data["n"] = static_cast<int64_t>(xs.size());
    Tensor s = xs[0];
    for (size_t i = 1; i < xs.size(); ++i) s = s + xs[i];
    return s * ctx->saved_data["factor"].toDouble();
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    CHECK(ctx->saved_data["tag"].toStringRef() == "sum");
    variable_list out(static_cast<size_t>(ctx->saved_data["n"].toInt()), g[0] * ctx->saved_data["factor"].toDouble());
    out.resize(out.size() + 4);  // scale, repeat, negate, tag
    return out;
  }
};

// Asks for needs_input_grad(index) in forward (for the range check).
struct Probe : Function<Probe> {
  inline static size_t index = 0;
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    ctx->needs_input_grad(index);
    return x * 1.0;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return g; }
};

// Records needs_input_grad in forward and backward; its second result is non-differentiable.
struct SortLike : Function<SortLike> {
  inline static std::vector<bool> seen;

  static variable_list forward(AutogradContext* ctx, Tensor x, Tensor y) {
    seen = {ctx->needs_input_grad(0), ctx->needs_input_grad(1)};
    Tensor mask = x.gt(0.0).to(kFloat64);
    ctx->mark_non_differentiable({mask});
    return {x * 2.0 + y, mask};
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    seen = {ctx->needs_input_grad(0), ctx->needs_input_grad(1)};
    return {g[0] * 2.0, ctx->needs_input_grad(1) ? g[0] : Tensor()};
  }
};

// Two results; backward reports whether the unused one got a (zero) gradient.
struct TwoOutputs : Function<TwoOutputs> {
  inline static bool second_defined = false;
  static variable_list forward(AutogradContext* ctx, Tensor x, bool materialize) {
    ctx->set_materialize_grads(materialize);
    return {x * 2.0, x * 3.0};
  }
  static variable_list backward(AutogradContext*, variable_list g) {
    second_defined = g[1].defined();
    Tensor gx = g[0] * 2.0;
    if (g[1].defined()) gx = gx + g[1] * 3.0;
    return {gx, Tensor()};
  }
};

}  // namespace

TEST_CASE("libtorch's LinearFunction example") {
  auto x = op_input({2, 3}, 1);
  auto weight = op_input({4, 3}, 2);
  auto y = LinearFunction::apply(x, weight);
  y.sum().backward();
  check_close(x.grad(), ones({2, 4}, kFloat64).mm(weight.detach()));
  check_close(weight.grad(), ones({2, 4}, kFloat64).t().mm(x.detach()));
  CHECK(y.grad_fn()->name() == "LinearFunctionBackward");

  Tensor b = op_input({4}, 3);
  CHECK(gradcheck([](const TensorList& t) { return LinearFunction::apply(t[0], t[1], t[2]); }, {x, weight, b}));
  check_close(LinearFunction::apply(x, weight, b), linear(x, weight, b));
  // Its backward is written with gr:: ops, so it is differentiable again.
  CHECK(gradgradcheck([](const TensorList& t) { return LinearFunction::apply(t[0], t[1], t[2]); }, {x, weight, b}));
}

TEST_CASE("libtorch's MulConstant example") {
  auto x = op_input({2}, 4);
  auto y = MulConstant::apply(x, 5.5);
  y.sum().backward();
  check_values(x.grad(), {5.5, 5.5});
  CHECK(y.grad_fn()->name() == "MulConstantBackward");
  CHECK(y.requires_grad());
  {
    NoGradGuard no_grad;  // nothing recorded without grad mode
    CHECK_FALSE(MulConstant::apply(x, 2.0).requires_grad());
  }
  CHECK_FALSE(MulConstant::apply(x.detach(), 2.0).requires_grad());
}

TEST_CASE("a custom function saving its output is differentiable twice and frees its graph") {
  Tensor x = op_input({3}, 5);
  CHECK(gradcheck([](const TensorList& t) { return Exp::apply(t[0]); }, {x}));
  CHECK(gradgradcheck([](const TensorList& t) { return Exp::apply(t[0]); }, {x}));
  std::weak_ptr<Node> weak;
  {
    Tensor y = Exp::apply(x);
    weak = y.grad_fn();
  }
  CHECK(weak.expired());  // the saved output holds no reference to its node

  Tensor y = Exp::apply(x * 1.0).sum();
  y.backward();
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("backward through the graph a second time"), gr::Error);
}

TEST_CASE("variable_list and non-tensor arguments") {
  Tensor a = op_input({2}, 6), b = op_input({2}, 7);
  Tensor y = ScaledSum::apply(variable_list{a, b}, 0.5, int64_t{3}, true, std::string("sum"));
  check_close(y, (a + b) * -1.5);
  y.sum().backward();
  check_values(a.grad(), {-1.5, -1.5});
  check_values(b.grad(), {-1.5, -1.5});
}

TEST_CASE("mark_dirty, mark_non_differentiable and needs_input_grad") {
  struct ScaleInPlace : Function<ScaleInPlace> {
    static Tensor forward(AutogradContext* ctx, Tensor x) {
      x.mul_(2.0);
      ctx->mark_dirty({x});
      return x;
    }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2.0}; }
  };
  Tensor x = tensor({1.0, 3.0}, f64_grad());
  Tensor h = x * x;
  Tensor out = ScaleInPlace::apply(h);
  CHECK(out.is_same(h));  // the input itself, now with the custom node as its history
  CHECK(h.grad_fn()->name() == "ScaleInPlaceBackward");
  check_values(h, {2, 18});
  h.sum().backward();
  check_values(x.grad(), {4, 12});  // 2 * 2x
  CHECK_THROWS_WITH_AS(ScaleInPlace::apply(tensor({1.0}, f64_grad())), doctest::Contains("leaf Variable"), gr::Error);

  Tensor p = tensor({-1.0, 2.0}, f64_grad()), q = tensor({1.0, 1.0}, f64_grad()), c = tensor({1.0, 1.0});
  variable_list r = SortLike::apply(p, c);
  CHECK(SortLike::seen == std::vector<bool>{true, false});
  CHECK(r[0].requires_grad());
  CHECK_FALSE(r[1].requires_grad());
  check_values(r[1], {0, 1});
  r = SortLike::apply(p, q);
  (void)autograd::grad({r[0].sum()}, {p});  // q is not asked for
  CHECK(SortLike::seen == std::vector<bool>{true, false});
  Probe::index = 2;
  CHECK_THROWS_WITH_AS(Probe::apply(p), doctest::Contains("index 2 is out of range"), gr::Error);
}

TEST_CASE("materialized and unmaterialized gradients of unused outputs") {
  Tensor x = tensor({1.0}, f64_grad());
  TwoOutputs::apply(x, true)[0].sum().backward();
  CHECK(TwoOutputs::second_defined);  // zeros by default
  TwoOutputs::apply(x, false)[0].sum().backward();
  CHECK_FALSE(TwoOutputs::second_defined);
  check_values(x.grad(), {4});
}

TEST_CASE("custom function errors") {
  struct TooFew : Function<TooFew> {
    static Tensor forward(AutogradContext*, Tensor x, double) { return x * 2.0; }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
  };
  struct GradForScalar : Function<GradForScalar> {
    static Tensor forward(AutogradContext*, Tensor x, double) { return x * 2.0; }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0]}; }
  };
  struct TooMany : Function<TooMany> {
    static Tensor forward(AutogradContext*, Tensor x) { return x * 2.0; }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0]}; }
  };
  Tensor x = tensor({1.0}, f64_grad());
  CHECK_THROWS_WITH_AS(TooFew::apply(x, 1.0).sum().backward(),
                       doctest::Contains("TooFewBackward backward returned an incorrect number of gradients (expected 2, "
                                         "got 1)"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(GradForScalar::apply(x, 1.0).sum().backward(), doctest::Contains("which is not a tensor"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(TooMany::apply(x).sum().backward(), doctest::Contains("the extra ones must be undefined"),
                       gr::Error);
}

TEST_CASE("IValue holds saved_data values like at::IValue") {
  IValue d = 2.5, i = 7, l = int64_t{1} << 40, b = true, s = "name", t = tensor({1.0, 2.0});
  CHECK(d.isDouble());
  CHECK(d.toDouble() == 2.5);
  CHECK(i.isInt());
  CHECK(i.toInt() == 7);
  CHECK(l.toInt() == (int64_t{1} << 40));
  CHECK(b.toBool());
  CHECK(s.toStringRef() == "name");
  CHECK(t.toTensor().numel() == 2);
  CHECK(IValue().isNone());
  CHECK_THROWS_WITH_AS(i.toDouble(), doctest::Contains("expected Double but got Int"), gr::Error);
  CHECK_THROWS_WITH_AS(s.toTensor(), doctest::Contains("expected Tensor but got String"), gr::Error);
  CHECK_THROWS_WITH_AS(IValue().toBool(), doctest::Contains("got None"), gr::Error);
}
