// CPU-vs-CUDA parity of the random fills: the same generator state gives bit-identical
// uniform and integer tensors on both devices; normal ones agree to an ulp in float32 (each
// device's log/sin/cos in double differ in the last bits; see cuda_kernels/random.cu).
#include <gradring/core/native/random/random.h>

#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

namespace {
// A fill of `sizes` on `dev` from a fresh generator at a non-zero offset.
Tensor fill(Device dev, N::RandomKind kind, ScalarType t, int64_t n, double a, double b) {
  Generator g(20240607);
  g.reserve(3);
  Tensor out = empty({n}, TensorOptions(t).device(dev));
  N::random_(out, kind, a, b, &g);
  return out;
}
}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("uniform and integer fills are bit-identical to the CPU's") {
    for (int64_t n : {1, 5, 4097, 1 << 20}) {
      for (ScalarType t : {kFloat32, kFloat64}) {
        std::ostringstream what;
        what << "uniform " << dtype_name(t) << " n " << n;
        check_match(fill(cuda0(), N::RandomKind::Uniform, t, n, -3, 5), fill(Device(kCPU), N::RandomKind::Uniform, t, n, -3, 5),
                    kExact, what.str());
      }
      for (ScalarType t : {kInt64, kUInt8, kFloat32}) {
        std::ostringstream what;
        what << "integer " << dtype_name(t) << " n " << n;
        check_match(fill(cuda0(), N::RandomKind::Integer, t, n, -7, 200), fill(Device(kCPU), N::RandomKind::Integer, t, n, -7, 200),
                    kExact, what.str());
      }
    }
  }

  TEST_CASE("normal fills agree with the CPU's to rounding") {
    for (int64_t n : {1, 7, 1 << 20}) {
      check_match(fill(cuda0(), N::RandomKind::Normal, kFloat32, n, 0.5, 2), fill(Device(kCPU), N::RandomKind::Normal, kFloat32, n, 0.5, 2),
                  Tol{2.5e-7, 1e-12}, "normal float32 n " + std::to_string(n));
      check_match(fill(cuda0(), N::RandomKind::Normal, kFloat64, n, 0.5, 2), fill(Device(kCPU), N::RandomKind::Normal, kFloat64, n, 0.5, 2),
                  Tol{1e-14, 1e-14}, "normal float64 n " + std::to_string(n));
    }
  }

  TEST_CASE("randn and rand on CUDA through the factories follow the generator") {
    Generator a(5), b(5);
    check_match(rand({1000}, TensorOptions(kFloat32).device(cuda0()), &a), rand({1000}, kFloat32, &b), kExact, "rand");
    check_match(randint(0, 10, {999}, TensorOptions(kInt64).device(cuda0()), &a), randint(0, 10, {999}, kInt64, &b), kExact,
                "randint after rand");
  }
}
