// What the DDP and ZeRO tests share (test_ddp.cpp, test_zero.cpp, mpi/mpi_check.cpp): a
// three-layer model, the global batches every rank knows, and parameter comparisons that
// name the parameter that differs.
#pragma once

#include <string>
#include <vector>

#include <gradring/gradring.h>

#include "compare.h"  // max_abs_diff, max_rel_diff

namespace gr::test {

// fc1 (6 -> h1), fc2 (h1 -> h2), fc3 (h2 -> 3), ReLUs between. Tests derive default-
// constructible models of their own sizes from it (GR_MODULE needs a name per model).
struct ThreeLayerImpl : nn::Module {
  ThreeLayerImpl(int64_t h1, int64_t h2)
      : fc1(register_module("fc1", nn::Linear(6, h1))),
        fc2(register_module("fc2", nn::Linear(h1, h2))),
        fc3(register_module("fc3", nn::Linear(h2, 3))) {}
  Tensor forward(const Tensor& x) { return fc3(relu(fc2(relu(fc1(x))))); }
  nn::Linear fc1, fc2, fc3;
};

// `batches` global batches of `global` samples (x: [global, 6], y: [global, 3]); rank r of
// a world of N takes rows [r * global / N, (r + 1) * global / N) of each.
struct Data {
  std::vector<Tensor> x, y;
};
inline Data make_data(int batches, int64_t global, ScalarType dtype = kFloat64, uint64_t seed = 42) {
  Generator g(seed);
  Data d;
  for (int s = 0; s < batches; ++s) {
    d.x.push_back(randn({global, 6}, TensorOptions(dtype), &g));
    d.y.push_back(randn({global, 3}, TensorOptions(dtype), &g));
  }
  return d;
}

// Fails naming the first parameter of `got` that differs from `want`'s by more than `tol`
// (absolute, or relative to the largest magnitude of `want`'s parameter).
inline void require_same_params(nn::Module& got, nn::Module& want, double tol, const std::string& what,
                                bool relative = false) {
  auto g = got.named_parameters(), w = want.named_parameters();
  GR_CHECK(g.size() == w.size(), what, ": parameter count differs");
  for (const auto& [name, p] : w) {
    GR_CHECK(g.find(name) != nullptr, what, ": no parameter ", name);
    const double d = relative ? max_rel_diff(*g.find(name), p) : max_abs_diff(*g.find(name), p);
    GR_CHECK(d <= tol, what, ": parameter ", name, " differs by ", d, " (tolerance ", tol, ")");
  }
}

}  // namespace gr::test
