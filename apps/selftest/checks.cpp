// The registry of gpu_selftest's op checks and the helpers the families share.
#include "selftest/checks.h"

#include <algorithm>

namespace gr::selftest {

namespace {
std::vector<void (*)(std::vector<Check>&)>& families() {
  static std::vector<void (*)(std::vector<Check>&)> list;
  return list;
}
}  // namespace

ChecksRegistrar::ChecksRegistrar(void (*add)(std::vector<Check>&)) { families().push_back(add); }

std::vector<Check> all_checks() {
  std::vector<Check> c;
  for (auto add : families()) add(c);
  // Static initialisation order across files is unspecified: sort for a stable table.
  std::stable_sort(c.begin(), c.end(), [](const Check& a, const Check& b) { return a.family < b.family; });
  return c;
}

Tensor randn_(IntArrayRef shape, uint64_t seed, ScalarType dtype) {
  Generator g(seed);
  return randn(shape, TensorOptions(dtype), &g);
}

Tensor grad_input(IntArrayRef shape, uint64_t seed, ScalarType dtype) {
  return randn_(shape, seed, dtype).requires_grad_(true);
}

std::function<TensorList(const TensorList&)> with_grads(std::function<Tensor(const TensorList&)> f) {
  return [f](const TensorList& in) {
    Tensor y = f(in);
    Tensor gy = randn_(y.sizes(), 99, y.scalar_type()).to(y.device());
    y.backward(gy);
    TensorList out{y.detach()};
    for (const Tensor& t : in)
      if (t.requires_grad()) out.push_back(t.grad());
    return out;
  };
}

}  // namespace gr::selftest
