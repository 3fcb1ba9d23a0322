// CPU-vs-CUDA parity of scaled_dot_product_attention's kernels, forward (out, lse) and
// backward (dq, dk, dv): the tensor-core kernels (bfloat16, float16), the float32 register
// tiles and the general kernels (float64, heads over 128), at every padded head width, odd
// lengths, L != S, causal, bool and float masks in the broadcast shapes the op takes, fully
// masked rows, dropout (the same flags as the CPU's, bit for bit), broadcast batch dims and
// the GPT's in-place head layout, with cuDNN's attention switched off (its own parity tests are
// in test_attention_cudnn.cpp). The reference is the CPU kernel in float32 on the same
// (rounded) inputs; tolerances are relative to the reference's largest value:
//   float32 2e-4 forward, 1e-3 backward (another summation order, __expf);
//   float16 5e-3 / 2e-2 and bfloat16 2e-2 / 5e-2 (P and dS rounded for the tensor cores,
//   outputs rounded to the 16-bit type).
#include <gradring/core/native/attention/attention.h>

#include <sstream>

#include "attention_cases.h"
#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

namespace {

// max |got - want| <= tol * max(1, max |finite want|), NaN failing; -inf must match exactly.
void expect_close(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  INFO(what);
  REQUIRE(got.defined());
  CHECK(got.is_cuda());
  REQUIRE(got.sizes() == want.sizes());
  const std::vector<double> g = as_doubles(got), w = as_doubles(want);
  double scale = 1, worst = 0;
  size_t at = 0;
  for (double x : w)
    if (std::isfinite(x)) scale = std::max(scale, std::fabs(x));  // lse is -inf for rows without keys
  for (size_t i = 0; i < g.size(); ++i) {
    const double d = (std::isinf(w[i]) && g[i] == w[i]) ? 0 : std::fabs(g[i] - w[i]);
    if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d, at = i;
  }
  if (!(worst <= tol * scale))
    FAIL_CHECK(what << ": max |cuda - cpu| " << worst << " at flat index " << at << " (cuda " << g[at] << ", cpu "
                    << w[at] << ") > " << tol << " x " << scale);
}

struct Inputs {
  Tensor q, k, v, mask, grad;
};

// Runs the fused op and its backward on `in` (moved to `dev`, in dtype t; masks of float type
// take t too), returning out, lse, dq, dk, dv. dropout draws from a generator seeded `seed`.
TensorList run(const Inputs& in, Device dev, ScalarType t, bool causal, double dropout, uint64_t seed = 5) {
  auto put = [&](const Tensor& x) {
    if (!x.defined()) return x;
    return N::to_device(x.scalar_type() == kBool ? x : N::to_dtype(x, t), dev);
  };
  const Tensor q = put(in.q), k = put(in.k), v = put(in.v), mask = put(in.mask), g = put(in.grad);
  Generator gen(seed);
  N::AttentionSaved saved = N::scaled_dot_product_attention(q, k, v, mask, dropout, causal, std::nullopt, &gen);
  auto [dq, dk, dv] = N::scaled_dot_product_attention_backward(g, q, k, v, mask, dropout, causal, std::nullopt, saved);
  return {saved.out, saved.lse, dq, dk, dv};
}

// The CUDA kernels in dtype t against the CPU kernel in float32 (float64 for float64) on the
// same inputs rounded to t.
void check_case(const std::string& name, const Inputs& in, ScalarType t, bool causal, double dropout = 0) {
  auto rounded = [&](const Tensor& x) {
    return x.defined() && x.scalar_type() != kBool ? N::to_dtype(N::to_dtype(x, t), kFloat32) : x;
  };
  const ScalarType ref_type = t == kFloat64 ? kFloat64 : kFloat32;
  const Inputs ref_in{rounded(in.q), rounded(in.k), rounded(in.v), rounded(in.mask), rounded(in.grad)};
  const TensorList want = run(ref_in, Device(kCPU), ref_type, causal, dropout);
  const TensorList got = run(in, cuda0(), t, causal, dropout);
  const char* names[] = {"out", "lse", "dq", "dk", "dv"};
  const Tols tol = tols(t);
  for (size_t x = 0; x < want.size(); ++x) {
    std::ostringstream what;
    what << name << " " << dtype_name(t) << (causal ? " causal" : "") << " " << names[x];
    CHECK(got[x].scalar_type() == (x == 1 && t != kFloat64 ? kFloat32 : t));
    expect_close(N::to_dtype(got[x], ref_type), want[x], x < 2 ? tol.fwd : tol.bwd, what.str());
  }
}

Inputs random_inputs(std::vector<int64_t> qs, std::vector<int64_t> ks, std::vector<int64_t> vs, uint64_t seed) {
  std::vector<int64_t> gs = qs;
  gs.back() = vs.back();
  return {random_tensor(qs, kFloat32, seed, -2, 2), random_tensor(ks, kFloat32, seed + 1, -2, 2),
          random_tensor(vs, kFloat32, seed + 2, -2, 2), Tensor(), random_tensor(gs, kFloat32, seed + 3, -1, 1)};
}

const ScalarType kTiled[] = {kFloat32, kBFloat16, kFloat16};

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("attention: every padded head width, odd lengths, L != S, causal, each dtype") {
    const CudnnSdpScope own_kernels(false);
    struct Shape {
      int64_t L, S, E, Ev;
    };
    const Shape shapes[] = {{77, 77, 32, 32},  {130, 61, 64, 64},  {45, 200, 80, 80}, {100, 100, 96, 96},
                            {129, 129, 128, 128}, {1, 1, 64, 64}, {64, 64, 64, 40},  {33, 70, 33, 33}};
    uint64_t seed = 100;
    for (const Shape& s : shapes)
      for (ScalarType t : kTiled)
        for (bool causal : {false, true}) {
          std::ostringstream name;
          name << "[2,3," << s.L << "," << s.E << "]x[2,3," << s.S << "," << s.E << "], Ev " << s.Ev;
          check_case(name.str(), random_inputs({2, 3, s.L, s.E}, {2, 3, s.S, s.E}, {2, 3, s.S, s.Ev}, seed += 4), t,
                     causal);
        }
  }

  TEST_CASE("attention: heads over 128 and float64 run on the general kernels") {
    const CudnnSdpScope own_kernels(false);
    for (ScalarType t : {kFloat32, kBFloat16, kFloat64})
      check_case("E 160", random_inputs({2, 50, 160}, {2, 70, 160}, {2, 70, 160}, 200), t, true);
    check_case("f64", random_inputs({3, 40, 16}, {3, 90, 16}, {3, 90, 24}, 210), kFloat64, false);
  }

  TEST_CASE("attention: bool and float masks in their broadcast shapes, fully masked rows") {
    const CudnnSdpScope own_kernels(false);
    const int64_t B = 2, H = 3, L = 70, S = 90, D = 64;
    Inputs in = random_inputs({B, H, L, D}, {B, H, S, D}, {B, H, S, D}, 300);
    const Tensor keep = random_tensor({L, S}, kFloat32, 301, 0, 1)  // [L, S], shared; rows 5, 6: no key
                            .gt(0.3)
                            .index_fill(0, tensor(std::vector<int64_t>{5, 6}, TensorOptions(kInt64)), false);
    const Tensor keep_bh = random_tensor({B, 1, L, S}, kFloat32, 302, 0, 1).gt(0.5);  // per batch
    const Tensor add_full = random_tensor({B, H, L, S}, kFloat32, 303, -3, 3);
    const Tensor add_keys = random_tensor({S}, kFloat32, 304, -2, 2);  // one bias per key
    for (ScalarType t : kTiled)
      for (const auto& [name, mask] : {std::pair{"bool [L, S] with empty rows", keep},
                                       std::pair{"bool [B, 1, L, S]", keep_bh},
                                       std::pair{"float [B, H, L, S]", add_full}, std::pair{"float [S]", add_keys}}) {
        in.mask = mask;
        check_case(std::string("mask ") + name, in, t, false);
      }
  }

  TEST_CASE("attention: dropout keeps the CPU's weights, bit for bit, and matches forward and backward") {
    const CudnnSdpScope own_kernels(false);
    // q = 0 makes every weight 1 / S; v = I makes out[i][j] = Z[i][j] / S: nonzero exactly
    // where weight (i, j) is kept.
    const int64_t B = 2, H = 2, L = 45, S = 96;
    Inputs in{zeros({B, H, L, 32}, TensorOptions(kFloat32)), random_tensor({B, H, S, 32}, kFloat32, 400),
              eye(S, TensorOptions(kFloat32)).expand({B, H, S, S}).contiguous(), Tensor(),
              random_tensor({B, H, L, S}, kFloat32, 401)};
    const TensorList want = run(in, Device(kCPU), kFloat32, false, 0.3);
    const std::vector<double> kept_cpu = as_doubles(want[0]);
    for (ScalarType t : kTiled) {
      const TensorList got = run(in, cuda0(), t, false, 0.3);
      const std::vector<double> kept = as_doubles(got[0]);
      int64_t differ = 0;
      for (size_t x = 0; x < kept.size(); ++x) differ += (kept[x] != 0) != (kept_cpu[x] != 0);
      INFO(std::string(dtype_name(t)));
      CHECK(differ == 0);
    }
    for (ScalarType t : kTiled)
      check_case("dropout 0.3", random_inputs({2, 3, 61, 64}, {2, 3, 83, 64}, {2, 3, 83, 64}, 410), t, true, 0.3);
  }

  TEST_CASE("attention: broadcast batch dims and the GPT's in-place head layout") {
    const CudnnSdpScope own_kernels(false);
    for (ScalarType t : kTiled) {
      // Keys and values shared by the batch (stride 0), gradients summed over it.
      check_case("k, v broadcast over the batch", random_inputs({3, 4, 50, 64}, {1, 4, 50, 64}, {1, 4, 50, 64}, 500),
                 t, true);
      // q, k, v as views of one qkv [N, T, 3C], read and written in place (lse left out).
      TensorList want = gpt_layout_attention(t, 510, Device(kCPU)), got = gpt_layout_attention(t, 510, cuda0());
      want.erase(want.begin() + 1);
      got.erase(got.begin() + 1);
      const char* names[] = {"out", "dq", "dk", "dv"};
      for (size_t x = 0; x < want.size(); ++x)
        expect_close(N::to_dtype(got[x], kFloat32), N::to_dtype(want[x], kFloat32), x == 0 ? tols(t).fwd : tols(t).bwd,
                     "GPT layout " + std::string(dtype_name(t)) + " " + names[x]);
    }
  }
}
