// A program as a libtorch user writes it, with torch:: spelled gr:: and nothing else changed:
// a custom Function, indexing with Slice, comparison and logical operators, and a WGAN-GP
// gradient penalty by double backward. Its numbers are checked against the same critic
// built from gr::'s own ops and against finite differences.
#include "test_util.h"

namespace {

using namespace gr::indexing;

// swish(x) = x * sigmoid(x), with a backward written with tensor ops so it is differentiable.
struct Swish : public gr::autograd::Function<Swish> {
  static gr::Tensor forward(gr::autograd::AutogradContext* ctx, gr::Tensor input, double beta) {
    ctx->save_for_backward({input});
    ctx->saved_data["beta"] = beta;
    return input * gr::sigmoid(input * beta);
  }

  static gr::autograd::variable_list backward(gr::autograd::AutogradContext* ctx,
                                              gr::autograd::variable_list grad_output) {
    auto input = ctx->get_saved_variables()[0];
    auto beta = ctx->saved_data["beta"].toDouble();
    auto s = gr::sigmoid(input * beta);
    auto grad_input = grad_output[0] * (s + input * beta * s * (1 - s));
    return {grad_input, gr::Tensor()};
  }
};

struct Critic {
  gr::Tensor w1, b1, w2;
  bool custom = true;

  gr::Tensor operator()(const gr::Tensor& x) const {
    // The critic reads the first four features and the last one, scaled.
    auto features = gr::cat({x.index({Slice(), Slice(None, 4)}), x.index({"...", -1}).unsqueeze(1) * 0.5}, 1);
    auto pre = gr::linear(features, w1, b1);
    auto hidden = custom ? Swish::apply(pre, 1.5) : pre * gr::sigmoid(pre * 1.5);
    return gr::linear(hidden, w2).squeeze(1);
  }
};

// The WGAN-GP critic loss: mean(D(fake)) - mean(D(real)) + lambda * mean((|grad D(x_hat)| - 1)^2).
gr::Tensor critic_loss(const Critic& critic, const gr::Tensor& real, const gr::Tensor& fake, const gr::Tensor& alpha) {
  gr::AutoGradMode enable(true);  // the finite-difference check below evaluates under no_grad
  auto interpolated = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(true);
  auto score = critic(interpolated);
  auto gradients = gr::autograd::grad({score}, {interpolated}, {gr::ones_like(score)},
                                      /*retain_graph=*/true, /*create_graph=*/true)[0];
  auto penalty = (gradients.pow(2).sum(1).sqrt() - 1).pow(2).mean();
  return critic(fake).mean() - critic(real).mean() + 10 * penalty;
}

}  // namespace

TEST_CASE("a libtorch program: custom Function, Slice, operators and a gradient penalty") {
  gr::manual_seed(7);
  auto options = gr::TensorOptions().dtype(gr::kFloat64);
  auto real = gr::randn({6, 5}, options);
  auto fake = gr::randn({6, 5}, options) + 0.5;
  auto alpha = gr::rand({6, 1}, options);
  Critic critic{gr::randn({3, 5}, options.requires_grad(true)), gr::zeros({3}, options.requires_grad(true)),
                gr::randn({1, 3}, options.requires_grad(true))};

  auto loss = critic_loss(critic, real, fake, alpha);
  CHECK(loss.grad_fn() != nullptr);
  loss.backward();
  REQUIRE(critic.w1.grad().defined());
  REQUIRE(critic.b1.grad().defined());
  REQUIRE(critic.w2.grad().defined());

  // The same critic from built-in ops gives the same loss and the same weight gradients.
  Critic builtin{critic.w1.detach().clone().requires_grad_(true), critic.b1.detach().clone().requires_grad_(true),
                 critic.w2.detach().clone().requires_grad_(true), /*custom=*/false};
  auto reference = critic_loss(builtin, real, fake, alpha);
  reference.backward();
  gr::test::check_close(loss, reference, 1e-12);
  gr::test::check_close(critic.w1.grad(), builtin.w1.grad(), 1e-10);
  gr::test::check_close(critic.b1.grad(), builtin.b1.grad(), 1e-10);
  gr::test::check_close(critic.w2.grad(), builtin.w2.grad(), 1e-10);

  // The penalty's gradient (through the double backward of Swish) matches finite differences.
  auto as_function = [&](const gr::TensorList& p) {
    return critic_loss(Critic{p[0], p[1], p[2]}, real, fake, alpha);
  };
  gr::TensorList weights = {critic.w1.detach().clone().requires_grad_(true),
                            critic.b1.detach().clone().requires_grad_(true),
                            critic.w2.detach().clone().requires_grad_(true)};
  CHECK(gr::autograd::gradcheck(as_function, weights));

  // Comparisons and logical operators as libtorch's: bool tensors, combined with & | ~.
  auto score = critic(real).detach();
  auto positive = score > 0;
  auto small = score.abs() <= 1.0;
  CHECK(positive.scalar_type() == gr::kBool);
  auto both = positive & small;
  auto either = positive | small;
  auto neither = ~either;
  for (int64_t i = 0; i < score.size(0); ++i) {
    const double s = score[i].item<double>();
    CHECK(both[i].item<bool>() == (s > 0 && std::abs(s) <= 1));
    CHECK(neither[i].item<bool>() == !(s > 0 || std::abs(s) <= 1));
  }
  CHECK(gr::equal(gr::logical_xor(positive, small), positive != small));
  // Masked selection of the positive scores through index with a boolean mask.
  auto selected = score.index({positive});
  CHECK(selected.numel() == positive.to(gr::kInt64).sum().item<int64_t>());
  CHECK((selected > 0).to(gr::kInt64).sum().item<int64_t>() == selected.numel());
}
