// CPU-vs-CUDA parity of softmax and log_softmax, forward and backward: both kernel shapes
// (a thread per row for short or many strided rows, a block per row for long ones), the last
// and a middle dim, odd sizes, non-contiguous inputs, and cross_entropy through autograd.
#include <gradring/core/native/activation/softmax.h>

#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

namespace {
// Sums in double on both sides, in different orders for the block kernel; exp/log differ by
// an ulp or two between the CUDA and C libraries.
// An ulp of log-sum-exp (up to about 16 here) shifts a whole log_softmax row: the absolute
// term covers it.
Tol fwd_tol(ScalarType t) { return t == kFloat32 ? Tol{1e-6, 2e-6} : Tol{1e-13, 4e-15}; }
Tol bwd_tol(ScalarType t) { return t == kFloat32 ? Tol{1e-5, 1e-6} : Tol{1e-12, 1e-14}; }

struct Case {
  std::vector<int64_t> shape;
  int64_t dim;
};
const Case kCases[] = {
    {{64, 10}, 1},       // MNIST logits: a thread per row
    {{7, 1000}, -1},     // long rows: a block per row
    {{3, 4099}, 1},      // odd length, more than a block of threads
    {{5, 300, 7}, 1},    // middle dim, few strided rows: a block per row, strided reads
    {{4, 33, 3000}, 1},  // middle dim, many strided rows: a thread per row, coalesced
    {{37}, 0},           // 1-D
    {{2, 0, 5}, 2},      // empty
};
}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("softmax and log_softmax forward and backward match the CPU") {
    for (const Case& c : kCases) {
      for (ScalarType t : {kFloat32, kFloat64}) {
        for (bool log : {false, true}) {
          std::ostringstream what;
          what << (log ? "log_softmax " : "softmax ") << dtype_name(t) << " shape " << IntArrayRef(c.shape) << " dim "
               << c.dim;
          Tensor x = random_tensor(c.shape, t, 500, -8, 8), g = random_tensor(c.shape, t, 501);
          check_parity(what.str() + " forward", {x}, [&](const TensorList& v) { return N::softmax(v[0], c.dim, log); },
                       fwd_tol(t));
          check_parity(what.str() + " backward", {x, g},
                       [&](const TensorList& v) {
                         return N::softmax_backward(v[1], N::softmax(v[0], c.dim, log), c.dim, log);
                       },
                       bwd_tol(t));
        }
      }
    }
  }

  TEST_CASE("softmax of a non-contiguous input and of extreme values") {
    // A transposed view is copied to [outer, R, inner] first.
    check_parity("softmax of a transposed view", {random_tensor({300, 20}, kFloat32, 510)},
                 [](const TensorList& v) { return N::softmax(N::transpose(v[0], 0, 1), 1, false); }, fwd_tol(kFloat32));
    // Large logits (the max shift keeps exp finite) and -inf entries (probability 0).
    Tensor x = random_tensor({4, 500}, kFloat32, 511, -1, 1) * 80.0;
    check_parity("log_softmax of large logits", {x}, [](const TensorList& v) { return N::softmax(v[0], 1, true); },
                 Tol{1e-6, 1e-5});
    const float inf = std::numeric_limits<float>::infinity();
    Tensor y = tensor(std::vector<float>{0.5f, -inf, 2.0f, -inf, 1.0f, 0.0f}, kFloat32).reshape({2, 3});
    check_parity("softmax with -inf", {y}, [](const TensorList& v) { return N::softmax(v[0], 1, false); },
                 fwd_tol(kFloat32));
  }

  TEST_CASE("cross_entropy forward and backward through autograd match the CPU") {
    Tensor logits = random_tensor({50, 13}, kFloat32, 520, -3, 3);
    Tensor target = random_tensor({50}, kInt64, 521, 0, 13);
    auto run = [&](Device dev) {
      Tensor x = logits.to(dev).detach().requires_grad_(true);
      Tensor loss = cross_entropy(x, target.to(dev));
      loss.backward();
      return TensorList{loss, x.grad()};
    };
    TensorList want = run(Device(kCPU)), got = run(cuda0());
    check_match(got[0], want[0], Tol{1e-6, 1e-6}, "cross_entropy loss");
    check_match(got[1], want[1], Tol{1e-5, 1e-7}, "cross_entropy grad");
  }
}
