// The models bench_ddp times (the reference CNN, ResNet-18, the GPT presets), each with a
// synthetic batch whose training loss is nll_loss(model(x), y).
#pragma once

#include <gradring/gradring.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distributed/fsdp/fully_shard.h"
#include "gpt.h"
#include "reference_cnn.h"
#include "resnet.h"

namespace gr::apps {

// train_gpt's GPT returning log-probabilities [B*T, vocab]: nll_loss against the next tokens,
// flattened, is then its cross-entropy, and bench_ddp's step runs it unchanged.
class GPTLogProbsImpl : public nn::Module {
 public:
  explicit GPTLogProbsImpl(const GPTConfig& c) : nn::Module("GPTLogProbs") { gpt = register_module("gpt", GPT(c)); }
  Tensor forward(const Tensor& idx) {
    Tensor logits = gpt(idx);
    return log_softmax(logits.reshape({-1, logits.size(2)}), 1);
  }
  GPT gpt{nullptr};
};
GR_MODULE(GPTLogProbs);

// One synthetic batch, and how bench_ddp describes its input.
struct BenchBatch {
  Tensor x, y;
  std::string input;
};

// Calls fn(make, batch) for the model `name` (reference, resnet18, gpt-tiny or gpt-small):
// make() builds a fresh model (seed first), the batch is drawn from gen; batch_size 0 takes
// the model's default (64, 32, and the GPT preset's 12 or 8 sequences). checkpoint_activations:
// the GPT's blocks are checkpoints (GPTConfig::checkpoint_activations); refused for the others.
template <class Fn>
auto with_bench_model(const std::string& name, int64_t batch_size, int64_t image_size, Generator& gen, Fn&& fn,
                      bool checkpoint_activations = false) {
  GR_CHECK(!checkpoint_activations || name.starts_with("gpt-"), "bench_ddp: --checkpoint-activations applies to the ",
           "GPT models only (their transformer blocks), not to ", name);
  if (name == "reference") {
    const int64_t b = batch_size > 0 ? batch_size : 64;
    std::function<std::shared_ptr<ReferenceCNNImpl>()> make = [] { return ReferenceCNN().ptr(); };
    return fn(make, BenchBatch{randn({b, 1, 28, 28}, &gen), randint(0, 10, {b}, kInt64, &gen), "1x28x28"});
  }
  if (name == "resnet18") {
    const int64_t b = batch_size > 0 ? batch_size : 32, s = image_size;
    std::function<std::shared_ptr<ResNet18Impl>()> make = [] { return ResNet18(3, 10).ptr(); };
    const std::string input = "3x" + std::to_string(s) + "x" + std::to_string(s);
    return fn(make, BenchBatch{randn({b, 3, s, s}, &gen), randint(0, 10, {b}, kInt64, &gen), input});
  }
  GR_CHECK(name.starts_with("gpt-"), "bench_ddp: unknown model '", name, "'");
  const std::string preset = name.substr(4);
  GPTConfig c = gpt_preset(preset);
  c.checkpoint_activations = checkpoint_activations;
  const int64_t b = batch_size > 0 ? batch_size : gpt_preset_batch(preset);
  std::function<std::shared_ptr<GPTLogProbsImpl>()> make = [c] { return GPTLogProbs(c).ptr(); };
  return fn(make, BenchBatch{randint(0, c.vocab, {b, c.block}, kInt64, &gen),
                             randint(0, c.vocab, {b * c.block}, kInt64, &gen), std::to_string(c.block) + " tokens"});
}

// The modules bench_ddp's fsdp modes make fully_shard units of, bottom-up: every transformer
// block, then the GPT (train_gpt --fsdp's units); every ResNet-18 BasicBlock; none for the
// reference CNN, whose forward calls its layers as conv1->forward(x), bypassing their forward
// pre-hooks. The caller makes the model itself the root unit last.
inline std::vector<std::shared_ptr<nn::Module>> fsdp_units(nn::Module& model) {
  std::vector<std::shared_ptr<nn::Module>> units;
  if (auto* g = model.as<GPTLogProbs>()) {
    for (const auto& block : g->gpt->blocks->children()) units.push_back(block);
    units.push_back(g->gpt.ptr());
    return units;
  }
  for (const auto& m : model.modules(/*include_self=*/false))
    if (m->as<BasicBlock>() != nullptr) units.push_back(m);
  return units;
}

// bench_ddp's fully sharded modes: every unit of fsdp_units, then the model (the root unit).
// fsdp: FSDP2's defaults (one unit prefetched ahead, one reduce-scatter and all-gather per
// unit); fsdp-keep: reshard_after_forward off; fsdp-noprefetch: set_prefetch_enabled(false)
// on every unit; fsdp-pieces: gradients reduce-scattered and units gathered in pieces of at most
// piece_mb MiB (reduce_scatter_bucket_cap_mb, all_gather_bucket_cap_mb); fsdp-lean: both, the
// least memory (Note [FSDP memory bound] in distributed/fsdp/fsdp_backward.cpp).
inline distributed::fsdp::FSDPModule fully_shard_mode(const std::shared_ptr<nn::Module>& model, const std::string& mode,
                                                      const distributed::ProcessGroupPtr& pg, double piece_mb) {
  namespace fsdp = distributed::fsdp;
  const bool pieces = mode == "fsdp-pieces" || mode == "fsdp-lean";
  const bool no_prefetch = mode == "fsdp-noprefetch" || mode == "fsdp-lean";
  const auto o = fsdp::FullyShardOptions()
                     .group(pg)
                     .reshard_after_forward(mode != "fsdp-keep")
                     .reduce_scatter_bucket_cap_mb(pieces ? piece_mb : 0)
                     .all_gather_bucket_cap_mb(pieces ? piece_mb : 0);
  std::vector<fsdp::FSDPModule> units;
  for (const auto& unit : fsdp_units(*model)) units.push_back(fsdp::fully_shard(unit, o));
  units.push_back(fsdp::fully_shard(model, o));
  if (no_prefetch) units.back().set_prefetch_enabled(false);  // every unit of the tree
  return units.back();
}

}  // namespace gr::apps
