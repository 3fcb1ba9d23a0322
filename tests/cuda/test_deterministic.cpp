// Deterministic algorithms on the GPU (gr::use_deterministic_algorithms, Note [Deterministic
// algorithms]): the combining scatters equal the CPU's bit for bit and repeat exactly, and
// two training runs of train_mnist's CNN (cuDNN convolutions and their backward passes, batch
// norm, pooling, Adadelta) and of an embedding model from one seed end bitwise equal, with the
// algorithm cache cleared and benchmark mode on between them (issue 32: three runs of
// train_mnist --device cuda gave test accuracies 0.860, 0.855 and 0.8575).
#include "common/reference_cnn.h"
#include "cuda_kernels/conv2d.h"
#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;

namespace {

// Sets the switch (and benchmark mode) for a scope and restores them.
class DeterministicGuard {
 public:
  explicit DeterministicGuard(bool mode, bool benchmark = false)
      : mode_(are_deterministic_algorithms_enabled()), benchmark_(cuda::cudnn_benchmark()) {
    use_deterministic_algorithms(mode);
    cuda::set_cudnn_benchmark(benchmark);
  }
  ~DeterministicGuard() {
    use_deterministic_algorithms(mode_);
    cuda::set_cudnn_benchmark(benchmark_);
  }

 private:
  bool mode_, benchmark_;
};

void check_bitwise(const TensorList& a, const TensorList& b, const std::string& what) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(what << ": tensor " << i);
    CHECK(a[i].to(Device(kCPU)).equal(b[i].to(Device(kCPU))));
  }
}

TensorList on_cpu(const TensorList& l) {
  TensorList out;
  for (const Tensor& t : l) out.push_back(t.detach().to(Device(kCPU)));
  return out;
}

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("deterministic scatters: index_add, scatter_add, index_put_ accumulate, embedding backward equal the CPU's") {
    DeterministicGuard on(true);
    Generator g(3);
    // Many repeats per destination row: the embedding backward's shape.
    Tensor idx = randint(0, 50, {20000}, kInt64, &g), src = randn({20000, 64}, kFloat32, &g);
    auto index_add = [&](Device d) { return zeros({50, 64}, TensorOptions(kFloat32).device(d)).index_add(0, idx.to(d), src.to(d)); };
    const Tensor want = index_add(Device(kCPU)), got = index_add(cuda0());
    check_match(got, want, kExact, "index_add");
    check_bitwise({got}, {index_add(cuda0())}, "index_add again");

    Tensor cols = randint(0, 16, {64, 3000}, kInt64, &g), vals = randn({64, 3000}, kFloat32, &g);
    auto scatter_add = [&](Device d) { return zeros({64, 16}, TensorOptions(kFloat32).device(d)).scatter_add(1, cols.to(d), vals.to(d)); };
    check_match(scatter_add(cuda0()), scatter_add(Device(kCPU)), kExact, "scatter_add");

    Tensor r = randint(0, 8, {5000}, kInt64, &g), c = randint(0, 8, {5000}, kInt64, &g), v = randn({5000}, kFloat32, &g);
    auto put = [&](Device d) {
      Tensor x = zeros({8, 8}, TensorOptions(kFloat32).device(d));
      x.index_put_({std::optional<Tensor>(r.to(d)), std::optional<Tensor>(c.to(d))}, v.to(d), /*accumulate=*/true);
      return x;
    };
    check_match(put(cuda0()), put(Device(kCPU)), kExact, "index_put_ accumulate");

    Tensor weight = randn({50, 32}, kFloat32, &g), gy = randn({20000, 32}, kFloat32, &g);
    auto embedding_grad = [&](Device d) {
      Tensor w = weight.to(d).requires_grad_(true);
      embedding(w, idx.to(d)).backward(gy.to(d));
      return w.grad();
    };
    check_match(embedding_grad(cuda0()), embedding_grad(Device(kCPU)), kExact, "embedding backward");
  }

  TEST_CASE("deterministic algorithms: two training runs of train_mnist's CNN from one seed are bitwise equal") {
    auto train = [] {
      cuda::clear_conv2d_algo_cache();  // each run chooses its algorithms afresh
      manual_seed(1);
      apps::ReferenceCNN model;
      model->to(cuda0());
      optim::Adadelta opt(model->parameters(), optim::AdadeltaOptions(1.0));
      Generator g(7);
      for (int step = 0; step < 20; ++step) {
        Tensor x = randn({64, 1, 28, 28}, kFloat32, &g).to(cuda0());
        Tensor y = randint(0, 10, {64}, kInt64, &g).to(cuda0());
        opt.zero_grad();
        nll_loss(model(x), y).backward();
        opt.step();
      }
      TensorList state = on_cpu(model->parameters());
      for (const Tensor& b : model->buffers()) state.push_back(b.to(Device(kCPU)));
      return state;
    };
    DeterministicGuard on(true, /*benchmark=*/true);  // timing must not choose under the switch
    const TensorList a = train(), b = train();
    check_bitwise(a, b, "ReferenceCNN after 20 Adadelta steps");
  }

  TEST_CASE("deterministic algorithms: two runs of an embedding model are bitwise equal") {
    auto train = [] {
      manual_seed(2);
      nn::Embedding emb(300, 64);
      nn::Linear head(64, 300);
      emb->to(cuda0());
      head->to(cuda0());
      std::vector<Tensor> params = emb->parameters();
      for (const Tensor& p : head->parameters()) params.push_back(p);
      optim::AdamW opt(params, optim::AdamWOptions(1e-2));
      Generator g(9);
      for (int step = 0; step < 10; ++step) {
        Tensor tokens = randint(0, 300, {16, 128}, kInt64, &g).to(cuda0());
        opt.zero_grad();
        cross_entropy(head(emb(tokens)).view({-1, 300}), tokens.view({-1})).backward();
        opt.step();
      }
      return on_cpu(params);
    };
    DeterministicGuard on(true);
    const TensorList a = train(), b = train();
    check_bitwise(a, b, "embedding + linear after 10 AdamW steps");
  }
}
