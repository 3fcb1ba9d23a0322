// CUDA autocast (Note [Autocast], CUDA's column of Note [Autocast policy table]) on a device:
// which dtype each op computes in (products and attention bfloat16; norms, softmax and losses
// float32; binary_cross_entropy refused), float32 gradients for float32 leaves, and a small
// pre-norm attention block's loss and gradients against the same block under the CPU's
// autocast (the CPU keeps softmax in bfloat16, so the two differ by bfloat16 roundings only).
#include "autograd/autocast.h"
#include "nn/functional.h"
#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace F = gr::nn::functional;

namespace {

Tensor on(const Tensor& t, Device d) { return native::to_device(native::clone(t), d).requires_grad_(true); }

// The block's loss and its parameters' gradients, computed on `d` under its autocast.
std::vector<Tensor> block(Device d, const TensorList& cpu_params) {
  TensorList p;
  for (const Tensor& t : cpu_params) p.push_back(on(t, d));
  const Tensor &x = p[0], &lnw = p[1], &lnb = p[2], &w_qkv = p[3], &b_qkv = p[4], &w_out = p[5];
  Tensor loss;
  {
    autocast::AutocastGuard guard(d.type(), kBFloat16);
    Tensor h = layer_norm(x, {32}, lnw, lnb);
    auto qkv = linear(h, w_qkv, b_qkv).split(32, 2);
    auto heads = [](const Tensor& t) { return t.view({2, 8, 4, 8}).transpose(1, 2); };
    Tensor y = scaled_dot_product_attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), {}, 0.0, true);
    Tensor logits = linear(y.transpose(1, 2).reshape({2, 8, 32}), w_out) + x.narrow(2, 0, 10);
    Tensor labels = native::to_device(tensor(std::vector<int64_t>{1, 3, 5, 7, 9, 0, 2, 4, 6, 8, 1, 3, 5, 7, 9, 0},
                                             TensorOptions(kInt64)),
                                      d);
    loss = cross_entropy(log_softmax(logits.reshape({16, 10}), 1), labels);
  }
  loss.backward();
  std::vector<Tensor> out{loss.detach()};
  for (const Tensor& t : p) out.push_back(t.grad());
  return out;
}

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("CUDA autocast: products and attention in bfloat16, norms, softmax and losses in float32") {
    const Device d = cuda0();
    Tensor x = on(random_tensor({2, 8, 32}, kFloat32, 600), d), w = on(random_tensor({24, 32}, kFloat32, 601), d);
    Tensor b = on(random_tensor({24}, kFloat32, 602), d);
    autocast::AutocastGuard guard(kCUDA, kBFloat16);
    CHECK(linear(x, w, b).scalar_type() == kBFloat16);
    CHECK(matmul(x, w.t()).scalar_type() == kBFloat16);
    CHECK(mm(x.reshape({16, 32}), w.t()).scalar_type() == kBFloat16);
    CHECK(bmm(x, x.transpose(1, 2)).scalar_type() == kBFloat16);
    Tensor q = x.view({2, 8, 4, 8}).transpose(1, 2);
    CHECK(scaled_dot_product_attention(q, q, q, {}, 0.0, true).scalar_type() == kBFloat16);
    Tensor xb = x.to(kBFloat16);
    CHECK(layer_norm(xb, {32}).scalar_type() == kFloat32);
    CHECK(softmax(xb, -1).scalar_type() == kFloat32);
    CHECK(log_softmax(xb, -1).scalar_type() == kFloat32);
    Tensor labels = native::to_device(tensor(std::vector<int64_t>{0, 1}, TensorOptions(kInt64)), d);
    CHECK(cross_entropy(xb.select(1, 0), labels).scalar_type() == kFloat32);
    CHECK(mse_loss(xb, x).scalar_type() == kFloat32);
    CHECK(relu(xb).scalar_type() == kBFloat16);  // not listed: the input's dtype
    CHECK((xb + x).scalar_type() == kFloat32);    // promotion
    Tensor probs = sigmoid(xb), target = full({2, 8, 32}, 0.5, TensorOptions(kFloat32).device(d));
    CHECK_THROWS_WITH_AS(F::binary_cross_entropy(probs, target), doctest::Contains("unsafe to autocast"), Error);
    CHECK(F::binary_cross_entropy_with_logits(xb, target).scalar_type() == kFloat32);
  }

  TEST_CASE("CUDA autocast: a pre-norm attention block's loss and float32 gradients match the CPU's autocast") {
    const TensorList params = {random_tensor({2, 8, 32}, kFloat32, 610),      random_tensor({32}, kFloat32, 611, 0.5, 1.5),
                               random_tensor({32}, kFloat32, 612, -0.1, 0.1), random_tensor({96, 32}, kFloat32, 613, -0.2, 0.2),
                               random_tensor({96}, kFloat32, 614, -0.1, 0.1), random_tensor({10, 32}, kFloat32, 615, -0.2, 0.2)};
    const std::vector<Tensor> cpu = block(Device(kCPU), params), gpu = block(cuda0(), params);
    REQUIRE(cpu.size() == gpu.size());
    const char* names[] = {"loss", "grad x", "grad ln weight", "grad ln bias", "grad W_qkv", "grad b_qkv", "grad W_out"};
    for (size_t i = 0; i < cpu.size(); ++i) {
      CHECK(gpu[i].scalar_type() == kFloat32);
      check_match(gpu[i], cpu[i], Tol{3e-2, 3e-2}, std::string("autocast block ") + names[i]);
    }
  }
}
