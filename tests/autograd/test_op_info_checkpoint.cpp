// Every registered OpInfo op (op_info.h) under gr::utils::checkpoint and under saved-tensor
// hooks that pack copies: the first and the second derivatives equal those of the plain op,
// bitwise. So every op saves through SavedTensor in a way a rerun reproduces, and unpacked
// tensors keep their autograd identity (Note [Saved-tensor hooks]).
#include <any>

#include "op_info.h"

using namespace gr;
using gr::testing::op_infos;
using gr::test::max_abs_diff;

namespace {

enum class How { plain, checkpoint, copy_hooks };

// The inputs' gradients of a weighted sum of the op's output, then (second_order) the
// inputs' gradients of the sum of those gradients' squares.
TensorList derivatives(const testing::OpInfo& op, How how, bool second_order) {
  const TensorList inputs = op.inputs();
  manual_seed(17);  // ops that draw random numbers draw the same ones
  Tensor out;
  if (how == How::checkpoint) {
    out = utils::checkpoint([&op](const TensorList& in) { return op.fn(in); }, inputs);
  } else if (how == How::copy_hooks) {
    autograd::graph::SavedTensorsHooks hooks(
        [](const Tensor& t) {
          NoGradGuard no_grad;
          return std::any(t.clone());
        },
        [](const std::any& a) { return std::any_cast<Tensor>(a); });
    out = op.fn(inputs);
  } else {
    out = op.fn(inputs);
  }
  Generator g(3);
  const Tensor weights = randn(out.sizes(), TensorOptions(out.scalar_type()), &g);
  TensorList wanting;
  for (const Tensor& t : inputs)
    if (t.requires_grad()) wanting.push_back(t);
  TensorList grads = autograd::grad({(out * weights).sum()}, wanting, {}, std::nullopt, second_order, true);
  if (!second_order) return grads;
  Tensor total;
  for (const Tensor& gi : grads)
    if (gi.defined() && gi.requires_grad()) total = total.defined() ? total + (gi * gi).sum() : (gi * gi).sum();
  if (!total.defined()) return grads;
  TensorList second = autograd::grad({total}, wanting, {}, std::nullopt, false, true);
  for (const Tensor& gi : grads) second.push_back(gi.detach());
  return second;
}

void check_same(const TensorList& got, const TensorList& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("result ", i);
    REQUIRE(got[i].defined() == want[i].defined());
    if (want[i].defined()) CHECK(max_abs_diff(got[i], want[i]) == 0.0);
  }
}

}  // namespace

TEST_CASE("OpInfo: every op's gradients under checkpoint and under copying saved-tensor hooks equal the plain ones, bitwise") {
  int checked = 0;
  for (const auto& op : op_infos()) {
    if (!op.differentiable) continue;
    INFO("op ", op.name);
    const TensorList want = derivatives(op, How::plain, false);
    check_same(derivatives(op, How::checkpoint, false), want);
    check_same(derivatives(op, How::copy_hooks, false), want);
    ++checked;
  }
  CHECK(checked > 100);
}

TEST_CASE("OpInfo: every op with double_backward has the same second derivatives under checkpoint and hooks, bitwise") {
  int checked = 0;
  for (const auto& op : op_infos()) {
    if (!op.differentiable || !op.double_backward) continue;
    INFO("op ", op.name);
    const TensorList want = derivatives(op, How::plain, true);
    check_same(derivatives(op, How::checkpoint, true), want);
    check_same(derivatives(op, How::copy_hooks, true), want);
    ++checked;
  }
  CHECK(checked > 50);
}
