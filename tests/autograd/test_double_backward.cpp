// Double backward: create_graph in backward() and grad(), .grad with history, gradient
// penalties and Hessian-vector products against finite differences, once-differentiable
// nodes, gradgradcheck itself, and the pruned graph of grad() / backward(inputs).
#include "op_info.h"

using namespace gr;
using gr::test::check_close;
using gr::test::check_values;
using gr::test::f64_grad;
using gr::testing::op_input;

TEST_CASE("grad with create_graph returns a differentiable gradient") {
  Tensor x = tensor({1.0, 2.0, -3.0}, f64_grad());
  Tensor y = (x * x * x).sum();
  Tensor g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  check_values(g, {3, 12, 27});  // 3x^2
  CHECK(g.requires_grad());
  CHECK(g.grad_fn() != nullptr);
  Tensor gg = autograd::grad({g.sum()}, {x})[0];
  check_values(gg, {6, 12, -18});  // 6x
  CHECK_FALSE(gg.requires_grad());  // no create_graph the second time

  // Without create_graph the gradient has no history.
  Tensor y2 = (x * x).sum();
  Tensor g2 = autograd::grad({y2}, {x})[0];
  CHECK_FALSE(g2.requires_grad());
}

TEST_CASE("backward with create_graph accumulates .grad with history and retains the graph") {
  Tensor x = tensor({0.5, -1.0}, f64_grad());
  Tensor y = (x.exp() * x).sum();  // dy/dx = e^x (1 + x), d2y/dx2 = e^x (2 + x)
  y.backward({}, std::nullopt, /*create_graph=*/true);
  Tensor gx = x.grad();
  CHECK(gx.requires_grad());
  std::vector<double> e = {std::exp(0.5), std::exp(-1.0)};
  check_values(gx, {e[0] * 1.5, e[1] * 0.0}, 1e-12);
  // retain_graph defaulted to create_graph: the graph can be walked again (the second
  // backward goes through the first graph's nodes too, so it retains it as well).
  x.mutable_grad() = Tensor();
  Tensor second = autograd::grad({gx.sum()}, {x}, {}, /*retain_graph=*/true)[0];
  check_values(second, {e[0] * 2.5, e[1] * 1.0}, 1e-12);
  y.backward();
  check_values(x.grad(), {e[0] * 1.5, 0.0}, 1e-12);
  CHECK_FALSE(x.grad().requires_grad());

  // Two create_graph backwards sum out of place, keeping the history of both.
  Tensor w = tensor({2.0}, f64_grad());
  (w * w).sum().backward({}, std::nullopt, true);
  (w * w * w).sum().backward({}, std::nullopt, true);
  check_values(w.grad(), {4 + 12});
  check_values(autograd::grad({w.grad().sum()}, {w})[0], {2 + 12});
}

TEST_CASE("gradient penalty of a small MLP matches finite differences") {
  Tensor x = op_input({4, 3}, 1);
  // WGAN-GP: mean over samples of (||d critic / d x_i|| - 1)^2, differentiated by the weights.
  auto penalty = [x](const TensorList& p) {
    AutoGradMode grad_mode(true);  // gradcheck's numeric part runs under no_grad
    Tensor score = linear(tanh(linear(x, p[0], p[1])), p[2], p[3]).sum();
    Tensor gx = autograd::grad({score}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    Tensor norm = (gx * gx).sum({1}).sqrt();
    return ((norm - 1.0) * (norm - 1.0)).mean();
  };
  TensorList params = {op_input({5, 3}, 2), op_input({5}, 3), op_input({1, 5}, 4), op_input({1}, 5)};
  CHECK(autograd::gradcheck(penalty, params));
  // The penalty's own gradient through backward(), as a training step computes it.
  penalty(params).backward();
  CHECK(params[0].grad().defined());
  CHECK_FALSE(params[3].grad().defined());  // the output bias does not change d score / d x
}

TEST_CASE("gradient penalty of a small conv net matches finite differences") {
  Tensor x = op_input({2, 2, 6, 6}, 10);
  auto penalty = [x](const TensorList& p) {
    AutoGradMode grad_mode(true);
    Tensor h = sigmoid(conv2d(x, p[0], p[1], 2, 1));
    Tensor score = conv2d(h, p[2], {}, 1, 0, 1, 1).tanh().mean({1, 2, 3});
    Tensor gx = autograd::grad({score}, {x}, {ones_like(score)}, std::nullopt, true)[0];
    return (gx * gx).sum();
  };
  TensorList params = {op_input({3, 2, 3, 3}, 11), op_input({3}, 12), op_input({1, 3, 2, 2}, 13)};
  CHECK(autograd::gradcheck(penalty, params));
}

TEST_CASE("gradient penalty through pooling, batch_norm and relu matches finite differences") {
  Tensor x = op_input({3, 2, 6, 6}, 14);
  auto penalty = [x](const TensorList& p) {
    AutoGradMode grad_mode(true);
    Tensor h = relu(max_pool2d(conv2d(x, p[0], {}, 1, 1), 2));
    h = batch_norm(h, p[1], {}, {}, {}, /*training=*/true);
    Tensor score = linear(adaptive_avg_pool2d(avg_pool2d(h, 2, 1), {1, 1}).flatten(1), p[2]).sum();
    Tensor gx = autograd::grad({score}, {x}, {}, std::nullopt, true)[0];
    return (gx * gx).sum();
  };
  TensorList params = {op_input({3, 2, 3, 3}, 15), op_input({3}, 16), op_input({1, 3}, 17)};
  CHECK(autograd::gradcheck(penalty, params));
}

TEST_CASE("a Hessian-vector product matches finite differences of the gradient") {
  Tensor w1 = op_input({3, 4}, 20), x = op_input({5, 4}, 21), t = op_input({5, 3}, 22);
  auto loss = [&](const Tensor& w) { return mse_loss(softmax(matmul(x, w.t()), 1), t.detach()) + (w * w).sum() * 0.1; };
  auto gradient = [&](const Tensor& w, bool create) {
    return autograd::grad({loss(w)}, {w}, {}, std::nullopt, create)[0];
  };
  Tensor v = op_input({3, 4}, 23).detach();
  Tensor hv = autograd::grad({(gradient(w1, true) * v).sum()}, {w1})[0];
  const double eps = 1e-6;
  Tensor wp = (w1.detach() + v * eps).requires_grad_(true), wm = (w1.detach() - v * eps).requires_grad_(true);
  Tensor numeric = (gradient(wp, false) - gradient(wm, false)) / (2 * eps);
  check_close(hv, numeric, 1e-6);
}

TEST_CASE("a once-differentiable backward fails when a second backward reaches it") {
  // x^2 whose backward stands for a fused kernel: registered once-differentiable.
  auto square = [](const Tensor& x) {
    Tensor out = x.detach() * x.detach();
    if (autograd::needs_grad(x))
      autograd::record_once_differentiable("FusedSquareBackward", {x}, {out},
                                           [x](const TensorList& g, const std::vector<bool>&) {
                                             CHECK_FALSE(GradMode::is_enabled());  // runs without recording
                                             return TensorList{g[0] * x * 2.0};
                                           });
    return out;
  };
  Tensor x = op_input({2, 3}, 30);
  Tensor y = square(x * 1.0).sum();
  Tensor g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  CHECK(g.requires_grad());  // never a silent constant
  check_close(g, x.detach() * 2.0);  // first-order values are unaffected
  CHECK_THROWS_WITH_AS(autograd::grad({(g * g).sum()}, {x}),
                       doctest::Contains("the derivative of FusedSquareBackward's backward is not implemented "
                                         "(once-differentiable)"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(autograd::gradgradcheck([&](const TensorList& t) { return square(t[0]); }, {x}),
                       doctest::Contains("once-differentiable"), gr::Error);
  // Without create_graph nothing changes.
  check_close(autograd::grad({square(x).sum()}, {x})[0], x.detach() * 2.0);
  CHECK_FALSE(autograd::grad({square(x).sum()}, {x})[0].requires_grad());
}

TEST_CASE("gradgradcheck catches a wrong second derivative that gradcheck cannot see") {
  // x^3 whose backward is right in value but treats one factor of x as a constant.
  auto cube = [](const TensorList& t) {
    Tensor out = t[0].detach() * t[0].detach() * t[0].detach();
    if (autograd::needs_grad(t[0]))
      autograd::record("CubeBackward", {t[0]}, {out}, [x = t[0]](const TensorList& g, const std::vector<bool>&) {
        return TensorList{g[0] * (x * x.detach()) * 3.0};
      });
    return out;
  };
  Tensor x = op_input({4}, 31);
  CHECK(autograd::gradcheck(cube, {x}));
  autograd::GradcheckOptions quiet;
  quiet.raise_exception = false;
  CHECK_FALSE(autograd::gradgradcheck(cube, {x}, {}, quiet));
  CHECK_THROWS_WITH_AS(autograd::gradgradcheck(cube, {x}), doctest::Contains("Jacobian mismatch"), gr::Error);
  CHECK(autograd::gradgradcheck([](const TensorList& t) { return t[0] * t[0] * t[0]; }, {x}));
  CHECK_THROWS_WITH_AS(autograd::gradgradcheck([](const TensorList& t) { return t[0] * 2.0; }, {x.detach()}),
                       doctest::Contains("no input requires grad"), gr::Error);
}

TEST_CASE("an output without history has a zero Jacobian that the numeric one must match") {
  Tensor x = op_input({3}, 32);
  // Piecewise constant: no history and a zero numeric Jacobian (away from the steps).
  CHECK(autograd::gradcheck([](const TensorList& t) { return floor(t[0] * 3.0).detach(); }, {x}));
  CHECK(autograd::gradgradcheck([](const TensorList& t) { return floor(t[0] * 3.0) + t[0]; }, {x}));
  // A lost history on a function that does vary is a mismatch, not a pass.
  CHECK_THROWS_WITH_AS(autograd::gradcheck([](const TensorList& t) { return (t[0] * 2.0).detach(); }, {x}),
                       doctest::Contains("numerical 2, analytical 0"), gr::Error);
}

TEST_CASE("grad runs only the graph between its outputs and inputs") {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor h = x * x;  // saves x; must not run (or be freed) for grad(y, h)
  Tensor y = (h * 3.0).sum();
  check_values(autograd::grad({y}, {h})[0], {3, 3});
  CHECK_FALSE(x.grad().defined());
  h.sum().backward();  // h's node was neither run nor released
  check_values(x.grad(), {2, 4});

  // An interior input and a leaf together; the interior node runs for the leaf only.
  Tensor a = tensor({1.0}, f64_grad()), b = tensor({2.0}, f64_grad());
  Tensor m = a * b;
  Tensor z = (m * m).sum();  // z = (ab)^2
  TensorList g = autograd::grad({z}, {m, a});
  check_values(g[0], {4});  // 2m
  check_values(g[1], {8});  // 2 a b^2
  CHECK_FALSE(b.grad().defined());
  CHECK_THROWS_WITH_AS(autograd::grad({z}, {}), doctest::Contains("non-empty inputs"), gr::Error);
}

TEST_CASE("backward with inputs accumulates only into those tensors") {
  Tensor a = tensor({1.0, 2.0}, f64_grad()), b = tensor({3.0, 4.0}, f64_grad());
  Tensor h = a * b;
  Tensor y = (h * h).sum();
  y.backward({}, true, false, TensorList{a});
  check_values(a.grad(), {18, 64});  // 2 (ab) b
  CHECK_FALSE(b.grad().defined());
  autograd::backward({y}, {}, std::nullopt, false, {h, b});
  check_values(h.grad(), {6, 16});  // a non-leaf input gets .grad, as retain_grad would
  check_values(b.grad(), {6, 32});
  check_values(a.grad(), {18, 64});  // untouched
  CHECK_THROWS_WITH_AS(y.backward({}, true, false, TensorList{tensor({1.0})}), doctest::Contains("does not require grad"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(y.backward({}, true, false, TensorList{}), doctest::Contains("cannot be empty"), gr::Error);
}

TEST_CASE("saved outputs rebuild their history without a reference cycle") {
  std::weak_ptr<autograd::Node> weak;
  Tensor x = tensor({0.3, -0.7}, f64_grad());
  {
    Tensor y = x.exp();  // saves its own output
    weak = y.grad_fn();
    Tensor g = autograd::grad({y.sum()}, {x}, {}, std::nullopt, true)[0];  // g = e^x, via the saved output
    check_values(autograd::grad({g.sum()}, {x})[0], {std::exp(0.3), std::exp(-0.7)}, 1e-12);
    CHECK_FALSE(weak.expired());
  }
  CHECK(weak.expired());  // y, g and their graphs are gone

  // The same for the element-wise math ops that save their result (elementwise_grad.cpp),
  // out of place and in place.
  const std::vector<std::function<Tensor(const Tensor&)>> saving_output = {
      [](const Tensor& t) { return t.tan(); }, [](const Tensor& t) { return t.reciprocal(); },
      [](const Tensor& t) { return hypot(t, t * 2.0); }, [](const Tensor& t) { return (t * 1.0).tan_(); }};
  for (const auto& f : saving_output) {
    {
      Tensor y = f(x);
      weak = y.grad_fn();
      Tensor g = autograd::grad({y.sum()}, {x}, {}, std::nullopt, true)[0];
      CHECK(autograd::grad({g.sum()}, {x})[0].defined());
    }
    CHECK(weak.expired());
  }
}
