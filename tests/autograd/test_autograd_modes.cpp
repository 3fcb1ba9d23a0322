// Autograd modes and introspection: InferenceMode, anomaly detection, hooks returning
// void or a Tensor, retains_grad / is_leaf / grad_fn()->name(), and requires_grad in the
// TensorOptions of every factory.
#include "test_util.h"

using namespace gr;
using gr::test::check_values;
using gr::test::f64_grad;

TEST_CASE("InferenceMode records nothing and its tensors stay out of autograd") {
  Tensor w = tensor({1.0, 2.0}, f64_grad());
  Tensor inf;
  CHECK_FALSE(InferenceMode::is_enabled());
  {
    InferenceMode guard;
    CHECK(InferenceMode::is_enabled());
    CHECK_FALSE(GradMode::is_enabled());
    inf = w * 2.0;
    CHECK_FALSE(inf.requires_grad());
    CHECK(inf.is_inference());
    inf.add_(1.0);  // in-place updates are fine inside the mode
    {
      InferenceMode off(false);  // as c10: grad mode back on, new tensors are normal
      CHECK(GradMode::is_enabled());
      CHECK_FALSE((w * 1.0).is_inference());
    }
    CHECK_FALSE(GradMode::is_enabled());
  }
  CHECK_FALSE(InferenceMode::is_enabled());
  CHECK(GradMode::is_enabled());
  CHECK_FALSE(w.is_inference());
  CHECK(inf.view({2}).is_inference());  // views of an inference tensor are inference tensors
  CHECK(inf.detach().is_inference());

  CHECK_THROWS_WITH_AS(inf * w, doctest::Contains("Inference tensors cannot be saved for backward"), gr::Error);
  CHECK_THROWS_WITH_AS(inf.add_(1.0), doctest::Contains("Inplace update to inference tensor outside InferenceMode"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(inf.requires_grad_(), doctest::Contains("on inference tensor outside InferenceMode"),
                       gr::Error);
  // An op that saves nothing of it is fine, and a clone is an ordinary tensor.
  (inf + w).sum().backward();
  check_values(w.grad(), {1, 1});
  Tensor normal = inf.clone();
  CHECK_FALSE(normal.is_inference());
  (normal * w).sum().backward();
  check_values(w.grad(), {4, 6});
  normal.add_(1.0);
}

TEST_CASE("anomaly mode names the node that produced NaN and where its forward op ran") {
  CHECK_FALSE(autograd::AnomalyMode::is_enabled());
  Tensor x = tensor({0.0, 4.0}, f64_grad());
  {
    autograd::DetectAnomalyGuard guard;
    CHECK(autograd::AnomalyMode::is_enabled());
    CHECK(autograd::AnomalyMode::should_check_nan());
    Tensor r = x.sqrt();
    Tensor y = (r * 0.0).sum();  // finite forward; backward gives 0 / (2 * 0) = NaN in SqrtBackward
    CHECK_FALSE(r.grad_fn()->forward_trace().empty());
    std::string message;
    try {
      y.backward();
    } catch (const Error& e) {
      message = e.what();
    }
    CHECK(message.find("Function 'SqrtBackward0' returned nan values in its 0th output") != std::string::npos);
    CHECK(message.find("Traceback of forward call that caused the error") != std::string::npos);
    CHECK(message.find("gr::sqrt") != std::string::npos);  // the demangled frame of the forward op

    // An error raised inside a node also names it and its forward call.
    Tensor a = x * 1.0;
    Tensor b = a * a;
    a.add_(1.0);
    message.clear();
    try {
      b.sum().backward();
    } catch (const Error& e) {
      message = e.what();
    }
    CHECK(message.find("modified by an inplace operation") != std::string::npos);
    CHECK(message.find("Error detected in MulBackward0") != std::string::npos);
  }
  CHECK_FALSE(autograd::AnomalyMode::is_enabled());
  Tensor y = (x.sqrt() * 0.0).sum();
  CHECK(y.grad_fn()->forward_trace().empty());
  y.backward();  // NaN passes silently without anomaly mode, as in libtorch
  CHECK(std::isnan(x.grad()[0].item<double>()));
  autograd::AnomalyMode::set_enabled(true, /*check_nan=*/false);
  (x.sqrt() * 0.0).sum().backward();
  autograd::AnomalyMode::set_enabled(false);
}

TEST_CASE("register_hook takes hooks returning void or a Tensor") {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor seen;
  int calls = 0;
  size_t observer = x.register_hook([&](const Tensor& g) {  // returns void: only observes
    seen = g.clone();
    ++calls;
  });
  x.register_hook([](Tensor g) { return g * 2.0; });  // returns a Tensor: replaces
  (x * 3.0).sum().backward();
  check_values(seen, {3, 3});
  check_values(x.grad(), {6, 6});
  x.remove_hook(observer);
  (x * 1.0).sum().backward();
  CHECK(calls == 1);

  Tensor h = x * x;
  Tensor h_grad;
  h.register_hook([&](const Tensor& g) { h_grad = g.clone(); });
  (h * 5.0).sum().backward();
  check_values(h_grad, {5, 5});
}

TEST_CASE("is_leaf, retains_grad and grad_fn names") {
  Tensor x = tensor({1.0, 2.0}, f64_grad()), w = randn({3, 2}, kFloat64).requires_grad_();
  CHECK(x.is_leaf());
  CHECK(x.grad_fn() == nullptr);
  CHECK_FALSE(x.retains_grad());
  Tensor y = x * x;
  CHECK_FALSE(y.is_leaf());
  y.retain_grad();
  CHECK(y.retains_grad());
  CHECK(tensor({1.0}).is_leaf());  // no grad at all: a leaf too
  CHECK(y.grad_fn()->name() == "MulBackward0");
  CHECK((x + x).grad_fn()->name() == "AddBackward0");
  CHECK(relu(x).grad_fn()->name() == "ReluBackward0");
  CHECK(linear(x, w).grad_fn()->name() == "LinearBackward");
  CHECK(log_softmax(x, 0).grad_fn()->name() == "LogSoftmaxBackward0");
  CHECK(x.view({2, 1}).grad_fn()->name() == "ViewBackward0");
  const auto& edges = y.grad_fn()->next_edges();
  REQUIRE(edges.size() == 2);
  CHECK(edges[0].node->name() == "AccumulateGrad");
}

TEST_CASE("every factory honours requires_grad in its options") {
  const TensorOptions grad = TensorOptions(kFloat64).requires_grad(true);
  double blob[4] = {1, 2, 3, 4};
  Tensor like = zeros({2}, kFloat64);
  const std::vector<std::pair<std::string, Tensor>> made = {
      {"empty", empty({2}, grad)},
      {"zeros", zeros({2}, grad)},
      {"ones", ones({2}, grad)},
      {"full", full({2}, 3.0, grad)},
      {"randn", randn({2}, grad)},
      {"rand", rand({2}, grad)},
      {"randint", randint(0, 5, {2}, grad)},
      {"arange", arange(0, 3, 1, grad)},
      {"linspace", linspace(0, 1, 3, grad)},
      {"eye", eye(2, grad)},
      {"tensor", tensor({1.0, 2.0}, grad)},
      {"tensor(vector)", tensor(std::vector<double>{1.0}, grad)},
      {"scalar_tensor", scalar_tensor(2.0, grad)},
      {"from_blob", from_blob(blob, {4}, grad)},
      {"empty_like", empty_like(like, grad)},
      {"zeros_like", zeros_like(like, grad)},
  };
  for (const auto& [name, t] : made) {
    INFO(name);
    CHECK(t.requires_grad());
    CHECK(t.is_leaf());
    CHECK(t.scalar_type() == kFloat64);
  }
  CHECK_FALSE(zeros({2}, kFloat64).requires_grad());
  CHECK_THROWS_WITH_AS(zeros({2}, TensorOptions(kInt64).requires_grad(true)),
                       doctest::Contains("only floating point tensors can require gradients"), gr::Error);
  // A factory's tensor is usable as a leaf right away.
  Tensor p = ones({2}, grad);
  (p * p).sum().backward();
  check_values(p.grad(), {2, 2});
}
