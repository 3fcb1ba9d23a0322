// CPU-vs-CUDA parity of the bfloat16/float16 GEMMs (tensor cores, float32 accumulation):
// mm and linear's mm_bias (cuBLASLt, the bias in its epilogue), the gemm_stub contract with a
// float32 C, alpha and beta, bmm/baddbmm (strided-batched), with transposed and copied
// operands, odd and unaligned sizes, K = 0; each once more with cuBLASLt switched off (the
// cublasGemmEx path and its bias kernel). The CPU rounds each float sum once, as CUDA does; the
// sums' order differs, so results may differ by one step of the reduced type.
#include <gradring/core/native/gemm/gemm.h>

#include "cuda_kernels/gemm_lt.h"
#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

namespace {

// One step of the type (2^-7 for bfloat16, 2^-10 for float16) relative, and a little absolute
// for sums that cancel.
Tol reduced_tol(ScalarType t) { return t == kBFloat16 ? Tol{1.0 / 128, 2e-3} : Tol{1.0 / 1024, 5e-4}; }

// The float64 reference of x rounded to the reduced type: the CPU computes float16 products
// through float32 copies, bfloat16 ones on its packed GEMM; both round once at the end.
Tensor reduced(IntArrayRef shape, ScalarType t, uint64_t seed) { return random_tensor(shape, t, seed, -1, 1); }

void run_cases(ScalarType t, const std::string& tag) {
  const std::string dt = std::string(dtype_name(t)) + tag;
  const Tol tol = reduced_tol(t);
  auto T = [](const Tensor& x) { return N::transpose(x, 0, 1); };
  Tensor a = reduced({64, 96}, t, 500), b = reduced({96, 80}, t, 501);
  check_parity("mm " + dt, {a, b}, [](const TensorList& x) { return N::mm(x[0], x[1]); }, tol);
  Tensor at = reduced({96, 64}, t, 502), bt = reduced({80, 96}, t, 503);
  check_parity("mm a^T b^T " + dt, {at, bt}, [&](const TensorList& x) { return N::mm(T(x[0]), T(x[1])); }, tol);
  check_parity("mm a^T b " + dt, {at, b}, [&](const TensorList& x) { return N::mm(T(x[0]), x[1]); }, tol);
  check_parity("mm a b^T, odd sizes " + dt, {reduced({1, 33}, t, 504), reduced({17, 33}, t, 505)},
               [&](const TensorList& x) { return N::mm(x[0], T(x[1])); }, tol);
  // Leading dims that are not multiples of 8 elements: unaligned for the tensor-core loads.
  check_parity("mm unaligned ld " + dt, {reduced({37, 45}, t, 506), reduced({45, 333}, t, 507)},
               [](const TensorList& x) { return N::mm(x[0], x[1]); }, tol);
  check_parity("mm of strided slices " + dt, {reduced({30, 40}, t, 508), reduced({40, 50}, t, 509)},
               [](const TensorList& x) { return N::mm(N::slice(x[0], 1, 0, 40, 2), N::slice(x[1], 0, 0, 40, 2)); },
               tol);
  check_parity("mm K = 0 " + dt, {reduced({5, 0}, t, 510), reduced({0, 6}, t, 511)},
               [](const TensorList& x) { return N::mm(x[0], x[1]); }, kExact);
  check_parity("mm 256x384x512 " + dt, {reduced({256, 512}, t, 512), reduced({384, 512}, t, 513)},
               [&](const TensorList& x) { return N::mm(x[0], T(x[1])); }, tol);

  // linear's product: x [rows, in] @ W^T with W [out, in], + bias [out], rounded once.
  for (const auto& [rows, in, out] : {std::array<int64_t, 3>{48, 64, 96}, {7, 13, 29}, {128, 384, 1152}}) {
    const std::string shape = std::to_string(rows) + "x" + std::to_string(in) + "->" + std::to_string(out);
    check_parity("mm_bias " + shape + " " + dt,
                 {reduced({rows, in}, t, 520), reduced({out, in}, t, 521), reduced({out}, t, 522)},
                 [&](const TensorList& x) { return N::mm_bias(x[0], T(x[1]), x[2]); }, tol);
  }
  check_parity("mm_bias K = 0 " + dt, {reduced({4, 0}, t, 523), reduced({0, 6}, t, 524), reduced({6}, t, 525)},
               [](const TensorList& x) { return N::mm_bias(x[0], x[1], x[2]); }, kExact);
  check_parity("mm_bias a^T " + dt, {reduced({40, 24}, t, 526), reduced({40, 56}, t, 527), reduced({56}, t, 528)},
               [&](const TensorList& x) { return N::mm_bias(T(x[0]), x[1], x[2]); }, tol);

  check_parity("bmm " + dt, {reduced({3, 20, 30}, t, 530), reduced({3, 30, 10}, t, 531)},
               [](const TensorList& x) { return N::bmm(x[0], x[1]); }, tol);
  check_parity("baddbmm beta 0.5 alpha 2 " + dt,
               {reduced({20, 10}, t, 532), reduced({4, 20, 16}, t, 533), reduced({4, 10, 16}, t, 534)},
               [](const TensorList& x) { return N::baddbmm(x[0], x[1], N::transpose(x[2], 1, 2), 0.5, 2.0); }, tol);
  check_parity("matmul broadcast batch " + dt, {reduced({2, 1, 8, 16}, t, 535), reduced({3, 16, 4}, t, 536)},
               [](const TensorList& x) { return N::matmul(x[0], x[1]); }, tol);
}

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("bfloat16 and float16 mm, linear, bmm on tensor cores match the CPU") {
    for (ScalarType t : {kBFloat16, kFloat16}) run_cases(t, "");
    CHECK(cuda::lt_plan_cache_size() > 0);  // cuBLASLt planned these products
  }

  TEST_CASE("the same with cuBLASLt off: cublasGemmEx and the bias kernel") {
    cuda::set_cublaslt_enabled(false);
    const int64_t plans = cuda::lt_plans_made();
    for (ScalarType t : {kBFloat16, kFloat16}) run_cases(t, " (no cuBLASLt)");
    CHECK(cuda::lt_plans_made() == plans);
    cuda::set_cublaslt_enabled(true);
  }

  TEST_CASE("float32 linear with cuBLASLt's bias epilogue matches the CPU") {
    cuda::set_lt_float32(true);
    check_parity("mm_bias float32 on cuBLASLt",
                 {random_tensor({33, 64}, kFloat32, 540), random_tensor({48, 64}, kFloat32, 541),
                  random_tensor({48}, kFloat32, 542)},
                 [](const TensorList& x) { return N::mm_bias(x[0], N::transpose(x[1], 0, 1), x[2]); },
                 Tol{1e-4, 1e-4});
    cuda::set_lt_float32(false);
  }

  TEST_CASE("gemm_stub with bfloat16 operands writes float32 C = alpha A B + beta C as the CPU") {
    const int64_t M = 19, Nn = 23, K = 41;
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        Tensor A = reduced(ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}, kBFloat16, 550);
        Tensor B = reduced(tb ? std::vector<int64_t>{Nn, K} : std::vector<int64_t>{K, Nn}, kBFloat16, 551);
        Tensor C0 = random_tensor({M, Nn}, kFloat32, 552);
        check_parity("gemm_stub bf16 -> float32, ta " + std::to_string(ta) + " tb " + std::to_string(tb), {A, B, C0},
                     [&](const TensorList& x) {
                       Tensor C = N::clone(x[2]);
                       N::gemm_stub(x[0].device().type(), kBFloat16, ta, tb, M, Nn, K, 0.75, x[0].data_ptr(),
                                    x[0].size(1), x[1].data_ptr(), x[1].size(1), 0.5, C.data_ptr(), Nn);
                       return C;
                     },
                     Tol{1e-5, 1e-4});
      }
  }
}
