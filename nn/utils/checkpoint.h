// Activation checkpointing, as torch.utils.checkpoint's non-reentrant variant: checkpoint(fn,
// inputs...) keeps fn's inputs instead of the activations fn saves for backward, and reruns fn
// when backward first needs one; checkpoint_sequential does it segment by segment.
#pragma once

#include <concepts>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/saved_tensor.h"
#include "core/arg.h"
#include "nn/modules/sequential.h"

namespace gr::utils {

// Note [Non-reentrant checkpoint]
// checkpoint(fn, args...) runs fn under saved-tensor hooks (Note [Saved-tensor hooks] in
// autograd/saved_tensor.h) whose pack hook keeps, for every tensor fn's ops save, only an empty
// holder and the tensor's shape, dtype and device; fn's tensor arguments are saved instead
// (ordinary saved tensors). The first unpack in a backward pass reruns fn on them, with grad
// mode on, the forward's random state (preserve_rng_state) and autocast state, under a second
// hook that puts the k-th tensor the rerun saves into the k-th holder (detached), and stops the
// rerun once every holder is filled (early_stop). Every later unpack of that backward pass
// takes its tensor from its holder, so fn runs at most once more per backward pass. PyTorch's
// design (torch/utils/checkpoint.py), with its consequences:
// - The autograd graph is the forward's: the rerun's own graph is discarded, and an unpacked
//   tensor gets the saved tensor's identity (grad_fn, or a leaf's accumulator). Gradients reach
//   each parameter once, through its usual accumulator, so DDP's and FSDP's gradient hooks see
//   nothing new; module forward pre-hooks run again in the rerun (fn runs again), so FSDP
//   gathers parameters there. create_graph (double backward) works as without checkpointing.
// - Memory: a holder's tensor dies with its holder, i.e. with the node that saved it, right
//   after the node runs in a backward without retain_graph; whatever remains (nodes that did
//   not run, retain_graph) is dropped when the backward pass ends (a queued callback).
// - Nested checkpoints: an inner checkpoint's arguments are saved through the enclosing one's
//   hooks, so unpacking them reruns the enclosing function first (PyTorch's Note [Nestable
//   Checkpoint], rules 1 to 3).
// - The rerun must save the same tensors in the same order: a different count, or a different
//   shape, dtype or device at some position, is an error naming the block and the positions.
// - Inputs not requiring grad are fine (fn's parameters still get gradients: unlike the
//   reentrant variant there is no "None of the inputs have requires_grad=True" case); without
//   grad mode (NoGradGuard, InferenceMode) checkpoint just calls fn.
// - fn is copied and called again in backward: what it refers to must still be alive then.
//   Early stop ends the rerun by throwing out of fn, so fn must be exception-safe.
// - One generator serves every device in gradring (docs/cuda.md: CUDA dropout draws from the
//   CPU's Philox stream), so preserving its state covers CUDA tensors too; explicit Generator
//   objects passed to ops inside fn are not preserved (as in PyTorch).
// - Not thread-safe: one backward pass at a time may reach a given checkpoint.

// torch.utils.checkpoint.checkpoint's keyword arguments, with its defaults. gradring has only
// the non-reentrant variant (PyTorch's recommended one): use_reentrant(true) is refused, and the
// default is false (PyTorch wants it passed explicitly). context_fn and debug are not offered.
struct CheckpointOptions {
  GR_ARG(bool, use_reentrant) = false;
  GR_ARG(bool, preserve_rng_state) = true;
  // "default" compares shapes, dtypes and devices of the recomputed tensors; "none" does not.
  GR_ARG(std::string, determinism_check) = "default";
  GR_ARG(bool, early_stop) = true;
  // gradring's: what errors call the block (default: the callable's type; checkpoint_sequential
  // names its segments).
  GR_ARG(std::string, name);
};

namespace detail {

class CheckpointFrame;

// One argument of the checkpointed function, kept for its rerun: tensors as saved tensors
// (through an enclosing checkpoint's hooks: Note [Non-reentrant checkpoint]), tensor lists
// element by element, anything else by value.
template <class T>
struct SavedArg {
  explicit SavedArg(const T& v) : value(v) {}
  const T& get() const { return value; }
  T value;
};
template <>
struct SavedArg<Tensor> {
  explicit SavedArg(const Tensor& t) : saved(t) {}
  Tensor get() const { return saved.unpack(); }
  autograd::SavedTensor saved;
};
template <>
struct SavedArg<std::optional<Tensor>> {
  explicit SavedArg(const std::optional<Tensor>& t) : saved(t ? std::optional(autograd::SavedTensor(*t)) : std::nullopt) {}
  std::optional<Tensor> get() const { return saved ? std::optional(saved->unpack()) : std::nullopt; }
  std::optional<autograd::SavedTensor> saved;
};
template <>
struct SavedArg<TensorList> {
  explicit SavedArg(const TensorList& ts) {
    for (const Tensor& t : ts) saved.emplace_back(t);
  }
  TensorList get() const {
    TensorList out;
    for (const autograd::SavedTensor& s : saved) out.push_back(s.unpack());
    return out;
  }
  std::vector<autograd::SavedTensor> saved;
};

// Unpacks the saved arguments and returns the call of fn on them, to run in the rerun.
using MakeRerun = std::function<std::function<void()>()>;

// The forward of one checkpoint: records the random and autocast state, makes the frame and
// installs its hooks for the scope's life.
class CheckpointScope {
 public:
  CheckpointScope(const CheckpointOptions& options, std::string default_name, MakeRerun make_rerun);
  ~CheckpointScope();
  CheckpointScope(const CheckpointScope&) = delete;
  CheckpointScope& operator=(const CheckpointScope&) = delete;
  // fn returned: from now on the frame's saved tensors are all known.
  void forward_completed();

 private:
  std::shared_ptr<CheckpointFrame> frame_;
  std::optional<autograd::graph::SavedTensorsHooks> hooks_;
};

// "gr::apps::Block", "main()::{lambda(gr::Tensor const&)#1}": the demangled type.
std::string callable_name(const std::type_info& type);

}  // namespace detail

// torch.utils.checkpoint.checkpoint(function, *args, use_reentrant=False, ...): returns
// fn(args...), keeping only args for backward (Note [Non-reentrant checkpoint]). fn is any
// callable, a module holder included (module(x) runs its forward pre-hooks, in the rerun too);
// args are tensors, tensor lists, optional tensors or values.
template <class Fn, class... Args>
  requires std::invocable<Fn&, const Args&...>
auto checkpoint(const CheckpointOptions& options, Fn&& fn, const Args&... args) {
  using Result = std::invoke_result_t<Fn&, const Args&...>;
  static_assert(!std::is_void_v<Result>, "checkpoint: the function must return its outputs");
  if (!GradMode::is_enabled()) return static_cast<Result>(std::invoke(fn, args...));
  // The arguments are saved before this checkpoint's hooks are installed (an enclosing
  // checkpoint's apply to them).
  detail::MakeRerun make_rerun = [f = std::decay_t<Fn>(fn),
                          saved = std::make_tuple(detail::SavedArg<std::decay_t<Args>>(args)...)]() mutable {
    auto unpacked = std::apply([](const auto&... s) { return std::make_tuple(s.get()...); }, saved);
    return std::function<void()>([fp = &f, unpacked = std::move(unpacked)] { (void)std::apply(*fp, unpacked); });
  };
  detail::CheckpointScope scope(options, detail::callable_name(typeid(std::decay_t<Fn>)), std::move(make_rerun));
  Result out = std::invoke(fn, args...);
  scope.forward_completed();
  return out;
}

template <class Fn, class... Args>
  requires std::invocable<Fn&, const Args&...>
auto checkpoint(Fn&& fn, const Args&... args) {
  return checkpoint(CheckpointOptions(), std::forward<Fn>(fn), args...);
}

// torch.utils.checkpoint.checkpoint_sequential(functions, segments, input): splits the
// modules into `segments` runs of size() / segments (the last takes the rest) and checkpoints
// all but the last, which runs as usual (backward needs its activations first). Each run
// calls its modules as Sequential's forward does (pre-hooks included); options apply to every
// segment, whose name in errors is "<name or Sequential> segment k (modules a..b)".
Tensor checkpoint_sequential(const nn::Sequential& functions, int64_t segments, const Tensor& input,
                             const CheckpointOptions& options = {});

}  // namespace gr::utils
