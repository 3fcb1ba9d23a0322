// gpu_selftest's op checks: each family registers its checks in its own file of this folder
// (GR_SELFTEST_CHECKS), so adding an op family never edits a central list. A check runs f on
// CPU inputs and on their CUDA copies; every output must agree within the check's tolerance.
#pragma once

#include <functional>
#include <gradring/gradring.h>
#include <string>
#include <vector>

#include "common/tolerance.h"

namespace gr::selftest {

// |cuda - cpu| <= atol + rtol * |cpu| per element: Note [Comparison tolerances].
using apps::Tol;
// The usual tolerances: float32 element-wise, float32 reductions (another summation order),
// float64, and bit-exact (the same integer arithmetic or the same random stream). Checks with
// long reductions whose results come near zero take apps::f32_sum_tol(longest reduction).
inline constexpr Tol kF32{1e-5, 1e-6}, kF32Reduce{1e-4, 1e-5}, kF64{1e-12, 1e-13}, kExact{0, 0};

struct Check {
  std::string family, name;
  std::function<TensorList()> inputs;
  std::function<TensorList(const TensorList&)> f;
  Tol tol;
};

// Every registered check, in the order of the families' names (then as registered).
std::vector<Check> all_checks();

// Registers a family's checks at static-initialisation time (GR_SELFTEST_CHECKS).
struct ChecksRegistrar {
  explicit ChecksRegistrar(void (*add)(std::vector<Check>&));
};

// A float tensor of normal values from its own seeded generator.
Tensor randn_(IntArrayRef shape, uint64_t seed, ScalarType dtype = kFloat32);
// The same, as a leaf that requires grad.
Tensor grad_input(IntArrayRef shape, uint64_t seed, ScalarType dtype = kFloat32);
// Forward value plus the gradients of every input that requires grad, backpropagating a
// seeded random upstream gradient through f.
std::function<TensorList(const TensorList&)> with_grads(std::function<Tensor(const TensorList&)> f);

}  // namespace gr::selftest

#define GR_SELFTEST_CHECKS_IMPL2(fn, line) \
  static void fn(std::vector<::gr::selftest::Check>& c); \
  static ::gr::selftest::ChecksRegistrar gr_selftest_registrar_##line(&fn); \
  static void fn(std::vector<::gr::selftest::Check>& c)
#define GR_SELFTEST_CHECKS_IMPL(fn, line) GR_SELFTEST_CHECKS_IMPL2(fn, line)
// GR_SELFTEST_CHECKS(add_my_checks) { c.push_back({...}); }
#define GR_SELFTEST_CHECKS(fn) GR_SELFTEST_CHECKS_IMPL(fn, __LINE__)
