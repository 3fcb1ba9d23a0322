// CPU-vs-CUDA parity of the strided-batched GEMM (gemm_batched_stub: one cuBLAS
// strided-batched call) directly, with shared operands (batch stride 0), padded leading dims
// and beta != 0, and through bmm / matmul: transposed batch operands, a matrix broadcast over
// a batch, broadcast batch dims, many tiny products, and K = 0.
#include <gradring/core/native/gemm/gemm.h>

#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

namespace {
Tol gemm_tol(ScalarType t) { return t == kFloat32 ? Tol{1e-4, 1e-4} : Tol{1e-12, 1e-12}; }
}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("gemm_batched_stub on cuBLAS matches the CPU: transposes, shared operands, beta") {
    for (ScalarType t : {kFloat32, kFloat64}) {
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (int shared = 0; shared < 3; ++shared) {  // 0: none, 1: A shared, 2: B shared
            const int64_t M = 13, Nn = 9, K = 21, batch = 5, pad = 2;
            const int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : Nn) + pad, ldc = Nn + pad;
            const int64_t a_elems = (ta ? K : M) * lda, b_elems = (tb ? Nn : K) * ldb, sc = M * ldc + 3;
            const int64_t sa = shared == 1 ? 0 : a_elems, sb = shared == 2 ? 0 : b_elems;
            Tensor A = random_tensor({(shared == 1 ? 1 : batch) * a_elems}, t, 600);
            Tensor B = random_tensor({(shared == 2 ? 1 : batch) * b_elems}, t, 601);
            Tensor C = random_tensor({batch * sc}, t, 602);
            auto run = [&](const TensorList& v) {
              Tensor c = native::clone(v[2]);
              N::gemm_batched_stub(v[0].device().type(), t, ta, tb, M, Nn, K, 0.75, v[0].data_ptr(), lda, sa,
                                   v[1].data_ptr(), ldb, sb, 0.5, c.data_ptr(), ldc, sc, batch);
              return c;
            };
            std::ostringstream what;
            what << "gemm_batched " << dtype_name(t) << " ta " << ta << " tb " << tb << " shared " << shared;
            check_parity(what.str(), {A, B, C}, run, gemm_tol(t));
          }
    }
  }

  TEST_CASE("bmm and matmul on the batched cuBLAS GEMM match the CPU") {
    for (ScalarType t : {kFloat32, kFloat64}) {
      const std::string dt(dtype_name(t));
      check_parity(
          "bmm transposed operands " + dt, {random_tensor({6, 30, 20}, t, 610), random_tensor({6, 11, 30}, t, 611)},
          [](const TensorList& x) { return N::bmm(N::transpose(x[0], 1, 2), N::transpose(x[1], 1, 2)); }, gemm_tol(t));
      check_parity(
          "bmm many tiny products " + dt, {random_tensor({1000, 3, 4}, t, 612), random_tensor({1000, 4, 2}, t, 613)},
          [](const TensorList& x) { return N::bmm(x[0], x[1]); }, gemm_tol(t));
      check_parity(
          "bmm K = 0 " + dt, {random_tensor({3, 4, 0}, t, 614), random_tensor({3, 0, 5}, t, 615)},
          [](const TensorList& x) { return N::bmm(x[0], x[1]); }, kExact);
      // A non-contiguous batch times one matrix: the matrix is shared (batch stride 0).
      check_parity(
          "matmul matrix broadcast over a batch " + dt,
          {random_tensor({4, 20, 12}, t, 616), random_tensor({20, 9}, t, 617)},
          [](const TensorList& x) { return N::matmul(N::transpose(x[0], 1, 2), x[1]); }, gemm_tol(t));
      check_parity(
          "matmul broadcast batch dims " + dt,
          {random_tensor({3, 1, 6, 16}, t, 618), random_tensor({2, 16, 7}, t, 619)},
          [](const TensorList& x) { return N::matmul(x[0], x[1]); }, gemm_tol(t));
      check_parity(
          "matmul vector times batch " + dt, {random_tensor({16}, t, 620), random_tensor({5, 16, 3}, t, 621)},
          [](const TensorList& x) { return N::matmul(x[0], x[1]); }, gemm_tol(t));
    }
  }
}
