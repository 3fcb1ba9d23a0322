// CPU-vs-CUDA parity of max/min/argmax (max_stub): values and indices exactly, both kernel
// shapes, every arithmetic dtype, ties (first index wins), NaN (first NaN wins), and
// non-contiguous inputs.
#include <gradring/core/native/reduce/reduce.h>

#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

TEST_SUITE("cuda") {
  TEST_CASE("max and min with indices match the CPU exactly") {
    struct Case {
      std::vector<int64_t> shape;
      int64_t dim;
    };
    const Case cases[] = {
        {{1000003}, 0},     // one long row: a block per output
        {{5000, 7}, 1},     // short rows: a thread per output
        {{40, 3001}, -1},   // few long rows
        {{3, 2000, 5}, 1},  // middle dim, strided
        {{2, 100, 9000}, 1},
        {{64, 65}, 0},
        {{0, 4}, 1},        // no outputs
        {{}, 0},            // 0-d
    };
    for (const Case& c : cases) {
      for (ScalarType t : {kFloat32, kFloat64, kInt64, kUInt8}) {
        for (bool is_max : {true, false}) {
          std::ostringstream what;
          what << (is_max ? "max " : "min ") << dtype_name(t) << " shape " << IntArrayRef(c.shape) << " dim " << c.dim;
          // Few distinct values, so ties are everywhere and the first index must win.
          Tensor x = random_tensor(c.shape, t, 600, t == kUInt8 ? 0 : -3, 3);
          auto values = [&](const TensorList& v) { return (is_max ? N::max(v[0], c.dim) : N::min(v[0], c.dim)).first; };
          auto indices = [&](const TensorList& v) { return (is_max ? N::max(v[0], c.dim) : N::min(v[0], c.dim)).second; };
          check_parity(what.str() + " values", {x}, values, kExact);
          check_parity(what.str() + " indices", {x}, indices, kExact);
        }
      }
    }
  }

  TEST_CASE("max: NaN wins at its first position; argmax of all elements; a transposed view") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> v(5000, 1.0f);
    v[1234] = nan;
    v[4321] = nan;
    v[10] = 7.0f;
    Tensor x = tensor(v, kFloat32).reshape({2, 2500});
    check_parity("max with NaN, values", {x}, [](const TensorList& t) { return N::max(t[0], 1).first; }, kExact);
    check_parity("max with NaN, indices", {x}, [](const TensorList& t) { return N::max(t[0], 1).second; }, kExact);
    check_parity("argmax of all elements", {random_tensor({77, 131}, kFloat32, 610)},
                 [](const TensorList& t) { return N::argmax(t[0]); }, kExact);
    check_parity("max of all elements", {random_tensor({77, 131}, kFloat64, 611)},
                 [](const TensorList& t) { return N::max(t[0]); }, kExact);
    check_parity("min over a transposed view", {random_tensor({300, 70}, kFloat32, 612)},
                 [](const TensorList& t) { return N::min(N::transpose(t[0], 0, 1), 1).second; }, kExact);
  }
}
