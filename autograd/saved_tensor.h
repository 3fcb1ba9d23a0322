// SavedTensor: a tensor kept for backward, with its autograd identity (so that a backward
// recorded under create_graph connects to it) and the version it was saved at; and the
// saved-tensor hooks that may keep something else in its place (graph::SavedTensorsHooks).
#pragma once

#include <any>
#include <functional>
#include <memory>

#include "core/tensor.h"

namespace gr::autograd {

// Note [Version counter]
// Every in-place op bumps its storage's version. A saved tensor remembers the version it
// was saved at; unpacking it after an in-place change would silently give a wrong
// gradient, so unpack() fails instead, naming the tensor and both versions.
//
// Note [Saved outputs]
// A saved input (or leaf) is kept as the tensor itself: its grad_fn or accumulator stays
// reachable, so a double backward flows into it. A node's own output cannot be kept that
// way: output -> grad_fn -> saved output would be a reference cycle. As PyTorch's
// SavedVariable, it keeps only the data; unpack() rebuilds a tensor whose grad_fn is the
// node running (current_node(), i.e. the node that saved it, whose weak self-reference
// stands in for PyTorch's weak grad_fn) when grad mode is on, so the rebuilt output
// connects to the same place the original did. Pass is_output = true for those.
//
// Note [Saved-tensor hooks]
// As torch.autograd.graph.saved_tensors_hooks: while a graph::SavedTensorsHooks guard is alive
// on a thread, every tensor saved there (SavedTensor, so every op and custom Function) is
// handed to its pack hook, and the SavedTensor keeps what pack returned instead of the tensor;
// in backward, unpack() calls the unpack hook on it and gives the result the saved tensor's
// autograd identity, as PyTorch's SavedVariable does with hooks: a saved output gets the node
// running as grad_fn (Note [Saved outputs]); any other tensor with history its original
// grad_fn, held as a saved input holds it; a leaf that requires grad its accumulator, reached
// through a weak reference to the leaf (holding the leaf would keep the very memory a hook
// may move away, and a leaf nobody holds gets no gradient anyway: Note [Accumulators hold
// leaves weakly]). So a gradient computed from an unpacked tensor under create_graph flows
// where it would have without hooks, whatever tensor the unpack hook returns. Undefined
// tensors are not packed. The innermost guard applies (guards nest); the version check is
// skipped, as in PyTorch, since the tensor itself is not kept. gr::utils::checkpoint is built
// on these hooks (Note [Non-reentrant checkpoint] in nn/utils/checkpoint.h).
class SavedTensor {
 public:
  SavedTensor() = default;
  // Fails for an inference tensor (see Note [Inference tensors] in grad_mode.h).
  explicit SavedTensor(const Tensor& t, bool is_output = false, uint32_t output_nr = 0);
  // The saved tensor; throws if it was modified in place since it was saved.
  Tensor unpack() const;
  bool defined() const { return data_.defined() || packed_ != nullptr; }

  struct Packed;  // what a pack hook returned, and the autograd identity to restore

 private:
  Tensor data_;
  uint32_t version_ = 0;
  bool is_output_ = false;
  uint32_t output_nr_ = 0;
  std::shared_ptr<const Packed> packed_;  // set instead of data_ when saved under hooks
};

namespace graph {

// What a pack hook returns (anything copyable: a tensor on another device, a handle, a file
// name) and what its unpack hook turns back into the tensor.
using PackHook = std::function<std::any(const Tensor&)>;
using UnpackHook = std::function<Tensor(const std::any&)>;

// torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook) as a scope: tensors saved
// for backward on this thread while it is alive go through the hooks (Note [Saved-tensor
// hooks]). Guards nest; the innermost applies. Unpack runs in backward, on the thread that
// runs it, whatever guards are alive then.
class SavedTensorsHooks {
 public:
  SavedTensorsHooks(PackHook pack_hook, UnpackHook unpack_hook);
  ~SavedTensorsHooks();
  SavedTensorsHooks(const SavedTensorsHooks&) = delete;
  SavedTensorsHooks& operator=(const SavedTensorsHooks&) = delete;
};

}  // namespace graph
}  // namespace gr::autograd
