// train_gpt's GPT against PyTorch: from the same initial weights, 5 AdamW steps in float64 on
// fixed batches give the same loss at every step and the same final weights, to 1e-9
// (reference: tests/data/make_gpt_reference.py, bench/gpt_torch.py's model and training).
#include "common/gpt.h"
#include "test_util.h"

using namespace gr;

namespace {

constexpr int64_t kSteps = 5;
constexpr double kLr = 1e-2, kMinLr = 1e-3, kWeightDecay = 0.1, kClip = 1.0;
constexpr int64_t kWarmup = 2;

OrderedDict<Tensor> with_prefix(const OrderedDict<Tensor>& all, const std::string& prefix) {
  OrderedDict<Tensor> out;
  for (const auto& item : all)
    if (item.key().starts_with(prefix)) out.insert(item.key().substr(prefix.size()), item.value());
  return out;
}

}  // namespace

TEST_CASE("GPT: 5 AdamW steps in float64 equal PyTorch's losses and weights to 1e-9") {
  OrderedDict<Tensor> ref = load(std::string(GRADRING_TEST_DATA) + "/gpt_reference.safetensors");
  apps::GPTConfig config;
  config.layers = 2, config.heads = 2, config.embd = 16, config.block = 8;
  apps::GPT model(config);
  model->to(kFloat64);
  OrderedDict<Tensor> init = with_prefix(ref, "init.");
  REQUIRE(init.size() == model->named_parameters().size());  // same names, none missing
  model->load_state_dict(init);
  auto optimizer = apps::make_gpt_optimizer(model, kLr, kWeightDecay);
  const Tensor losses = ref["losses"];
  for (int64_t step = 0; step < kSteps; ++step) {
    for (auto& group : optimizer->param_groups()) group.options().set_lr(apps::gpt_lr_at(step, kLr, kWarmup, kSteps, kMinLr));
    optimizer->zero_grad();
    Tensor loss = model->loss(model(ref["x." + std::to_string(step)]), ref["y." + std::to_string(step)]);
    loss.backward();
    nn::utils::clip_grad_norm_(model->parameters(), kClip);
    optimizer->step();
    CAPTURE(step);
    CHECK(loss.item<double>() == doctest::Approx(losses[step].item<double>()).epsilon(1e-9));
  }
  for (const auto& item : model->named_parameters()) {
    CAPTURE(item.key());
    Tensor expected = ref["final." + item.key()];
    CHECK(test::max_abs_diff(item.value(), expected) < 1e-9);
    CHECK(test::max_abs_diff(item.value(), ref["init." + item.key()]) > 1e-4);  // it did train
  }
}
