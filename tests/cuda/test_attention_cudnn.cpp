// cuDNN's fused attention (Note [cuDNN attention]) against gradring's own CUDA kernels and the
// float64 composite (matmul, softmax, matmul on the CPU, through autograd), forward (out, lse)
// and backward (dq, dk, dv): bfloat16 and float16, head dims 64 and 128, odd lengths, L != S,
// causal and not, the GPT's in-place head layout, a forward on one path with its backward on
// the other (the saved lse is the same), the deterministic backward bit for bit, and the calls
// that must stay on gradring's kernels (dropout, masks, float32). Every case checks through
// gr::cuda::cudnn_sdp_calls() that the path it meant to test really ran. Tolerances relative to
// the reference's largest value, as test_attention_parity.cpp's.
#include <gradring/core/native/attention/attention.h>

#include <sstream>

#include "cuda_kernels/attention_cudnn.h"
#include "attention_cases.h"
#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

namespace {

// max |got - want| <= tol * max(1, max |want|); NaN fails.
void expect_close(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  INFO(what);
  REQUIRE(got.sizes() == want.sizes());
  const std::vector<double> g = as_doubles(got), w = as_doubles(want);
  double scale = 1, worst = 0;
  for (double x : w) scale = std::max(scale, std::fabs(x));
  for (size_t i = 0; i < g.size(); ++i) {
    const double d = std::fabs(g[i] - w[i]);
    if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
  }
  CHECK_MESSAGE(worst <= tol * scale, what << ": max difference " << worst << " > " << tol << " x " << scale);
}

struct Inputs {
  Tensor q, k, v, grad;  // float32 on the CPU
};

Inputs random_inputs(int64_t B, int64_t H, int64_t L, int64_t S, int64_t D, uint64_t seed) {
  return {random_tensor({B, H, L, D}, kFloat32, seed, -2, 2), random_tensor({B, H, S, D}, kFloat32, seed + 1, -2, 2),
          random_tensor({B, H, S, D}, kFloat32, seed + 2, -2, 2),
          random_tensor({B, H, L, D}, kFloat32, seed + 3, -1, 1)};
}

// out, lse, dq, dk, dv of the fused op on the GPU in dtype t; `fwd_cudnn` / `bwd_cudnn` set the
// switch for each pass. Checks that cuDNN ran exactly the passes it was allowed.
TensorList fused(const Inputs& in, ScalarType t, bool causal, bool fwd_cudnn, bool bwd_cudnn) {
  auto put = [&](const Tensor& x) { return N::to_device(N::to_dtype(x, t), cuda0()); };
  const Tensor q = put(in.q), k = put(in.k), v = put(in.v), g = put(in.grad);
  const uint64_t before = cuda::cudnn_sdp_calls();
  N::AttentionSaved saved;
  {
    const CudnnSdpScope sw(fwd_cudnn);
    saved = N::scaled_dot_product_attention(q, k, v, Tensor(), 0.0, causal, std::nullopt);
  }
  CHECK(cuda::cudnn_sdp_calls() - before == (fwd_cudnn ? 1u : 0u));
  const CudnnSdpScope sw(bwd_cudnn);
  auto [dq, dk, dv] = N::scaled_dot_product_attention_backward(g, q, k, v, Tensor(), 0.0, causal, std::nullopt, saved);
  CHECK(cuda::cudnn_sdp_calls() - before == (fwd_cudnn ? 1u : 0u) + (bwd_cudnn ? 1u : 0u));
  return {saved.out, saved.lse, dq, dk, dv};
}

// The float64 composite on the CPU, on the inputs rounded to t: out, lse, dq, dk, dv.
TensorList composite(const Inputs& in, ScalarType t, bool causal) {
  auto leaf = [&](const Tensor& x) { return N::to_dtype(N::to_dtype(x, t), kFloat64).detach().requires_grad_(true); };
  Tensor q = leaf(in.q), k = leaf(in.k), v = leaf(in.v);
  const int64_t L = q.size(-2), S = k.size(-2);
  Tensor s = matmul(q, k.transpose(-2, -1)) / std::sqrt(double(q.size(-1)));
  if (causal) s = s.masked_fill(ones({L, S}, TensorOptions(kFloat64)).triu(1).gt(0), -INFINITY);
  Tensor lse = s.logsumexp({-1});
  Tensor out = matmul(softmax(s, -1), v);
  out.backward(N::to_dtype(N::to_dtype(in.grad, t), kFloat64));
  return {out.detach(), lse.detach(), q.grad(), k.grad(), v.grad()};
}

const char* kNames[] = {"out", "lse", "dq", "dk", "dv"};

void check_against(const TensorList& got, const TensorList& want, Tols tol, const std::string& what) {
  for (size_t x = 0; x < want.size(); ++x)
    expect_close(N::to_dtype(got[x], kFloat64), N::to_dtype(want[x], kFloat64), x < 2 ? tol.fwd : tol.bwd,
                 what + " " + kNames[x]);
}

// cuDNN takes these calls on this device (compiled in, and the GPU has what its attention
// needs: compute capability 8.0 or newer).
bool cudnn_here() { return cuda::cudnn_attention::built() && cuda::get_device_properties(0).major >= 8; }

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("cuDNN attention: against gradring's kernel and the float64 composite, bf16/f16, D 64/128") {
    if (!cudnn_here()) {
      MESSAGE("cuDNN attention not built or the GPU is older than sm_80: skipped");
      return;
    }
    struct Shape {
      int64_t L, S, D;
    };
    uint64_t seed = 900;
    for (const Shape& s : {Shape{77, 77, 64}, Shape{61, 130, 64}, Shape{129, 129, 128}, Shape{150, 45, 128}})
      for (ScalarType t : {kBFloat16, kFloat16})
        for (bool causal : {false, true}) {
          const Inputs in = random_inputs(2, 3, s.L, s.S, s.D, seed += 4);
          std::ostringstream name;
          name << dtype_name(t) << " L " << s.L << " S " << s.S << " D " << s.D << (causal ? " causal" : "");
          const TensorList want = composite(in, t, causal);
          const TensorList cudnn = fused(in, t, causal, true, true), own = fused(in, t, causal, false, false);
          check_against(cudnn, want, tols(t), "cuDNN " + name.str());
          check_against(own, want, tols(t), "own " + name.str());
          check_against(cudnn, own, {2 * tols(t).fwd, 2 * tols(t).bwd}, "cuDNN vs own " + name.str());
          // One pass on each path: the saved lse means the same on both.
          check_against(fused(in, t, causal, true, false), want, tols(t), "cuDNN fwd, own bwd " + name.str());
          check_against(fused(in, t, causal, false, true), want, tols(t), "own fwd, cuDNN bwd " + name.str());
        }
  }

  TEST_CASE("cuDNN attention: the GPT's in-place head layout, no copies") {
    if (!cudnn_here()) return;
    for (ScalarType t : {kBFloat16, kFloat16}) {
      const CudnnSdpScope on(true);
      const uint64_t before = cuda::cudnn_sdp_calls();
      const TensorList got = gpt_layout_attention(t, 950, cuda0());
      CHECK(cuda::cudnn_sdp_calls() - before == 2);
      check_against(got, gpt_layout_attention(t, 950, Device(kCPU)), tols(t),
                    "GPT layout " + std::string(dtype_name(t)));
    }
  }

  TEST_CASE("cuDNN attention: under use_deterministic_algorithms the backward repeats bit for bit") {
    if (!cudnn_here()) return;
    const Inputs in = random_inputs(2, 4, 200, 200, 64, 970);
    use_deterministic_algorithms(true);
    TensorList a, b;
    try {
      a = fused(in, kBFloat16, true, true, true);
      b = fused(in, kBFloat16, true, true, true);
    } catch (...) {
      use_deterministic_algorithms(false);
      throw;
    }
    use_deterministic_algorithms(false);
    for (size_t x = 0; x < a.size(); ++x) {
      INFO(kNames[x]);
      CHECK(as_doubles(a[x]) == as_doubles(b[x]));
    }
    check_against(a, composite(in, kBFloat16, true), tols(kBFloat16), "deterministic");
  }

  TEST_CASE("cuDNN attention: dropout, masks and float32 stay on gradring's kernels") {
    const CudnnSdpScope on(true);
    const Inputs in = random_inputs(2, 3, 40, 40, 64, 990);
    auto calls_of = [&](ScalarType t, const Tensor& mask, double dropout) {
      auto put = [&](const Tensor& x) { return N::to_device(N::to_dtype(x, t), cuda0()); };
      const uint64_t before = cuda::cudnn_sdp_calls();
      Generator gen(3);
      N::AttentionSaved saved = N::scaled_dot_product_attention(put(in.q), put(in.k), put(in.v), mask, dropout,
                                                                false, std::nullopt, &gen);
      N::scaled_dot_product_attention_backward(put(in.grad), put(in.q), put(in.k), put(in.v), mask, dropout, false,
                                               std::nullopt, saved);
      return cuda::cudnn_sdp_calls() - before;
    };
    const Tensor keep = N::to_device(random_tensor({40, 40}, kFloat32, 991, 0, 1).gt(0.2), cuda0());
    CHECK(calls_of(kBFloat16, Tensor(), 0.2) == 0);
    CHECK(calls_of(kBFloat16, keep, 0.0) == 0);
    CHECK(calls_of(kFloat32, Tensor(), 0.0) == 0);
    const CudnnSdpScope off(false);
    CHECK(calls_of(kBFloat16, Tensor(), 0.0) == 0);
  }
}
