// Creation: gr::tensor from nested literals, arange/linspace/logspace against torch's values,
// and the *_like factories with options.
#include "core/coreapi_json.h"
#include "test_util.h"

using namespace gr;
using gr::test::coreapi_reference;
using gr::test::json_tensor;
using gr::test::same_values;

namespace {
Scalar json_scalar(const nlohmann::json& v) {
  return v.is_number_integer() ? Scalar(v.get<int64_t>()) : Scalar(v.get<double>());
}
}  // namespace

TEST_CASE("tensor literals: nested lists of any depth give their shape, never a silent 1-D tensor") {
  Tensor a = tensor({{1, 2}, {3, 4}});
  CHECK(a.sizes() == IntArrayRef{2, 2});
  CHECK(a.scalar_type() == kInt64);
  CHECK(same_values(a, arange(1, 5).reshape({2, 2})));
  Tensor col = tensor({{1}, {2}});
  CHECK(col.sizes() == IntArrayRef{2, 1});
  Tensor b = tensor({{1.0, 2.0}}, kFloat64);
  CHECK(b.sizes() == IntArrayRef{1, 2});
  CHECK(b.scalar_type() == kFloat64);
  CHECK(tensor({{1.5}, {2.5}}).scalar_type() == kFloat32);  // floating literals: the default dtype
  Tensor c = tensor({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}});
  CHECK(c.sizes() == IntArrayRef{2, 2, 2});
  CHECK(c[1][0][1].item<int64_t>() == 6);
  Tensor d = tensor({{{{1.f}, {2.f}}}, {{{3.f}, {4.f}}}, {{{5.f}, {6.f}}}});
  CHECK(d.sizes() == IntArrayRef{3, 1, 2, 1});
  CHECK(d.scalar_type() == kFloat32);
  CHECK(same_values(d.flatten(), tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f})));
  Tensor five = tensor({{{{{1}}}}});
  CHECK(five.dim() == 5);
  // Scalars, one-element lists and empty lists.
  CHECK(tensor(5).dim() == 0);
  CHECK(tensor(5).scalar_type() == kInt64);
  CHECK(tensor({5}).sizes() == IntArrayRef{1});
  CHECK(tensor({}).sizes() == IntArrayRef{0});
  CHECK(tensor({}).scalar_type() == kFloat32);
  CHECK(tensor({{}, {}}).sizes() == IntArrayRef{2, 0});
  CHECK(tensor({true, false}).scalar_type() == kBool);
  CHECK(tensor({int8_t{1}, int8_t{-2}}).scalar_type() == kInt8);  // narrow literals keep their dtype
  CHECK(tensor({uint8_t{200}}).scalar_type() == kUInt8);
  // Mixed element types promote (libtorch refuses them).
  CHECK(same_values(tensor({1, 2.5}), tensor({1.0f, 2.5f})));
  // With options: dtype, requires_grad.
  Tensor g = tensor({{1, 2}}, TensorOptions(kFloat64).requires_grad(true));
  CHECK(g.scalar_type() == kFloat64);
  CHECK(g.requires_grad());
  CHECK(same_values(tensor({{1, -1}}, kInt8), tensor({int8_t{1}, int8_t{-1}}).reshape({1, 2})));
}

TEST_CASE("tensor literals: ragged lists and values that overflow the dtype are errors") {
  CHECK_THROWS_WITH_AS(tensor({{1, 2}, {3}}), doctest::Contains("ragged nested list"), gr::Error);
  CHECK_THROWS_WITH_AS(tensor({{1, 2}, {3}}), doctest::Contains("element 1 has shape [1]"), gr::Error);
  CHECK_THROWS_WITH_AS(tensor({{{1}, {2}}, {{3}, {4, 5}}}), doctest::Contains("ragged"), gr::Error);
  CHECK_THROWS_WITH_AS(tensor({{1}, 2}), doctest::Contains("ragged"), gr::Error);
  CHECK_THROWS_WITH_AS(tensor({300}, kInt8), doctest::Contains("tensor: value 300 cannot be converted to type int8"),
                       gr::Error);
}

TEST_CASE("tensor from vectors converts as to() does") {
  std::vector<double> v{1.5, -2.5};
  CHECK(tensor(v).scalar_type() == kFloat32);  // floating values: the default dtype, as libtorch
  CHECK(tensor(v, kFloat64).equal(tensor({1.5, -2.5}, kFloat64)));
  std::vector<int64_t> w{300, -1};
  CHECK(same_values(tensor(w, kInt8), tensor({44, -1}, kInt64).to(kInt8)));
  std::vector<int32_t> x{7};
  CHECK(tensor(x).scalar_type() == kInt64);
  std::vector<bool> flags{true, false, true};
  CHECK(same_values(tensor(flags), tensor({true, false, true})));
  CHECK(tensor({v, v}).sizes() == IntArrayRef{2, 2});  // vectors inside a braced list
}

TEST_CASE("arange matches torch: the count ceil((end - start) / step) and torch's float rounding") {
  for (const auto& c : coreapi_reference()["arange"]) {
    Tensor expected = json_tensor(c["output"]);
    const Scalar start = json_scalar(c["start"]), end = json_scalar(c["end"]), step = json_scalar(c["step"]);
    Tensor got = c["dtype"].is_null()
                     ? arange(start, end, step)
                     : arange(start, end, step, gr::test::dtype_from_name(c["dtype"].get<std::string>()));
    INFO("arange(", c["start"].dump(), ", ", c["end"].dump(), ", ", c["step"].dump(), ") ", expected.scalar_type());
    CHECK(got.numel() == expected.numel());
    CHECK(same_values(got, expected));  // bit for bit
  }
  CHECK(arange(5).scalar_type() == kInt64);
  CHECK(arange(0.0, 5).scalar_type() == kFloat32);
  CHECK(arange(0, 5, TensorOptions(kFloat64)).scalar_type() == kFloat64);
  CHECK(arange(5, TensorOptions(Device(kCPU))).scalar_type() == kInt64);  // dtype inferred when options name none
  CHECK_THROWS_WITH_AS(arange(0, 10, 0), doctest::Contains("step must be nonzero"), gr::Error);
  CHECK_THROWS_WITH_AS(arange(0, 3, 0.5, kInt64), doctest::Contains("taken as an integer"), gr::Error);
  CHECK_THROWS_WITH_AS(arange(10, 0, 1), doctest::Contains("inconsistent with step sign"), gr::Error);
  CHECK_THROWS_WITH_AS(arange(0, 1, 1, kBool), doctest::Contains("bool is not supported"), gr::Error);
  CHECK_THROWS_AS(arange(0.0, std::numeric_limits<double>::infinity(), 1.0), gr::Error);
}

TEST_CASE("linspace and logspace match torch's values") {
  for (const auto& c : coreapi_reference()["linspace"]) {
    Tensor expected = json_tensor(c["output"]);
    INFO("linspace(", c["start"].dump(), ", ", c["end"].dump(), ", ", c["steps"].dump(), ") ", expected.scalar_type());
    Tensor got = linspace(c["start"].get<double>(), c["end"].get<double>(), c["steps"].get<int64_t>(),
                          expected.scalar_type());
    if (is_reduced_float(expected.scalar_type())) CHECK(gr::test::max_ulp_distance(got, expected) <= 1);
    else CHECK(same_values(got, expected));
  }
  for (const auto& c : coreapi_reference()["logspace"]) {
    Tensor expected = json_tensor(c["output"]);
    INFO("logspace(", c["start"].dump(), ", ", c["end"].dump(), ", ", c["steps"].dump(), ") ", expected.scalar_type());
    Tensor got = logspace(json_scalar(c["start"]), json_scalar(c["end"]), c["steps"].get<int64_t>(),
                          c["base"].get<double>(), expected.scalar_type());
    if (is_reduced_float(expected.scalar_type())) CHECK(gr::test::max_ulp_distance(got, expected) <= 1);
    else CHECK(same_values(got, expected));
  }
  CHECK(logspace(0, 2, 3).scalar_type() == kFloat32);
  CHECK_THROWS_WITH_AS(linspace(0, 1, -1), doctest::Contains("non-negative"), gr::Error);
  CHECK_THROWS_WITH_AS(logspace(0, 1, -2), doctest::Contains("logspace: number of steps"), gr::Error);
}

TEST_CASE("the *_like factories take the model tensor's dtype and device unless options name others") {
  Tensor x = zeros({2, 3}, kInt16);
  CHECK(same_values(ones_like(x), ones({2, 3}, kInt16)));
  CHECK(ones_like(x, kFloat64).scalar_type() == kFloat64);
  CHECK(same_values(full_like(x, 7), full({2, 3}, 7, kInt16)));
  CHECK(full_like(x, 2.5, kFloat32).equal(full({2, 3}, 2.5)));
  CHECK(zeros_like(x, TensorOptions(Device(kCPU))).scalar_type() == kInt16);
  CHECK(empty_like(x, TensorOptions()).scalar_type() == kInt16);
  Tensor f = zeros({4}, kFloat64);
  CHECK(rand_like(f, TensorOptions()).scalar_type() == kFloat64);
  CHECK(randn_like(f, kFloat32).scalar_type() == kFloat32);
  Tensor r = randint_like(x, 5);
  CHECK(r.scalar_type() == kInt16);
  CHECK(r.min().item<int64_t>() >= 0);
  CHECK(r.max().item<int64_t>() < 5);
  Tensor r2 = randint_like(f, -3, 3, kInt32);
  CHECK(r2.scalar_type() == kInt32);
  CHECK(r2.sizes() == f.sizes());
  CHECK(full_like(f, 1, TensorOptions().requires_grad(true)).requires_grad());
  CHECK_THROWS_WITH_AS(full_like(x, 1e6), doctest::Contains("without overflow"), gr::Error);
  CHECK_THROWS_WITH_AS(ones_like(Tensor(), kFloat32), doctest::Contains("ones_like: the model tensor is undefined"),
                       gr::Error);
}
