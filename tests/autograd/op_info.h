// OpInfo: the registry of differentiable ops the tests check uniformly. Each op family
// registers its entries in its own test file (GR_OP_INFOS); test_op_info.cpp runs a float64
// gradcheck on every differentiable entry (and a gradgradcheck where double_backward is set),
// and test_ops_table.cpp generates docs/ops.md from the registry, so adding an op never edits
// a central list. Several entries may share a name (shapes, overloads).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "test_util.h"

namespace gr::testing {

struct OpInfo {
  std::string name;                               // libtorch's name: "sin", "scatter_add", "Tensor::index"
  std::function<TensorList()> inputs;             // float64; those that require grad are checked
  std::function<Tensor(const TensorList&)> fn;    // integer arguments and index tensors live in the closure
  bool double_backward = true;                    // the backward is differentiable (Note [Double backward])
  autograd::GradcheckOptions tol = {};
  bool differentiable = true;                     // false: listed in docs/ops.md, never gradchecked
};

std::vector<OpInfo>& op_infos();

struct OpInfoRegistrar {
  explicit OpInfoRegistrar(void (*add)(std::vector<OpInfo>&)) { add(op_infos()); }
};

// A float64 leaf of normal values from its own seeded generator.
inline Tensor op_input(std::vector<int64_t> shape, uint64_t seed) {
  Generator g(seed);
  return randn(shape, TensorOptions(kFloat64), &g).requires_grad_(true);
}

}  // namespace gr::testing

#define GR_OP_INFOS_IMPL2(fn, line) \
  static void fn(std::vector<::gr::testing::OpInfo>& ops); \
  static ::gr::testing::OpInfoRegistrar gr_op_info_registrar_##line(&fn); \
  static void fn(std::vector<::gr::testing::OpInfo>& ops)
#define GR_OP_INFOS_IMPL(fn, line) GR_OP_INFOS_IMPL2(fn, line)
// GR_OP_INFOS(add_trig_ops) { ops.push_back({"sin", [] { return TensorList{op_input({3, 4}, 1)}; },
//                                           [](const TensorList& t) { return sin(t[0]); }}); }
#define GR_OP_INFOS(fn) GR_OP_INFOS_IMPL(fn, __LINE__)
