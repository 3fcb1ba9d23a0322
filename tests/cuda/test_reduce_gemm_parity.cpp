// CPU-vs-CUDA parity of sum (both kernel shapes: a thread per output and a block per
// output), mean, the cuBLAS GEMM behind mm/bmm/matmul (transposed and copied operands, K = 0),
// and one forward + backward pass of a small network through autograd.
#include <gradring/core/native/gemm/gemm.h>
#include <gradring/core/native/reduce/reduce.h>

#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

namespace {
Tol sum_tol(ScalarType t) { return t == kFloat32 ? Tol{1e-5, 1e-5} : t == kFloat64 ? Tol{1e-12, 1e-12} : kExact; }
// GEMM: cuBLAS and Eigen order the K products differently.
Tol gemm_tol(ScalarType t) { return t == kFloat32 ? Tol{1e-4, 1e-4} : Tol{1e-12, 1e-12}; }
}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("sum matches the CPU for every reduction layout") {
    struct Case {
      std::vector<int64_t> shape;
      std::vector<int64_t> dims;
      bool keepdim;
    };
    const Case cases[] = {
        {{1000003}, {}, false},          // one long row: a block per output
        {{5000, 7}, {1}, false},         // many short rows: a thread per output
        {{40, 3000}, {-1}, true},        // few long rows
        {{3, 2000, 5}, {1}, false},      // middle dim, small inner: a block per strided output
        {{2, 100, 9000}, {1}, false},    // middle dim, many outputs: a thread per output, coalesced
        {{6, 7, 8}, {0, 2}, false},      // non-adjacent dims: permuted and copied first
        {{64, 65}, {0}, true},
        {{4, 0, 3}, {1}, false},         // an empty reduction gives zeros
        {{}, {}, false},                 // 0-d
    };
    for (const Case& c : cases) {
      for (ScalarType t : {kFloat32, kFloat64, kInt64, kUInt8, kBool}) {
        std::ostringstream what;
        what << "sum " << dtype_name(t) << " shape " << IntArrayRef(c.shape) << " dims " << IntArrayRef(c.dims);
        Tensor x = random_tensor(c.shape, t, 200, t == kUInt8 || t == kBool ? 0 : -10, 10);
        check_parity(what.str(), {x}, [&](const TensorList& v) { return N::sum(v[0], c.dims, c.keepdim); }, sum_tol(t));
      }
    }
    check_parity("mean float32", {random_tensor({33, 44}, kFloat32, 201)},
                 [](const TensorList& v) { return N::mean(v[0], {0}); }, sum_tol(kFloat32));
  }

  TEST_CASE("mm, bmm and matmul through cuBLAS match the CPU") {
    for (ScalarType t : {kFloat32, kFloat64}) {
      const std::string dt(dtype_name(t));
      Tensor a = random_tensor({64, 96}, t, 300), b = random_tensor({96, 80}, t, 301);
      check_parity("mm " + dt, {a, b}, [](const TensorList& x) { return N::mm(x[0], x[1]); }, gemm_tol(t));
      // Transposed views reach cuBLAS as transpose flags; a sliced view is copied first.
      Tensor at = random_tensor({96, 64}, t, 302), bt = random_tensor({80, 96}, t, 303);
      check_parity("mm a^T b^T " + dt, {at, bt},
                   [](const TensorList& x) { return N::mm(N::transpose(x[0], 0, 1), N::transpose(x[1], 0, 1)); },
                   gemm_tol(t));
      check_parity("mm a^T b " + dt, {at, b},
                   [](const TensorList& x) { return N::mm(N::transpose(x[0], 0, 1), x[1]); }, gemm_tol(t));
      check_parity("mm a b^T, odd sizes " + dt, {random_tensor({1, 33}, t, 304), random_tensor({17, 33}, t, 305)},
                   [](const TensorList& x) { return N::mm(x[0], N::transpose(x[1], 0, 1)); }, gemm_tol(t));
      check_parity("mm of strided slices " + dt, {random_tensor({30, 40}, t, 306), random_tensor({40, 50}, t, 307)},
                   [](const TensorList& x) { return N::mm(N::slice(x[0], 1, 0, 40, 2), N::slice(x[1], 0, 0, 40, 2)); },
                   gemm_tol(t));
      check_parity("mm K = 0 " + dt, {random_tensor({5, 0}, t, 308), random_tensor({0, 6}, t, 309)},
                   [](const TensorList& x) { return N::mm(x[0], x[1]); }, kExact);
      check_parity("bmm " + dt, {random_tensor({3, 20, 30}, t, 310), random_tensor({3, 30, 10}, t, 311)},
                   [](const TensorList& x) { return N::bmm(x[0], x[1]); }, gemm_tol(t));
      check_parity("matmul broadcast batch " + dt, {random_tensor({2, 1, 8, 16}, t, 312), random_tensor({3, 16, 4}, t, 313)},
                   [](const TensorList& x) { return N::matmul(x[0], x[1]); }, gemm_tol(t));
      check_parity("matmul vector " + dt, {random_tensor({16}, t, 314), random_tensor({16, 9}, t, 315)},
                   [](const TensorList& x) { return N::matmul(x[0], x[1]); }, gemm_tol(t));
    }
  }

  TEST_CASE("a forward and backward pass on CUDA matches the CPU") {
    // loss = sum(tanh(relu(x W^T + b) * 0.5)); gradients of W and b on both devices.
    Tensor x = random_tensor({32, 20}, kFloat32, 400), w = random_tensor({10, 20}, kFloat32, 401, -0.5, 0.5);
    Tensor b = random_tensor({10}, kFloat32, 402);
    auto run = [&](Device dev) {
      Tensor xd = x.to(dev);
      Tensor wd = w.to(dev).detach().requires_grad_(true), bd = b.to(dev).detach().requires_grad_(true);
      Tensor loss = tanh(relu(linear(xd, wd, bd)) * 0.5).sum();
      loss.backward();
      return TensorList{loss, wd.grad(), bd.grad()};
    };
    TensorList want = run(Device(kCPU)), got = run(cuda0());
    check_match(got[0], want[0], Tol{1e-5, 1e-5}, "loss");
    check_match(got[1], want[1], Tol{1e-4, 1e-5}, "dloss/dW");
    check_match(got[2], want[2], Tol{1e-4, 1e-5}, "dloss/db");
  }
}
