// train_gpt's GPT with checkpoint_activations (every block a gr::utils::checkpoint): the same
// gradients as without, bitwise, in float32 and float64 with dropout; and, for the small
// preset, the activation memory of a step (apps/common/activation_memory.h) against what the
// block count predicts; the meter's peak is never below what the forward kept (Note
// [Activation peak]), gradients made in backward or not.
#include <cstdio>

#include "common/activation_memory.h"
#include "common/gpt.h"
#include "test_util.h"

using namespace gr;
using gr::test::max_abs_diff;

namespace {

// Every parameter's gradient after one forward and backward from `seed` (the dropout masks).
OrderedDict<Tensor> gradients(apps::GPT& model, const Tensor& idx, const Tensor& targets) {
  model->zero_grad();
  manual_seed(9);
  model->loss(model(idx), targets).backward();
  OrderedDict<Tensor> g;
  for (const auto& [name, p] : model->named_parameters()) g.insert(name, p.grad());
  return g;
}

// The activation memory of one training step (forward, loss, backward), by default with the
// gradients already allocated (zero_grad keeps them), so that the peak is the activations'
// alone; set_to_none: backward allocates them.
apps::ActivationMemory measure(apps::GPT& model, const Tensor& idx, const Tensor& targets, bool set_to_none = false) {
  model->zero_grad(set_to_none);
  apps::ActivationMeter meter(kCPU);
  meter.before_forward();
  Tensor loss = model->loss(model(idx), targets);
  meter.after_forward();
  loss.backward();
  loss = Tensor();
  return meter.after_backward();
}

}  // namespace

TEST_CASE("GPT: checkpointed blocks give the same gradients as plain ones, bitwise (float32, float64, dropout 0.1)") {
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    CAPTURE(dtype);
    apps::GPTConfig c;
    c.layers = 3, c.heads = 2, c.embd = 32, c.block = 16, c.dropout = 0.1;
    manual_seed(1);
    apps::GPT plain(c);
    c.checkpoint_activations = true;
    manual_seed(1);
    apps::GPT checkpointed(c);
    plain->to(dtype);
    checkpointed->to(dtype);
    Generator g(3);
    Tensor idx = randint(0, c.vocab, {4, c.block}, kInt64, &g), targets = randint(0, c.vocab, {4, c.block}, kInt64, &g);
    const OrderedDict<Tensor> want = gradients(plain, idx, targets), got = gradients(checkpointed, idx, targets);
    CHECK(max_abs_diff(got, want) == 0.0);  // NaN fails
    CHECK(want.size() == plain->parameters().size());
  }
}

TEST_CASE("GPT small: checkpointing every block but the last cuts a step's activation memory by what the block count predicts") {
  // The small preset (6 blocks of width 384, context 256) on 2 sequences: activations scale
  // with the batch, the ratios do not.
  apps::GPTConfig c = apps::gpt_preset("small");
  const int64_t B = 2, L = c.layers;
  Generator g(3);
  Tensor idx = randint(0, c.vocab, {B, c.block}, kInt64, &g), targets = randint(0, c.vocab, {B, c.block}, kInt64, &g);
  const auto run = [&](bool checkpointed) {
    c.checkpoint_activations = checkpointed;
    manual_seed(1);
    apps::GPT model(c);
    measure(model, idx, targets);  // allocates the gradients; warms the allocator's caches
    return measure(model, idx, targets);
  };
  const apps::ActivationMemory without = run(false), with = run(true);
  CHECK(without.gradients == 0);
  CHECK(with.gradients == 0);
  // The model: a block saves A bytes of activations, its input is a of them, the rest of the
  // model (embeddings, final LayerNorm, logits and loss) R. The forward keeps R + L A without
  // checkpointing and R + (L - 1) a + A with it (the last block runs plain); backward adds its
  // transients D to both: R + (L - 1) a + A + D at the start of backward, the last block's
  // activations freed before the first rerun.
  const double a = static_cast<double>(B * c.block * c.embd * 4);
  const double A = static_cast<double>(without.kept - with.kept) / static_cast<double>(L - 1) + a;
  const double D = static_cast<double>(without.peak - without.kept);
  const double predicted = static_cast<double>(without.peak) / (static_cast<double>(with.kept) + D);
  const double measured = static_cast<double>(without.peak) / static_cast<double>(with.peak);
  const double mib = 1024.0 * 1024.0;
  MESSAGE("kept by forward: ", without.kept / mib, " MiB without checkpointing, ", with.kept / mib,
          " MiB with; peak: ", without.peak / mib, " MiB without, ", with.peak / mib, " MiB with; a block's A = ",
          A / mib, " MiB (its input ", a / mib, " MiB), backward's transients ", D / mib, " MiB; peak falls ",
          measured, "x, predicted ", predicted, "x");
  CHECK(with.kept < without.kept);
  CHECK(measured >= predicted * 0.98);  // within the allocator's rounding
  CHECK(measured > 2.0);
}

TEST_CASE("ActivationMeter: the peak is never below what the forward kept, when backward frees the activations before making the gradients") {
  // The case the old peak (the step's less every gradient) got wrong: forward keeps 1 MiB,
  // backward frees it and then allocates 2 MiB of "gradients"; the step peaked at 2 MiB.
  const int64_t mib = 1 << 20;
  apps::ActivationMeter meter(kCPU);
  meter.before_forward();
  Tensor activations = empty({mib / 4}, kFloat32);
  meter.after_forward();
  activations = Tensor();
  Tensor gradients = empty({2 * mib / 4}, kFloat32);
  const apps::ActivationMemory m = meter.after_backward();
  CHECK(m.kept >= mib);
  CHECK(m.gradients >= 2 * mib);
  CHECK(m.peak >= m.kept);
  CHECK(m.peak >= m.gradients);
  CHECK(m.peak - m.gradients < m.kept);  // the old definition's figure: below kept here
}

TEST_CASE("GPT: the activation peak is at least what the forward kept, with gradients made in backward (set_to_none) or kept, checkpointed or not") {
  apps::GPTConfig c;
  c.layers = 3, c.heads = 2, c.embd = 32, c.block = 16, c.dropout = 0.1;
  Generator g(3);
  Tensor idx = randint(0, c.vocab, {4, c.block}, kInt64, &g), targets = randint(0, c.vocab, {4, c.block}, kInt64, &g);
  for (bool checkpointed : {false, true})
    for (bool set_to_none : {true, false}) {
      CAPTURE(checkpointed);
      CAPTURE(set_to_none);
      c.checkpoint_activations = checkpointed;
      manual_seed(1);
      apps::GPT model(c);
      int64_t param_bytes = 0;
      for (const Tensor& p : model->parameters()) param_bytes += static_cast<int64_t>(p.nbytes());
      apps::ActivationMemory worst;
      for (int step = 0; step < 2; ++step) {  // the second: the allocator's caches warm
        const apps::ActivationMemory m = measure(model, idx, targets, set_to_none);
        CHECK(m.kept > 0);
        CHECK(m.peak >= m.kept);
        CHECK(m.peak >= m.gradients);
        worst.max_with(m);
      }
      CHECK(worst.peak >= worst.kept);
      // Gradients made in every step with set_to_none, in the first step only without.
      if (set_to_none) CHECK(worst.gradients >= param_bytes);
    }
}
