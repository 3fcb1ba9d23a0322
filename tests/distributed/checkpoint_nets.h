// The models of the activation-checkpointing tests under DDP and fully_shard
// (test_ddp_checkpoint.cpp, test_fsdp_activation_checkpoint.cpp): residual MLP blocks with
// dropout, each called through utils::checkpoint or not.
#pragma once

#include <string>
#include <vector>

#include <gradring/gradring.h>

namespace gr::test {

// LayerNorm, a GELU MLP with dropout, a residual.
struct MlpBlockImpl : nn::Module {
  MlpBlockImpl(int64_t c, double p) : nn::Module("MlpBlock") {
    ln = register_module("ln", nn::LayerNorm(nn::LayerNormOptions({c})));
    fc1 = register_module("fc1", nn::Linear(c, 2 * c));
    fc2 = register_module("fc2", nn::Linear(2 * c, c));
    drop = register_module("drop", nn::Dropout(p));
  }
  Tensor forward(const Tensor& x) { return x + drop(fc2(gelu(fc1(ln(x))))); }
  nn::LayerNorm ln{nullptr};
  nn::Linear fc1{nullptr}, fc2{nullptr};
  nn::Dropout drop{nullptr};
};
GR_MODULE(MlpBlock);

// x [N, 6] -> 3 blocks of width 12 -> head [N, 3], plus a second head `extra` only some
// iterations use (find_unused_parameters).
struct CkptNetImpl : nn::Module {
  CkptNetImpl(bool checkpointed, double p) : nn::Module("CkptNet"), checkpointed(checkpointed) {
    in = register_module("in", nn::Linear(6, 12));
    for (int i = 0; i < 3; ++i) blocks.push_back(register_module("block" + std::to_string(i), MlpBlock(12, p)));
    head = register_module("head", nn::Linear(12, 3));
    extra = register_module("extra", nn::Linear(12, 3));
  }
  Tensor forward(const Tensor& x, bool use_extra = false) {
    Tensor h = in(x);
    for (size_t i = 0; i < blocks.size(); ++i)
      h = checkpointed ? utils::checkpoint(utils::CheckpointOptions().name("block" + std::to_string(i)), blocks[i], h)
                       : blocks[i](h);
    return use_extra ? head(h) + extra(h) : head(h);
  }
  bool checkpointed;
  nn::Linear in{nullptr}, head{nullptr}, extra{nullptr};
  std::vector<MlpBlock> blocks;
};
GR_MODULE(CkptNet);

}  // namespace gr::test
