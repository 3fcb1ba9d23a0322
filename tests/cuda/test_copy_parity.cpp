// CUDA copies: CPU <-> CUDA round trips of every dtype, dtype conversion on the device
// against the CPU's, strided and broadcast copies, fill, clone, and Tensor::to.
#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

namespace {
const ScalarType kAllTypes[] = {kFloat32, kFloat64, kInt64, kUInt8, kBool, kBFloat16, kFloat16};
}

TEST_SUITE("cuda") {
  TEST_CASE("CPU -> CUDA -> CPU round trips are exact for every dtype") {
    for (ScalarType t : kAllTypes) {
      INFO(dtype_name(t));
      Tensor x = random_tensor({123, 7}, t, 100, 0, 200);
      Tensor d = x.to(Device("cuda"));
      CHECK(d.is_cuda());
      CHECK(d.device() == cuda0());
      CHECK(d.scalar_type() == t);
      Tensor back = d.to(Device("cpu"));
      CHECK(back.is_cpu());
      CHECK(back.equal(x));
    }
    Tensor s = scalar_tensor(42.5, kFloat64).to(Device("cuda"));
    CHECK(s.dim() == 0);
    CHECK(s.item<double>() == 42.5);
    Tensor e = zeros({0, 3}).to(Device("cuda"));
    CHECK(e.is_cuda());
    CHECK(e.cpu().numel() == 0);
  }

  TEST_CASE("dtype conversion on the device matches the CPU for every pair") {
    // Non-negative values in range for every dtype (float -> uint8 of a negative value is
    // undefined in C++); signed values for the pairs that allow them.
    for (ScalarType from : kAllTypes) {
      Tensor pos = random_tensor({300}, from, 110, 0, 250);
      Tensor sgn = random_tensor({300}, from, 111, -120, 120);
      for (ScalarType to : kAllTypes) {
        std::string what = std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to));
        check_parity(what, {pos}, [to](const TensorList& x) { return N::to_dtype(x[0], to); }, kExact);
        if (to != kUInt8 && from != kUInt8)
          check_parity(what + " signed", {sgn}, [to](const TensorList& x) { return N::to_dtype(x[0], to); }, kExact);
      }
    }
  }

  TEST_CASE("strided and broadcast copies on the device") {
    Tensor src = random_tensor({20, 30}, kFloat32, 120);
    check_parity("copy_ into a transposed view", {src, zeros({30, 20})},
                 [](const TensorList& x) {
                   Tensor dst = N::clone(x[1]);
                   N::copy_(N::transpose(dst, 0, 1), x[0]);
                   return dst;
                 },
                 kExact);
    check_parity("copy_ broadcast row, converting", {random_tensor({30}, kFloat64, 121), zeros({20, 30})},
                 [](const TensorList& x) {
                   Tensor dst = N::clone(x[1]);
                   N::copy_(dst, x[0]);
                   return dst;
                 },
                 kExact);
    check_parity("contiguous of a sliced, permuted view", {random_tensor({4, 5, 6}, kInt64, 122, -99, 99)},
                 [](const TensorList& x) { return N::contiguous(N::permute(N::slice(x[0], 2, 1, 6, 2), {2, 0, 1})); },
                 kExact);
    check_parity("clone (dense device-to-device copy)", {src}, [](const TensorList& x) { return N::clone(x[0]); },
                 kExact);
    // A copy between overlapping views of one storage reads from a snapshot.
    check_parity("overlapping self copy", {random_tensor({10}, kFloat32, 123)},
                 [](const TensorList& x) {
                   Tensor t = N::clone(x[0]);
                   N::copy_(N::slice(t, 0, 1, 10), N::slice(t, 0, 0, 9));
                   return t;
                 },
                 kExact);
  }

  TEST_CASE("fill_ on contiguous and strided tensors") {
    for (ScalarType t : kAllTypes) {
      check_parity("fill " + std::string(dtype_name(t)), {zeros({7, 9}, t)},
                   [](const TensorList& x) {
                     Tensor y = N::clone(x[0]);
                     N::fill_(N::slice(y, 1, 0, 9, 2), 3);
                     N::fill_(N::select(y, 0, 6), 1);
                     return y;
                   },
                   kExact);
    }
    Tensor f = full({1000}, -1.5, TensorOptions(kFloat32).device(Device("cuda")));
    CHECK(f.is_cuda());
    CHECK(f.cpu().equal(full({1000}, -1.5)));
  }
}
