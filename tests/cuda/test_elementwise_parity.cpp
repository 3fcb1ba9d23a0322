// CPU-vs-CUDA parity of the element-wise kernels: arithmetic, comparisons, where, unary math
// and the fused backward formulas, over dtypes, broadcasting, strided views and loops long
// enough that the grid-stride loop wraps.
#include <gradring/core/native/elementwise/elementwise.h>

#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

namespace {
// Float tolerances: the CUDA math library and glibc may differ by an ulp or two, and nvcc
// contracts a + alpha * b into an FMA (one rounding less than the CPU: up to an ulp of
// alpha * b, about 2e-6 for the operands below, even where the sum cancels to ~0).
Tol arith_tol(ScalarType t) { return t == kFloat32 ? Tol{1e-6, 1e-5} : t == kFloat64 ? Tol{1e-14, 1e-13} : kExact; }
Tol math_tol(ScalarType t) { return t == kFloat32 ? Tol{1e-5, 1e-6} : Tol{1e-13, 1e-14}; }

using Binary = Tensor (*)(const Tensor&, const Tensor&);
}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("binary arithmetic matches the CPU over dtypes and broadcasting") {
    const Binary ops[] = {N::mul, N::div, N::maximum, N::minimum};
    const char* names[] = {"mul", "div", "maximum", "minimum"};
    for (ScalarType t : {kFloat32, kFloat64, kInt64}) {
      // Divisors kept away from 0; the broadcast pair exercises stride-0 operands.
      Tensor a = random_tensor({37, 53}, t, 1, -50, 50), b = random_tensor({37, 53}, t, 2, 1, 9);
      Tensor c = random_tensor({4, 1, 5}, t, 3, -50, 50), d = random_tensor({3, 5}, t, 4, 1, 9);
      for (int i = 0; i < 4; ++i) {
        std::string what = std::string(names[i]) + " " + std::string(dtype_name(t));
        Tol tol = i == 1 && t == kInt64 ? arith_tol(kFloat32) : arith_tol(t);  // int / int is float32
        check_parity(what, {a, b}, [&](const TensorList& x) { return ops[i](x[0], x[1]); }, tol);
        check_parity(what + " broadcast", {c, d}, [&](const TensorList& x) { return ops[i](x[0], x[1]); }, tol);
      }
      check_parity("add alpha", {a, b}, [](const TensorList& x) { return N::add(x[0], x[1], 3); }, arith_tol(t));
      check_parity("sub alpha broadcast", {c, d}, [](const TensorList& x) { return N::sub(x[0], x[1], 2); },
                   arith_tol(t));
    }
    Tensor a = random_tensor({64}, kFloat32, 5, -1, 1);
    check_parity("add alpha 0.5", {a, a}, [](const TensorList& x) { return N::add(x[0], x[1], 0.5); },
                 arith_tol(kFloat32));
    // pow: positive bases for floats, small exponents for integers.
    check_parity("pow float", {random_tensor({200}, kFloat32, 6, 0.1, 3), random_tensor({200}, kFloat32, 7, -2, 2)},
                 [](const TensorList& x) { return N::pow(x[0], x[1]); }, math_tol(kFloat32));
    check_parity("pow int64", {random_tensor({200}, kInt64, 8, -5, 5), random_tensor({200}, kInt64, 9, 0, 6)},
                 [](const TensorList& x) { return N::pow(x[0], x[1]); }, kExact);
  }

  TEST_CASE("NaN propagates through maximum and minimum as on the CPU") {
    Tensor a = tensor({NAN, 1.0, -2.0, NAN}), b = tensor({0.0, NAN, 3.0, NAN});
    check_parity("maximum NaN", {a, b}, [](const TensorList& x) { return N::maximum(x[0], x[1]); }, kExact);
    check_parity("minimum NaN", {a, b}, [](const TensorList& x) { return N::minimum(x[0], x[1]); }, kExact);
  }

  TEST_CASE("comparisons and where match the CPU") {
    const Binary ops[] = {N::eq, N::ne, N::gt, N::lt, N::ge, N::le};
    const char* names[] = {"eq", "ne", "gt", "lt", "ge", "le"};
    for (ScalarType t : {kFloat32, kInt64, kUInt8, kBool}) {
      // Few distinct values, so equal pairs are common.
      Tensor a = random_tensor({6, 40}, t, 10, 0, 3), b = random_tensor({40}, t, 11, 0, 3);
      for (int i = 0; i < 6; ++i)
        check_parity(std::string(names[i]) + " " + std::string(dtype_name(t)), {a, b},
                     [&](const TensorList& x) { return ops[i](x[0], x[1]); }, kExact);
    }
    Tensor cond = N::gt(random_tensor({5, 1, 7}, kFloat32, 12), zeros({1}));
    for (ScalarType t : {kFloat32, kFloat64, kInt64, kBFloat16}) {
      Tensor a = random_tensor({3, 7}, t, 13, -9, 9), b = random_tensor({5, 3, 1}, t, 14, -9, 9);
      check_parity("where " + std::string(dtype_name(t)), {cond, a, b},
                   [](const TensorList& x) { return N::where(x[0], x[1], x[2]); }, kExact);
    }
  }

  TEST_CASE("unary math matches the CPU") {
    for (ScalarType t : {kFloat32, kFloat64}) {
      Tensor x = random_tensor({1000}, t, 20, -4, 4), pos = random_tensor({1000}, t, 21, 0.01, 50);
      const std::string dt(dtype_name(t));
      check_parity("neg " + dt, {x}, [](const TensorList& v) { return N::neg(v[0]); }, kExact);
      check_parity("abs " + dt, {x}, [](const TensorList& v) { return N::abs(v[0]); }, kExact);
      check_parity("relu " + dt, {x}, [](const TensorList& v) { return N::relu(v[0]); }, kExact);
      check_parity("exp " + dt, {x}, [](const TensorList& v) { return N::exp(v[0]); }, math_tol(t));
      check_parity("log " + dt, {pos}, [](const TensorList& v) { return N::log(v[0]); }, math_tol(t));
      check_parity("sqrt " + dt, {pos}, [](const TensorList& v) { return N::sqrt(v[0]); }, math_tol(t));
      check_parity("sigmoid " + dt, {x}, [](const TensorList& v) { return N::sigmoid(v[0]); }, math_tol(t));
      check_parity("tanh " + dt, {x}, [](const TensorList& v) { return N::tanh(v[0]); }, math_tol(t));
      check_parity("pow 2 " + dt, {x}, [](const TensorList& v) { return N::pow(v[0], 2.0); }, math_tol(t));
      check_parity("pow 0.5 " + dt, {pos}, [](const TensorList& v) { return N::pow(v[0], 0.5); }, math_tol(t));
    }
    Tensor i = random_tensor({300}, kInt64, 22, -20, 20);
    check_parity("neg int64", {i}, [](const TensorList& v) { return N::neg(v[0]); }, kExact);
    check_parity("abs int64", {i}, [](const TensorList& v) { return N::abs(v[0]); }, kExact);
    check_parity("relu int64", {i}, [](const TensorList& v) { return N::relu(v[0]); }, kExact);
    check_parity("pow 3 int64", {i}, [](const TensorList& v) { return N::pow(v[0], 3); }, kExact);
    check_parity("exp int64 -> float32", {i}, [](const TensorList& v) { return N::exp(v[0]); }, math_tol(kFloat32));
    Tensor v = tensor({0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-30, 88.0, -104.0});
    check_parity("exp specials", {v}, [](const TensorList& x) { return N::exp(x[0]); }, math_tol(kFloat32));
    check_parity("sigmoid specials", {v}, [](const TensorList& x) { return N::sigmoid(x[0]); }, math_tol(kFloat32));
  }

  TEST_CASE("fused backward formulas match the CPU") {
    for (ScalarType t : {kFloat32, kFloat64}) {
      Tensor g = random_tensor({17, 31}, t, 30), x = random_tensor({17, 31}, t, 31);
      Tensor y = N::sigmoid(x), th = N::tanh(x), r = N::relu(x);
      const std::string dt(dtype_name(t));
      check_parity("relu_backward " + dt, {g, r}, [](const TensorList& a) { return N::relu_backward(a[0], a[1]); },
                   kExact);
      check_parity("sigmoid_backward " + dt, {g, y},
                   [](const TensorList& a) { return N::sigmoid_backward(a[0], a[1]); }, arith_tol(t));
      check_parity("tanh_backward " + dt, {g, th}, [](const TensorList& a) { return N::tanh_backward(a[0], a[1]); },
                   arith_tol(t));
      check_parity("pow_scalar_backward " + dt, {g, x},
                   [](const TensorList& a) { return N::pow_scalar_backward(a[0], a[1], 3.0); }, math_tol(t));
      check_parity("abs_backward " + dt, {g, x}, [](const TensorList& a) { return N::abs_backward(a[0], a[1]); },
                   kExact);
    }
  }

  TEST_CASE("strided, permuted and 0-d operands, and in-place ops") {
    Tensor a = random_tensor({3, 4, 5, 6}, kFloat32, 40), b = random_tensor({6, 3, 1, 5}, kFloat32, 41);
    // Permuted operands keep several dims after coalescing: the general offset path.
    check_parity("add permuted 4-d", {a, b},
                 [](const TensorList& x) { return N::add(N::permute(x[0], {3, 0, 1, 2}), N::permute(x[1], {0, 1, 2, 3})); },
                 arith_tol(kFloat32));
    check_parity("mul transposed", {random_tensor({40, 30}, kFloat64, 42), random_tensor({30, 40}, kFloat64, 43)},
                 [](const TensorList& x) { return N::mul(N::transpose(x[0], 0, 1), x[1]); }, arith_tol(kFloat64));
    check_parity("sub sliced", {random_tensor({50, 60}, kFloat32, 44)},
                 [](const TensorList& x) {
                   return N::sub(N::slice(x[0], 0, 1, 50, 3), N::slice(N::slice(x[0], 0, 0, 17), 1, 0, 60, 1));
                 },
                 arith_tol(kFloat32));
    check_parity("0-d with 0-d", {scalar_tensor(2.5, kFloat32), scalar_tensor(-4.0, kFloat32)},
                 [](const TensorList& x) { return N::mul(x[0], x[1]); }, kExact);
    check_parity("scalar broadcast", {random_tensor({9, 9}, kFloat32, 45), scalar_tensor(3.0, kFloat32)},
                 [](const TensorList& x) { return N::div(x[0], x[1]); }, arith_tol(kFloat32));
    check_parity("add_ in place, broadcast other", {random_tensor({8, 16}, kFloat32, 46), random_tensor({16}, kFloat32, 47)},
                 [](const TensorList& x) {
                   Tensor self = N::clone(x[0]);
                   N::add_(self, x[1], 2);
                   N::mul_(self, x[1]);
                   return self;
                 },
                 arith_tol(kFloat32));
    check_parity("relu_ in place on a transposed view", {random_tensor({12, 7}, kFloat32, 48)},
                 [](const TensorList& x) {
                   Tensor self = N::clone(x[0]);
                   N::relu_(N::transpose(self, 0, 1));
                   return self;
                 },
                 kExact);
    check_parity("empty", {random_tensor({0, 5}, kFloat32, 49)}, [](const TensorList& x) { return N::exp(x[0]); },
                 kExact);
  }

  TEST_CASE("long loops: more elements than one grid covers") {
    // 3M elements exceed 32 blocks x 256 threads per SM on any current GPU, so threads wrap.
    Tensor a = random_tensor({3000017}, kFloat32, 50), b = random_tensor({3000017}, kFloat32, 51);
    check_parity("add 3M", {a, b}, [](const TensorList& x) { return N::add(x[0], x[1]); }, arith_tol(kFloat32));
    check_parity("tanh 3M strided", {a}, [](const TensorList& x) { return N::tanh(N::slice(x[0], 0, 0, 3000017, 2)); },
                 math_tol(kFloat32));
  }

  TEST_CASE("dense passes in packs: tails, broadcast scalars, misaligned views, mixed widths, in place") {
    // Note [Vectorised element-wise passes]: lengths around the pack width leave tails of 0-3.
    for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 1023, 1025, 4099}) {
      const std::string len = " n " + std::to_string(n);
      Tensor a = random_tensor({n}, kFloat32, 60), b = random_tensor({n}, kFloat32, 61);
      check_parity("add packs" + len, {a, b}, [](const TensorList& x) { return N::add(x[0], x[1]); }, kExact);
      check_parity("mul by a broadcast scalar" + len, {a, scalar_tensor(-1.5, kFloat32)},
                   [](const TensorList& x) { return N::mul(x[0], x[1]); }, kExact);
      check_parity("lt to bool" + len, {a, b}, [](const TensorList& x) { return N::lt(x[0], x[1]); }, kExact);
      check_parity("double packs" + len, {random_tensor({n}, kFloat64, 62), random_tensor({n}, kFloat64, 63)},
                   [](const TensorList& x) { return N::sub(x[0], x[1]); }, kExact);
    }
    // A view starting one element in: not aligned to a pack, so the strided kernel runs.
    Tensor c = random_tensor({4097}, kFloat32, 64);
    check_parity("add misaligned views", {c},
                 [](const TensorList& x) { return N::add(N::slice(x[0], 0, 1, 4097), N::slice(x[0], 0, 0, 4096)); },
                 kExact);
    check_parity("conversions float32 -> bfloat16 -> float32 in packs", {c},
                 [](const TensorList& x) { return N::to_dtype(N::to_dtype(x[0], kBFloat16), kFloat32); }, kExact);
    check_parity("relu_ in place, dense", {random_tensor({64, 33}, kFloat32, 65)},
                 [](const TensorList& x) {
                   Tensor self = N::clone(x[0]);
                   N::relu_(self);
                   return self;
                 },
                 kExact);
    check_parity("4-d broadcast bias (strided kernel, 32-bit dividers)",
                 {random_tensor({5, 7, 9, 11}, kFloat32, 66), random_tensor({7, 1, 1}, kFloat32, 67)},
                 [](const TensorList& x) { return N::add(x[0], x[1]); }, kExact);
  }
}
