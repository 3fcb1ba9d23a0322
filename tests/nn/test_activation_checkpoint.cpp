// gr::utils::checkpoint and checkpoint_sequential (Note [Non-reentrant checkpoint]): gradients
// equal to those without checkpointing, bitwise (float32, float64, dropout in attention and
// after the MLP, nested, sequential segments, create_graph, autocast, grad() with inputs), one
// rerun per backward pass, pre-hooks run again, memory kept by the forward, and every error.
#include <string>
#include <vector>

#include "core/memory_stats.h"
#include "test_util.h"

using namespace gr;
using gr::utils::checkpoint;
using gr::utils::checkpoint_sequential;
using gr::utils::CheckpointOptions;
using namespace gr::test;

namespace {

// A pre-LayerNorm transformer block in miniature: causal attention with dropout, then a GELU
// MLP with dropout, each with a residual. x: [B, T, C].
struct MiniBlockImpl : nn::Module {
  MiniBlockImpl(int64_t c, double p) : nn::Module("MiniBlock"), p(p) {
    ln = register_module("ln", nn::LayerNorm(nn::LayerNormOptions({c})));
    fc1 = register_module("fc1", nn::Linear(c, 4 * c));
    fc2 = register_module("fc2", nn::Linear(4 * c, c));
    drop = register_module("drop", nn::Dropout(p));
  }
  Tensor forward(const Tensor& x) {
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
    Tensor q = ln(x).view({B, T, 2, C / 2}).transpose(1, 2);
    Tensor a = scaled_dot_product_attention(q, q * 0.5, q, {}, is_training() ? p : 0.0, true);
    Tensor y = x + a.transpose(1, 2).reshape({B, T, C});
    return y + drop(fc2(gelu(fc1(y))));
  }
  double p;
  nn::LayerNorm ln{nullptr};
  nn::Linear fc1{nullptr}, fc2{nullptr};
  nn::Dropout drop{nullptr};
};
GR_MODULE(MiniBlock);

// Takes another path from its second call on: its rerun saves a tensor of another shape.
struct ShiftyImpl : nn::Module {
  int calls = 0;
  Tensor forward(const Tensor& t) { return ++calls == 1 ? t.sin() : t.narrow(0, 0, 1).sin(); }
};
GR_MODULE(Shifty);

nn::Sequential make_model(int blocks, int64_t c, double p, ScalarType dtype) {
  manual_seed(7);
  nn::Sequential seq;
  for (int i = 0; i < blocks; ++i) seq->push_back(MiniBlock(c, p));
  seq->to(dtype);
  return seq;
}

Tensor make_input(ScalarType dtype, bool requires_grad = true) {
  Generator g(11);
  return randn({2, 5, 8}, TensorOptions(dtype), &g).requires_grad_(requires_grad);
}

enum class Mode { plain, each_block, sequential2, nested };

// The model's output for x, each block checkpointed or not.
Tensor run(nn::Sequential& seq, const Tensor& x, Mode mode, const CheckpointOptions& o = {}) {
  switch (mode) {
    case Mode::plain: return seq(x);
    case Mode::each_block: {
      Tensor h = x;
      for (size_t i = 0; i < seq->size(); ++i) h = checkpoint(o, MiniBlock(seq->ptr<MiniBlockImpl>(i)), h);
      return h;
    }
    case Mode::sequential2: return checkpoint_sequential(seq, 2, x, o);
    case Mode::nested:  // the whole model, and inside it each block
      return checkpoint(o, [&seq, o](const Tensor& h0) {
        Tensor h = h0;
        for (size_t i = 0; i < seq->size(); ++i) h = checkpoint(o, [b = seq->ptr<MiniBlockImpl>(i)](const Tensor& t) { return b->forward(t); }, h);
        return h;
      }, x);
  }
  return {};
}

// Every parameter's gradient, then x's, after backward of a loss of the model's output, from
// the same seed (the dropout masks).
TensorList gradients(nn::Sequential& seq, const Tensor& x, Mode mode, const CheckpointOptions& o = {}) {
  seq->zero_grad();
  x.mutable_grad() = Tensor();
  manual_seed(123);
  Tensor out = run(seq, x, mode, o);
  (out * out).sum().backward();
  TensorList g;
  for (const Tensor& p : seq->parameters()) g.push_back(p.grad());
  g.push_back(x.grad());
  return g;
}

void check_bitwise(const TensorList& got, const TensorList& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("gradient ", i);
    REQUIRE(got[i].defined());
    CHECK(got[i].scalar_type() == want[i].scalar_type());
    CHECK(max_abs_diff(got[i], want[i]) == 0.0);  // NaN fails
  }
}

}  // namespace

TEST_CASE("checkpoint: gradients equal those without, bitwise, in float32 and float64 with dropout") {
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    CAPTURE(dtype);
    nn::Sequential seq = make_model(3, 8, 0.2, dtype);
    Tensor x = make_input(dtype);
    const TensorList want = gradients(seq, x, Mode::plain);
    for (Mode mode : {Mode::each_block, Mode::sequential2, Mode::nested}) {
      CAPTURE(static_cast<int>(mode));
      check_bitwise(gradients(seq, x, mode), want);
    }
    // The rerun leaves the generator where the forward left it.
    gradients(seq, x, Mode::each_block);
    const uint64_t with = default_generator().state().offset;
    gradients(seq, x, Mode::plain);
    CHECK(with == default_generator().state().offset);
  }
}

TEST_CASE("checkpoint: without preserve_rng_state the rerun draws other dropout masks") {
  nn::Sequential seq = make_model(2, 8, 0.5, kFloat64);
  Tensor x = make_input(kFloat64);
  const TensorList want = gradients(seq, x, Mode::plain);
  const TensorList got = gradients(seq, x, Mode::each_block, CheckpointOptions().preserve_rng_state(false));
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, max_abs_diff(got[i], want[i]));
  CHECK(worst > 1e-3);
}

TEST_CASE("checkpoint: inputs that do not require grad, none at all, and non-tensor arguments") {
  // As PyTorch's non-reentrant checkpoint: the block's parameters still get their gradients.
  nn::Sequential seq = make_model(2, 8, 0.1, kFloat64);
  Tensor x = make_input(kFloat64, /*requires_grad=*/false);
  const auto params_grads = [&](Mode mode) {
    TensorList g = gradients(seq, x, mode);
    g.pop_back();  // x's: undefined
    return g;
  };
  check_bitwise(params_grads(Mode::each_block), params_grads(Mode::plain));

  Tensor w = tensor({1.5, -2.0}, TensorOptions(kFloat64)).requires_grad_(true);
  Tensor y = checkpoint([&w](double scale, int64_t power) { return (w * scale).pow(power); }, 3.0, int64_t{3});
  y.sum().backward();
  check_values(w.grad(), {3 * 27 * 1.5 * 1.5, 3 * 27 * 4.0});
}

TEST_CASE("checkpoint: under NoGradGuard and InferenceMode it just calls the function") {
  nn::Sequential seq = make_model(2, 8, 0.0, kFloat64);
  Tensor x = make_input(kFloat64);
  int packs = 0;
  autograd::graph::SavedTensorsHooks count([&](const Tensor& t) { ++packs; return std::any(t); },
                                           [](const std::any& a) { return std::any_cast<Tensor>(a); });
  Tensor want;
  {
    NoGradGuard no_grad;
    want = seq(x);
    Tensor got = run(seq, x, Mode::each_block);
    CHECK_FALSE(got.requires_grad());
    CHECK(max_abs_diff(got, want) == 0.0);
  }
  {
    InferenceMode inference;
    Tensor got = run(seq, x.detach(), Mode::nested);
    CHECK(got.is_inference());
    CHECK(max_abs_diff(got, want) == 0.0);
  }
  CHECK(packs == 0);  // nothing saved, no checkpoint argument either
}

TEST_CASE("checkpoint: create_graph double backward through checkpointed blocks equals the plain one") {
  const auto penalty_grads = [](Mode mode) {
    nn::Sequential seq = make_model(2, 8, 0.2, kFloat64);
    Tensor x = make_input(kFloat64);
    manual_seed(9);
    Tensor out = run(seq, x, mode);
    Tensor gx = autograd::grad({(out * out).sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    ((gx * gx).sum() + out.sum()).backward();  // a gradient penalty, as WGAN-GP's
    TensorList g;
    for (const Tensor& p : seq->parameters()) g.push_back(p.grad());
    g.push_back(x.grad());
    return g;
  };
  const TensorList want = penalty_grads(Mode::plain);
  check_bitwise(penalty_grads(Mode::each_block), want);
  check_bitwise(penalty_grads(Mode::nested), want);
}

TEST_CASE("checkpoint: autograd::grad with inputs, retain_graph, and one rerun per backward pass") {
  nn::Sequential seq = make_model(1, 8, 0.2, kFloat64);
  Tensor x = make_input(kFloat64);
  int calls = 0;
  auto block = seq->ptr<MiniBlockImpl>(0);
  auto fn = [&calls, block](const Tensor& h) {
    ++calls;
    return block->forward(h);
  };
  manual_seed(3);
  Tensor want_out = block->forward(x);
  const Tensor want = autograd::grad({want_out.sum()}, {x})[0];
  manual_seed(3);
  Tensor out = checkpoint(fn, x);
  CHECK(calls == 1);
  const Tensor gx = autograd::grad({out.sum()}, {x}, {}, /*retain_graph=*/true)[0];
  CHECK(calls == 2);  // one rerun, however many tensors the backward unpacked
  CHECK(max_abs_diff(gx, want) == 0.0);
  const Tensor again = autograd::grad({out.sum()}, {x})[0];  // a second pass reruns once more
  CHECK(calls == 3);
  CHECK(max_abs_diff(again, want) == 0.0);
}

TEST_CASE("checkpoint: the rerun runs the modules' forward pre-hooks again") {
  nn::Sequential seq = make_model(3, 8, 0.0, kFloat64);
  std::vector<int> runs(3, 0);
  for (int i = 0; i < 3; ++i) seq->ptr(i)->register_forward_pre_hook([&runs, i](nn::Module&) { ++runs[i]; });
  Tensor x = make_input(kFloat64);
  checkpoint_sequential(seq, 3, x).sum().backward();
  CHECK(runs == std::vector<int>{2, 2, 1});  // the last segment is not checkpointed
}

TEST_CASE("checkpoint: early_stop ends the rerun at the last saved tensor") {
  Tensor x = make_input(kFloat64);
  for (bool early : {true, false}) {
    CAPTURE(early);
    int tail = 0;
    Tensor y = checkpoint(CheckpointOptions().early_stop(early), [&tail](const Tensor& h) {
      Tensor s = h.sin();  // saves h
      ++tail;              // reached after the last save
      return s + 1;        // saves nothing
    }, x);
    y.sum().backward();
    CHECK(tail == (early ? 1 : 2));
    check_close(x.grad(), x.detach().cos());
    x.mutable_grad() = Tensor();
  }
}

TEST_CASE("checkpoint: CPU autocast in the forward is autocast in the rerun") {
  const auto grads = [](bool ckpt) {
    nn::Sequential seq = make_model(2, 8, 0.0, kFloat32);  // the CPU's dropout takes no bfloat16
    Tensor x = make_input(kFloat32);
    manual_seed(4);
    Tensor out;
    {
      autocast::AutocastGuard amp(kCPU, kBFloat16);
      out = ckpt ? run(seq, x, Mode::each_block) : seq(x);
    }
    out.pow(2).sum().backward();
    TensorList g;
    for (const Tensor& p : seq->parameters()) g.push_back(p.grad());
    return g;
  };
  check_bitwise(grads(true), grads(false));
}

TEST_CASE("checkpoint: the forward keeps the blocks' inputs only; backward frees the recomputed tensors") {
  // 6 blocks of width 64: each keeps about 13 activations of its input's size without
  // checkpointing, its input alone with it.
  nn::Sequential seq = make_model(6, 64, 0.0, kFloat32);
  Tensor x = randn({4, 32, 64}).requires_grad_(true);
  const auto kept = [&](bool ckpt) {
    const int64_t before = cpu_memory_stats().allocated_bytes;
    Tensor out = ckpt ? run(seq, x, Mode::each_block) : seq(x);
    const int64_t after = cpu_memory_stats().allocated_bytes;
    out.sum().backward();
    return after - before;
  };
  kept(true), kept(false);  // warm-up
  const int64_t with = kept(true), without = kept(false), block_input = x.numel() * 4;
  INFO("kept ", with, " bytes with checkpointing, ", without, " without");
  CHECK(with <= 6 * block_input * 11 / 10);  // the six blocks' inputs, the output among them
  CHECK(without >= 10 * with);
  // Nothing of the forward or the rerun outlives backward (the gradients exist already and
  // accumulate in place).
  const int64_t before = cpu_memory_stats().allocated_bytes;
  run(seq, x, Mode::each_block).sum().backward();
  CHECK(cpu_memory_stats().allocated_bytes == before);
}

TEST_CASE("checkpoint: a rerun that saves other shapes or dtypes fails naming the block and the tensors") {
  Tensor x = make_input(kFloat64);
  int call = 0;
  auto shifty = [&call](const Tensor& h) {  // the rerun takes another path
    return ++call == 1 ? h.sin() : h.narrow(2, 0, 4).sin();
  };
  Tensor y = checkpoint(CheckpointOptions().name("blocks.3"), shifty, x);
  const std::string e = test::error_of([&] { y.sum().backward(); });
  CHECK(e.find("checkpoint of blocks.3") != std::string::npos);
  CHECK(e.find("different metadata") != std::string::npos);
  CHECK(e.find("tensor at position 0") != std::string::npos);
  CHECK(e.find("saved metadata: {shape: [2, 5, 8], dtype: float64") != std::string::npos);
  CHECK(e.find("recomputed metadata: {shape: [2, 5, 4], dtype: float64") != std::string::npos);

  call = 0;
  auto dtype_change = [&call](const Tensor& h) { return (++call == 1 ? h : h.to(kFloat32)).sin().to(kFloat64); };
  Tensor z = checkpoint(dtype_change, x);
  const std::string e2 = test::error_of([&] { z.sum().backward(); });
  CHECK(e2.find("checkpoint of ") != std::string::npos);
  CHECK(e2.find("lambda") != std::string::npos);  // unnamed: the callable's type
  CHECK(e2.find("dtype: float32") != std::string::npos);

  // determinism_check("none") lets other metadata through.
  call = 0;
  Tensor u = checkpoint(CheckpointOptions().determinism_check("none"), dtype_change, x);
  CHECK(test::error_of([&] { u.sum().backward(); }).empty());
}

TEST_CASE("checkpoint: a rerun that saves fewer or more tensors fails with both counts") {
  Tensor x = make_input(kFloat64);
  int call = 0;
  auto fewer = [&call](const Tensor& h) { return ++call == 1 ? h.sin().cos() : h.sin() + 1; };
  Tensor y = checkpoint(CheckpointOptions().name("fewer"), fewer, x);
  std::string e = test::error_of([&] { y.sum().backward(); });
  CHECK(e.find("checkpoint of fewer: a different number of tensors was saved") != std::string::npos);
  CHECK(e.find("saved during forward: 2") != std::string::npos);
  CHECK(e.find("saved during recomputation: 1") != std::string::npos);

  call = 0;
  auto more = [&call](const Tensor& h) { return ++call == 1 ? h.sin() + 1 : h.sin().cos(); };
  Tensor z = checkpoint(CheckpointOptions().name("more").early_stop(false), more, x);
  e = test::error_of([&] { z.sum().backward(); });
  CHECK(e.find("checkpoint of more: trying to save more tensors during recomputation") != std::string::npos);
}

TEST_CASE("checkpoint: other errors name the block: an input changed in place, refused options, bad segments") {
  Tensor x = make_input(kFloat64);
  Tensor h = x * 1;
  Tensor y = checkpoint(CheckpointOptions().name("block 0"), [](const Tensor& t) { return t.sin(); }, h);
  {
    NoGradGuard no_grad;
    h.add_(1);
  }
  const std::string e = test::error_of([&] { y.sum().backward(); });
  CHECK(e.find("checkpoint of block 0: rerunning the function in backward failed") != std::string::npos);
  CHECK(e.find("modified by an inplace operation") != std::string::npos);

  CHECK(test::error_of([&] { checkpoint(CheckpointOptions().use_reentrant(true), [](const Tensor& t) { return t; }, x); })
            .find("use_reentrant=true is not supported") != std::string::npos);
  CHECK(test::error_of([&] { checkpoint(CheckpointOptions().determinism_check("strict"), [](const Tensor& t) { return t; }, x); })
            .find("determinism_check should be one of ['default', 'none'], but got strict") != std::string::npos);
  nn::Sequential seq = make_model(2, 8, 0.0, kFloat64);
  CHECK(test::error_of([&] { checkpoint_sequential(seq, 3, x); }).find("segments must be between 1 and the number of modules (2), got 3") !=
        std::string::npos);
  CHECK(test::error_of([&] { checkpoint_sequential(seq, 0, x); }).find("got 0") != std::string::npos);
  // A segment that fails in its rerun is named after its modules.
  nn::Sequential odd(Shifty{}, Shifty{});
  Tensor z = checkpoint_sequential(odd, 2, x);
  CHECK(test::error_of([&] { z.sum().backward(); }).find("checkpoint of Sequential segment 0 (modules 0..0)") !=
        std::string::npos);
}

TEST_CASE("checkpoint: backward twice without retain_graph fails as without checkpointing") {
  Tensor x = make_input(kFloat64);
  Tensor y = checkpoint([](const Tensor& t) { return t.sin().sum(); }, x);
  y.backward();
  CHECK(test::error_of([&] { y.backward(); }).find("Trying to backward through the graph a second time") !=
        std::string::npos);
}
