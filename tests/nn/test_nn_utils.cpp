// gr::nn::utils: clip_grad_norm_ (norm types, error_if_nonfinite, overloads), clip_grad_value_,
// parameters_to_vector and vector_to_parameters.
#include <cmath>

#include "test_util.h"

using namespace gr;
using gr::test::check_values;
using gr::test::error_of;

namespace {
Tensor param_with_grad(std::vector<double> values, std::vector<double> grad) {
  Tensor p = tensor(values, kFloat64).requires_grad_(true);
  p.mutable_grad() = tensor(grad, kFloat64);
  return p;
}
}  // namespace

TEST_CASE("clip_grad_norm_: total norm, scaling, norm types and overloads") {
  Tensor a = param_with_grad({0, 0}, {3, 0}), b = param_with_grad({0}, {4});
  CHECK(nn::utils::clip_grad_norm_({a, b}, 1.0) == doctest::Approx(5.0));
  const double coef = 1.0 / (5.0 + 1e-6);
  check_values(a.grad(), {3 * coef, 0});
  check_values(b.grad(), {4 * coef});
  // Below max_norm: unchanged.
  Tensor c = param_with_grad({0, 0}, {1, -1});
  CHECK(nn::utils::clip_grad_norm_(c, 10.0, 1.0) == doctest::Approx(2.0));
  check_values(c.grad(), {1, -1});
  CHECK(nn::utils::clip_grad_norm_(std::vector<Tensor>{c}, 0.5, INFINITY) == doctest::Approx(1.0));
  check_values(c.grad(), {0.5 / (1 + 1e-6), -0.5 / (1 + 1e-6)});
  // Parameters without gradients are skipped.
  Tensor none = zeros({3}).requires_grad_(true);
  CHECK(nn::utils::clip_grad_norm_({none}, 1.0) == 0.0);
}

TEST_CASE("clip_grad_norm_: error_if_nonfinite") {
  Tensor a = param_with_grad({0, 0}, {NAN, 1});
  CHECK(error_of([&] { nn::utils::clip_grad_norm_({a}, 1.0, 2.0, true); }) ==
        "clip_grad_norm_: the total norm of order 2 for gradients from `parameters` is non-finite, so it cannot be "
        "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
        "`error_if_nonfinite=false`");
  Tensor b = param_with_grad({0}, {INFINITY});
  CHECK_THROWS_AS(nn::utils::clip_grad_norm_(b, 1.0, INFINITY, true), gr::Error);
  // Without the flag: the non-finite norm is returned and scales the gradients, as torch.
  CHECK(std::isnan(nn::utils::clip_grad_norm_({a}, 1.0)));
  CHECK(std::isnan(a.grad()[1].item<double>()));
  CHECK(error_of([&] { nn::utils::clip_grad_norm_({a}, 1.0, 0.0); }) ==
        "clip_grad_norm_: norm_type must be positive, got 0");
}

TEST_CASE("clip_grad_value_ clamps every gradient element") {
  Tensor a = param_with_grad({0, 0, 0}, {-3, 0.5, 7}), b = param_with_grad({0}, {-0.1});
  nn::utils::clip_grad_value_({a, b}, 1.0);
  check_values(a.grad(), {-1, 0.5, 1});
  check_values(b.grad(), {-0.1});
  nn::utils::clip_grad_value_(a, 0.25);
  check_values(a.grad(), {-0.25, 0.25, 0.25});
}

TEST_CASE("parameters_to_vector and vector_to_parameters round-trip a module's parameters") {
  nn::Linear lin(3, 2);
  Tensor v = nn::utils::parameters_to_vector(lin->parameters());
  CHECK(v.sizes() == IntArrayRef({8}));
  CHECK(gr::equal(v.narrow(0, 0, 6), lin->weight.reshape({-1})));
  CHECK(gr::equal(v.narrow(0, 6, 2), lin->bias));
  // Differentiable: the gradient reaches every parameter.
  (v * 2).sum().backward();
  CHECK(gr::equal(lin->weight.grad(), full({2, 3}, 2.0)));
  Tensor w = arange(8, kFloat32);
  Tensor weight_before = lin->weight;
  nn::utils::vector_to_parameters(w, lin->parameters());
  CHECK(lin->weight.unsafe_impl() == weight_before.unsafe_impl());
  CHECK(gr::equal(lin->weight, arange(6, kFloat32).reshape({2, 3})));
  CHECK(gr::equal(lin->bias, tensor({6.0f, 7.0f})));
  CHECK(error_of([&] { nn::utils::vector_to_parameters(arange(5, kFloat32), lin->parameters()); }) ==
        "vector_to_parameters: vec has 5 elements but the parameters have 8");
  CHECK(error_of([&] { nn::utils::vector_to_parameters(zeros({2, 4}), lin->parameters()); }) ==
        "vector_to_parameters: expected vec to be a 1-d tensor, got shape [2, 4]");
  CHECK(error_of([&] { nn::utils::parameters_to_vector({}); }) == "parameters_to_vector: expected at least one parameter");
}
