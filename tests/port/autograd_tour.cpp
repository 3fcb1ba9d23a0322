// A libtorch program of the kind its users write: nested tensor literals, indexing with Slice,
// the operators, custom autograd Functions and double backward. It is written in libtorch's
// spelling; tests/port renames it mechanically to gradring and runs it (its data-set
// argument is unused), and it compiles unchanged against libtorch, where every check holds too.
#include <torch/torch.h>

#include <cmath>
#include <iostream>
#include <string>

using namespace torch::indexing;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace {

auto f64() { return torch::dtype(torch::kFloat64); }

void expect_close(const torch::Tensor& got, const torch::Tensor& want, const std::string& what) {
  TORCH_CHECK(got.sizes() == want.sizes(), what, ": sizes differ");
  TORCH_CHECK(torch::allclose(got, want, 1e-10, 1e-12), what, ": values differ");
  std::cout << "ok  " << what << "\n";
}

// libtorch's documentation example: output = input weight^T + bias, backward by hand.
class LinearFunction : public torch::autograd::Function<LinearFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor input, torch::Tensor weight,
                               torch::Tensor bias = torch::Tensor()) {
    ctx->save_for_backward({input, weight, bias});
    auto output = input.mm(weight.t());
    if (bias.defined()) {
      output += bias.unsqueeze(0).expand_as(output);
    }
    return output;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto input = saved[0];
    auto weight = saved[1];
    auto bias = saved[2];
    auto grad_output = grad_outputs[0];
    auto grad_input = grad_output.mm(weight);
    auto grad_weight = grad_output.t().mm(input);
    auto grad_bias = torch::Tensor();
    if (bias.defined()) {
      grad_bias = grad_output.sum(0);
    }
    return {grad_input, grad_weight, grad_bias};
  }
};

// A non-tensor argument kept in saved_data.
class MulConstant : public torch::autograd::Function<MulConstant> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor tensor, double constant) {
    ctx->saved_data["constant"] = constant;
    return tensor * constant;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return {grad_outputs[0] * ctx->saved_data["constant"].toDouble(), torch::Tensor()};
  }
};

void literals() {
  auto m = torch::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, torch::kFloat64);
  TORCH_CHECK(m.dim() == 2 && m.size(0) == 2 && m.size(1) == 3, "a nested literal is 2-D");
  TORCH_CHECK(m.index({1, 2}).item<double>() == 6.0, "m[1, 2]");
  auto ints = torch::tensor({3, 1, 2});
  TORCH_CHECK(ints.scalar_type() == torch::kLong, "integer literals are int64");
  auto steps = torch::arange(0.0, 1.0, 0.25, f64());
  expect_close(steps, torch::tensor({0.0, 0.25, 0.5, 0.75}, torch::kFloat64), "arange with a floating step");
  expect_close(torch::full_like(m, 7.0), torch::ones({2, 3}, f64()) * 7, "full_like");
  expect_close(m.new_zeros({2}), torch::zeros({2}, f64()), "new_zeros");
}

void indexing() {
  auto x = torch::arange(24, f64()).reshape({2, 3, 4});
  expect_close(x.index({0, Slice(), 1}), torch::tensor({1.0, 5.0, 9.0}, torch::kFloat64), "x[0, :, 1]");
  TORCH_CHECK(x.index({"...", Slice(None, None, 2)}).sum().item<double>() == 132.0, "x[..., ::2]");
  expect_close(x.index({Slice(1, None), None, -1}), torch::arange(20, 24, f64()).reshape({1, 1, 4}),
               "x[1:, None, -1]");
  expect_close(x.index({torch::tensor({1, 0}), 2}),
               torch::stack({torch::arange(20, 24, f64()), torch::arange(8, 12, f64())}), "x[[1, 0], 2]");
  auto y = x.clone();
  y.index_put_({y > 20}, 0.0);
  TORCH_CHECK(y.sum().item<double>() == 210.0, "y[y > 20] = 0");
  y.index_put_({Slice(), 0, Slice(0, 2)}, torch::tensor({-1.0, -2.0}, torch::kFloat64));
  expect_close(y.index({1, 0, Slice(0, 3)}), torch::tensor({-1.0, -2.0, 14.0}, torch::kFloat64),
               "y[:, 0, 0:2] = [-1, -2]");
}

void operators() {
  auto p = torch::tensor({1.0, -2.0, 3.0}, torch::kFloat64);
  auto q = torch::tensor({0.5, 0.5, 4.0}, torch::kFloat64);
  expect_close(p + q * 2 - 1, torch::tensor({1.0, -2.0, 10.0}, torch::kFloat64), "p + q * 2 - 1");
  expect_close(-p / 2, torch::tensor({-0.5, 1.0, -1.5}, torch::kFloat64), "-p / 2");
  expect_close(2 * p, p + p, "2 * p");
  auto greater = p > q;
  TORCH_CHECK(greater.scalar_type() == torch::kBool, "comparisons give bool");
  TORCH_CHECK(greater.sum().item<int64_t>() == 1, "one element of p is greater");
  TORCH_CHECK(((p <= q) == (p < q)).all().item<bool>(), "no element of p equals q's");
  TORCH_CHECK((p != q).all().item<bool>() && !(p == q).any().item<bool>(), "== and !=");
  auto r = p.clone();
  r += q;
  r *= 2;
  expect_close(r, torch::tensor({3.0, -3.0, 14.0}, torch::kFloat64), "compound assignment");
  expect_close(torch::where(p > 0, p, torch::zeros_like(p)), torch::tensor({1.0, 0.0, 3.0}, torch::kFloat64),
               "where");
  expect_close(p.clamp(-1, 2), torch::tensor({1.0, -1.0, 2.0}, torch::kFloat64), "clamp");
  TORCH_CHECK(torch::logical_and(p > 0, q > 1).sum().item<int64_t>() == 1, "logical_and");
}

void custom_functions() {
  torch::manual_seed(0);
  auto input = torch::randn({4, 3}, f64().requires_grad(true));
  auto weight = torch::randn({2, 3}, f64().requires_grad(true));
  auto bias = torch::randn({2}, f64().requires_grad(true));
  auto out = LinearFunction::apply(input, weight, bias);
  (out * out).sum().backward();

  auto input2 = input.detach().clone().requires_grad_(true);
  auto weight2 = weight.detach().clone().requires_grad_(true);
  auto bias2 = bias.detach().clone().requires_grad_(true);
  auto out2 = input2.mm(weight2.t()) + bias2;
  (out2 * out2).sum().backward();
  expect_close(out, out2, "LinearFunction forward");
  expect_close(input.grad(), input2.grad(), "LinearFunction input grad");
  expect_close(weight.grad(), weight2.grad(), "LinearFunction weight grad");
  expect_close(bias.grad(), bias2.grad(), "LinearFunction bias grad");

  auto t = torch::randn({5}, f64().requires_grad(true));
  MulConstant::apply(t, 5.5).sum().backward();
  expect_close(t.grad(), torch::full({5}, 5.5, f64()), "MulConstant grad");
}

void double_backward() {
  // A gradient penalty: d/dx sum((dy/dx)^2) for y = sum(x^3) is 36 x^3.
  auto x = torch::tensor({0.5, -1.0, 2.0}, f64().requires_grad(true));
  auto y = x.pow(3).sum();
  auto g = torch::autograd::grad({y}, {x}, /*grad_outputs=*/{}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  expect_close(g, 3 * x.detach().pow(2), "dy/dx");
  g.pow(2).sum().backward();
  expect_close(x.grad(), 36 * x.detach().pow(3), "gradient penalty");

  // A Hessian-vector product of f = sum(x sin x): H = diag(2 cos x - x sin x).
  auto z = torch::tensor({0.3, -0.7, 1.1}, f64().requires_grad(true));
  auto v = torch::tensor({1.0, 2.0, -1.0}, torch::kFloat64);
  auto f = (z * z.sin()).sum();
  auto gz = torch::autograd::grad({f}, {z}, {}, true, true)[0];
  auto hv = torch::autograd::grad({(gz * v).sum()}, {z})[0];
  auto zd = z.detach();
  expect_close(hv, (2 * zd.cos() - zd * zd.sin()) * v, "Hessian-vector product");

  // backward(gradient, retain_graph, create_graph) leaves a differentiable .grad().
  auto w = torch::tensor({1.5}, f64().requires_grad(true));
  w.pow(4).sum().backward({}, true, true);
  TORCH_CHECK(w.grad().requires_grad(), "grad under create_graph has history");
  auto second = torch::autograd::grad({w.grad().sum()}, {w})[0];
  expect_close(second, 12 * w.detach().pow(2), "d2/dw2 w^4");
}

void introspection() {
  auto leaf = torch::ones({2}, f64().requires_grad(true));
  auto mid = leaf * 2;
  mid.retain_grad();
  mid.sum().backward();
  TORCH_CHECK(leaf.is_leaf() && !mid.is_leaf() && mid.retains_grad(), "is_leaf / retains_grad");
  expect_close(mid.grad(), torch::ones({2}, f64()), "retained grad");
  // leaf * 2 is mul.Scalar in C++ (Python's leaf * 2 would be mul.Tensor, MulBackward0).
  TORCH_CHECK(mid.grad_fn() != nullptr && mid.grad_fn()->name() == "MulBackward1", "grad_fn()->name()");
  std::cout << "ok  grad_fn: " << mid.grad_fn()->name() << "\n";
  {
    torch::NoGradGuard no_grad;
    TORCH_CHECK(!(leaf * 2).requires_grad(), "NoGradGuard");
  }
  {
    torch::InferenceMode guard;
    TORCH_CHECK(!(leaf * 2).requires_grad(), "InferenceMode");
  }
  auto h = torch::ones({3}, f64().requires_grad(true));
  h.register_hook([](torch::Tensor grad) { return grad * 3; });
  (h * 2).sum().backward();
  expect_close(h.grad(), torch::full({3}, 6.0, f64()), "a hook that returns a tensor");
}

}  // namespace

int main() {
  literals();
  indexing();
  operators();
  custom_functions();
  double_backward();
  introspection();
  std::cout << "autograd_tour: all checks passed\n";
  return 0;
}
