// Live-object counts (core/live_objects.h, Note [Live objects]): what they count, a planted
// reference cycle that they find (and that goes once broken), and the graphs that used to be
// cycles: ops saving their own output, backward(create_graph) into .grad, custom Functions.
#include <sstream>

#include "test_util.h"

using namespace gr;
using gr::test::f64_grad;

namespace {

// Saves its output and its input; its backward is written with gr:: ops, so it is
// differentiable again (create_graph).
struct Square : autograd::Function<Square> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
    Tensor out = x * x;
    ctx->save_for_backward({x, out});
    return out;
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list g) {
    autograd::variable_list saved = ctx->get_saved_variables();
    return {g[0] * 2.0 * saved[1] / saved[0]};  // 2x, through the saved output
  }
};

}  // namespace

TEST_CASE("live objects: tensors, views, storages and autograd nodes are counted while they live") {
  const LiveObjects before = live_objects();
  {
    Tensor a = ones({4}, f64_grad());
    Tensor v = a.detach().view({2, 2});  // a second TensorImpl over the same storage
    CHECK(live_objects().tensor_impls == before.tensor_impls + 2);
    CHECK(live_objects().storages == before.storages + 1);
    Tensor y = (a * 2.0).sum();  // MulBackward1, SumBackward0, a's AccumulateGrad
    CHECK(live_objects().autograd_nodes == before.autograd_nodes + 3);
    y.backward();
    CHECK(a.grad().defined());
  }
  CHECK(live_objects() == before);
  std::ostringstream text;
  text << LiveObjects{3, 2, 1};
  CHECK(text.str() == "{tensor_impls 3, storages 2, autograd_nodes 1}");
}

TEST_CASE("live objects: a hook that owns its own tensor is a cycle the counts find; removing it frees all") {
  const LiveObjects before = live_objects();
  std::weak_ptr<TensorImpl> leaf, inner;
  size_t leaf_hook = 0, inner_hook = 0;
  {
    Tensor w = ones({3}, f64_grad());
    // Planted: w -> its hook list -> the hook -> w. A leaf's hooks live on the leaf.
    leaf_hook = w.register_post_accumulate_grad_hook([w](Tensor&) { CHECK(w.grad().defined()); });
    Tensor h = w * 2.0;
    // Planted: h -> grad_fn -> its pre-hooks -> the hook -> h. A non-leaf's hooks live on its grad_fn.
    inner_hook = h.register_hook([h](const Tensor& g) { return g * h.detach(); });
    (h * 3.0).sum().backward();
    leaf = w.impl_ptr();
    inner = h.impl_ptr();
  }
  // Both tensors outlived every handle to them, and with them w's .grad, the graph of h
  // (MulBackward1 and w's AccumulateGrad) and their storages.
  CHECK_FALSE(live_objects() == before);
  CHECK(live_objects().tensor_impls == before.tensor_impls + 3);  // w, w.grad, h
  CHECK(live_objects().autograd_nodes == before.autograd_nodes + 2);
  REQUIRE_FALSE(leaf.expired());
  REQUIRE_FALSE(inner.expired());
  // The way out: remove the hooks (or write them without the capture; see docs/reliability.md).
  Tensor(inner.lock()).remove_hook(inner_hook);
  Tensor(leaf.lock()).remove_hook(leaf_hook);
  CHECK(inner.expired());
  CHECK(leaf.expired());
  CHECK(live_objects() == before);
}

TEST_CASE("live objects: ops that save their own output keep no cycle (Note [Saved outputs])") {
  const LiveObjects before = live_objects();
  {
    Generator gen(7);
    Tensor x = randn({2, 3}, TensorOptions(kFloat64), &gen).requires_grad_(true);
    const std::vector<std::pair<const char*, Tensor>> outs = {
        {"max", x.max()},          {"amax", x.amax({1})},       {"median", x.median()},
        {"prod", x.prod()},        {"prod dim", x.prod(1)},     {"norm", x.norm()},
        {"logsumexp", x.logsumexp({1})}, {"cumprod", x.cumprod(1)}, {"std", x.std()},
        {"exp", x.exp()},          {"softmax", x.softmax(1)},   {"sigmoid", x.sigmoid()}};
    for (const auto& [name, out] : outs) {
      INFO(name);
      // create_graph rebuilds the saved output with the node as grad_fn: that graph too must go.
      Tensor g = autograd::grad({out.sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
      if (g.requires_grad()) CHECK(autograd::grad({g.sum()}, {x}, {}, std::nullopt, false, true)[0].defined());
    }
  }
  CHECK(live_objects() == before);
}

TEST_CASE("live objects: backward(create_graph) into .grad keeps no cycle (Note [Accumulators hold leaves weakly])") {
  const LiveObjects before = live_objects();
  std::weak_ptr<TensorImpl> weak;
  {
    Tensor w = tensor({1.5}, f64_grad());
    w.pow(4).sum().backward({}, std::nullopt, /*create_graph=*/true);
    REQUIRE(w.grad().requires_grad());
    // .grad's graph leads to w's accumulator, which does not own w.
    Tensor second = autograd::grad({w.grad().sum()}, {w})[0];
    CHECK(second.item<double>() == doctest::Approx(12 * 1.5 * 1.5));
    weak = w.impl_ptr();
  }
  CHECK(weak.expired());
  CHECK(live_objects() == before);

  // A leaf that only the graph still reaches (w * 2.0 saves nothing) is gone: its gradient
  // goes nowhere, and nothing fails.
  Tensor y;
  {
    Tensor w = tensor({2.0}, f64_grad());
    y = (w * 2.0).sum();
    weak = w.impl_ptr();
  }
  CHECK(weak.expired());
  y.backward();
  y = Tensor();
  CHECK(live_objects() == before);
}

TEST_CASE("live objects: custom Functions saving outputs, trained with create_graph, keep no cycle") {
  const LiveObjects before = live_objects();
  {
    Tensor x = tensor({0.5, -2.0, 3.0}, f64_grad());
    for (int step = 0; step < 3; ++step) {
      Tensor y = Square::apply(Square::apply(x)).sum();  // x^4
      Tensor g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];  // 4x^3
      (y + g.pow(2).sum()).backward();
    }
    CHECK(x.grad().defined());
  }
  CHECK(live_objects() == before);
}
