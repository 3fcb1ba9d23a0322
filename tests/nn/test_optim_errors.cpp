// Argument errors of the newer optimizers, typed options by name, and LBFGS's closure rules.
#include "test_util.h"

using namespace gr;
using namespace gr::optim;

TEST_CASE("optimizer option checks name the optimizer and the value") {
  Tensor w = zeros({2}).requires_grad_(true);
  CHECK_THROWS_WITH_AS(RMSprop({w}, RMSpropOptions(-0.1)), doctest::Contains("RMSprop: invalid learning rate"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(RMSprop({w}, RMSpropOptions().alpha(-1)), doctest::Contains("invalid alpha value"), gr::Error);
  CHECK_THROWS_WITH_AS(RMSprop({w}, RMSpropOptions().momentum(-1)), doctest::Contains("invalid momentum"), gr::Error);
  CHECK_THROWS_WITH_AS(Adagrad({w}, AdagradOptions().lr_decay(-1)), doctest::Contains("invalid lr_decay"), gr::Error);
  CHECK_THROWS_WITH_AS(Adagrad({w}, AdagradOptions().initial_accumulator_value(-1)),
                       doctest::Contains("initial_accumulator_value"), gr::Error);
  CHECK_THROWS_WITH_AS(Adamax({w}, AdamaxOptions().betas({0.9, 1.0})),
                       doctest::Contains("Adamax: invalid beta parameter at index 1"), gr::Error);
  CHECK_THROWS_WITH_AS(NAdam({w}, NAdamOptions().momentum_decay(-1)), doctest::Contains("invalid momentum_decay"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(RAdam({w}, RAdamOptions().eps(-1)), doctest::Contains("RAdam: invalid epsilon"), gr::Error);
  CHECK_THROWS_WITH_AS(AdamW({w}, AdamWOptions().weight_decay(-1)), doctest::Contains("AdamW: invalid weight_decay"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(LBFGS({w}, LBFGSOptions().line_search_fn("backtracking")),
                       doctest::Contains("only 'strong_wolfe'"), gr::Error);
  CHECK_THROWS_WITH_AS(LBFGS({w}, LBFGSOptions().max_iter(0)), doctest::Contains("max_iter must be positive"),
                       gr::Error);
  std::vector<OptimizerParamGroup> two;
  two.emplace_back(std::vector<Tensor>{w});
  two.emplace_back(std::vector<Tensor>{zeros({1}).requires_grad_(true)});
  CHECK_THROWS_WITH_AS(LBFGS(std::move(two)), doctest::Contains("doesn't support per-parameter options"), gr::Error);
  LBFGS lbfgs({w});
  CHECK_THROWS_WITH_AS(lbfgs.step(nullptr), doctest::Contains("a closure that re-evaluates the model is required"),
                       gr::Error);
}

TEST_CASE("typed parameter groups: options by name, lr through the base type, defaults for new groups") {
  Tensor w = zeros({2}).requires_grad_(true), v = zeros({3}).requires_grad_(true);
  Adam adam({w}, AdamOptions(0.01).betas({0.8, 0.9}).weight_decay(0.5));
  adam.add_param_group(OptimizerParamGroup({v}));
  REQUIRE(adam.param_groups().size() == 2);
  OptimizerOptions& o = adam.param_groups()[1].options();
  CHECK(o.lr() == 0.01);  // a copy of the defaults
  o.set_lr(0.5);
  CHECK(static_cast<AdamOptions&>(o).lr() == 0.5);
  CHECK(adam.param_groups()[0].options().lr() == 0.01);
  CHECK(std::get<0>(static_cast<AdamOptions&>(o).betas()) == 0.8);
  CHECK(o.get("betas.1") == 0.9);
  o.set("amsgrad", 1);
  CHECK(static_cast<AdamOptions&>(o).amsgrad());
  CHECK_FALSE(o.has("momentum"));
  CHECK_THROWS_WITH_AS(o.get("momentum"), doctest::Contains("no option 'momentum'"), gr::Error);
  CHECK(adam.defaults().get("weight_decay") == 0.5);
  CHECK(adam.parameters().size() == 2);
  // Options of an LBFGS: an unset optional reads as NaN, line_search_fn as 1.
  LBFGS lbfgs({zeros({1}).requires_grad_(true)}, LBFGSOptions().line_search_fn("strong_wolfe"));
  CHECK(std::isnan(lbfgs.defaults().get("max_eval")));
  CHECK(lbfgs.defaults().get("line_search_fn") == 1);
  OptimizerParamGroup bare({w});
  CHECK_FALSE(bare.has_options());
  CHECK_THROWS_WITH_AS(bare.options(), doctest::Contains("has no options"), gr::Error);
}
