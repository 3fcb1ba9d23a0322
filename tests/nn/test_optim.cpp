// Optimizers, LR schedulers and clip_grad_norm_ against PyTorch trajectories
// (tests/data/optim_reference.json, made by make_optim_reference.py), plus state_dict
// round trips and argument errors.
#include <cmath>
#include <filesystem>

#include "reference_util.h"

using namespace gr;
using gr::test::check_close;
using gr::test::tensor_from_json;

namespace {

struct Problem {
  Tensor X, Y, W, B;
  explicit Problem(const nlohmann::json& ref)
      : X(tensor_from_json(ref.at("X"))), Y(tensor_from_json(ref.at("Y"))),
        W(tensor_from_json(ref.at("W0")).requires_grad_(true)), B(tensor_from_json(ref.at("B0")).requires_grad_(true)) {}
  Tensor loss() const { return (linear(X, W, B) - Y).pow(2.0).mean() + W.pow(4.0).sum() * 0.1; }
};

std::unique_ptr<optim::Optimizer> make(const std::string& name, std::vector<Tensor> p) {
  using namespace gr::optim;
  if (name == "sgd") return std::make_unique<SGD>(p, SGDOptions(0.1));
  if (name == "sgd_momentum")
    return std::make_unique<SGD>(p, SGDOptions(0.05).momentum(0.9).dampening(0.1).weight_decay(0.01));
  if (name == "sgd_nesterov") return std::make_unique<SGD>(p, SGDOptions(0.05).momentum(0.8).nesterov(true));
  if (name == "adam") return std::make_unique<Adam>(p, AdamOptions(0.01));
  if (name == "adam_wd_amsgrad")
    return std::make_unique<Adam>(p, AdamOptions(0.02).betas({0.8, 0.99}).eps(1e-6).weight_decay(0.1).amsgrad(true));
  if (name == "adamw") return std::make_unique<AdamW>(p, AdamWOptions(0.01));
  if (name == "adamw_amsgrad") return std::make_unique<AdamW>(p, AdamWOptions(0.03).weight_decay(0.05).amsgrad(true));
  if (name == "adadelta") return std::make_unique<Adadelta>(p);
  if (name == "adadelta_wd")
    return std::make_unique<Adadelta>(p, AdadeltaOptions(0.5).rho(0.8).eps(1e-5).weight_decay(0.02));
  if (name == "rmsprop") return std::make_unique<RMSprop>(p, RMSpropOptions(0.01));
  if (name == "rmsprop_centered_momentum")
    return std::make_unique<RMSprop>(
        p, RMSpropOptions(0.005).alpha(0.9).eps(1e-6).weight_decay(0.01).momentum(0.8).centered(true));
  if (name == "adagrad") return std::make_unique<Adagrad>(p, AdagradOptions(0.1));
  if (name == "adagrad_decay")
    return std::make_unique<Adagrad>(
        p, AdagradOptions(0.2).lr_decay(0.1).weight_decay(0.05).initial_accumulator_value(0.5).eps(1e-8));
  if (name == "adamax") return std::make_unique<Adamax>(p);
  if (name == "adamax_wd")
    return std::make_unique<Adamax>(p, AdamaxOptions(0.05).betas({0.7, 0.9}).eps(1e-6).weight_decay(0.1));
  if (name == "nadam") return std::make_unique<NAdam>(p, NAdamOptions(0.01));
  if (name == "nadam_wd")
    return std::make_unique<NAdam>(p, NAdamOptions(0.02).betas({0.8, 0.95}).weight_decay(0.1).momentum_decay(0.01));
  if (name == "nadam_decoupled")
    return std::make_unique<NAdam>(p, NAdamOptions(0.02).weight_decay(0.1).decoupled_weight_decay(true));
  if (name == "radam") return std::make_unique<RAdam>(p, RAdamOptions(0.01));
  if (name == "radam_rectified")
    return std::make_unique<RAdam>(p, RAdamOptions(0.02).betas({0.8, 0.9}).weight_decay(0.1));
  if (name == "radam_decoupled")
    return std::make_unique<RAdam>(
        p, RAdamOptions(0.02).betas({0.8, 0.9}).weight_decay(0.1).decoupled_weight_decay(true));
  if (name == "lbfgs") return std::make_unique<LBFGS>(p, LBFGSOptions(0.5).max_iter(4).history_size(3));
  if (name == "lbfgs_wolfe") return std::make_unique<LBFGS>(p, LBFGSOptions(1).max_iter(5).line_search_fn("strong_wolfe"));
  if (name == "groups") {
    std::vector<OptimizerParamGroup> groups;
    groups.emplace_back(std::vector<Tensor>{p[0]});
    groups.emplace_back(std::vector<Tensor>{p[1]},
                        std::make_unique<AdamOptions>(AdamOptions(0.05).betas({0.5, 0.9}).weight_decay(0.1)));
    return std::make_unique<Adam>(std::move(groups), AdamOptions(0.01));
  }
  FAIL("unknown optimizer ", name);
  return nullptr;
}

}  // namespace

TEST_CASE("optimizer steps match PyTorch") {
  nlohmann::json ref = gr::test::load_reference("optim_reference.json");
  for (const auto& [name, steps] : ref.at("trajectories").items()) {
    CAPTURE(name);
    Problem pb(ref);
    auto opt = make(name, {pb.W, pb.B});
    auto closure = [&] {
      opt->zero_grad();
      Tensor loss = pb.loss();
      loss.backward();
      return loss;
    };
    for (const auto& expected : steps) {
      if (name.starts_with("lbfgs")) {
        opt->step(closure);
      } else {
        closure();
        opt->step();
      }
      check_close(pb.W, tensor_from_json(expected.at("w")), 1e-12);
      check_close(pb.B, tensor_from_json(expected.at("b")), 1e-12);
    }
  }
}

TEST_CASE("LR schedulers match PyTorch") {
  nlohmann::json ref = gr::test::load_reference("optim_reference.json");
  Tensor w = zeros({1}).requires_grad_(true);
  optim::SGD a({w}, optim::SGDOptions(0.1));
  optim::StepLR step_lr(a, 3, 0.5);
  for (double expected : ref.at("step_lr")) {
    step_lr.step();
    CHECK(a.param_groups()[0].lr() == doctest::Approx(expected).epsilon(1e-14));
  }
  optim::SGD b({w}, optim::SGDOptions(0.1));
  optim::CosineAnnealingLR cosine(b, 4, 0.01);
  for (double expected : ref.at("cosine_lr")) {
    cosine.step();
    CHECK(b.param_groups()[0].lr() == doctest::Approx(expected).epsilon(1e-12));
  }
  CHECK(cosine.last_epoch() == 13);
  CHECK_THROWS_AS(optim::StepLR(a, 0), gr::Error);
}

TEST_CASE("clip_grad_norm_ matches PyTorch") {
  nlohmann::json ref = gr::test::load_reference("optim_reference.json");
  for (const auto& c : ref.at("clip")) {
    double norm_type = c.at("norm_type").is_string() ? INFINITY : c.at("norm_type").get<double>();
    CAPTURE(norm_type);
    Tensor g = arange(10, kFloat64) - 4.5;
    Tensor p0 = zeros({3, 2}, kFloat64).requires_grad_(true), p1 = zeros({4}, kFloat64).requires_grad_(true);
    p0.mutable_grad() = g.slice(0, 0, 6).reshape({3, 2}).clone();
    p1.mutable_grad() = g.slice(0, 6, 10).clone();
    double total = nn::utils::clip_grad_norm_({p0, p1}, 2.0, norm_type);
    CHECK(total == doctest::Approx(c.at("total").get<double>()).epsilon(1e-12));
    check_close(p0.grad(), tensor_from_json(c.at("grads")[0]), 1e-12);
    check_close(p1.grad(), tensor_from_json(c.at("grads")[1]), 1e-12);
  }
}

TEST_CASE("optimizer state_dict round trip continues identically, also through a file") {
  nlohmann::json ref = gr::test::load_reference("optim_reference.json");
  for (std::string name : {"sgd_momentum", "adam_wd_amsgrad", "adadelta"}) {
    CAPTURE(name);
    Problem a(ref), b(ref);
    auto oa = make(name, {a.W, a.B});
    auto ob = make(name, {b.W, b.B});
    for (int i = 0; i < 3; ++i) {
      oa->zero_grad();
      a.loss().backward();
      oa->step();
    }
    // b takes a's parameters and optimizer state, then both take 3 more steps.
    {
      NoGradGuard g;
      b.W.copy_(a.W);
      b.B.copy_(a.B);
    }
    std::string path = (std::filesystem::temp_directory_path() / ("optim_" + name + ".safetensors")).string();
    save(oa->state_dict(), path);
    ob->load_state_dict(load(path));
    for (int i = 0; i < 3; ++i) {
      oa->zero_grad();
      a.loss().backward();
      oa->step();
      ob->zero_grad();
      b.loss().backward();
      ob->step();
    }
    CHECK(a.W.equal(b.W));
    CHECK(a.B.equal(b.B));
  }
}

TEST_CASE("optimizer argument and state errors") {
  Tensor w = zeros({2}).requires_grad_(true);
  CHECK_THROWS_WITH_AS(optim::SGD({w}, optim::SGDOptions(-1)), doctest::Contains("invalid learning rate"), gr::Error);
  CHECK_THROWS_WITH_AS(optim::SGD({w}, optim::SGDOptions(0.1).nesterov(true)), doctest::Contains("Nesterov"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(optim::Adam({w}, optim::AdamOptions().betas({1.0, 0.9})), doctest::Contains("beta"), gr::Error);
  CHECK_THROWS_WITH_AS(optim::Adam({zeros({2})}), doctest::Contains("require grad"), gr::Error);
  CHECK_THROWS_WITH_AS(optim::SGD(std::vector<Tensor>{}, optim::SGDOptions(0.1)), doctest::Contains("empty parameter list"), gr::Error);
  optim::SGD sgd({w}, optim::SGDOptions(0.1).momentum(0.9));
  CHECK_THROWS_WITH_AS(sgd.add_param_group(optim::OptimizerParamGroup({w})), doctest::Contains("more than one parameter group"), gr::Error);
  CHECK_THROWS_WITH_AS(sgd.add_param_group(optim::OptimizerParamGroup({zeros({1}).requires_grad_(true)},
                                                                      optim::AdamOptions().clone())),
                       doctest::Contains("not SGD's Options type"), gr::Error);
  w.mutable_grad() = ones({2});
  sgd.step();
  OrderedDict<Tensor> state = sgd.state_dict();
  CHECK(state.contains("state.0.momentum_buffer"));
  CHECK(state.contains("param_groups.0.lr"));
  optim::Adam adam({w});
  CHECK_THROWS_WITH_AS(adam.load_state_dict(state), doctest::Contains("unknown option"), gr::Error);
  Tensor v = zeros({3}).requires_grad_(true);
  optim::SGD other({v}, optim::SGDOptions(0.1).momentum(0.9));
  CHECK_THROWS_WITH_AS(other.load_state_dict(state), doctest::Contains("has shape [2]"), gr::Error);
  // Parameters without gradients are skipped; zero_grad frees or zeroes.
  Tensor unused = zeros({2}).requires_grad_(true);
  optim::Adam adam2({w, unused});
  adam2.step();
  CHECK(unused.equal(zeros({2})));
  adam2.zero_grad(false);
  CHECK(w.grad().equal(zeros({2})));
  adam2.zero_grad();
  CHECK_FALSE(w.grad().defined());
}

TEST_CASE("float32 parameters update in float32") {
  Tensor w = ones({4}).requires_grad_(true);
  optim::Adadelta opt({w});
  (w * w).sum().backward();
  opt.step();
  CHECK(w.scalar_type() == kFloat32);
  CHECK(w.max().item<double>() < 1.0);
}

// The CPU loops run in vectorised blocks with a tail (Note [Optimizer loops with absent
// buffers]); a parameter of 1,003 elements must step exactly as its elements would one by
// one (each a parameter of its own, so every element takes the scalar tail).
TEST_CASE("optimizer steps on a long parameter equal the same steps element by element (float32 and float64)") {
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    for (std::string name : {"sgd", "sgd_momentum", "sgd_nesterov", "adam_wd_amsgrad", "adamw", "adamw_amsgrad", "adadelta",
                             "rmsprop_centered_momentum", "adagrad_decay", "adamax_wd", "nadam_wd", "nadam_decoupled",
                             "radam_rectified", "radam_decoupled"}) {
      CAPTURE(dtype);
      CAPTURE(name);
      const int64_t n = 1003;
      Tensor init = (arange(n, kFloat64) * 0.37).sin().to(dtype);
      Tensor grads = (arange(n, kFloat64) * 0.11).cos().to(dtype);
      Tensor whole = init.clone().requires_grad_(true);
      std::vector<Tensor> pieces;
      for (int64_t i = 0; i < n; ++i) pieces.push_back(init.slice(0, i, i + 1).clone().requires_grad_(true));
      auto ow = make(name, {whole});
      auto op = make(name, pieces);
      for (int step = 0; step < 3; ++step) {
        Tensor g = grads * (1.0 + step);
        whole.mutable_grad() = g.clone();
        for (int64_t i = 0; i < n; ++i) pieces[i].mutable_grad() = g.slice(0, i, i + 1).clone();
        ow->step();
        op->step();
      }
      Tensor joined = cat(pieces).detach();
      const double tol = dtype == kFloat32 ? 1e-6 : 1e-14;
      check_close(whole.detach(), joined, tol);
    }
  }
}
