// reachable_leaves: the leaves a backward from some outputs would reach, without running it.
#include <algorithm>

#include "autograd/graph_walk.h"
#include "test_util.h"

using namespace gr;
using gr::test::f64_grad;

namespace {

bool contains(const TensorList& list, const Tensor& t) {
  return std::any_of(list.begin(), list.end(), [&](const Tensor& x) { return x.unsafe_impl() == t.unsafe_impl(); });
}

}  // namespace

TEST_CASE("reachable_leaves finds the leaves behind the outputs, each once, and no other") {
  Tensor a = tensor({1.0, 2.0}, f64_grad());
  Tensor b = tensor({3.0, 4.0}, f64_grad());
  Tensor unused = tensor({5.0}, f64_grad());
  Tensor constant = tensor({6.0, 7.0});  // needs no grad
  Tensor y = (a * b + a * constant).sum();  // a reached along two paths
  TensorList leaves = autograd::reachable_leaves({y});
  CHECK(leaves.size() == 2);
  CHECK(contains(leaves, a));
  CHECK(contains(leaves, b));
  CHECK_FALSE(contains(leaves, unused));
  CHECK_FALSE(contains(leaves, constant));
}

TEST_CASE("reachable_leaves counts an output that is a leaf and skips outputs without grad") {
  Tensor w = tensor({1.0}, f64_grad());
  Tensor z = tensor({2.0}, f64_grad());
  TensorList leaves = autograd::reachable_leaves({w, Tensor(), tensor({3.0}), z * 2.0, w * 3.0});
  CHECK(leaves.size() == 2);
  CHECK(contains(leaves, w));
  CHECK(contains(leaves, z));
  CHECK(autograd::reachable_leaves({}).empty());
  CHECK(autograd::reachable_leaves({tensor({1.0}) * 2.0}).empty());
}

TEST_CASE("reachable_leaves does not run backward or touch gradients") {
  Tensor w = tensor({1.0, 2.0}, f64_grad());
  Tensor y = (w * w).sum();
  int hooks = 0;
  w.register_post_accumulate_grad_hook([&](Tensor&) { ++hooks; });
  CHECK(autograd::reachable_leaves({y}).size() == 1);
  CHECK(hooks == 0);
  CHECK_FALSE(w.grad().defined());
  y.backward();  // the graph is intact
  CHECK(hooks == 1);
}
