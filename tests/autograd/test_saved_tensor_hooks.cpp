// Saved-tensor hooks (Note [Saved-tensor hooks]): what is packed and when, the unpack hook's
// result used by backward, nesting, custom Functions, create_graph through unpacked tensors
// (saved outputs, non-leaf inputs, leaves) equal to the run without hooks, and the errors.
#include <any>
#include <memory>
#include <string>
#include <vector>

#include "test_util.h"

using namespace gr;
using autograd::graph::SavedTensorsHooks;
using gr::test::max_abs_diff;

namespace {

// Packs a copy of the tensor (as save_on_cpu packs one on another device) and counts. The
// unpack hook's counter is shared: saved tensors keep the hook, and backward may run after the
// guard (and this object) is gone.
struct CopyHooks {
  int packs = 0;
  std::shared_ptr<int> unpack_count = std::make_shared<int>(0);
  std::vector<std::vector<int64_t>> shapes;
  SavedTensorsHooks guard{[this](const Tensor& t) {
                            ++packs;
                            shapes.push_back(t.sizes().vec());
                            NoGradGuard no_grad;
                            return std::any(t.clone());
                          },
                          [count = unpack_count](const std::any& a) {
                            ++*count;
                            return std::any_cast<Tensor>(a);
                          }};
  int unpacks() const { return *unpack_count; }
};

// d/dx and d/dw of a loss that saves outputs (exp), non-leaf inputs (the product's operands)
// and leaves (w), then the gradient of the sum of their squares (create_graph).
TensorList first_and_second(bool hooks) {
  Tensor x = test::make({0.5, -1.0, 2.0}, {3}).requires_grad_(true);
  Tensor w = test::make({1.5, 0.25, -0.5}, {3}).requires_grad_(true);
  Tensor loss;
  {
    std::optional<CopyHooks> h;
    if (hooks) h.emplace();
    Tensor y = (x * w).exp();  // saves x and w (leaves), then exp's output
    Tensor z = y * y.sin();    // sin saves y (a non-leaf input), the product y and sin(y)
    loss = z.sum();
    if (hooks) CHECK(h->packs == 6);
  }
  TensorList g = autograd::grad({loss}, {x, w}, {}, std::nullopt, /*create_graph=*/true);
  (g[0] * g[0] + g[1] * g[1]).sum().backward();
  return {g[0].detach(), g[1].detach(), x.grad(), w.grad()};
}

struct MulConst : autograd::Function<MulConst> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, const Tensor& w) {
    ctx->save_for_backward({x, w});
    return x * w;
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list g) {
    auto saved = ctx->get_saved_variables();
    return {g[0] * saved[1], g[0] * saved[0]};
  }
};

}  // namespace

TEST_CASE("saved-tensor hooks: each saved tensor is packed once, unpacked in backward, undefined ones never") {
  Tensor x = randn({4, 3}, TensorOptions(kFloat64)).requires_grad_(true);
  nn::Linear fc(3, 2);
  fc->to(kFloat64);
  for (Tensor& p : fc->parameters()) p.requires_grad_(false);
  CopyHooks h;
  Tensor y = fc(x).tanh();  // linear saves its weight only (x's copy is for the weight's gradient); tanh its output
  CHECK(h.packs == 2);
  CHECK(h.shapes == std::vector<std::vector<int64_t>>{{2, 3}, {4, 2}});
  CHECK(h.unpacks() == 0);
  y.sum().backward();
  CHECK(h.unpacks() == 2);
  Tensor want = matmul(1 - y.detach() * y.detach(), fc->weight);
  test::check_close(x.grad(), want);
}

TEST_CASE("saved-tensor hooks: backward uses what the unpack hook returns, with the saved tensor's identity") {
  Tensor x = test::make({1.0, 2.0}, {2}).requires_grad_(true);
  Tensor w = test::make({3.0, 4.0}, {2}).requires_grad_(true);
  Tensor y;
  {
    SavedTensorsHooks h([](const Tensor& t) { return std::any(t.sizes().vec()); },
                        [](const std::any& a) { return full(std::any_cast<std::vector<int64_t>>(a), 10.0, kFloat64); });
    y = x * w;
  }
  y.sum().backward();
  test::check_values(x.grad(), {10.0, 10.0});  // w as the hook gave it back
  test::check_values(w.grad(), {10.0, 10.0});
}

TEST_CASE("saved-tensor hooks: guards nest, the innermost applies, and the previous ones come back") {
  std::vector<std::string> log;
  auto hooks_named = [&log](std::string name) {
    return std::make_pair(
        [&log, name](const Tensor& t) {
          log.push_back("pack " + name);
          return std::any(t);
        },
        [&log, name](const std::any& a) {
          log.push_back("unpack " + name);
          return std::any_cast<Tensor>(a);
        });
  };
  Tensor x = test::make({0.5}, {1}).requires_grad_(true);
  Tensor y;
  {
    auto [p1, u1] = hooks_named("outer");
    SavedTensorsHooks outer(p1, u1);
    Tensor a = x.sin();
    {
      auto [p2, u2] = hooks_named("inner");
      SavedTensorsHooks inner(p2, u2);
      a = a.cos();
    }
    y = a.exp();
  }
  Tensor z = y.tanh();  // no hooks
  CHECK(log == std::vector<std::string>{"pack outer", "pack inner", "pack outer"});
  z.backward();
  CHECK(log == std::vector<std::string>{"pack outer", "pack inner", "pack outer", "unpack outer", "unpack inner",
                                        "unpack outer"});
  test::check_values(x.grad(), {(1 - std::pow(std::tanh(std::exp(std::cos(std::sin(0.5)))), 2)) *
                                    std::exp(std::cos(std::sin(0.5))) * -std::sin(std::sin(0.5)) * std::cos(0.5)});
}

TEST_CASE("saved-tensor hooks: create_graph through unpacked outputs, inputs and leaves equals the run without") {
  const TensorList want = first_and_second(false), got = first_and_second(true);
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("result ", i);
    CHECK(max_abs_diff(got[i], want[i]) == 0.0);
  }
}

TEST_CASE("saved-tensor hooks: a custom Function's save_for_backward goes through them") {
  Tensor x = test::make({2.0, 3.0}, {2}).requires_grad_(true);
  Tensor w = test::make({5.0, 7.0}, {2}).requires_grad_(true);
  CopyHooks h;
  Tensor y = MulConst::apply(x, w);
  CHECK(h.packs == 2);
  y.sum().backward();
  CHECK(h.unpacks() == 2);
  test::check_values(x.grad(), {5.0, 7.0});
  test::check_values(w.grad(), {2.0, 3.0});
}

TEST_CASE("saved-tensor hooks: empty hooks and an undefined unpacked tensor are errors; a hook's own error passes") {
  CHECK(test::error_of([] { SavedTensorsHooks h(nullptr, [](const std::any&) { return Tensor(); }); })
            .find("both the pack and the unpack hook must be set") != std::string::npos);
  Tensor x = test::make({1.0}, {1}).requires_grad_(true);
  Tensor y;
  {
    // The pack hook keeps a detached copy: exp saves its output, and keeping the output itself
    // (with its grad_fn) inside its own node would be a reference cycle (docs/reliability.md).
    SavedTensorsHooks h([](const Tensor& t) { return std::any(t.detach()); }, [](const std::any&) { return Tensor(); });
    y = x.exp();
  }
  CHECK(test::error_of([&] { y.backward(); }).find("the unpack hook returned an undefined tensor") != std::string::npos);
  {
    SavedTensorsHooks h([](const Tensor&) -> std::any { GR_ERROR("no room to save it"); },
                        [](const std::any&) { return Tensor(); });
    CHECK(test::error_of([&] { x.exp(); }).find("no room to save it") != std::string::npos);
  }
  Tensor z = x.exp();  // the guard is gone
  z.backward();
  test::check_values(x.grad(), {std::exp(1.0)});
}
