// Runs every registered OpInfo (op_info.h): a float64 gradcheck of each entry.
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
