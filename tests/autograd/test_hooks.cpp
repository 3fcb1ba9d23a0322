// Tensor hooks, post-accumulate-grad hooks and retain_grad.
#include "test_util.h"

using namespace gr;
using gr::test::check_values;
using gr::test::f64_grad;

TEST_CASE("a leaf hook sees and may replace the gradient before accumulation") {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor seen;
  x.register_hook([&](const Tensor& g) {
    seen = g.clone();
    return g * 10.0;
  });
  (x * 3.0).sum().backward();
  check_values(seen, {3, 3});
  check_values(x.grad(), {30, 30});
}

TEST_CASE("a non-leaf hook changes what flows on") {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor h = x * 2.0;
  size_t handle = h.register_hook([](const Tensor& g) { return g * 0.5; });
  (h * h).sum().backward({}, true);  // d/dh = 2h = [4, 8], halved, then times 2
  check_values(x.grad(), {4, 8});
  h.remove_hook(handle);
  x.mutable_grad() = Tensor();
  (h * 1.0).sum().backward();
  check_values(x.grad(), {2, 2});
}

TEST_CASE("post-accumulate-grad hooks fire once per backward with the final grad") {
  Tensor w = tensor({1.0, 1.0}, f64_grad());
  int calls = 0;
  Tensor grad_at_hook;
  w.register_post_accumulate_grad_hook([&](Tensor& leaf) {
    ++calls;
    grad_at_hook = leaf.grad().clone();
  });
  Tensor y = (w * 2.0).sum() + (w * 3.0).sum();  // two paths, one accumulation
  y.backward();
  CHECK(calls == 1);
  check_values(grad_at_hook, {5, 5});
  CHECK_THROWS_WITH_AS((w * 1.0).register_post_accumulate_grad_hook([](Tensor&) {}),
                       doctest::Contains("only leaf tensors"), gr::Error);
}

TEST_CASE("retain_grad keeps a non-leaf's gradient") {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor h = x * x;
  h.retain_grad();
  CHECK(h.retains_grad());
  (h * 3.0).sum().backward();
  check_values(h.grad(), {3, 3});
  check_values(x.grad(), {6, 12});
  CHECK_THROWS_AS(tensor({1.0}).register_hook([](const Tensor& g) { return g; }), gr::Error);
}
