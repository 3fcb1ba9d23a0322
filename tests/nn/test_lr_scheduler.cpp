// Every LR scheduler's lr sequence (two parameter groups, and the momentum OneCycleLR
// cycles) against PyTorch's (tests/data/optim_reference.json, "schedules"), plus errors.
#include <cmath>
#include <memory>

#include "reference_util.h"

using namespace gr;
using namespace gr::optim;

namespace {

// Two groups, lr 0.1 and 0.05, as make_optim_reference.py's groups_opt.
std::unique_ptr<Optimizer> groups_opt(const std::string& kind) {
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{zeros({1}).requires_grad_(true)});
  if (kind == "adam") {
    groups.emplace_back(std::vector<Tensor>{zeros({1}).requires_grad_(true)},
                        std::make_unique<AdamOptions>(AdamOptions(0.05).betas({0.9, 0.99})));
    return std::make_unique<Adam>(std::move(groups), AdamOptions(0.1).betas({0.9, 0.99}));
  }
  groups.emplace_back(std::vector<Tensor>{zeros({1}).requires_grad_(true)},
                      std::make_unique<SGDOptions>(SGDOptions(0.05).momentum(0.9)));
  return std::make_unique<SGD>(std::move(groups), SGDOptions(0.1).momentum(0.9));
}

// A step function for the scheduler `name` on `opt` (which it keeps alive).
std::function<void(size_t)> make(const std::string& name, Optimizer& o, const std::vector<double>& metrics) {
  auto keep = [](auto s) { return std::function<void(size_t)>([s](size_t) { s->step(); }); };
  if (name == "lambda") return keep(std::make_shared<LambdaLR>(o, [](int64_t e) { return std::pow(0.95, e); }));
  if (name == "lambda_per_group")
    return keep(std::make_shared<LambdaLR>(
        o, std::vector<LRLambda>{[](int64_t e) { return 1.0 / (e + 1); }, [](int64_t e) { return 0.5 * e + 1; }}));
  if (name == "multiplicative")
    return keep(std::make_shared<MultiplicativeLR>(o, [](int64_t e) { return e % 2 ? 0.9 : 0.8; }));
  if (name == "step") return keep(std::make_shared<StepLR>(o, 3, 0.5));
  if (name == "multistep") return keep(std::make_shared<MultiStepLR>(o, std::vector<int64_t>{2, 5, 5, 8}, 0.5));
  if (name == "exponential") return keep(std::make_shared<ExponentialLR>(o, 0.9));
  if (name == "linear") return keep(std::make_shared<LinearLR>(o, 0.25, 1.0, 4));
  if (name == "linear_down") return keep(std::make_shared<LinearLR>(o, 1.0, 0.1, 5));
  if (name == "cosine") return keep(std::make_shared<CosineAnnealingLR>(o, 4, 0.01));
  if (name == "warm_restarts") return keep(std::make_shared<CosineAnnealingWarmRestarts>(o, 3, 2, 0.001));
  if (name == "warm_restarts_1") return keep(std::make_shared<CosineAnnealingWarmRestarts>(o, 4));
  if (name == "one_cycle") return keep(std::make_shared<OneCycleLR>(o, OneCycleLROptions(1.0).total_steps(10)));
  if (name == "one_cycle_linear_3phase")
    return keep(std::make_shared<OneCycleLR>(o, OneCycleLROptions({1.0, 0.4})
                                                    .total_steps(12)
                                                    .pct_start(0.25)
                                                    .anneal_strategy("linear")
                                                    .three_phase(true)
                                                    .div_factor(10.0)
                                                    .final_div_factor(100.0)
                                                    .base_momentum(0.8)
                                                    .max_momentum(0.9)));
  if (name == "one_cycle_adam")
    return keep(std::make_shared<OneCycleLR>(o, OneCycleLROptions(0.5).epochs(2).steps_per_epoch(4)));
  if (name == "sequential") {
    auto a = std::make_shared<LinearLR>(o, 0.1, 1.0, 3);
    auto b = std::make_shared<ExponentialLR>(o, 0.9);
    return keep(std::make_shared<SequentialLR>(o, std::vector<std::shared_ptr<LRScheduler>>{a, b},
                                               std::vector<int64_t>{3}));
  }
  if (name == "sequential_3") {
    auto a = std::make_shared<ExponentialLR>(o, 0.5);
    auto b = std::make_shared<StepLR>(o, 2, 0.1);
    auto c = std::make_shared<CosineAnnealingLR>(o, 3);
    return keep(std::make_shared<SequentialLR>(o, std::vector<std::shared_ptr<LRScheduler>>{a, b, c},
                                               std::vector<int64_t>{2, 5}));
  }
  if (name == "plateau" || name == "plateau_max_abs") {
    auto s = name == "plateau" ? std::make_shared<ReduceLROnPlateau>(o, ReduceLROnPlateau::min, 0.5, 2, 0.01,
                                                                     ReduceLROnPlateau::rel, 1, std::vector<double>{0.01})
                               : std::make_shared<ReduceLROnPlateau>(o, ReduceLROnPlateau::max, 0.1, 1, 0.05,
                                                                     ReduceLROnPlateau::abs, 0,
                                                                     std::vector<double>{0.0, 0.004});
    double sign = name == "plateau" ? 1 : -1;
    return [s, metrics, sign](size_t e) { s->step(sign * metrics.at(e)); };
  }
  FAIL("unknown scheduler ", name);
  return nullptr;
}

}  // namespace

TEST_CASE("every LR scheduler's lr (and momentum) sequence matches PyTorch") {
  nlohmann::json ref = gr::test::load_reference("optim_reference.json");
  std::vector<double> metrics = ref.at("plateau_metrics").get<std::vector<double>>();
  size_t checked = 0;
  for (const auto& [name, seq] : ref.at("schedules").items()) {
    CAPTURE(name);
    auto opt = groups_opt(name == "one_cycle_adam" ? "adam" : "sgd");
    auto step = make(name, *opt, metrics);
    for (size_t e = 0; e < seq.size(); ++e) {
      CAPTURE(e);
      if (e > 0) step(e - 1);
      for (size_t g = 0; g < 2; ++g) {
        const OptimizerOptions& o = opt->param_groups()[g].options();
        CHECK(o.lr() == doctest::Approx(seq[e].at("lr")[g].get<double>()).epsilon(1e-12).scale(1.0));
        const double m = o.has("momentum") ? o.get("momentum") : o.get("betas.0");
        CHECK(m == doctest::Approx(seq[e].at("momentum")[g].get<double>()).epsilon(1e-12));
      }
      ++checked;
    }
  }
  CHECK(checked > 150);
}

TEST_CASE("LR scheduler errors") {
  auto opt = groups_opt("sgd");
  CHECK_THROWS_WITH_AS(StepLR(*opt, 0), doctest::Contains("step_size must be positive"), gr::Error);
  CHECK_THROWS_WITH_AS(LinearLR(*opt, 0.0), doctest::Contains("starting multiplicative factor"), gr::Error);
  CHECK_THROWS_WITH_AS(LambdaLR(*opt, std::vector<LRLambda>{[](int64_t) { return 1.0; }, nullptr, nullptr}),
                       doctest::Contains("expected 2 lr_lambdas, but got 3"), gr::Error);
  CHECK_THROWS_WITH_AS(CosineAnnealingWarmRestarts(*opt, 0), doctest::Contains("positive T_0"), gr::Error);
  CHECK_THROWS_WITH_AS(OneCycleLR(*opt, OneCycleLROptions(1.0)), doctest::Contains("either total_steps"), gr::Error);
  CHECK_THROWS_WITH_AS(OneCycleLR(*opt, OneCycleLROptions({1.0, 2.0, 3.0}).total_steps(4)),
                       doctest::Contains("expected 2 values for max_lr"), gr::Error);
  OneCycleLR cycle(*opt, OneCycleLROptions(1.0).total_steps(2));
  cycle.step();
  cycle.step();
  CHECK_THROWS_WITH_AS(cycle.step(), doctest::Contains("tried to step 3 times"), gr::Error);
  Tensor w = zeros({1}).requires_grad_(true);
  Adadelta no_momentum({w});
  CHECK_THROWS_WITH_AS(OneCycleLR(no_momentum, OneCycleLROptions(1.0).total_steps(4)),
                       doctest::Contains("must support momentum or beta1"), gr::Error);
  auto other = groups_opt("sgd");
  auto a = std::make_shared<StepLR>(*opt, 2);
  auto b = std::make_shared<StepLR>(*other, 2);
  CHECK_THROWS_WITH_AS(SequentialLR(*opt, {a, b}, {2}), doctest::Contains("same optimizer"), gr::Error);
  CHECK_THROWS_WITH_AS(SequentialLR(*opt, {a, a}, {}), doctest::Contains("one more than the number of milestone"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(ReduceLROnPlateau(*opt, ReduceLROnPlateau::min, 1.5), doctest::Contains("factor should be < 1.0"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(ReduceLROnPlateau(*opt, ReduceLROnPlateau::min, 0.1, 10, 1e-4, ReduceLROnPlateau::rel, 0,
                                         {0.1, 0.2, 0.3}),
                       doctest::Contains("expected 2 min_lrs"), gr::Error);
}
