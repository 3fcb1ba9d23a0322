// The deterministic-algorithms switch, as PyTorch's torch.use_deterministic_algorithms: while it
// is on, every kernel that would give different bits from run to run (atomics, algorithms
// chosen by timing) runs a deterministic version or throws naming the op. See docs/cuda.md.
#pragma once

namespace gr {

// Note [Deterministic algorithms]
// What the switch changes (the CPU is deterministic for a given thread count either way):
// - cuDNN convolutions take only algorithms cuDNN rates CUDNN_DETERMINISTIC, in the order of
//   its heuristics, never chosen by timing (GRADRING_CUDNN_BENCHMARK's cudnnFind may pick
//   another algorithm each run); with none usable the im2col path (no atomics) runs.
// - Scatters that combine on CUDA (scatter_add, index_add, index_put_ with accumulate, the
//   embedding backward, scatter with reduce) run without atomics: a thread per destination line
//   in the CPU's order, or one thread where any two writes may meet (scatter_schedule,
//   core/native/index/index_ops.h); advanced-index writes run serially on the CPU too.
// - scaled_dot_product_attention's CUDA backward: float32 runs its per-row kernels (no
//   atomics, slower); bfloat16/float16 on cuDNN's fused attention ask for its deterministic
//   algorithm (Note [cuDNN attention]), and on gradring's kernels alert (their tiled backward
//   sums dQ with atomics).
// - An op without a deterministic version calls alert_not_deterministic(op): it throws
//   naming the op, or with warn_only prints a warning once per op.
// Not affected: cuBLAS, whose results are reproducible on one stream of one GPU model (as
// NVIDIA documents), and the rest of the CUDA kernels, which use no atomics.
void use_deterministic_algorithms(bool mode, bool warn_only = false);
bool are_deterministic_algorithms_enabled();
bool is_deterministic_algorithms_warn_only_enabled();

// Called by an op at the point where it would run a non-deterministic algorithm: nothing
// while the switch is off; otherwise throws gr::Error naming `op` (or, warn_only, prints one
// warning per op to stderr).
void alert_not_deterministic(const char* op);

}  // namespace gr
