// Runs every registered OpInfo (op_info.h): a float64 gradcheck of each entry, and a
// gradgradcheck of each entry whose backward is differentiable.
#include "op_info.h"

namespace gr::testing {

std::vector<OpInfo>& op_infos() {
  static std::vector<OpInfo> list;
  return list;
}

}  // namespace gr::testing

using namespace gr;
using gr::testing::op_infos;

TEST_CASE("OpInfo: every registered op passes a float64 gradcheck") {
  for (const auto& op : op_infos()) {
    if (!op.differentiable) continue;
    INFO("op ", op.name);
    CHECK(autograd::gradcheck(op.fn, op.inputs(), op.tol));
  }
}

TEST_CASE("OpInfo: every op with double_backward passes a float64 gradgradcheck") {
  int checked = 0;
  for (const auto& op : op_infos()) {
    if (!op.differentiable || !op.double_backward) continue;
    INFO("op ", op.name);
    CHECK(autograd::gradgradcheck(op.fn, op.inputs(), {}, op.tol));
    ++checked;
  }
  CHECK(checked > 0);
}

// Note [Live objects]: an op whose node owned its own output (or anything else that reaches
// the node back) would keep its whole graph alive after the tensors are gone.
TEST_CASE("OpInfo: no op leaves a reference cycle (live objects back to their count after backward twice)") {
  int checked = 0;
  for (const auto& op : op_infos()) {
    if (!op.differentiable) continue;
    INFO("op ", op.name);
    auto forward_and_backward = [&op] {
      TensorList in = op.inputs();
      Tensor out = op.fn(in);
      TensorList wrt;
      for (const Tensor& t : in)
        if (t.defined() && t.requires_grad()) wrt.push_back(t);
      Generator gen(3);
      Tensor v = rand(out.sizes(), out.options(), &gen);
      TensorList grads = autograd::grad({out}, wrt, {v}, std::nullopt, /*create_graph=*/op.double_backward, true);
      Tensor second;
      for (const Tensor& g : grads)
        if (g.defined() && g.requires_grad()) second = second.defined() ? second + (g * g).sum() : (g * g).sum();
      if (second.defined()) second.backward();  // into the inputs' .grad
    };
    forward_and_backward();  // anything an op makes once per process
    const LiveObjects before = live_objects();
    forward_and_backward();
    CHECK(live_objects() == before);
    ++checked;
  }
  CHECK(checked > 100);
}
