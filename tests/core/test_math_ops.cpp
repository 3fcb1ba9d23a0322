// The math and comparison ops beyond their values (test_math_reference.cpp): in-place forms
// agree with the out-of-place ones, operators with numbers on either side, layouts (strided,
// broadcast, 0-d, empty, long enough to run in parallel chunks), and every error path.
#include <cmath>

#include "test_util.h"

using namespace gr;
using gr::test::check_close;
using gr::test::check_values;
using gr::test::error_of;
using gr::test::same_values;
using gr::test::values;

namespace {
Tensor sample(ScalarType t, uint64_t seed = 7, std::vector<int64_t> shape = {4, 5}) {
  Generator g(seed);
  return (randn(shape, TensorOptions(kFloat64), &g) * 0.9).tanh().to(t);  // in (-1, 1): every op's domain
}
}  // namespace

TEST_CASE("in-place math equals the out-of-place op and changes the shared storage") {
  using Out = Tensor (*)(const Tensor&);
  using In = Tensor& (Tensor::*)() const;
  const std::tuple<const char*, Out, In> ops[] = {
      {"sin", sin, &Tensor::sin_},          {"cos", cos, &Tensor::cos_},
      {"tan", tan, &Tensor::tan_},          {"asin", asin, &Tensor::asin_},
      {"acos", acos, &Tensor::acos_},       {"atan", atan, &Tensor::atan_},
      {"sinh", sinh, &Tensor::sinh_},       {"cosh", cosh, &Tensor::cosh_},
      {"erf", erf, &Tensor::erf_},          {"erfc", erfc, &Tensor::erfc_},
      {"erfinv", erfinv, &Tensor::erfinv_}, {"rsqrt", rsqrt, &Tensor::rsqrt_},
      {"reciprocal", reciprocal, &Tensor::reciprocal_}, {"log1p", log1p, &Tensor::log1p_},
      {"expm1", expm1, &Tensor::expm1_},    {"log2", log2, &Tensor::log2_},
      {"log10", log10, &Tensor::log10_},    {"square", square, &Tensor::square_},
      {"sign", sign, &Tensor::sign_},       {"floor", floor, &Tensor::floor_},
      {"ceil", ceil, &Tensor::ceil_},       {"round", round, &Tensor::round_},
      {"trunc", trunc, &Tensor::trunc_},    {"frac", frac, &Tensor::frac_},
      {"neg", neg, &Tensor::neg_},          {"abs", abs, &Tensor::abs_},
      {"exp", exp, &Tensor::exp_},          {"log", log, &Tensor::log_},
      {"sqrt", sqrt, &Tensor::sqrt_},       {"sigmoid", sigmoid, &Tensor::sigmoid_},
      {"tanh", tanh, &Tensor::tanh_},
  };
  for (ScalarType t : {kFloat32, kFloat64, kBFloat16, kFloat16}) {
    for (const auto& [name, out_of_place, in_place] : ops) {
      INFO(name, " ", t);
      Tensor x = sample(t);
      Tensor expected = out_of_place(x);
      Tensor view = x.t();  // the same storage through a transposed view
      const uint32_t version = x._version();
      Tensor& r = (view.*in_place)();
      CHECK(&r == &view);
      CHECK(x._version() > version);
      CHECK(same_values(x, expected));
    }
  }
  // Integer tensors: the rounding ops, square, sign, abs and neg stay integers in place.
  Tensor i = tensor({-3, 0, 4});
  check_values(i.clone().floor_(), {-3, 0, 4});
  check_values(i.clone().square_(), {9, 0, 16});
  check_values(i.clone().sign_(), {-1, 0, 1});
  check_values(i.clone().abs_(), {3, 0, 4});
  check_values(i.clone().neg_(), {3, 0, -4});
  check_values(tensor({1.25, -2.75}, kFloat64).round_(1), {1.2, -2.8});
  Tensor z = tensor({-1.0});
  check_values(gr::abs_(z), {1});
}

TEST_CASE("in-place binary math, clamp and lerp equal their out-of-place forms") {
  for (ScalarType t : {kFloat32, kFloat64, kBFloat16}) {
    INFO(t);
    Tensor a = sample(t, 1) * 4, b = sample(t, 2, {5}).abs() + 0.5, w = sample(t, 3, {4, 1});
    CHECK(same_values(a.clone().atan2_(b), atan2(a, b)));
    CHECK(same_values(a.clone().hypot_(b), hypot(a, b)));
    CHECK(same_values(a.clone().fmod_(b), fmod(a, b)));
    CHECK(same_values(a.clone().fmod_(1.5), fmod(a, 1.5)));
    CHECK(same_values(a.clone().remainder_(b), remainder(a, b)));
    CHECK(same_values(a.clone().remainder_(-1.5), remainder(a, -1.5)));
    CHECK(same_values(a.clone().lerp_(b, 0.3), lerp(a, b, 0.3)));
    CHECK(same_values(a.clone().lerp_(b, w), lerp(a, b, w)));
    CHECK(same_values(a.clone().clamp_(-0.5, 1), clamp(a, -0.5, 1)));
    CHECK(same_values(a.clone().clamp_min_(0.25), clamp_min(a, 0.25)));
    CHECK(same_values(a.clone().clamp_max_(0.25), clamp_max(a, 0.25)));
    CHECK(same_values(a.clone().clamp_(-b, b), clamp(a, -b, b)));
    CHECK(same_values(a.clone().clamp_min_(w), clamp_min(a, w)));
    CHECK(same_values(a.clone().clamp_max_(w), clamp_max(a, w)));
    CHECK(same_values(a.clone().clip_(-0.5, 0.5), a.clip(-0.5, 0.5)));
  }
  Tensor i = tensor({-7, -2, 5, 9});
  check_values(i.clone().fmod_(tensor({3})), {-1, -2, 2, 0});
  check_values(i.clone().remainder_(3), {2, 1, 2, 0});
  check_values(i.clone().clamp_(-3, 6), {-3, -2, 5, 6});
  check_values(i.clone().bitwise_and_(6), {0, 6, 4, 0});
  check_values(i.clone().bitwise_or_(tensor({1})), {-7, -1, 5, 9});
  check_values(i.clone().bitwise_xor_(-1), {6, 1, -6, -10});
  check_values(i.clone().bitwise_not_(), {6, 1, -6, -10});
  Tensor m = tensor({1, 2, 4});
  m &= 6;
  m |= tensor({1, 1, 1});
  m ^= 2;
  check_values(m, {3, 1, 7});
}

TEST_CASE("comparison operators take a tensor or a number on either side and give bool") {
  Tensor x = tensor({-1.0, 0.5, 2.0, NAN}, kFloat32);
  check_values(x < 0.5, {1, 0, 0, 0});
  check_values(x <= 0.5, {1, 1, 0, 0});
  check_values(x > 0.5, {0, 0, 1, 0});
  check_values(x >= 0.5, {0, 1, 1, 0});
  check_values(x == 0.5, {0, 1, 0, 0});
  check_values(x != 0.5, {1, 0, 1, 1});  // NaN differs from everything
  CHECK((0.5 > x).equal(x < 0.5));
  CHECK((0.5 >= x).equal(x <= 0.5));
  CHECK((0.5 < x).equal(x > 0.5));
  CHECK((0.5 <= x).equal(x >= 0.5));
  CHECK((0.5 == x).equal(x == 0.5));
  CHECK((0.5 != x).equal(x != 0.5));
  Tensor y = tensor({0.0, 0.5, 3.0, NAN}, kFloat64);
  CHECK((x < y).scalar_type() == kBool);
  check_values(x < y, {1, 0, 1, 0});
  check_values(x == y, {0, 1, 0, 0});
  check_values(eq(x, 2), {0, 0, 1, 0});
  check_values(ne(x, 2), {1, 1, 0, 1});
  check_values(ge(tensor({1, 2, 3}), 1.5), {0, 1, 1});  // int64 against a float: compared as float32
  check_values(lt(tensor({1, 2, 3}), 2), {1, 0, 0});
  check_values(gt(tensor({1.0, 2.0}), 1), {0, 1});
  check_values(le(tensor({1.0, 2.0}), 1), {1, 0});
  // Logical and bitwise operators.
  Tensor b = tensor({1, 0, 1}).to(kBool), c = tensor({1, 1, 0}).to(kBool);
  check_values(b & c, {1, 0, 0});
  check_values(b | c, {1, 1, 1});
  check_values(b ^ c, {0, 1, 1});
  check_values(~b, {0, 1, 0});
  CHECK((b & c).scalar_type() == kBool);
  Tensor i = tensor({12, -1, 5});
  check_values(i & 10, {8, 10, 0});
  check_values(10 & i, {8, 10, 0});
  check_values(i | 3, {15, -1, 7});
  check_values(3 ^ i, {15, -4, 6});
  check_values(~i, {-13, 0, -6});
  check_values(i & b, {0, 0, 1});  // bool promotes to int64
  check_values(logical_and(x, i.narrow(0, 0, 1)), {1, 1, 1, 1});
  check_values(x.logical_or(zeros({4})), {1, 1, 1, 1});
  check_values(x.logical_xor(x), {0, 0, 0, 0});
  check_values(logical_not(tensor({0.0, -0.0, NAN, 2.0})), {1, 1, 0, 0});
  check_values(x.isnan(), {0, 0, 0, 1});
  // In place, logical ops write 0 or 1 in self's dtype.
  Tensor l = tensor({2.0, 0.0, -1.0}, kFloat32);
  CHECK(l.clone().logical_and_(tensor({1, 1, 0})).equal(tensor({1.0, 0.0, 0.0}, kFloat32)));
  CHECK(l.clone().logical_or_(zeros({1})).equal(tensor({1.0, 0.0, 1.0}, kFloat32)));
  CHECK(l.clone().logical_xor_(l).equal(zeros({3})));
  CHECK(l.clone().logical_not_().equal(tensor({0.0, 1.0, 0.0}, kFloat32)));
  CHECK(error_of([&] { zeros({3}).logical_and_(ones({2, 3})); }).find("logical_and_: output with shape [3]") !=
        std::string::npos);
  check_values(isinf(tensor({INFINITY, -INFINITY, 1.0})), {1, 1, 0});
  check_values(tensor({INFINITY, NAN, 1.0}).isfinite(), {0, 0, 1});
}

TEST_CASE("isclose, allclose and equal follow torch") {
  Tensor a = tensor({1.0, NAN, 1e10}, kFloat64), b = tensor({1.0 + 1e-9, NAN, 1e10 + 1e4}, kFloat64);
  check_values(isclose(a, b), {1, 0, 1});
  check_values(a.isclose(b, 1e-5, 1e-8, true), {1, 1, 1});
  check_values(isclose(a, b, 0, 0), {0, 0, 0});
  CHECK(!allclose(a, b));
  CHECK(allclose(a, b, 1e-5, 1e-8, true));
  CHECK(allclose(tensor({1.0, 2.0}), tensor({1.0}) + tensor({0.0, 1.0})));
  CHECK(allclose(tensor({1.0, 1.0}), tensor({1.0})));  // broadcasts, as torch
  CHECK(equal(tensor({1.0, 2.0}), tensor({1.0, 2.0})));
  CHECK(!equal(tensor({1.0, NAN}), tensor({1.0, NAN})));
  CHECK(!equal(tensor({1.0, 2.0}), tensor({1.0})));
}

TEST_CASE("math ops handle strided, broadcast, 0-d, empty and long inputs") {
  Tensor base = sample(kFloat64, 11, {6, 8});
  Tensor strided = base.t().slice(0, 1, 7, 2);  // [3, 6], not contiguous
  check_close(sin(strided), sin(strided.contiguous()));
  check_close(atan2(strided, strided.t().t() + 2), atan2(strided.contiguous(), strided.contiguous() + 2));
  check_close(clamp(strided, -0.1, 0.1), clamp(strided.contiguous(), -0.1, 0.1));
  Tensor s = scalar_tensor(0.5, kFloat64);
  CHECK(erfinv(s).dim() == 0);
  check_values(erfinv(s), {0.47693627620446987});
  CHECK(sin(zeros({0, 3})).sizes() == IntArrayRef({0, 3}));
  CHECK(lerp(zeros({0, 3}), zeros({3}), 0.5).sizes() == IntArrayRef({0, 3}));
  CHECK((zeros({0}) < 1).numel() == 0);
  // Long enough that cpu_map splits it across threads: each chunk sees its own elements.
  Tensor big = arange(0, 300000, 1, kFloat64) / 1000.0;
  std::vector<double> f = values(floor(big)), r = values(remainder(big, 7.0));
  for (size_t k = 0; k < f.size(); k += 997) {
    CHECK(f[k] == std::floor(static_cast<double>(k) / 1000.0));
    CHECK(r[k] == doctest::Approx(std::fmod(static_cast<double>(k) / 1000.0, 7.0)));
  }
}

TEST_CASE("math and comparison errors name the op, the shapes and the dtypes") {
  Tensor i = tensor({1, 2, 3}), f = tensor({1.0, 2.0, 3.0}, kFloat32);
  std::string e = error_of([&] { frac(i); });
  CHECK(e.find("frac") != std::string::npos);
  CHECK(e.find("int64") != std::string::npos);
  CHECK(e.find("[3]") != std::string::npos);
  e = error_of([&] { i.clone().sin_(); });
  CHECK(e.find("sin_: result type float32 can't be cast to the desired output type int64") != std::string::npos);
  e = error_of([&] { i.clone().clamp_(0.5, 2); });
  CHECK(e.find("clamp_: result type float32 can't be cast") != std::string::npos);
  e = error_of([&] { fmod(i, tensor({1, 0, 1})); });
  CHECK(e.find("fmod: ZeroDivisionError") != std::string::npos);
  CHECK(error_of([&] { remainder(i, 0); }).find("remainder: ZeroDivisionError") != std::string::npos);
  CHECK(error_of([&] { i.clone().fmod_(0); }).find("fmod_: ZeroDivisionError") != std::string::npos);
  e = error_of([&] { hypot(i, i); });
  CHECK(e.find("hypot: not implemented for dtype int64") != std::string::npos);
  e = error_of([&] { lerp(f, f.to(kFloat64), 0.5); });
  CHECK(e.find("lerp: expected dtype float32 for `end` but got dtype float64") != std::string::npos);
  e = error_of([&] { lerp(f, f, f.to(kFloat64)); });
  CHECK(e.find("lerp: expected dtype float32 for `weight` but got dtype float64") != std::string::npos);
  CHECK(error_of([&] { lerp(i, i, 0.5); }).find("lerp: not implemented for dtype int64") != std::string::npos);
  e = error_of([&] { clamp(f); });
  CHECK(e.find("clamp: at least one of 'min' or 'max' must not be None") != std::string::npos);
  e = error_of([&] { f & f; });
  CHECK(e.find("bitwise_and: not implemented for dtype float32") != std::string::npos);
  CHECK(error_of([&] { ~f; }).find("bitwise_not: not implemented for dtype float32") != std::string::npos);
  CHECK(error_of([&] { i | 1.5; }).find("bitwise_or") != std::string::npos);
  e = error_of([&] { isclose(f, f.to(kFloat64)); });
  CHECK(e.find("isclose: float32 did not match float64") != std::string::npos);
  CHECK(error_of([&] { isclose(f, f, -1); }).find("isclose: rtol") != std::string::npos);
  e = error_of([&] { atan2(zeros({2, 3}), zeros({4})); });
  CHECK(e.find("atan2") != std::string::npos);
  CHECK(e.find("[2, 3]") != std::string::npos);
  CHECK(e.find("[4]") != std::string::npos);
  e = error_of([&] { zeros({3}).fmod_(ones({2, 3})); });
  CHECK(e.find("fmod_: output with shape [3] doesn't match the broadcast shape [2, 3]") != std::string::npos);
  CHECK(error_of([&] { floor(tensor({1, 0}).to(kBool)); }).find("floor: not implemented for dtype bool") != std::string::npos);
  CHECK(error_of([&] { round(i, 1); }).find("round: not implemented for dtype int64") != std::string::npos);
  CHECK(error_of([&] { softplus(i); }).find("softplus: not implemented for dtype int64") != std::string::npos);
  CHECK(error_of([&] { remainder(tensor({1, 0}).to(kBool), tensor({1, 1}).to(kBool)); }).find("remainder: not implemented for dtype bool") !=
        std::string::npos);
  CHECK(error_of([&] { tensor({1, 0}).to(kBool).square_(); }).find("square_: result type int64 can't be cast") !=
        std::string::npos);
  CHECK(error_of([&] { sin(Tensor()); }).find("sin: undefined tensor") != std::string::npos);
}
