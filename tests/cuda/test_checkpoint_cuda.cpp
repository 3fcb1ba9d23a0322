// gr::utils::checkpoint on CUDA tensors (Note [Non-reentrant checkpoint]): blocks with dropout
// (after the MLP, and in the attention in float32) checkpointed give the plain blocks'
// gradients bitwise: CUDA's dropout draws from the one Philox generator the checkpoint
// preserves (docs/cuda.md). tests/nn/test_activation_checkpoint.cpp runs the same on the CPU.
#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;

namespace {

struct Block {
  nn::LayerNorm ln{nn::LayerNormOptions({16})};
  nn::Linear fc1{16, 64}, fc2{64, 16};
  double attention_dropout;
  Block(ScalarType dtype, double attention_p) : attention_dropout(attention_p) {
    for (nn::Module* m : {static_cast<nn::Module*>(ln.get()), static_cast<nn::Module*>(fc1.get()),
                          static_cast<nn::Module*>(fc2.get())}) {
      m->to(cuda0());
      m->to(dtype);
    }
  }
  Tensor operator()(const Tensor& x) const {
    const int64_t B = x.size(0), T = x.size(1);
    Tensor q = ln(x).view({B, T, 2, 8}).transpose(1, 2);
    Tensor a = scaled_dot_product_attention(q, q * 0.5, q, {}, attention_dropout, true);
    Tensor y = x + a.transpose(1, 2).reshape({B, T, 16});
    return y + dropout(fc2(gelu(fc1(y))), 0.2, true);
  }
  TensorList parameters() const {
    TensorList p;
    for (const nn::Module* m : {static_cast<const nn::Module*>(ln.get()), static_cast<const nn::Module*>(fc1.get()),
                                static_cast<const nn::Module*>(fc2.get())})
      for (const Tensor& t : m->parameters()) p.push_back(t);
    return p;
  }
};

// The gradients of the parameters and of x after three blocks, checkpointed or not.
TensorList gradients(ScalarType dtype, bool checkpointed) {
  manual_seed(7);
  const double attention_p = dtype == kFloat32 ? 0.1 : 0.0;
  std::vector<Block> blocks;
  for (int i = 0; i < 3; ++i) blocks.emplace_back(dtype, attention_p);
  Tensor x = random_tensor({2, 8, 16}, dtype, 5).to(cuda0()).requires_grad_(true);
  manual_seed(123);
  Tensor h = x;
  for (const Block& b : blocks) h = checkpointed ? utils::checkpoint(b, h) : b(h);
  (h * h).sum().backward();
  TensorList g;
  for (const Block& b : blocks)
    for (const Tensor& p : b.parameters()) g.push_back(p.grad());
  g.push_back(x.grad());
  return g;
}

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("checkpointed blocks with dropout on CUDA: the plain blocks' gradients, bitwise") {
    for (ScalarType dtype : {kFloat32, kFloat64}) {
      const TensorList want = gradients(dtype, false);
      const uint64_t offset = default_generator().state().offset;
      const TensorList got = gradients(dtype, true);
      CHECK(default_generator().state().offset == offset);  // the rerun drew nothing for good
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        INFO(dtype_name(dtype), " gradient ", i);
        REQUIRE(got[i].defined());
        CHECK(got[i].is_cuda());
        CHECK(as_doubles(got[i]) == as_doubles(want[i]));  // NaN fails
      }
    }
  }
}
