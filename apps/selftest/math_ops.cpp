// gpu_selftest checks of the math and comparison families: every op's CUDA kernel against the
// CPU on the same inputs (special values included), forward and backward.
#include <cmath>

#include "selftest/checks.h"

namespace gr::selftest {

namespace {
// NaN, +-inf, +-0, rounding ties and ordinary values, then random ones: [n].
Tensor special_values(int64_t n, uint64_t seed, ScalarType dtype) {
  Tensor head = tensor({NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 0.9999, -0.75, 3.0}, kFloat64);
  return cat({head, randn_({n - head.numel()}, seed, kFloat64) * 3}).to(dtype);
}
// In (-1, 1) for asin, acos and erfinv.
Tensor unit_interval(IntArrayRef shape, uint64_t seed, ScalarType dtype) { return randn_(shape, seed, dtype).tanh(); }
}  // namespace

GR_SELFTEST_CHECKS(add_math_checks) {
  for (ScalarType t : {kFloat32, kFloat64}) {
    const Tol tol = t == kFloat32 ? Tol{2e-5, 1e-6} : Tol{1e-12, 1e-13};
    const std::string dt = t == kFloat32 ? " f32" : " f64";
    c.push_back({"math", "trig, hyperbolic, exp/log family" + dt + " [4099] with special values",
                 [t] { return TensorList{special_values(4099, 40, t)}; },
                 [](const TensorList& x) {
                   const Tensor& a = x[0];
                   return TensorList{sin(a),  cos(a),   tan(a),   atan(a),  sinh(a),  cosh(a),       erf(a),
                                     erfc(a), log1p(a), expm1(a), log2(a),  log10(a), rsqrt(a),      reciprocal(a),
                                     square(a), softplus(a, 2, 5)};
                 },
                 tol});
    c.push_back({"math", "asin, acos, erfinv" + dt + " [3001] in (-1, 1)",
                 [t] { return TensorList{unit_interval({3001}, 41, t)}; },
                 [](const TensorList& x) { return TensorList{asin(x[0]), acos(x[0]), erfinv(x[0])}; }, tol});
    c.push_back({"math", "sign, floor, ceil, round, trunc, frac, round(2)" + dt + " [4099] (exact)",
                 [t] { return TensorList{special_values(4099, 42, t)}; },
                 [](const TensorList& x) {
                   const Tensor& a = x[0];
                   return TensorList{sign(a), floor(a), ceil(a), round(a), trunc(a), frac(a), round(a, 2)};
                 },
                 t == kFloat32 ? Tol{1e-6, 1e-7} : kF64});
    c.push_back({"math", "atan2, hypot, fmod, remainder" + dt + " [64,1]x[1,65] broadcast",
                 [t] { return TensorList{special_values(64, 43, t).reshape({64, 1}), special_values(65, 44, t).reshape({1, 65})}; },
                 [](const TensorList& x) {
                   return TensorList{atan2(x[0], x[1]), hypot(x[0], x[1]), fmod(x[0], x[1]), remainder(x[0], x[1])};
                 },
                 tol});
    c.push_back({"math", "lerp (number and tensor weight), clamp (numbers and tensors)" + dt + " [300,200] transposed",
                 [t] {
                   return TensorList{randn_({200, 300}, 45, t).t(), randn_({300, 200}, 46, t), randn_({300, 1}, 47, t),
                                     randn_({200}, 48, t).abs()};
                 },
                 [](const TensorList& x) {
                   return TensorList{lerp(x[0], x[1], 0.3), lerp(x[0], x[1], x[2]), clamp(x[0], -0.5, 0.5),
                                     clamp_min(x[0], 0.25), clamp_max(x[0], x[3]), clamp(x[0], -x[3], x[3])};
                 },
                 tol});
  }
  c.push_back({"math", "int64 floor/sign/square/clamp/fmod/remainder [1000] (exact)",
               [] {
                 Generator g(49);
                 return TensorList{randint(-50, 50, {1000}, kInt64, &g), randint(1, 9, {1000}, kInt64, &g) - 4};
               },
               [](const TensorList& x) {
                 Tensor d = where(x[1] == 0, x[1] + 5, x[1]);
                 return TensorList{floor(x[0]), sign(x[0]), square(x[0]), clamp(x[0], -10, 20), fmod(x[0], d),
                                   remainder(x[0], d)};
               },
               kExact});
  c.push_back({"math", "bfloat16 and float16 in float32, rounded per op [2048]",
               [] { return TensorList{randn_({2048}, 50, kBFloat16), randn_({2048}, 51, kFloat16)}; },
               [](const TensorList& x) {
                 return TensorList{sin(x[0]), erf(x[1]), clamp(x[0], -1, 1), atan2(x[1], x[1] + 1), lerp(x[0], x[0] * 2, 0.25)};
               },
               Tol{8e-3, 1e-6}});  // an ulp of float32 math may round to the neighbouring bfloat16
  c.push_back({"math", "unary and binary backward f64 [257]",
               [] {
                 return TensorList{grad_input({257}, 52, kFloat64), grad_input({257}, 53, kFloat64),
                                   unit_interval({257}, 54, kFloat64).requires_grad_(true)};
               },
               with_grads([](const TensorList& x) {
                 return (sin(x[0]) * cosh(x[1]) + atan2(x[0], x[1]) + hypot(x[0], x[1]) + erfinv(x[2]) + asin(x[2]) +
                         softplus(x[0]) + clamp(x[1], -0.5, 0.5) + lerp(x[0], x[1], x[2]) + fmod(x[0], x[1]))
                     .sum();
               }),
               kF64});
}

GR_SELFTEST_CHECKS(add_compare_checks) {
  c.push_back({"compare", "< <= > >= == != with tensors and numbers, f32 vs int64 [33,65]",
               [] {
                 Generator g(60);
                 return TensorList{special_values(33 * 65, 61, kFloat32).reshape({33, 65}),
                                   randint(-3, 3, {65}, kInt64, &g)};
               },
               [](const TensorList& x) {
                 const Tensor &a = x[0], &b = x[1];
                 return TensorList{a < b, a <= b, a > b, a >= b, a == b, a != b, a < 0.5, 1.5 >= a, b == 2, 2.5 > b};
               },
               kExact});
  c.push_back({"compare", "logical, bitwise, isnan/isinf/isfinite, isclose [4099]",
               [] {
                 Generator g(62);
                 return TensorList{special_values(4099, 63, kFloat64), randint(-100, 100, {4099}, kInt64, &g),
                                   randint(0, 2, {4099}, kInt64, &g).to(kBool)};
               },
               [](const TensorList& x) {
                 const Tensor &f = x[0], &i = x[1], &b = x[2];
                 return TensorList{logical_and(f, i),  logical_or(f, b), logical_xor(i, b), logical_not(f),
                                   i & 12,             i | b,            i ^ (i + 7),       ~i,
                                   ~b,                 b & b.logical_not(), isnan(f),       isinf(f),
                                   isfinite(f),        isclose(f, f + 1e-9), isclose(f, f, 0, 0, true)};
               },
               kExact});
}

}  // namespace gr::selftest
