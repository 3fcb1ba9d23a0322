// CPU-vs-CUDA parity of dropout: the same generator state gives bit-identical masks and
// outputs on both devices (Philox, subsequence 0, one block per 4 elements), for odd sizes,
// p = 0 and p = 1, float32 and float64, non-contiguous inputs; and the backward product.
#include <gradring/core/native/activation/dropout.h>

#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

TEST_SUITE("cuda") {
  TEST_CASE("dropout masks and outputs are bit-identical to the CPU's") {
    for (ScalarType t : {kFloat32, kFloat64}) {
      for (int64_t n : {1, 3, 4, 1001, 1 << 20}) {
        for (double p : {0.0, 0.1, 0.5, 1.0}) {
          std::ostringstream what;
          what << "dropout " << dtype_name(t) << " n " << n << " p " << p;
          Tensor x = random_tensor({n}, t, 1000);
          auto run = [&](const Tensor& in, bool mask) {
            Generator g(4242);
            g.reserve(7);  // a non-zero offset
            auto [out, m] = N::dropout(in, p, &g);
            return mask ? m : out;
          };
          check_parity(what.str() + " output", {x}, [&](const TensorList& v) { return run(v[0], false); }, kExact);
          check_parity(what.str() + " mask", {x}, [&](const TensorList& v) { return run(v[0], true); }, kExact);
          check_parity(what.str() + " backward", {x, random_tensor({n}, t, 1001)},
                       [&](const TensorList& v) { return N::dropout_backward(v[1], run(v[0], true), N::dropout_scale(p)); },
                       kExact);
        }
      }
    }
    check_parity("dropout of a transposed view", {random_tensor({37, 29}, kFloat32, 1002)},
                 [](const TensorList& v) {
                   Generator g(9);
                   return N::dropout(N::transpose(v[0], 0, 1), 0.3, &g).first;
                 },
                 kExact);
  }

  TEST_CASE("dropout through autograd: same generator, same result on both devices") {
    Tensor x = random_tensor({16, 33}, kFloat32, 1010);
    auto run = [&](Device dev) {
      Generator g(77);
      Tensor xd = x.to(dev).detach().requires_grad_(true);
      Tensor y = dropout(xd, 0.4, true, &g);
      (y * y).sum().backward();
      return TensorList{y, xd.grad()};
    };
    TensorList want = run(Device(kCPU)), got = run(cuda0());
    check_match(got[0], want[0], kExact, "dropout output");
    check_match(got[1], want[1], kExact, "dropout input gradient");
  }
}
