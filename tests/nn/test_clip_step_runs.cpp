// gr::nn::utils' clip_grad_norm_ in two halves (get_total_norm, clip_grads_with_norm_: no host
// synchronisation on a GPU) against the whole, and the runs of parameters an optimizer hands to
// a list step (nn/optim/step_runs.h), on the CPU.
#include <gradring/core/optimizer_functors.h>

#include "nn/optim/step_runs.h"
#include "test_util.h"

using namespace gr;

TEST_CASE("get_total_norm and clip_grads_with_norm_ equal clip_grad_norm_") {
  auto params = [] {
    Generator g(5);
    std::vector<Tensor> ps;
    for (int64_t n : {10, 3000, 1}) {
      Tensor p = randn({n}, TensorOptions(kFloat32), &g).requires_grad_(true);
      p.mutable_grad() = randn({n}, TensorOptions(kFloat32), &g) * 10.0;
      ps.push_back(p);
    }
    return ps;
  };
  std::vector<Tensor> a = params(), b = params();
  const double total = nn::utils::clip_grad_norm_(a, 0.5);
  std::vector<Tensor> gb;
  for (const Tensor& p : b) gb.push_back(p.grad());
  const Tensor t = nn::utils::get_total_norm(gb);
  CHECK(t.item<double>() == total);
  nn::utils::clip_grads_with_norm_(b, 0.5, t);
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].grad().equal(b[i].grad()));
  std::vector<Tensor> inf{full({2}, INFINITY)};
  CHECK_THROWS_AS(nn::utils::get_total_norm(inf, 2.0, true), gr::Error);
}

TEST_CASE("StepRuns: one list step per run of equal functors on one device and dtype; a repeated parameter starts a run") {
  static std::vector<size_t> run_sizes;
  run_sizes.clear();
  using F = functors::SgdStep<double>;
  auto record = [](const std::vector<native::StepOperands>& ops, const F& f) {
    run_sizes.push_back(ops.size());
    native::sgd_steps(ops, f);
  };
  Tensor a = randn({4}), b = randn({5}), c = randn({6}, kFloat64), d = randn({3});
  for (Tensor* t : {&a, &b, &c, &d}) t->mutable_grad() = ones_like(*t);
  const Tensor a0 = a.clone(), d0 = d.clone();
  const F f{0.1, 0, 0, 0, false, false}, g{0.2, 0, 0, 0, false, false};
  optim::StepRuns<F> runs(+record);
  runs.add(f, {a, a.grad(), Tensor()});
  runs.add(f, {b, b.grad(), Tensor()});  // joins
  runs.add(f, {c, c.grad(), Tensor()});  // float64: a new run
  runs.add(g, {d, d.grad(), Tensor()});  // another functor: a new run
  runs.add(g, {d, d.grad(), Tensor()});  // d again: must see its first update
  runs.finish();
  CHECK(run_sizes == std::vector<size_t>{2, 1, 1, 1});
  // The updates are the single-parameter ones: p - lr * grad (d twice, one after the other).
  CHECK(a.allclose(a0 - 0.1, 1e-6, 1e-6));
  CHECK(d.allclose(d0 - 0.4, 1e-6, 1e-6));
}

