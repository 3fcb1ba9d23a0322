// CPU-vs-CUDA parity of the math and comparison kernels (core/functors_math.h on both
// devices), over dtypes, special values, broadcasting and strided views, every element-wise
// line of core/native/elementwise/math_ops.def included; and every stub of the family has a kernel on
// both devices.
#include <gradring/core/native/elementwise/elementwise_math.h>

#include <cmath>

#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

namespace {
Tol math_tol(ScalarType t) { return t == kFloat32 ? Tol{2e-5, 1e-6} : Tol{1e-12, 1e-13}; }

// Random values with the special ones (NaN, +-inf, +-0, ties) in front.
Tensor with_specials(int64_t n, ScalarType t, uint64_t seed) {
  Tensor head = tensor({NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5, -0.5, 2.5, -1.5, 1.0, -1.0}, kFloat64);
  return N::to_dtype(cat({head, random_tensor({n - head.numel()}, kFloat64, seed, -4, 4)}), t);
}

template <class Stub>
void check_both(const Stub& stub) {
  INFO(std::string(stub.name()));
  CHECK(stub.has(kCPU));
  CHECK(stub.has(kCUDA));
}
}  // namespace

TEST_SUITE("cuda_no_device") {
  TEST_CASE("every math and comparison stub has a CPU and a CUDA kernel") {
#define GR_MATH_KERNEL(stub, fn_type, kernel) check_both(N::stub##_stub);
#include <gradring/core/native/elementwise/math_ops.def>
  }
}

TEST_SUITE("cuda") {
  TEST_CASE("unary math matches the CPU, special values included") {
    using Unary = Tensor (*)(const Tensor&);
    const std::pair<const char*, Unary> ops[] = {
#define GR_UNARY_OP(name, F, dtypes, node, domain) {#name, static_cast<Unary>(&N::name)},
#include <gradring/core/native/elementwise/math_ops.def>
    };
    for (ScalarType t : {kFloat32, kFloat64}) {
      Tensor x = with_specials(3001, t, 1);
      Tensor strided = N::transpose(N::reshape(with_specials(600, t, 2), {20, 30}), 0, 1);
      for (const auto& [name, op] : ops) {
        std::string what = std::string(name) + " " + std::string(dtype_name(t));
        check_parity(what, {x}, [op](const TensorList& a) { return op(a[0]); }, math_tol(t));
        check_parity(what + " strided", {strided}, [op](const TensorList& a) { return op(a[0]); }, math_tol(t));
      }
      check_parity("round(decimals=2)", {x}, [](const TensorList& a) { return N::round(a[0], 2); }, math_tol(t));
      check_parity("softplus(2, 5)", {x}, [](const TensorList& a) { return N::softplus(a[0], 2, 5); }, math_tol(t));
    }
    for (ScalarType t : {kInt64, kBool}) {
      Tensor x = random_tensor({500}, t, 3, -9, 9);
      check_parity("sign", {x}, [](const TensorList& a) { return N::sign(a[0]); }, kExact);
      check_parity("square", {x}, [](const TensorList& a) { return N::square(a[0]); }, kExact);
      check_parity("sin (in float32)", {x}, [](const TensorList& a) { return N::sin(a[0]); }, math_tol(kFloat32));
    }
  }

  TEST_CASE("binary and ternary math match the CPU with broadcasting") {
    for (ScalarType t : {kFloat32, kFloat64}) {
      Tensor a = N::reshape(with_specials(64, t, 4), {64, 1}), b = N::reshape(with_specials(33, t, 5), {1, 33});
      // Every two-input line of the list (atan2, hypot, logaddexp, xlogy, copysign, ...).
#define GR_BINARY_OP(name, F, dtypes, node, domain) \
  check_parity(#name, {a, b}, [](const TensorList& x) { return N::name(x[0], x[1]); }, math_tol(t));
#include <gradring/core/native/elementwise/math_ops.def>
      check_parity("fmod", {a, b}, [](const TensorList& x) { return N::fmod(x[0], x[1]); }, kExact);
      check_parity("remainder", {a, b}, [](const TensorList& x) { return N::remainder(x[0], x[1]); }, math_tol(t));
      Tensor w = random_tensor({64, 33}, t, 6, -0.5, 1.5);
      check_parity("lerp", {a, b, w}, [](const TensorList& x) { return N::lerp(x[0], x[1], x[2]); }, math_tol(t));
      check_parity("lerp scalar", {w, w}, [](const TensorList& x) { return N::lerp(x[0], N::mul(x[1], x[1]), 0.7); },
                   math_tol(t));
      check_parity("clamp tensors", {w, a, b}, [](const TensorList& x) { return N::clamp(x[0], std::optional<Tensor>(x[1]), std::optional<Tensor>(x[2])); },
                   kExact);
      check_parity("clamp numbers", {a}, [](const TensorList& x) { return N::clamp(x[0], Scalar(-1), Scalar(0.5)); }, kExact);
      check_parity("clamp min", {a}, [](const TensorList& x) { return N::clamp(x[0], Scalar(-1), std::nullopt); }, kExact);
      check_parity("clamp max", {a}, [](const TensorList& x) { return N::clamp(x[0], std::nullopt, Scalar(0.5)); }, kExact);
    }
    Tensor i = random_tensor({40, 1}, kInt64, 7, -50, 50), d = random_tensor({25}, kInt64, 8, 1, 7);
    check_parity("fmod int64", {i, d}, [](const TensorList& x) { return N::fmod(x[0], N::neg(x[1])); }, kExact);
    check_parity("remainder int64", {i, d}, [](const TensorList& x) { return N::remainder(x[0], N::neg(x[1])); }, kExact);
    check_parity("clamp int64", {i}, [](const TensorList& x) { return N::clamp(x[0], Scalar(-3), Scalar(20)); }, kExact);
  }

  TEST_CASE("logical, bitwise and classification ops match the CPU") {
    Tensor f = with_specials(1000, kFloat32, 9), i = random_tensor({1000}, kInt64, 10, -100, 100);
    Tensor b = N::to_dtype(random_tensor({1000}, kInt64, 11, 0, 2), kBool);
    check_parity("logical_and", {f, i}, [](const TensorList& x) { return N::logical_and(x[0], x[1]); }, kExact);
    check_parity("logical_or", {f, b}, [](const TensorList& x) { return N::logical_or(x[0], x[1]); }, kExact);
    check_parity("logical_xor", {i, b}, [](const TensorList& x) { return N::logical_xor(x[0], x[1]); }, kExact);
    check_parity("logical_not", {f}, [](const TensorList& x) { return N::logical_not(x[0]); }, kExact);
    check_parity("bitwise_and", {i, b}, [](const TensorList& x) { return N::bitwise_and(x[0], x[1]); }, kExact);
    check_parity("bitwise_or", {i, i}, [](const TensorList& x) { return N::bitwise_or(x[0], N::neg(x[1])); }, kExact);
    check_parity("bitwise_xor bool", {b, b}, [](const TensorList& x) { return N::bitwise_xor(x[0], N::logical_not(x[1])); }, kExact);
    check_parity("bitwise_not", {i}, [](const TensorList& x) { return N::bitwise_not(x[0]); }, kExact);
    check_parity("isnan", {f}, [](const TensorList& x) { return N::isnan(x[0]); }, kExact);
    check_parity("isinf", {f}, [](const TensorList& x) { return N::isinf(x[0]); }, kExact);
    check_parity("isfinite", {f}, [](const TensorList& x) { return N::isfinite(x[0]); }, kExact);
    check_parity("isclose", {f}, [](const TensorList& x) { return N::isclose(x[0], N::mul(x[0], N::wrapped_scalar(x[0], 1.000001)), 1e-6, 1e-7, true); },
                 kExact);
  }
}
