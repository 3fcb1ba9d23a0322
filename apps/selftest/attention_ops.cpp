// gpu_selftest checks of scaled_dot_product_attention (nn breadth: attention): the CUDA
// kernels (cuda_kernels/attention*.cu: tensor cores for bfloat16/float16, register tiles for
// float32, the general kernels for float64 and wide heads) against the fused CPU kernel,
// forward and backward, plain, causal, with bool and float masks, with dropout (the same
// Philox stream), and on the GPT's in-place head layout; the 16-bit rows once on gradring's
// tensor-core kernels and once with cuDNN's fused attention allowed (attention_cudnn.cpp, where
// built). They compare two 16-bit results (P and dS are rounded for the tensor cores): their
// tolerance is the type's.
#include "selftest/checks.h"

namespace gr::selftest {

namespace {
// The 16-bit types' tolerances (values of order 1; a few roundings of 2^-8 or 2^-11 apart).
constexpr Tol kBF16{5e-2, 5e-2}, kF16{1e-2, 1e-2};

// Leaves q, k, v of the given shapes and dtype (seeds seed, seed + 1, seed + 2).
TensorList qkv(std::vector<int64_t> q, std::vector<int64_t> k, std::vector<int64_t> v, uint64_t seed,
               ScalarType t = kFloat32) {
  return {grad_input(q, seed, t), grad_input(k, seed + 1, t), grad_input(v, seed + 2, t)};
}
Tensor causal(const TensorList& x) { return scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true); }

// f with attention's cuDNN switch (gr::cuda::enable_cudnn_sdp) set as `cudnn` says, restored
// after; the CPU run ignores it.
std::function<TensorList(const TensorList&)> on_cudnn(bool cudnn, std::function<TensorList(const TensorList&)> f) {
  return [cudnn, f](const TensorList& x) {
    const bool before = cuda::cudnn_sdp_enabled();
    cuda::enable_cudnn_sdp(cudnn);
    try {
      TensorList r = f(x);
      cuda::enable_cudnn_sdp(before);
      return r;
    } catch (...) {
      cuda::enable_cudnn_sdp(before);
      throw;
    }
  };
}

Tensor bool_mask(IntArrayRef shape, uint64_t seed) {
  Tensor m = randn_(shape, seed).gt(-0.5);
  return m.index_fill(-1, tensor({int64_t(0)}, TensorOptions(kInt64)), true);  // key 0 always visible
}
}  // namespace

GR_SELFTEST_CHECKS(add_attention_checks) {
  c.push_back({"attention", "sdpa fwd+bwd f32 [2,4,77,32]x[2,4,130,32], Ev 24",
               [] { return TensorList{grad_input({2, 4, 77, 32}, 1), grad_input({2, 4, 130, 32}, 2), grad_input({2, 4, 130, 24}, 3)}; },
               with_grads([](const TensorList& x) { return scaled_dot_product_attention(x[0], x[1], x[2]); }), kF32Reduce});
  c.push_back({"attention", "sdpa causal fwd+bwd f64 [3,150,16] (L > S: [3,100,16])",
               [] {
                 return TensorList{grad_input({3, 150, 16}, 4, kFloat64), grad_input({3, 100, 16}, 5, kFloat64),
                                   grad_input({3, 100, 16}, 6, kFloat64)};
               },
               with_grads([](const TensorList& x) { return scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true); }),
               kF64});
  c.push_back({"attention", "sdpa bool mask [1,50,70] broadcast, float mask [2,1,50,70], f32",
               [] {
                 return TensorList{grad_input({2, 3, 50, 16}, 7), grad_input({2, 3, 70, 16}, 8), grad_input({2, 3, 70, 16}, 9),
                                   bool_mask({1, 50, 70}, 10), randn_({2, 1, 50, 70}, 11)};
               },
               with_grads([](const TensorList& x) {
                 return scaled_dot_product_attention(x[0], x[1], x[2], x[3]) +
                        scaled_dot_product_attention(x[0], x[1], x[2], x[4], 0.0, false, 0.5);
               }),
               kF32Reduce});
  c.push_back({"attention", "sdpa dropout p=0.3 fwd+bwd f64 (same Philox stream) [2,2,40,8]x[2,2,90,8]",
               [] {
                 return TensorList{grad_input({2, 2, 40, 8}, 12, kFloat64), grad_input({2, 2, 90, 8}, 13, kFloat64),
                                   grad_input({2, 2, 90, 8}, 14, kFloat64)};
               },
               with_grads([](const TensorList& x) {
                 manual_seed(15);
                 return scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.3);
               }),
               kF64});
  for (bool cudnn : {false, true}) {
    const std::string path = cudnn ? " (cuDNN where built)" : " (tensor cores)";
    c.push_back({"attention", "sdpa causal fwd+bwd bf16 [2,6,200,64]" + path,
                 [] { return qkv({2, 6, 200, 64}, {2, 6, 200, 64}, {2, 6, 200, 64}, 16, kBFloat16); },
                 on_cudnn(cudnn, with_grads(causal)), kBF16});
    c.push_back(
        {"attention", "sdpa fwd+bwd f16 E 96, Ev 80 [2,3,77,96]x[2,3,130,96]" + path,
         [] { return qkv({2, 3, 77, 96}, {2, 3, 130, 96}, {2, 3, 130, 80}, 19, kFloat16); },
         on_cudnn(cudnn, with_grads([](const TensorList& x) { return scaled_dot_product_attention(x[0], x[1], x[2]); })),
         kF16});
  }
  c.push_back({"attention", "sdpa causal fwd+bwd f32 D 128 [2,4,150,128] (register tiles)",
               [] { return qkv({2, 4, 150, 128}, {2, 4, 150, 128}, {2, 4, 150, 128}, 22); }, with_grads(causal),
               kF32Reduce});
  // The GPT's heads: q, k, v views of one qkv [2, 100, 768] (rows 3C apart), read in place.
  const auto gpt = [](const TensorList& x) {
    auto heads = [&](int i) { return x[0].narrow(2, i * 256, 256).view({2, 100, 4, 64}).transpose(1, 2); };
    return scaled_dot_product_attention(heads(0), heads(1), heads(2), {}, 0.0, true);
  };
  c.push_back({"attention", "sdpa GPT layout (q, k, v views of qkv [2,100,768]) causal fwd+bwd f32",
               [] { return TensorList{grad_input({2, 100, 768}, 25)}; }, with_grads(gpt), kF32Reduce});
  for (bool cudnn : {false, true})
    c.push_back({"attention",
                 std::string("sdpa GPT layout (q, k, v views of qkv [2,100,768]) causal fwd+bwd bf16") +
                     (cudnn ? " (cuDNN where built)" : " (tensor cores)"),
                 [] { return TensorList{grad_input({2, 100, 768}, 26, kBFloat16)}; }, on_cudnn(cudnn, with_grads(gpt)),
                 kBF16});
  for (ScalarType t : {kFloat32, kBFloat16})
    c.push_back({"attention",
                 std::string("sdpa dropout p=0.2 fwd+bwd ") + (t == kFloat32 ? "f32" : "bf16") +
                     " (same Philox stream) [2,3,70,64]",
                 [t] { return qkv({2, 3, 70, 64}, {2, 3, 70, 64}, {2, 3, 70, 64}, 27, t); },
                 with_grads([](const TensorList& x) {
                   manual_seed(30);
                   return scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.2);
                 }),
                 t == kFloat32 ? kF32Reduce : kBF16});
  c.push_back({"attention", "sdpa causal fwd+bwd f32 head dim 160 (general kernels) [2,2,90,160]",
               [] { return qkv({2, 2, 90, 160}, {2, 2, 90, 160}, {2, 2, 90, 160}, 31); }, with_grads(causal),
               kF32Reduce});
}

}  // namespace gr::selftest
