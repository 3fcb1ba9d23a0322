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
