// The backward engine: leaves, accumulation, retain_graph, freed graphs, no_grad, detach,
// grad(), ordering, and the errors users hit.
#include "test_util.h"

using namespace gr;
using gr::test::check_values;
using gr::test::f64_grad;

TEST_CASE("gradients accumulate into leaves and sum where paths meet") {
  Tensor x = tensor({1.0, 2.0, 3.0}, f64_grad());
  Tensor y = (x * x + x * 3.0).sum();  // dy/dx = 2x + 3, x used on two paths
  y.backward();
  check_values(x.grad(), {5, 7, 9});
  (x * 2.0).sum().backward();  // a second backward accumulates
  check_values(x.grad(), {7, 9, 11});
  CHECK(x.is_leaf());
  CHECK_FALSE(y.is_leaf());
  CHECK(y.grad_fn() != nullptr);
  CHECK(y.grad_fn()->name() == "SumBackward0");
}

TEST_CASE("backward with an explicit gradient, and its shape checks") {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor y = x * 3.0;
  y.backward(tensor({1.0, 10.0}, kFloat64));
  check_values(x.grad(), {3, 30});
  Tensor z = x * 2.0;
  CHECK_THROWS_WITH_AS(z.backward(), doctest::Contains("only for scalar outputs"), gr::Error);
  CHECK_THROWS_WITH_AS(z.backward(ones({3}, kFloat64)), doctest::Contains("shape"), gr::Error);
  CHECK_THROWS_WITH_AS(tensor({1.0}).backward(), doctest::Contains("does not require grad"), gr::Error);
}

TEST_CASE("a freed graph cannot be walked twice unless retained") {
  Tensor x = tensor({2.0}, f64_grad());
  Tensor y = (x * x).sum();
  y.backward({}, /*retain_graph=*/true);
  y.backward();
  check_values(x.grad(), {8});
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("backward through the graph a second time"), gr::Error);
}

TEST_CASE("NoGradGuard and detach stop recording") {
  Tensor x = tensor({1.0}, f64_grad());
  {
    NoGradGuard guard;
    Tensor y = x * 2.0;
    CHECK_FALSE(y.requires_grad());
    CHECK(y.grad_fn() == nullptr);
  }
  CHECK(GradMode::is_enabled());
  Tensor d = (x * 2.0).detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
  Tensor y = x * 2.0 + d * 5.0;
  y.sum().backward();
  check_values(x.grad(), {2});
}

TEST_CASE("in-place modification of a saved tensor is detected") {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor a = x * 1.0;
  Tensor y = a * a;  // saves a
  a.add_(1.0);
  CHECK_THROWS_WITH_AS(y.sum().backward(), doctest::Contains("modified by an inplace operation"), gr::Error);
  Tensor e = x.exp();  // saves its output
  Tensor z = e.sum();
  e.mul_(2.0);
  CHECK_THROWS_WITH_AS(z.backward(), doctest::Contains("is at version"), gr::Error);
}

TEST_CASE("in-place ops on tensors with history are differentiable") {
  Tensor x = tensor({1.0, -2.0, 3.0}, f64_grad());
  Tensor y = x * 2.0;
  y.add_(x);    // y = 3x
  y.mul_(x);    // y = 3x^2
  y.relu_();    // relu(3x^2) = 3x^2 here
  y.sum().backward();
  check_values(x.grad(), {6, -12, 18});
  CHECK_THROWS_WITH_AS(x.add_(1.0), doctest::Contains("leaf Variable that requires grad"), gr::Error);
  {
    NoGradGuard guard;  // parameter updates are allowed without grad mode
    x.sub_(x.grad(), 0.1);
  }
  check_values(x.detach(), {0.4, -0.8, 1.2});
  Tensor v = (x * 1.0).view({3});
  CHECK_THROWS_WITH_AS(v.mul_(2.0), doctest::Contains("view"), gr::Error);
}

TEST_CASE("in-place ops with a differentiable right-hand side") {
  Tensor a = tensor({1.0, 2.0}, f64_grad()), b = tensor({3.0, 4.0}, f64_grad());
  Tensor y = a * 1.0;
  y.mul_(b);  // y = a * b
  y.div_(b * 2.0 / b);  // y = a * b / 2
  y.sum().backward();
  check_values(a.grad(), {1.5, 2});
  check_values(b.grad(), {0.5, 1}, 1e-12);
}

TEST_CASE("copy_ and fill_ route or cut gradients") {
  Tensor src = tensor({1.0, 2.0}, f64_grad());
  Tensor dst = zeros({2}, kFloat64);
  dst.copy_(src * 3.0);
  CHECK(dst.requires_grad());
  dst.sum().backward();
  check_values(src.grad(), {3, 3});
  Tensor h = src * 1.0;
  h.fill_(5.0);
  CHECK(h.requires_grad());
  (h * src).sum().backward();  // only the direct use of src contributes
  check_values(src.grad(), {8, 8});
}

TEST_CASE("autograd::grad returns gradients without touching .grad") {
  Tensor x = tensor({1.0, 2.0}, f64_grad()), w = tensor({3.0, 4.0}, f64_grad());
  Tensor y = (x * w).sum();
  TensorList g = autograd::grad({y}, {x, w});
  check_values(g[0], {3, 4});
  check_values(g[1], {1, 2});
  CHECK_FALSE(x.grad().defined());
  Tensor unused = tensor({1.0}, f64_grad());
  Tensor y2 = (x * 2.0).sum();
  CHECK_THROWS_WITH_AS(autograd::grad({y2}, {unused}), doctest::Contains("not have been used"), gr::Error);
  Tensor y3 = (x * 2.0).sum();
  CHECK_FALSE(autograd::grad({y3}, {unused}, {}, false, false, /*allow_unused=*/true)[0].defined());
}

TEST_CASE("gradient dtype follows the leaf and broadcasting is undone") {
  Tensor w = tensor({1.0}, TensorOptions(kFloat32).requires_grad(true));
  Tensor x = tensor({1.0, 2.0, 3.0}, kFloat64);
  Tensor y = (w * x).sum();  // float64 result
  CHECK(y.scalar_type() == kFloat64);
  y.backward();
  CHECK(w.grad().scalar_type() == kFloat32);
  CHECK(w.grad().sizes() == IntArrayRef({1}));
  check_values(w.grad(), {6});
}

TEST_CASE("the engine runs later nodes first and accumulators as soon as ready") {
  // Two leaves used in order a then b: in backward, b's gradient is final first.
  Tensor a = tensor({1.0}, f64_grad()), b = tensor({2.0}, f64_grad());
  std::vector<std::string> order;
  a.register_post_accumulate_grad_hook([&](Tensor&) { order.push_back("a"); });
  b.register_post_accumulate_grad_hook([&](Tensor&) { order.push_back("b"); });
  Tensor h = (a * 2.0).exp();
  Tensor y = (h * b).sum();
  y.backward();
  REQUIRE(order.size() == 2);
  CHECK(order[0] == "b");
  CHECK(order[1] == "a");
}

TEST_CASE("the graph is freed with its outputs (no reference cycles)") {
  std::weak_ptr<autograd::Node> weak;
  Tensor x = tensor({1.0}, f64_grad());
  {
    Tensor y = x.exp();  // saves its own output
    weak = y.grad_fn();
    CHECK_FALSE(weak.expired());
  }
  CHECK(weak.expired());
}

TEST_CASE("queue_callback runs after the whole graph, in order, and only inside backward") {
  Tensor a = tensor({1.0}, f64_grad()), b = tensor({2.0}, f64_grad());
  std::vector<std::string> log;
  a.register_post_accumulate_grad_hook([&](Tensor&) {
    log.push_back("hook a");
    autograd::queue_callback([&] {
      log.push_back("callback 1");
      autograd::queue_callback([&] { log.push_back("callback 3"); });
    });
  });
  b.register_post_accumulate_grad_hook([&](Tensor&) {
    log.push_back("hook b");
    autograd::queue_callback([&] { log.push_back("callback 2"); });
  });
  CHECK_FALSE(autograd::in_backward());
  (a * 3.0 + b * 2.0).sum().backward();
  REQUIRE(log.size() == 5);
  CHECK(log[2] == "callback 1");  // after both hooks
  CHECK(log[3] == "callback 2");
  CHECK(log[4] == "callback 3");
  CHECK_THROWS_WITH_AS(autograd::queue_callback([] {}), doctest::Contains("only allowed while a backward"), gr::Error);
}
